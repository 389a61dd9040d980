"""Static checks as tests: ruff over the code (ruff.toml), mypy --strict over the whole package (setup.cfg).

Both run as subprocesses started when the session's tests are collected (``start_background_checks``,
called from conftest.py when a test of this file is selected), at low CPU priority, so mypy's ~15 s
overlap the rest of the suite; the tests then wait for the results.
"""

from __future__ import annotations

import atexit
import importlib.util
import os
import subprocess
import sys

import pytest
from repo_paths import REPO_ROOT

ROOT = REPO_ROOT
RUFF_PATHS = ["robot_state_format", "test", "bench", "scripts", "fuzz", "conformance", "launch"]
MYPY_PATHS = ["robot_state_format"]  # the whole package, strict (setup.cfg: strict = True)
CHECK_TIMEOUT = 300

_running: dict[str, subprocess.Popen[str]] = {}


def _commands() -> dict[str, list[str]]:
    commands = {}
    if importlib.util.find_spec("ruff") is not None:
        paths = [p for p in RUFF_PATHS if (ROOT / p).exists()]
        commands["ruff"] = ["ruff", "check", "--no-cache", "--config", str(ROOT / "ruff.toml"), *paths]
    if importlib.util.find_spec("mypy") is not None:
        paths = [p for p in MYPY_PATHS if (ROOT / p).exists()]
        commands["mypy"] = ["mypy", "--config-file", str(ROOT / "setup.cfg"), "--no-error-summary", *paths]
    return commands


def _start(name: str, args: list[str]) -> subprocess.Popen[str]:
    return subprocess.Popen([sys.executable, "-m", *args], cwd=ROOT, stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True, preexec_fn=lambda: os.nice(10))


def start_background_checks() -> None:
    """Start ruff and mypy now (idempotent); the tests below collect their results.

    Not under pytest-xdist workers (each would start its own copy): there the tests run them in turn.
    """
    if os.environ.get("PYTEST_XDIST_WORKER"):
        return
    if not _running:
        atexit.register(_stop_unclaimed)
    for name, args in _commands().items():
        if name not in _running:
            _running[name] = _start(name, args)


def _stop_unclaimed() -> None:
    """Terminate checks whose tests never ran (e.g. the session stopped early)."""
    for proc in _running.values():
        if proc.poll() is None:
            proc.terminate()
            proc.wait(timeout=10)


def _result(name: str) -> tuple[int, str]:
    proc = _running.pop(name, None) or _start(name, _commands()[name])
    try:
        out, _ = proc.communicate(timeout=CHECK_TIMEOUT)
    except subprocess.TimeoutExpired:
        proc.kill()
        out, _ = proc.communicate()
        pytest.fail(f"{name} did not finish in {CHECK_TIMEOUT} s:\n{out}")
    return proc.returncode, out


@pytest.mark.skipif(importlib.util.find_spec("ruff") is None, reason="ruff is not installed")
def test_ruff_is_clean() -> None:
    code, out = _result("ruff")
    assert code == 0, out


@pytest.mark.skipif(importlib.util.find_spec("mypy") is None, reason="mypy is not installed")
def test_mypy_strict_is_clean_over_the_whole_package() -> None:
    code, out = _result("mypy")
    assert code == 0, out
