"""SIGTERM is as clean as SIGINT for every long-running process: each node, each command that runs a node,
and the demo; started for real, sent SIGTERM once up, they exit with their documented status and print no
traceback (README "Command line": 0 for what runs until stopped; the demo 143, as a shell reports SIGTERM)."""

from __future__ import annotations

import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest
from optional import MCAP, needs
from repo_paths import REPO_ROOT

pytest.importorskip("rclpy", reason="rclpy is not installed (run the tests through ./run test)")

from ros_harness import NodeProcess, RosHarness
from test_state_store import MODEL_FILE, pendulum_state

from robot_state_format.usdf.writer import write_world_state

ROOT = REPO_ROOT


def _terminate(proc: NodeProcess, timeout: float = 20.0) -> int:
    proc.proc.send_signal(signal.SIGTERM)
    return proc.proc.wait(timeout=timeout)


def _up_then_term(ros: RosHarness, proc: NodeProcess, ready: Callable[[], None]) -> str:
    ready()
    time.sleep(0.3)  # into its spin loop (a stop requested while starting is honoured too)
    assert proc.alive(), proc.describe()
    code = _terminate(proc)
    out = proc.output()
    assert code == 0, proc.describe()
    assert "Traceback" not in out and "RCLError" not in out, proc.describe()
    return out


def test_state_publisher(ros: RosHarness) -> None:
    proc = ros.start_node("state_publisher", params={"model_file": MODEL_FILE})
    _up_then_term(ros, proc, lambda: ros.wait_for_publisher("/tf_static"))


def test_state_store(ros: RosHarness, tmp_path: Path) -> None:
    proc = ros.start_node("state_store", params={"model_file": MODEL_FILE, "output_dir": str(tmp_path)})
    _up_then_term(ros, proc, lambda: ros.wait_for_service("/state_store/save"))


def test_joint_state_source(ros: RosHarness) -> None:
    proc = ros.start_node("joint_state_source", args=["--model", MODEL_FILE])
    _up_then_term(ros, proc, lambda: ros.wait_for_publisher("/joint_states"))


def test_sim_bridge(ros: RosHarness) -> None:
    pytest.importorskip("mujoco")
    proc = ros.start_node("sim_bridge", params={"model_file": MODEL_FILE})
    _up_then_term(ros, proc, lambda: ros.wait_for_publisher("/joint_states"))


def test_joint_states_command(ros: RosHarness) -> None:
    proc = ros.start_node("robot-state-format", args=["joint-states", "--model", MODEL_FILE])
    _up_then_term(ros, proc, lambda: ros.wait_for_publisher("/joint_states"))


@needs(*MCAP)
def test_record_command(ros: RosHarness, tmp_path: Path) -> None:
    proc = ros.start_node("robot-state-format", args=["record", "--output", str(tmp_path)])
    out = _up_then_term(ros, proc, lambda: ros.spin_until(lambda: "recording to" in proc.output(), 30,
                                                          "the recording to start"))
    bag = Path(out.strip().splitlines()[-1].rsplit(" (", 1)[0])
    assert (bag / "metadata.yaml").is_file(), out  # closed properly


def test_replay_command(ros: RosHarness, tmp_path: Path) -> None:
    f = tmp_path / "s.usdf"
    f.write_text(write_world_state(pendulum_state(0.25, -0.75)))
    proc = ros.start_node("robot-state-format", args=["replay", str(f), "--model", MODEL_FILE])
    _up_then_term(ros, proc, lambda: ros.wait_for_publisher("/joint_states"))


def test_save_command_stopped_while_waiting(ros: RosHarness, tmp_path: Path) -> None:
    """``save`` is not a command that runs until stopped: stopped before any snapshot it saved nothing,
    and says so (exit 1, "refused"), with no traceback."""
    proc = ros.start_node("robot-state-format", args=["save", "--output", str(tmp_path), "--timeout", "60"])
    ros.wait_for_service("/state_store/save")
    time.sleep(0.3)
    assert _terminate(proc) == 1, proc.describe()
    out = proc.output()
    assert "Traceback" not in out and "no snapshot" in out, proc.describe()
    assert list(tmp_path.iterdir()) == []


def test_demo(ros: RosHarness, tmp_path: Path) -> None:
    """The demo stops its nodes and exits 143 on SIGTERM (130 on Ctrl-C), with no RCLError traceback."""
    out_dir = tmp_path / "demo"
    proc = subprocess.Popen([sys.executable, "-m", "robot_state_format.demo", "--output", str(out_dir)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=ROOT)
    try:
        assert proc.stdout is not None
        seen = []
        for line in proc.stdout:
            seen.append(line)
            if "started state_publisher" in line:
                break
        time.sleep(1.0)  # inside its waits for a first snapshot
        proc.send_signal(signal.SIGTERM)
        out, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 143, "".join(seen) + out + err
    assert "Traceback" not in err and "RCLError" not in err, err
    assert "stopped by SIGTERM" in err
    left = subprocess.run(["pgrep", "-f", str(out_dir)], capture_output=True, text=True).stdout.split()
    assert left == []  # every node it started was stopped
