"""state_store over real DDS: save, failures, checkpoints under kill -9, replay, recording, playback.

Expected poses are derived by hand for the bundled double pendulum (``linkage``): joint A at
(0, 0, -0.05) in link A, joint B at (0, 0, -1) in link B, both continuous about y, so for angles
a and b: link B at (0, 0, -0.05) with pitch a; link C at (-sin a, 0, -0.05 - cos a) with pitch a + b.
"""

from __future__ import annotations

import math
import os
import signal
import subprocess
import time
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from repo_paths import REPO_ROOT

pytest.importorskip("rclpy", reason="rclpy is not installed (run the tests through ./run test)")

from rclpy.qos import DurabilityPolicy, HistoryPolicy, QoSProfile, ReliabilityPolicy
from ros_harness import RosHarness

from robot_state_format.errors import Severity
from robot_state_format.model.loader import load_model_file
from robot_state_format.usdf.reader import read_world_state_file
from robot_state_format.usdf.types import FrameState, JointState, LinkState, ModelState, Stamp, WorldState
from robot_state_format.usdf.validate import validate_against_model, validate_schema
from robot_state_format.usdf.writer import write_world_state

MODEL_FILE = str(REPO_ROOT / "robot_state_format" / "samples" / "double_pendulum.urdf")
LATCHED = QoSProfile(depth=1, history=HistoryPolicy.KEEP_LAST, reliability=ReliabilityPolicy.RELIABLE,
                     durability=DurabilityPolicy.TRANSIENT_LOCAL)
NODE = "/state_store"


def pendulum_state(a: float, b: float, *, sec: int = 1_700_000_000, nanosec: int = 5,
                   model_pose: tuple[float, ...] = (0.5, 0.0, 0.0, 0.0, 0.0, 0.25)) -> WorldState:
    """Hand-derived world_state of the double pendulum at joint angles a, b."""
    return WorldState(
        name="lab", stamp=Stamp(sec, nanosec),
        frames=[FrameState("table", None, (1.0, 2.0, 0.0, 0.0, 0.0, 0.5))],
        model_states=[ModelState(
            "linkage", None, model_pose,
            link_states=[
                LinkState("link A", (0.0, 0.0, 0.0, 0.0, 0.0, 0.0)),
                LinkState("link B", (0.0, 0.0, -0.05, 0.0, a, 0.0)),
                LinkState("link C", (-math.sin(a), 0.0, -0.05 - math.cos(a), 0.0, a + b, 0.0)),
            ],
            joint_states=[JointState("joint A", (a,), (0.1,), (0.2,)), JointState("joint B", (b,), (-0.3,), (0.4,))],
        )],
    )


def _trigger(ros: RosHarness, name: str) -> Any:
    from std_srvs.srv import Trigger

    client = ros.wait_for_service(f"{NODE}/{name}", Trigger)
    return ros.call(client, Trigger.Request())


def _set_param(ros: RosHarness, name: str, value: Any) -> Any:
    from rcl_interfaces.srv import SetParameters
    from rclpy.parameter import Parameter

    client = ros.wait_for_service(f"{NODE}/set_parameters", SetParameters)
    req = SetParameters.Request(parameters=[Parameter(name, value=value).to_parameter_msg()])
    return ros.call(client, req).results[0]


def _valid(path: Path, model: Any) -> WorldState:
    assert validate_schema(path.read_bytes(), file=str(path)) == []
    state = read_world_state_file(path).state
    errors = [d for d in validate_against_model(state, model, check_poses=True, tolerance=1e-9)
              if d.severity is Severity.ERROR]
    assert errors == []
    return state


def _publish_world_state(ros: RosHarness, state: WorldState) -> Any:
    from std_msgs.msg import String

    pub = ros.node.create_publisher(String, "world_state", LATCHED)
    pub.publish(String(data=write_world_state(state)))
    return pub


# -- saving --------------------------------------------------------------------------------------
def test_save_writes_what_was_published_and_failures_keep_it_running(ros: RosHarness, tmp_path: Path) -> None:
    model = load_model_file(MODEL_FILE)
    missing = tmp_path / "missing"
    store = ros.start_node("state_store", {"output_dir": str(missing), "model_file": MODEL_FILE})
    # nothing published yet
    r = _trigger(ros, "save")
    assert not r.success and "no snapshot yet" in r.message
    sent = pendulum_state(0.3, -0.5)
    _publish_world_state(ros, sent)
    ros.wait_for_subscriber("world_state")
    # the snapshot is there; a directory that cannot be created (beneath a regular file) is refused
    blocker = tmp_path / "a_file"
    blocker.write_text("not a directory")
    assert _set_param(ros, "output_dir", str(blocker / "out")).successful
    ros.spin_until(lambda: "cannot be created" in _trigger(ros, "save").message, timeout=10,
                   what="save refused for a directory that cannot be created")
    assert not (blocker / "out").exists()
    # a missing one is created, with its parents, and logged
    assert not missing.exists()
    assert _set_param(ros, "output_dir", str(missing / "deeper")).successful
    out = missing / "deeper"
    r = _trigger(ros, "save")
    assert r.success, r.message
    path = Path(r.message)
    assert path.parent == out and path.exists()
    ros.spin_until(lambda: f"created output_dir {str(out)!r}" in store.output(), timeout=10,
                   what="the creation logged")
    got = _valid(path, model)
    ms, want = got.model("linkage"), sent.model("linkage")
    assert ms is not None and want is not None
    assert got.stamp == sent.stamp
    assert ms.pose == want.pose
    for name in ("joint A", "joint B"):
        assert ms.joint(name) == want.joint(name)
    for name in ("link A", "link B", "link C"):
        assert np.allclose(ms.link(name).pose, want.link(name).pose, atol=1e-15, rtol=0)  # type: ignore[union-attr]
    assert got.frame("table") == sent.frame("table")
    # rejected parameter updates say why
    bad = _set_param(ros, "checkpoint_period", -1.0)
    assert not bad.successful and bad.reason
    bad = _set_param(ros, "keep_last", -3)
    assert not bad.successful and bad.reason
    # rosgraph_msgs is a dependency (requirements/ros.txt, package.xml): publish_clock is accepted
    # (the refusal without it: test_state_store_recording.py; /clock itself: its playback test)
    clock = _set_param(ros, "publish_clock", True)
    assert clock.successful, clock.reason
    assert store.alive()


def _mount_tmpfs(path: Path, options: str) -> bool:
    path.mkdir()
    r = subprocess.run(["mount", "-t", "tmpfs", "-o", options, "tmpfs", str(path)], capture_output=True)
    return r.returncode == 0


def test_read_only_and_full_directories_answer_false(ros: RosHarness, tmp_path: Path) -> None:
    ro, full = tmp_path / "ro", tmp_path / "full"
    if os.geteuid() == 0:
        if not _mount_tmpfs(ro, "ro,size=64k"):
            pytest.skip("cannot mount a tmpfs here (no CAP_SYS_ADMIN): no read-only directory for root")
    else:
        ro.mkdir()
        ro.chmod(0o555)
    mounted_full = _mount_tmpfs(full, "size=16k") if os.geteuid() == 0 else False
    try:
        ros.start_node("state_store", {"output_dir": str(ro)})
        _publish_world_state(ros, pendulum_state(0.1, 0.2))
        ros.wait_for_subscriber("world_state")
        ros.spin_until(lambda: "no snapshot" not in _trigger(ros, "save").message, timeout=10,
                       what="snapshot received")
        r = _trigger(ros, "save")
        assert not r.success and ("Read-only" in r.message or "Permission" in r.message), r.message
        assert list(ro.iterdir()) == []
        if mounted_full:
            (full / "filler").write_bytes(b"\0" * 16 * 1024)  # fill the file system
            assert _set_param(ros, "output_dir", str(full)).successful
            r = _trigger(ros, "save")
            assert not r.success and "No space left" in r.message, r.message
            assert sorted(p.name for p in full.iterdir()) == ["filler"]  # no torn or temporary file left
        r = _trigger(ros, "save")  # still answering
        assert not r.success
    finally:
        for d in (ro, full):
            subprocess.run(["umount", str(d)], capture_output=True)
    if not mounted_full:
        pytest.skip("full disk not checked: cannot mount a tiny tmpfs without root")


# -- checkpoints -----------------------------------------------------------------------------------
def test_checkpoints_rotate_and_survive_kill_9(ros: RosHarness, tmp_path: Path) -> None:
    from std_msgs.msg import String

    from robot_state_format.playback.restart_files import list_restart_files

    model = load_model_file(MODEL_FILE)
    out = tmp_path / "ckpt"
    out.mkdir()
    store = ros.start_node("state_store", {"output_dir": str(out), "checkpoint_period": 0.01, "keep_last": 3})
    pub = ros.node.create_publisher(String, "world_state", LATCHED)
    ros.wait_for_subscriber("world_state")
    k = [0]

    def publish_next() -> None:
        k[0] += 1
        a = 0.001 * k[0]
        pub.publish(String(data=write_world_state(pendulum_state(a, -a, sec=1000 + k[0], nanosec=0))))

    # a storm: a new snapshot every few ms, a checkpoint every 10 ms
    ros.spin_until(lambda: len(list_restart_files(out)) >= 3, timeout=10, what="3 checkpoints", every=publish_next)
    deadline = time.monotonic() + 1.0
    while time.monotonic() < deadline:
        publish_next()
        ros.spin_for(0.003)
    # quiet: the last snapshot becomes the newest checkpoint and rotation leaves exactly three
    last_ns = (1000 + k[0]) * 10**9

    def settled() -> bool:
        files = list_restart_files(out, kind="checkpoint")
        return len(files) == 3 and max(f.stamp_ns for f in files) == last_ns

    ros.spin_until(settled, timeout=10, what="three checkpoints, the newest holding the last snapshot")
    # kill -9 in the middle of the storm
    for _ in range(30):
        publish_next()
        ros.spin_for(0.002)
    store.stopping = True  # killed on purpose
    os.kill(store.pid, signal.SIGKILL)
    store.proc.wait()
    restart_files = sorted(out.glob("*.usdf"))
    assert restart_files
    for p in restart_files:
        _valid(p, model)
    # a stray temporary of a cut-off write is hidden, and the next start removes it
    assert all(p.name.startswith(".") for p in out.iterdir() if p.suffix != ".usdf")
    (out / ".linkage_checkpoint_19700101T000000.000000000Z.usdf.abc123.tmp").write_text("<world_sta")
    ros.start_node("state_store", {"output_dir": str(out)}, name="restarted")
    ros.spin_until(lambda: all(p.suffix == ".usdf" for p in out.iterdir()), timeout=10,
                   what="stray temporaries removed by the restarted node")
    for p in out.iterdir():
        _valid(p, model)


# -- replay ----------------------------------------------------------------------------------------
def _tf_pose(t: Any) -> np.ndarray:
    from robot_state_format.ros.messages import transform_msg_to_matrix

    return transform_msg_to_matrix(t.transform)


def test_replay_publishes_the_file_to_late_subscribers(ros: RosHarness, tmp_path: Path) -> None:
    from sensor_msgs.msg import JointState as JointStateMsg
    from std_msgs.msg import String
    from tf2_msgs.msg import TFMessage

    from robot_state_format.spatial import pose6_to_transform
    from robot_state_format.usdf.reader import read_world_state

    a, b = 0.7, -0.4
    sent = pendulum_state(a, b)
    file = tmp_path / "linkage_restart.usdf"
    file.write_text(write_world_state(sent))
    bad = tmp_path / "bad.usdf"
    wrong = pendulum_state(a, b)
    wrong.model_states[0].joint_states[1] = JointState("joint Z", (0.0,))
    bad.write_text(write_world_state(wrong))

    ros.start_node("state_store", {"model_file": MODEL_FILE, "replay_file": str(bad), "publish_link_tf": True})
    early = ros.subscribe("joint_states", JointStateMsg, LATCHED)
    ros.wait_for_matched(early.subscription)
    r = _trigger(ros, "replay")
    assert not r.success and "joint Z" in r.message and "refused" in r.message
    ros.spin_for(0.3)
    assert len(early) == 0  # nothing published
    assert _set_param(ros, "replay_file", str(file)).successful
    r = _trigger(ros, "replay")
    assert r.success, r.message
    # subscribers that arrive after the replay still get everything
    js = ros.collect("joint_states", JointStateMsg, LATCHED, timeout=10)[0]
    assert list(js.name) == ["joint A", "joint B"]
    assert list(js.position) == [a, b] and list(js.velocity) == [0.1, -0.3] and list(js.effort) == [0.2, 0.4]
    late_volatile = ros.collect("joint_states", JointStateMsg, 10, timeout=10)[0]  # re-sent on match
    assert list(late_volatile.position) == [a, b]
    ws = ros.collect("world_state", String, LATCHED, timeout=10)[0]
    assert read_world_state(ws.data).state == sent
    tf = ros.collect("/tf_static", TFMessage, LATCHED, timeout=10)[0]
    edges = {(t.header.frame_id, t.child_frame_id): _tf_pose(t) for t in tf.transforms}
    assert np.allclose(edges[("world", "table")], pose6_to_transform((1.0, 2.0, 0.0, 0.0, 0.0, 0.5)), atol=1e-12,
                       rtol=0)
    assert np.allclose(edges[("world", "link A")], pose6_to_transform((0.5, 0.0, 0.0, 0.0, 0.0, 0.25)), atol=1e-12,
                       rtol=0)
    # joint transforms: link B in link A, link C in link B, by hand
    assert np.allclose(edges[("link A", "link B")], pose6_to_transform((0, 0, -0.05, 0, a, 0)), atol=1e-12, rtol=0)
    assert np.allclose(edges[("link B", "link C")], pose6_to_transform((0, 0, -1, 0, b, 0)), atol=1e-12, rtol=0)


def test_snapshot_built_from_joint_states_when_none_is_published(ros: RosHarness, tmp_path: Path) -> None:
    from sensor_msgs.msg import JointState as JointStateMsg

    model = load_model_file(MODEL_FILE)
    ros.start_node("state_store", {"output_dir": str(tmp_path), "model_file": MODEL_FILE})
    pub = ros.node.create_publisher(JointStateMsg, "joint_states", 10)
    ros.wait_for_matched(pub)
    a, b = -0.6, 0.9
    msg = JointStateMsg(name=["joint A", "joint B"], position=[a, b], velocity=[0.5, -0.25])
    msg.header.stamp.sec, msg.header.stamp.nanosec = 1234, 5678

    def saved() -> bool:
        pub.publish(msg)
        return _trigger(ros, "save").success

    ros.spin_until(saved, timeout=10, what="a save from joint_states")
    files = sorted(tmp_path.glob("*.usdf"))
    state = _valid(files[-1], model)
    ms = state.model("linkage")
    assert ms is not None and state.stamp == Stamp(1234, 5678)
    assert ms.joint("joint A").positions == (a,) and ms.joint("joint B").positions == (b,)  # type: ignore[union-attr]
    assert ms.joint("joint A").velocities == (0.5,)  # type: ignore[union-attr]
    want_c = (-math.sin(a), 0.0, -0.05 - math.cos(a), 0.0, a + b, 0.0)
    assert np.allclose(ms.link("link C").pose, want_c, atol=1e-12, rtol=0)  # type: ignore[union-attr]


def test_save_from_live_state_publisher_matches_published_joints(ros: RosHarness, tmp_path: Path) -> None:
    """joint_states → state_publisher → world_state → state_store ~/save: values and poses as sent."""
    from sensor_msgs.msg import JointState as JointStateMsg

    model = load_model_file(MODEL_FILE)
    ros.start_node("state_publisher", {"model_file": MODEL_FILE, "snapshot_frequency": 50.0})
    ros.start_node("state_store", {"output_dir": str(tmp_path), "model_file": MODEL_FILE})
    pub = ros.node.create_publisher(JointStateMsg, "joint_states", 10)
    ros.wait_for_matched(pub, count=2)
    a, b = 0.45, 0.35

    def saved_with_values() -> bool:
        msg = JointStateMsg(name=["joint A", "joint B"], position=[a, b])
        msg.header.stamp = ros.node.get_clock().now().to_msg()
        pub.publish(msg)
        r = _trigger(ros, "save")
        if not r.success:
            return False
        ms = read_world_state_file(r.message).state.model("linkage")
        return ms is not None and ms.joint("joint A").positions == (a,)  # type: ignore[union-attr]

    ros.spin_until(saved_with_values, timeout=15, what="a saved snapshot holding the published values")
    newest = max(tmp_path.glob("*.usdf"), key=lambda p: p.stat().st_mtime_ns)
    ms = _valid(newest, model).model("linkage")
    assert ms is not None
    assert ms.joint("joint A").positions == (a,) and ms.joint("joint B").positions == (b,)  # type: ignore[union-attr]
    assert np.allclose(ms.link("link B").pose, (0.0, 0.0, -0.05, 0.0, a, 0.0), atol=1e-12,
                       rtol=0)  # type: ignore[union-attr]
    want_c = (-math.sin(a), 0.0, -0.05 - math.cos(a), 0.0, a + b, 0.0)
    assert np.allclose(ms.link("link C").pose, want_c, atol=1e-12, rtol=0)  # type: ignore[union-attr]


def test_replay_of_a_world_poses_every_model_on_tf_static(ros: RosHarness, tmp_path: Path) -> None:
    from test_replay_edges import HALF_PI, WORLD_SDF, world_state
    from tf2_msgs.msg import TFMessage

    from robot_state_format.spatial import pose6_to_transform

    (tmp_path / "yard.sdf").write_text(WORLD_SDF)
    file = tmp_path / "yard_restart.usdf"
    file.write_text(write_world_state(world_state()))
    ros.start_node("state_store", {"model_file": str(tmp_path / "yard.sdf"), "replay_file": str(file)})
    r = _trigger(ros, "replay")
    assert r.success, r.message
    tf = ros.collect("/tf_static", TFMessage, LATCHED, timeout=10)[0]
    edges = {(t.header.frame_id, t.child_frame_id): _tf_pose(t) for t in tf.transforms}
    # hand-derived in test_replay_edges.py: each model where the restart file put it
    assert np.allclose(edges[("world", "cart::chassis")], pose6_to_transform((4, 5, 0.3, 0, 0, 1 + HALF_PI)),
                       atol=1e-12, rtol=0)
    assert np.allclose(edges[("world", "crate::body")], pose6_to_transform((0, -1, 0.25, 0, 0, 0.2)), atol=1e-12,
                       rtol=0)
