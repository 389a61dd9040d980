"""The main demo end to end: real processes, exit 0, every artefact written and readable."""

from __future__ import annotations

import math
import os
import subprocess
import sys
from pathlib import Path

import pytest
from optional import MCAP, absent
from repo_paths import REPO_ROOT

pytest.importorskip("rclpy", reason="rclpy is not installed (run the tests through ./run test)")


def test_demo_runs_and_writes_everything(tmp_path: Path) -> None:
    from robot_state_format.errors import Severity
    from robot_state_format.model.loader import load_model_file
    from robot_state_format.recording import read_recording
    from robot_state_format.usdf.reader import read_world_state_file
    from robot_state_format.usdf.validate import validate_against_model

    out = tmp_path / "demo"
    proc = subprocess.run([sys.executable, "-m", "robot_state_format.demo", "--output", str(out),
                           "--record-seconds", "1"], capture_output=True, text=True, timeout=300,
                          env=dict(os.environ))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    lines = {k.strip(): v.strip() for k, v in (ln.split(" : ", 1) for ln in proc.stdout.splitlines() if " : " in ln)}
    assert lines["TF check"].startswith("equal")
    saved = Path(lines["restart file"])
    model = load_model_file(REPO_ROOT / "robot_state_format" / "samples"
                            / "arm7_gripper.urdf")
    state = read_world_state_file(saved).state
    assert [d for d in validate_against_model(state, model, check_poses=True) if d.severity is Severity.ERROR] == []
    # what was saved is what the source sent at the saved stamp (never a zero or invented pose): the
    # sweep derived by hand, joint k at centre + amplitude sin(2 pi 0.25 t + k), t = stamp mod 4 s
    assert state.stamp is not None and "equal what the source sent" in proc.stdout
    t = ((state.stamp.sec * 1_000_000_000 + state.stamp.nanosec) % 4_000_000_000) / 1e9
    ms = state.model(model.name)
    assert ms is not None
    leaders = [j for j in model.joints.values() if j.is_moving and not j.mimic]
    assert len(leaders) == 8
    for k, joint in enumerate(leaders):
        lo, hi = joint.limits.lower, joint.limits.upper  # type: ignore[union-attr]
        want = (lo + hi) / 2 + (hi - lo) / 4 * math.sin(2 * math.pi * 0.25 * t + k)
        assert ms.joint(joint.name).positions == pytest.approx((want,), abs=1e-9,
                                                               rel=0), joint.name  # type: ignore[union-attr]
    # 9 moving joints, 8 independent: the nodes count and replay the 8, the restart file also holds the mimic
    # follower, its value derived from its leader (multiplier 1, offset 0)
    assert "(9 moving joints: 8 independent, finger_right_joint mimics another)" in proc.stdout
    assert "8 joint values" in proc.stdout
    assert len(ms.joint_states) == 9
    assert ms.joint("finger_right_joint").positions == ms.joint("finger_left_joint").positions  # type: ignore[union-attr]
    if absent(*MCAP):  # the `record` extra is not installed: said in one line, the rest of the demo done
        assert lines["recording"].startswith("not made: MCAP recording") and "pip install mcap" in lines["recording"]
    else:
        bag = Path(lines["recording"].split(" (")[0])
        topics = {m.topic for m in read_recording(bag)}
        assert "/joint_states" in topics
    if absent("matplotlib"):
        assert lines["picture"].startswith("not drawn: the picture (PNG) needs matplotlib (not installed)")
        assert "pip install matplotlib" in lines["picture"]
    else:
        png = Path(lines["picture"].split(" (")[0])
        assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    # every child was stopped: no demo process is left behind
    left = subprocess.run(["pgrep", "-f", str(out)], capture_output=True, text=True).stdout.split()
    assert left == []


def test_run_demo_script_passes_its_arguments_to_the_demo(tmp_path: Path) -> None:
    script = REPO_ROOT / "scripts" / "demo.py"
    helped = subprocess.run([sys.executable, str(script), "--help"], capture_output=True, text=True, timeout=60)
    assert helped.returncode == 0 and "--record-seconds" in helped.stdout
    missing = tmp_path / "no_such_robot.urdf"
    refused = subprocess.run([sys.executable, str(script), str(missing), "--output", str(tmp_path / "o")],
                             capture_output=True, text=True, timeout=60)
    assert refused.returncode == 2 and f"{missing}: no such file" in refused.stderr
    assert not (tmp_path / "o").exists()
