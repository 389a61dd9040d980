"""Issue 33 items 4 and 6 against running nodes: a peer that names a FIFO, a device or an over-long
path in a parameter gets ``success: false`` (or a refused parameter) at once, and the node keeps
answering; a node started with such a path, or with a params file rcl refuses (a YAML alias bomb),
exits 2 with one line; a stop that cannot be acted on (the main thread blocked in a system call) still
ends the process on SIGTERM.

Before: ``playback_path`` set to a FIFO and ``~/play`` blocked the executor forever (no later
``~/save`` answered, SIGINT/SIGTERM did not stop the node); ``model_file:=<300 chars>`` and the
alias bomb ended in tracebacks.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from repo_paths import REPO_ROOT

pytest.importorskip("rclpy", reason="rclpy is not installed (run the tests through ./run test)")

from optional import MCAP, absent
from ros_harness import NodeProcess, RosHarness

ROOT = REPO_ROOT
MODEL = str(ROOT / "robot_state_format" / "samples" / "double_pendulum.urdf")
NODE = "/state_store"
LONG = "/tmp/" + "a" * 300


def _trigger(ros: RosHarness, name: str, timeout: float = 10.0) -> Any:
    from std_srvs.srv import Trigger

    client = ros.wait_for_service(f"{NODE}/{name}", Trigger, timeout=30.0)
    return ros.call(client, Trigger.Request(), timeout=timeout)


def _set(ros: RosHarness, name: str, value: Any) -> Any:
    from rcl_interfaces.srv import SetParameters
    from rclpy.parameter import Parameter

    client = ros.wait_for_service(f"{NODE}/set_parameters", SetParameters, timeout=30.0)
    req = SetParameters.Request(parameters=[Parameter(name, value=value).to_parameter_msg()])
    return ros.call(client, req, timeout=10.0).results[0]


@pytest.mark.timeout(180)
def test_state_store_answers_after_a_peer_names_fifos_devices_and_long_paths(ros: RosHarness, tmp_path: Path) -> None:
    fifo = tmp_path / "rec.mcap"
    os.mkfifo(fifo)
    recording = tmp_path / "recording"
    recording.mkdir()
    os.mkfifo(recording / "recording_0.mcap")
    restart_fifo = tmp_path / "state.usdf"
    os.mkfifo(restart_fifo)
    store = ros.start_node("state_store", {"model_file": MODEL, "output_dir": str(tmp_path / "out")})
    expected = {str(fifo): "is a FIFO (named pipe)", str(recording): "is a FIFO (named pipe)",
                "/dev/zero": "is a character device", LONG: "too long"}
    if absent(*MCAP):  # a recording's folder is read through mcap: without it that is the one-line answer
        expected[str(recording)] = "need mcap"
    for path, why in expected.items():
        assert _set(ros, "playback_path", path).successful
        start = time.monotonic()
        r = _trigger(ros, "play")
        assert not r.success and why in (r.message.lower() if why == "too long" else r.message), r.message
        assert time.monotonic() - start < 5.0
        assert len(r.message) < 400, r.message  # a 300-character name is shortened
    for path, why in ((restart_fifo, "is a FIFO (named pipe)"), ("/dev/zero", "is a character device")):
        assert _set(ros, "replay_file", str(path)).successful
        r = _trigger(ros, "replay")
        assert not r.success and why in r.message, r.message
    # a peer's model_file naming a FIFO or a name too long: refused, the model stays
    for path, why in ((str(restart_fifo), "FIFO"), (LONG, "too long")):
        result = _set(ros, "model_file", path)
        assert not result.successful and why in result.reason, result.reason
    # the executor was never blocked: save still answers (nothing measured yet: refused with the reason)
    r = _trigger(ros, "save")
    assert not r.success and r.message, r.message
    assert store.alive(), store.describe()
    assert "Traceback" not in store.output(), store.describe()
    start = time.monotonic()
    store.proc.send_signal(signal.SIGTERM)
    try:  # the bound is the wait's: an assertion of the elapsed time after it could not fail
        code = store.proc.wait(timeout=10)
    except subprocess.TimeoutExpired:
        pytest.fail(f"still running {time.monotonic() - start:.1f} s after SIGTERM\n{store.describe()}")
    assert code == 0, store.describe()


def _exited(node: NodeProcess, timeout: float = 30.0) -> tuple[int, list[str]]:
    code = node.proc.wait(timeout=timeout)
    return code, [line for line in node.output().splitlines() if line.strip()]


def _alias_bomb(path: Path) -> Path:
    lines = ["a0: &a0 [x, x, x, x, x, x, x, x, x]"]
    lines += [f"a{i}: &a{i} [" + ", ".join([f"*a{i - 1}"] * 9) + "]" for i in range(1, 12)]
    path.write_text("/**:\n  ros__parameters:\n" + "".join(f"    {line}\n" for line in lines))
    return path


@pytest.mark.timeout(180)
@pytest.mark.parametrize("node", ["state_publisher", "state_store"])
def test_a_node_started_with_a_path_too_long_or_a_params_bomb_exits_2_in_one_line(
        ros: RosHarness, tmp_path: Path, node: str) -> None:
    code, lines = _exited(ros.start_node(node, {"model_file": LONG}))
    assert code == 2 and len(lines) == 1, lines
    assert lines[0].startswith(f"{node}: error: ") and "too long" in lines[0].lower() and len(lines[0]) < 400, lines
    code, lines = _exited(ros.start_node(node, ros_args=["--params-file", str(_alias_bomb(tmp_path / "b.yaml"))]))
    assert code == 2 and len(lines) == 1, lines
    assert lines[0].startswith(f"{node}: error: ") and "Will not support aliasing" in lines[0], lines
    fifo = tmp_path / "p.yaml"
    os.mkfifo(fifo)
    code, lines = _exited(ros.start_node(node, ros_args=["--params-file", str(fifo)]))
    assert code == 2 and lines == [f"{node}: error: --params-file {fifo}: is a FIFO (named pipe), not a regular file"]


BLOCKED = """
import sys
from robot_state_format.ros import spin

def make():
    print("blocking", flush=True)
    open(sys.argv[1], "rb")  # a FIFO without a writer: blocks in the system call (no gate on purpose)

sys.exit(spin.run_main("blocked", make, None, []))
"""


@pytest.mark.timeout(60)
def test_a_stop_the_main_thread_cannot_see_is_forced(tmp_path: Path) -> None:
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    proc = subprocess.Popen([sys.executable, "-c", BLOCKED, str(fifo)], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, env=env)
    assert proc.stdout is not None and proc.stdout.readline().strip() == "blocking"
    time.sleep(0.3)
    start = time.monotonic()
    proc.send_signal(signal.SIGTERM)
    _, err = proc.communicate(timeout=20)
    took = time.monotonic() - start
    assert 3.0 < took < 10.0, took  # the watchdog's first step (FORCE_STOP_SECONDS), not SIGKILL
    assert proc.returncode == 0 and "Traceback" not in err, err  # stopped as a node stops: exit 0


@pytest.mark.timeout(120)
def test_launch_with_a_100_kb_model_argument_is_one_line_exit_2(tmp_path: Path) -> None:
    ros2 = Path(sys.executable).with_name("ros2")
    if not ros2.exists():
        pytest.skip("the ros2 command is not installed beside this Python")
    model = "/tmp/" + "a" * 100_000
    env = {**os.environ, "PYTHONPATH": str(ROOT), "ROS_LOG_DIR": str(tmp_path)}
    r = subprocess.run([str(ros2), "launch", str(ROOT / "launch" / "state_publisher.launch.py"), f"model:={model}"],
                       capture_output=True, text=True, timeout=90, env=env)
    out = r.stdout + r.stderr
    assert "Traceback" not in out, out[-3000:]
    errors = [line for line in out.splitlines() if "state_publisher: error:" in line]
    assert len(errors) == 1 and "File name too long" in errors[0] and "(100005 characters)" in errors[0], out[-3000:]
    assert len(errors[0]) < 500
    assert "exit code 2" in out, out[-3000:]
