"""A recording is a whole session: checked with independent readers and an independent kinematics library.

One session is recorded over real DDS while a UR5 (example-robot-data, used by no other recording test)
moves: state_publisher (its /tf_static and robot_description published before the recording starts, so
the recorder joins late) and trajectory_source, recorded by ``robot-state-format record``. Then:

* mcap-ros2-support's decoder reads /tf, /tf_static, /robot_description, /joint_states, /world_state;
* the TF composed from the file equals Pinocchio's forward kinematics of the model *read from the
  recorded robot_description*, at the recorded joint states;
* rosbags and the MCAP summary count what metadata.yaml says; the rosbag2 metadata record holds the same;
  each channel's type hash equals the one the installed interface package ships (its ``.json``);
* ``reindex`` of the intact recording gives its metadata.yaml;
* replay publishes the recorded TF as recorded, or recomputes it from the joint states (``--tf-source``).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import yaml

pytest.importorskip("rclpy", reason="rclpy is not installed (run the tests through ./run test)")
pin = pytest.importorskip("pinocchio", reason="pin (Pinocchio) is not installed")

from rclpy.qos import DurabilityPolicy, HistoryPolicy, QoSProfile, ReliabilityPolicy  # noqa: E402
from real_robots import SKIP_REASON, real_urdf  # noqa: E402
from ros_harness import RosHarness  # noqa: E402

ROBOT = real_urdf("ur_description/urdf/ur5_robot.urdf")
pytestmark = pytest.mark.skipif(ROBOT is None, reason=SKIP_REASON)

LATCHED = QoSProfile(depth=1, history=HistoryPolicy.KEEP_LAST, reliability=ReliabilityPolicy.RELIABLE,
                     durability=DurabilityPolicy.TRANSIENT_LOCAL)
RELIABLE = QoSProfile(depth=1000, history=HistoryPolicy.KEEP_LAST, reliability=ReliabilityPolicy.RELIABLE)
SESSION = {"/tf", "/tf_static", "/robot_description", "/joint_states", "/world_state"}


@pytest.fixture(scope="module")
def session(ros_module: RosHarness, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Record a moving UR5 (``robot-state-format record`` until Ctrl-C); everything is stopped after."""
    from tf2_msgs.msg import TFMessage

    ros = ros_module
    out = tmp_path_factory.mktemp("session")
    publisher = ros.start_node("state_publisher", {"model_file": str(ROBOT), "publish_frequency": 0.0})
    ros.collect("/tf_static", TFMessage, LATCHED, timeout=20)  # latched before the recorder exists
    source = ros.start_node("robot_state_format.ros.trajectory_source", args=["--model", str(ROBOT), "--rate", "50"])
    ros.collect("/tf", TFMessage, RELIABLE, timeout=20)  # the robot moves
    # recorded until the file holds enough of the moving robot (DDS discovery may take 2 s under load)
    recorder = ros.start_node("robot-state-format", args=["record", "--output", str(out)])
    ros.spin_until(lambda: _enough(out, 60), timeout=40, what="60 /tf and joint_states messages recorded")
    assert recorder.stop() == 0, recorder.output()
    assert source.stop() == 0 and publisher.stop() == 0
    (bag,) = out.iterdir()
    assert f"{bag} (" in recorder.output()
    return bag


def _enough(out: Path, n: int, topics: tuple[str, ...] = ("/tf", "/joint_states")) -> bool:
    """The recording in progress under ``out`` holds ``n`` messages of each of ``topics`` (complete chunks)."""
    from robot_state_format.recording import read_recording

    bags = list(out.iterdir())
    if not bags or not list(bags[0].glob("*.mcap")):
        return False
    counts = dict.fromkeys(topics, 0)
    for m in read_recording(bags[0]):
        if m.topic in counts:
            counts[m.topic] += 1
    return min(counts.values()) >= n


def _decoded(bag: Path) -> dict[str, list[Any]]:
    """Every message by topic, decoded by mcap-ros2-support (log-time order)."""
    from mcap.reader import make_reader
    from mcap_ros2.decoder import DecoderFactory

    out: dict[str, list[Any]] = {}
    with open(next(bag.glob("*.mcap")), "rb") as f:
        for _, ch, _, msg in make_reader(f, decoder_factories=[DecoderFactory()]).iter_decoded_messages():
            out.setdefault(ch.topic, []).append(msg)
    return out


def _matrix(t: Any) -> np.ndarray:
    q = t.rotation
    return pin.XYZQUATToSE3(np.array([t.translation.x, t.translation.y, t.translation.z, q.x, q.y, q.z, q.w])
                            ).homogeneous


def _stamp(h: Any) -> int:
    return int(h.stamp.sec) * 10**9 + int(h.stamp.nanosec)


def _compose(edges: dict[str, tuple[str, np.ndarray]], frame: str, root: str) -> np.ndarray | None:
    x = np.eye(4)
    seen = 0
    while frame != root:
        if frame not in edges or seen > 100:
            return None
        parent, x_pc = edges[frame]
        x = x_pc @ x
        frame = parent
        seen += 1
    return x


def test_session_holds_tf_model_and_states(session: Path) -> None:
    msgs = _decoded(session)
    assert set(msgs) >= SESSION, sorted(msgs)
    # 50 Hz for 4 s, less DDS discovery (a reliable match can take 2 s here)
    assert len(msgs["/joint_states"]) >= 50
    assert len(msgs["/tf"]) >= 50 and len(msgs["/tf_static"]) >= 1 and len(msgs["/world_state"]) >= 1
    assert len(msgs["/robot_description"]) == 1  # latched: joined late, received anyway
    assert 'name="ur5"' in msgs["/robot_description"][0].data
    assert "<world_state" in msgs["/world_state"][-1].data
    static = {t.child_frame_id for t in msgs["/tf_static"][-1].transforms}
    assert {"base_link", "base", "ee_link", "tool0"} <= static


def test_tf_from_the_file_equals_pinocchio_at_the_recorded_joint_states(session: Path) -> None:
    msgs = _decoded(session)
    # the kinematics come from the recording alone: Pinocchio reads the recorded robot_description
    pmodel = pin.buildModelFromXML(msgs["/robot_description"][0].data)
    pdata = pmodel.createData()
    static = {t.child_frame_id: (t.header.frame_id, _matrix(t.transform)) for t in msgs["/tf_static"][-1].transforms}
    states = {_stamp(m.header): m for m in msgs["/joint_states"]}
    links = [f.name for f in pmodel.frames if f.type == pin.FrameType.BODY and f.name != "world"]
    compared = 0
    for tf in msgs["/tf"]:
        stamps = {_stamp(t.header) for t in tf.transforms}
        assert len(stamps) == 1
        js = states.get(stamps.pop())
        if js is None:
            continue
        q = pin.neutral(pmodel)
        for name, value in zip(js.name, js.position, strict=True):
            q[pmodel.joints[pmodel.getJointId(name)].idx_q] = value
        pin.framesForwardKinematics(pmodel, pdata, q)
        edges = dict(static)
        edges.update({t.child_frame_id: (t.header.frame_id, _matrix(t.transform)) for t in tf.transforms})
        for link in links:
            x = _compose(edges, link, "world")
            assert x is not None, f"no TF chain from world to {link}"
            np.testing.assert_allclose(x, pdata.oMf[pmodel.getFrameId(link)].homogeneous, atol=1e-9, rtol=0)
        compared += 1
    assert compared >= 50
    assert len(links) == 10


def _share_hash(type_name: str) -> str:
    pkg, _, name = type_name.split("/")
    path = Path(sys.prefix) / "share" / pkg / "msg" / f"{name}.json"
    return str(json.loads(path.read_text())["type_hashes"][0]["hash_string"])


def test_counts_hashes_and_rosbag2_record_agree_with_metadata_yaml(session: Path) -> None:
    from mcap.reader import make_reader
    from rosbags.rosbag2 import Reader

    from robot_state_format.recording import reindex

    info = yaml.safe_load((session / "metadata.yaml").read_text())["rosbag2_bagfile_information"]
    counts = {t["topic_metadata"]["name"]: t["message_count"] for t in info["topics_with_message_count"]}
    assert set(counts) >= SESSION
    decoded = _decoded(session)
    assert {t: len(m) for t, m in decoded.items()} == {t: n for t, n in counts.items() if n}
    assert info["message_count"] == sum(counts.values()) == info["files"][0]["message_count"]
    with Reader(session) as r:  # rosbags
        assert {c.topic: c.msgcount for c in r.connections} == counts
        assert {c.topic: c.digest for c in r.connections} == {
            t["topic_metadata"]["name"]: t["topic_metadata"]["type_description_hash"]
            for t in info["topics_with_message_count"]}
    with open(next(session.glob("*.mcap")), "rb") as f:
        reader = make_reader(f)
        summary = reader.get_summary()
        assert summary is not None and summary.statistics is not None
        stats = summary.statistics
        assert {ch.topic: stats.channel_message_counts.get(cid, 0) for cid, ch in summary.channels.items()} == counts
        assert stats.message_start_time == info["starting_time"]["nanoseconds_since_epoch"]
        assert stats.message_end_time - stats.message_start_time == info["duration"]["nanoseconds"]
        for ch in summary.channels.values():
            type_name = summary.schemas[ch.schema_id].name
            assert ch.metadata["topic_type_hash"] == _share_hash(type_name), ch.topic
            assert summary.schemas[ch.schema_id].encoding == "ros2msg"
        static_qos = yaml.safe_load(next(ch for ch in summary.channels.values()
                                         if ch.topic == "/tf_static").metadata["offered_qos_profiles"])
        assert static_qos and all(q["durability"] == "transient_local" for q in static_qos)
        records = [m for m in reader.iter_metadata() if m.name == "rosbag2"]
    assert len(records) == 1
    assert yaml.safe_load(records[0].metadata["serialized_metadata"]) == info
    assert reindex(session, write=False).info == info  # an intact file: reindex gives the same


def _play(ros: RosHarness, bag: Path, *extra: str) -> tuple[list[Any], list[Any]]:
    """Replay ``bag`` through the CLI; the /tf and /tf_static messages received."""
    from sensor_msgs.msg import JointState
    from tf2_msgs.msg import TFMessage

    tf = ros.subscribe("/tf", TFMessage, RELIABLE)
    static = ros.subscribe("/tf_static", TFMessage, LATCHED)
    ros.subscribe("joint_states", JointState, RELIABLE)
    proc = ros.start_node("robot-state-format", args=["replay", str(bag), "--speed", "1", "--wait-for-subscribers",
                                                      "1", *extra])
    ros.spin_until(lambda: not proc.alive(), timeout=30, what="playback to end")
    assert proc.returncode == 0, proc.output()
    assert proc.stop() == 0
    seen = -1
    while seen != len(tf.messages):  # take in everything delivered (a loaded machine runs callbacks late)
        seen = len(tf.messages)
        ros.spin_for(0.5)
    ros.node.destroy_subscription(tf.subscription)
    ros.node.destroy_subscription(static.subscription)
    return tf.messages, static.messages


def _tf_tuples(msg: Any) -> list[tuple[Any, ...]]:
    return [(t.header.frame_id, t.child_frame_id, _stamp(t.header), t.transform.translation.x,
             t.transform.translation.y, t.transform.translation.z, t.transform.rotation.x, t.transform.rotation.y,
             t.transform.rotation.z, t.transform.rotation.w) for t in msg.transforms]


def test_replay_publishes_the_recorded_tf(ros: RosHarness, session: Path) -> None:
    recorded = [_tf_tuples(m) for m in _decoded(session)["/tf"]]
    got, static = _play(ros, session)
    got_t = [_tf_tuples(m) for m in got]
    assert len(got_t) >= len(recorded) - 5  # all but those sent before this subscription matched
    first = recorded.index(got_t[0])
    assert got_t == recorded[first:]  # as recorded: same frames, stamps, values, order
    assert static and {t.child_frame_id for t in static[-1].transforms} >= {"base_link", "ee_link", "tool0"}


def test_replay_recomputes_tf_from_the_joint_states_when_asked(ros: RosHarness, session: Path) -> None:
    decoded = _decoded(session)
    recorded = {r[0][2]: r for r in (_tf_tuples(m) for m in decoded["/tf"])}
    # TF can be recomputed only for the joint states the recording holds (joint_states is best effort:
    # a loaded machine drops some while state_publisher's reliable /tf keeps them all)
    comparable = recorded.keys() & {_stamp(m.header) for m in decoded["/joint_states"]}
    assert len(comparable) >= 25
    got, static = _play(ros, session, "--tf-source", "computed", "--model", str(ROBOT))
    compared = 0
    for msg in got:  # one per played joint state (those recorded before /tf was discovered too)
        mine = _tf_tuples(msg)
        theirs = recorded.get(mine[0][2])  # state_publisher's TF at the same joint state (same stamp)
        if theirs is None:
            continue
        assert [m[:3] for m in mine] == [t[:3] for t in theirs]
        np.testing.assert_allclose([m[3:] for m in mine], [t[3:] for t in theirs], atol=1e-12, rtol=0)
        compared += 1
    assert compared >= len(comparable) - 5
    assert static and {t.child_frame_id for t in static[-1].transforms} >= {"base_link", "ee_link", "tool0"}


def test_record_topics_flag_keeps_namespaced_names(ros: RosHarness, tmp_path: Path) -> None:
    from std_msgs.msg import String

    ros.start_node("state_publisher", {"model_file": str(ROBOT)}, ros_args=["-r", "__ns:=/r1"])
    ros.collect("/r1/robot_description", String, LATCHED, timeout=20)
    recorder = ros.start_node("robot-state-format", args=["record", "--output", str(tmp_path), "--topics",
                                                          "robot_description", "/tf_static", "--ros-args", "-r",
                                                          "__ns:=/r1"])
    ros.spin_until(lambda: _enough(tmp_path, 1, ("/r1/robot_description", "/tf_static")), timeout=30,
                   what="the latched topics recorded")
    assert recorder.stop() == 0, recorder.output()
    (bag,) = tmp_path.iterdir()
    msgs = _decoded(bag)
    assert set(msgs) == {"/r1/robot_description", "/tf_static"}  # what was asked, under the resolved names
    assert 'name="ur5"' in msgs["/r1/robot_description"][0].data
