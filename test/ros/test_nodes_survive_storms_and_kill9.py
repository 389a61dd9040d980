"""The nodes survive input storms and kill -9: short versions of the stress scripts of issue 14 (the full
runs and their figures: docs/robustness.md):
a bad-JointState storm at 1 kHz beside good messages, and kill -9 of state_store during checkpoint
storms and recordings."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from optional import MCAP, needs
from repo_paths import REPO_ROOT

pytest.importorskip("rclpy", reason="rclpy is not installed (run the tests through ./run test)")

BENCH = REPO_ROOT / "bench"


def _run(script: str, *args: str) -> str:
    out = subprocess.run([sys.executable, str(BENCH / script), *args, "--check"], capture_output=True, text=True,
                         timeout=170)
    assert out.returncode == 0, out.stdout[-4000:] + out.stderr[-4000:]
    return out.stdout


@pytest.mark.timeout(180)
def test_bad_joint_state_storm_short() -> None:
    text = _run("stress_joint_state_storm.py", "--seconds", "4")
    assert "node alive: True" in text and "wrong 0" in text


@needs(*MCAP)
@pytest.mark.timeout(180)
def test_kill_9_during_checkpoints_and_recordings_short(tmp_path: Path) -> None:
    text = _run("stress_kill9.py", "--kills", "3", "--out", str(tmp_path))
    assert "all strict USDF: True" in text
    assert any(tmp_path.glob("*.usdf")) and any(p.is_dir() for p in tmp_path.iterdir())
