"""Static checks as tests: ruff over the code, mypy over the ROS-free core modules."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
RUFF_PATHS = ["robot_state_format", "test", "bench", "scripts"]
MYPY_PATHS = ["robot_state_format/errors.py", "robot_state_format/model", "robot_state_format/kinematics",
              "robot_state_format/usdf"]


def _run(args: list[str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", *args], cwd=ROOT, capture_output=True, text=True, check=False)


@pytest.mark.skipif(importlib.util.find_spec("ruff") is None, reason="ruff is not installed")
def test_ruff_is_clean() -> None:
    paths = [p for p in RUFF_PATHS if (ROOT / p).exists()]
    result = _run(["ruff", "check", "--no-cache", "--config", str(ROOT / "ruff.toml"), *paths])
    assert result.returncode == 0, result.stdout + result.stderr


@pytest.mark.skipif(importlib.util.find_spec("mypy") is None, reason="mypy is not installed")
def test_mypy_core_is_clean() -> None:
    paths = [p for p in MYPY_PATHS if (ROOT / p).exists()]
    result = _run(["mypy", "--config-file", str(ROOT / "setup.cfg"), "--no-error-summary", *paths])
    assert result.returncode == 0, result.stdout + result.stderr
