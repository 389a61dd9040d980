"""Without the optional dependencies (mcap, mcap-ros2-support, orjson, numba: no rosdep key on some distro, or the
``record``/``fast`` extras not installed) the nodes and the command line work; what needs them says so in one
line, naming the apt and pip packages, and never prints a traceback.

The blocked environment is made with a ``sitecustomize`` on PYTHONPATH that refuses those imports (as if they were
not installed), so these tests run in any venv, with or without the packages."""

from __future__ import annotations

import math
import os
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from repo_paths import REPO_ROOT

from robot_state_format.lazy_modules import MissingDependencyError, missing_dependency_text, optional_module
from robot_state_format.model import load_model_file
from robot_state_format.usdf import snapshot_text
from robot_state_format.usdf.build import SnapshotBuilder
from robot_state_format.usdf.types import JointState, ModelState, Stamp, WorldState
from robot_state_format.usdf.writer import write_world_state

ROOT = REPO_ROOT
SAMPLES = ROOT / "robot_state_format" / "samples"
MODEL_FILE = str(SAMPLES / "double_pendulum.urdf")
BLOCKED = ("mcap", "mcap_ros2", "orjson", "numba", "llvmlite")
MCAP_HINT = "pip install mcap mcap-ros2-support"


@pytest.fixture
def blocked_env(tmp_path: Path) -> dict[str, str]:
    """This process's environment plus a PYTHONPATH directory whose sitecustomize makes BLOCKED unimportable."""
    site = tmp_path / "blocker"
    site.mkdir()
    (site / "sitecustomize.py").write_text(textwrap.dedent(f"""\
        import sys

        class _NotInstalled:
            def find_spec(self, name, path=None, target=None):
                if name.split(".")[0] in {BLOCKED!r}:
                    raise ModuleNotFoundError(f"No module named {{name!r}}", name=name)
                return None

        sys.meta_path.insert(0, _NotInstalled())
        """))
    path = os.environ.get("PYTHONPATH", "")
    return dict(os.environ, PYTHONPATH=f"{site}{os.pathsep}{path}" if path else str(site))


def _cli(env: dict[str, str], *args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "robot_state_format", *args], capture_output=True, text=True,
                          env=env, cwd=cwd, timeout=120, check=False)


def test_the_blocker_blocks(blocked_env: dict[str, str]) -> None:
    code = ("import importlib, sys\n"
            "for n in " + repr(BLOCKED) + ":\n"
            "    try:\n        importlib.import_module(n)\n    except ImportError:\n        continue\n"
            "    sys.exit(n + ' imported')\n"
            "import robot_state_format.recording, robot_state_format.playback.timeline, robot_state_format.usdf.build\n"
            "from robot_state_format.usdf import snapshot_text\n"
            "assert snapshot_text.orjson is None\n")
    r = subprocess.run([sys.executable, "-c", code], env=blocked_env, capture_output=True, text=True, timeout=60,
                       check=False)
    assert r.returncode == 0, r.stdout + r.stderr


def test_missing_dependency_text_names_apt_and_pip() -> None:
    text = missing_dependency_text("mcap.records")
    assert "\n" not in text
    assert MCAP_HINT in text and "robot_state_format[record]" in text and "no apt/rosdep package" in text
    numba = missing_dependency_text("numba")
    assert "apt install python3-numba" in numba and "pip install numba" in numba and "[fast]" in numba
    stand_in = optional_module("surely_not_a_module_rsf")
    with pytest.raises(MissingDependencyError, match="pip install surely_not_a_module_rsf"):
        stand_in.anything  # noqa: B018 - the attribute access is what raises


def test_cli_offline_commands_run_without_optional_packages(blocked_env: dict[str, str], tmp_path: Path) -> None:
    arm = str(SAMPLES / "arm7_gripper.urdf")
    for args in (["check", arm], ["frames", arm], ["fk", arm, "--json"],
                 ["state", "from-model", MODEL_FILE, "--positions", '{"joint A": 0.5, "joint B": -0.25}',
                  "-o", str(tmp_path / "s.usdf")],
                 ["state", "validate", str(tmp_path / "s.usdf"), "--model", MODEL_FILE]):
        r = _cli(blocked_env, *args)
        assert r.returncode == 0, (args, r.stdout, r.stderr)
        assert "Traceback" not in r.stderr and "Error" not in r.stderr, (args, r.stderr)
    assert (tmp_path / "s.usdf").is_file()


def test_cli_recording_commands_say_in_one_line_what_is_missing(blocked_env: dict[str, str],
                                                                tmp_path: Path) -> None:
    rec = tmp_path / "rec"
    rec.mkdir()
    (rec / "rec_0.mcap").write_bytes(b"\x89MCAP0\r\n")
    r = _cli(blocked_env, "reindex", str(rec))
    assert r.returncode == 2, r.stdout + r.stderr
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1, r.stderr
    assert lines[0].startswith("robot-state-format reindex: error: MCAP recording")
    assert MCAP_HINT in lines[0] and "Traceback" not in r.stderr


def _bit_pattern_floats(rng: np.random.Generator, n: int) -> np.ndarray:
    """Finite float64 values from random bit patterns: every exponent, subnormals, signed zeros."""
    v = rng.integers(0, 2**64, size=n, dtype=np.uint64).view(np.float64).copy()
    v[~(np.abs(v) < 1e150)] = 0.5  # finite, and no pose or twist computed from them overflows
    v[:: 97] = -0.0
    return v


def test_snapshot_text_without_orjson_is_bit_identical_on_many_floats(monkeypatch: pytest.MonkeyPatch) -> None:
    """orjson only speeds up the float formatting: the repr path writes the same bytes (600 snapshots: about
    14000 random floats of every magnitude in, with the poses and twists computed from them about 60000 written,
    through both paths, and the writer as the third opinion)."""
    if snapshot_text.orjson is None:
        pytest.skip("orjson is not installed: only the repr path exists here (pip install orjson)")
    model = load_model_file(str(SAMPLES / "arm7_gripper.urdf"))
    b = SnapshotBuilder(model)
    rng = np.random.default_rng(26)
    nq, nv = b.tree.nq, b.tree.nv
    quat_cols = {c + i for _n, c in b.tree.quat_q_cols for i in range(4)}
    checked = 0
    for trial in range(600):
        q = np.zeros(nq)
        plain = [i for i in range(nq) if i not in quat_cols]
        q[plain] = _bit_pattern_floats(rng, len(plain)) if trial % 2 else rng.normal(size=len(plain))
        for _name, c in b.tree.quat_q_cols:
            q[c + 3] = 1.0
        v = _bit_pattern_floats(rng, nv)
        e = _bit_pattern_floats(rng, nv)
        stamp = (int(rng.integers(0, 2**31)), int(rng.integers(0, 10**9)))
        fast = b.build(q, v, e, stamp=stamp)
        monkeypatch.setattr(snapshot_text, "orjson", None)
        slow = b.build(q, v, e, stamp=stamp)
        monkeypatch.undo()
        assert slow == fast
        if trial % 50 == 0:
            assert fast == write_world_state(b.state(q, v, e, stamp=stamp))
        checked += nq + 2 * nv
    assert checked > 10_000


# -- the nodes (the ``ros`` fixture skips, saying why, where rclpy is not installed): state_store (start, ~/save, replay of restart files, recording refused), state_publisher -------

def _no_traceback(proc: Any) -> str:
    out = str(proc.output())
    assert "Traceback" not in out, out
    return out


def test_state_store_saves_and_replays_without_optional_packages(ros: Any, blocked_env: dict[str, str],
                                                                 tmp_path: Path) -> None:
    from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy
    from sensor_msgs.msg import JointState as JointStateMsg
    from std_srvs.srv import Trigger

    env = {"PYTHONPATH": blocked_env["PYTHONPATH"]}
    saved = tmp_path / "saved"
    store = ros.start_node("state_store", {"output_dir": str(saved), "model_file": MODEL_FILE}, env=env)
    pub = ros.node.create_publisher(JointStateMsg, "joint_states", 10)
    ros.wait_for_matched(pub)
    client = ros.wait_for_service("/state_store/save", Trigger)
    a, b = 0.3, -0.4
    msg = JointStateMsg(name=["joint A", "joint B"], position=[a, b])
    msg.header.stamp.sec, msg.header.stamp.nanosec = 1234, 5678

    def save() -> bool:
        pub.publish(msg)
        return bool(ros.call(client, Trigger.Request()).success)

    ros.spin_until(save, timeout=15, what="a save through ~/save without mcap/orjson/numba")
    files = sorted(saved.glob("*.usdf"))
    assert files
    text = files[-1].read_text()
    assert "<joint_state" in text and "0.3" in text

    # the command line's save (a node of its own, from joint_states and the model) works too
    out = tmp_path / "cli"
    out.mkdir()  # (whether save --out creates it is issue 25's output-folder rule, not this test's)
    cli = subprocess.Popen([sys.executable, "-m", "robot_state_format", "save", "--output", str(out), "--timeout", "20",
                            "--model", MODEL_FILE, "--node-name", "cli_save"], stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, text=True, env=blocked_env)
    try:
        while cli.poll() is None:
            pub.publish(msg)
            ros.spin_for(0.1)
        stdout, stderr = cli.communicate(timeout=30)
    finally:
        if cli.poll() is None:
            cli.kill()
    assert cli.returncode == 0 and "Traceback" not in stderr, stdout + stderr
    assert [p.name for p in out.glob("*.usdf")] == [Path(stdout.strip()).name]
    assert store.alive()
    assert store.stop() == 0
    _no_traceback(store)

    # recording needs mcap: one line saying so, and the node keeps running
    rec = ros.start_node("state_store", {"output_dir": str(tmp_path / "rec"), "model_file": MODEL_FILE,
                                         "record": True}, env=env, name="store-record")
    ros.spin_until(lambda: MCAP_HINT in rec.output(), timeout=20, what="the missing-mcap line")
    log = _no_traceback(rec)
    assert len([ln for ln in log.splitlines() if MCAP_HINT in ln]) == 1, log
    assert rec.alive()
    assert rec.stop() == 0

    # replay of a directory of restart files (no MCAP involved)
    d = tmp_path / "files"
    d.mkdir()
    for i in range(3):
        ws = WorldState("w", stamp=Stamp(100, i * 10_000_000), model_states=[ModelState(
            "linkage", joint_states=[JointState("joint A", (0.1 * i,)), JointState("joint B", (-0.1 * i,))])])
        (d / f"f{i}.usdf").write_text(write_world_state(ws))
    player = ros.start_node("state_store", {"playback_path": str(d), "model_file": MODEL_FILE}, env=env,
                            name="store-replay")
    received: list[Any] = []
    # transient_local: the node's writer may see this reader after playback started; its history (the last 10)
    # still holds the 3 states then (this test's volatile writer goes first: it could not match such a reader)
    ros.node.destroy_publisher(pub)
    late_joiner = QoSProfile(depth=10, reliability=ReliabilityPolicy.RELIABLE,
                             durability=DurabilityPolicy.TRANSIENT_LOCAL)
    sub = ros.node.create_subscription(JointStateMsg, "joint_states", received.append, late_joiner)
    ros.wait_for_matched(sub)
    play = ros.wait_for_service("/state_store/play", Trigger)
    assert ros.call(play, Trigger.Request()).success
    ros.spin_until(lambda: len(received) >= 3, timeout=15, what="3 replayed restart files")
    assert [list(m.position) for m in received[:3]] == [[0.1 * i, -0.1 * i] for i in range(3)]
    ros.node.destroy_subscription(sub)
    assert player.stop() == 0
    _no_traceback(player)


def test_state_publisher_publishes_tf_without_optional_packages(ros: Any, blocked_env: dict[str, str]) -> None:
    from sensor_msgs.msg import JointState as JointStateMsg
    from tf2_msgs.msg import TFMessage

    proc = ros.start_node("state_publisher", {"model_file": MODEL_FILE},
                          env={"PYTHONPATH": blocked_env["PYTHONPATH"]})
    pub = ros.node.create_publisher(JointStateMsg, "joint_states", 10)
    ros.wait_for_matched(pub)
    a = 0.5
    got: list[Any] = []
    sub = ros.node.create_subscription(TFMessage, "/tf", got.append, 100)

    def moved() -> bool:
        pub.publish(JointStateMsg(name=["joint A", "joint B"], position=[a, 0.0]))
        return any(t.child_frame_id == "link B" for m in got for t in m.transforms)

    ros.spin_until(moved, timeout=15, what="TF of link B from state_publisher without numba")
    t = next(t for m in got for t in m.transforms if t.child_frame_id == "link B")
    # joint A turns link B about y by a: the rotation's quaternion is (0, sin(a/2), 0, cos(a/2))
    assert math.isclose(t.transform.rotation.y, math.sin(a / 2), rel_tol=0, abs_tol=1e-12)
    assert math.isclose(t.transform.rotation.w, math.cos(a / 2), rel_tol=0, abs_tol=1e-12)
    ros.node.destroy_subscription(sub)
    assert proc.stop() == 0
    _no_traceback(proc)
    # its snapshots (10 Hz by default) go through repr: one line says so, once, and how to get orjson
    log = proc.output()
    assert len([ln for ln in log.splitlines() if "orjson is not installed" in ln]) == 1, log
    assert "pip install orjson" in log
