"""The fuzzing harness (fuzz/): its outcome classes, a short run of every target, and the kept
reproducers of earlier findings (regression fixtures in test/fixtures/fuzz/)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from repo_paths import REPO_ROOT

ROOT = REPO_ROOT
sys.path.insert(0, str(ROOT))

from fuzz import harness  # noqa: E402
from robot_state_format.usdf.types import JointState, ModelState, Stamp, WorldState  # noqa: E402

SAMPLE = (ROOT / "robot_state_format" / "samples" / "double_pendulum.urdf").read_bytes()


def test_outcome_classes() -> None:
    assert harness.classify("urdf", SAMPLE).kind == harness.SUCCESS
    refused = harness.classify("urdf", b"<robot><link name='a'/></robot>")  # urdfdom refuses a nameless robot
    assert (refused.kind, refused.detail) == (harness.DOMAIN_ERROR, "URDF_MISSING_NAME")
    assert harness.classify("urdf", SAMPLE, deadline=0.0).detail.startswith("past the 0 s deadline")
    assert harness.classify("usdf-writer", "not a state").kind == harness.FINDING  # a TypeError
    state = WorldState("w", stamp=Stamp(3, 4), model_states=[ModelState(
        "m", pose=(1.0, 2.0, 3.0, 0.0, -0.0, 5e-324), joint_states=[JointState("j", (0.1,), (2.0,), (3.0,))])])
    assert harness.classify("usdf-writer", state).kind == harness.SUCCESS
    bad = WorldState("w", model_states=[ModelState("m", pose=(float("nan"),) * 6)])
    assert harness.classify("usdf-writer", bad).kind == harness.DOMAIN_ERROR


def test_invariants_catch_a_broken_model(monkeypatch: pytest.MonkeyPatch) -> None:
    """A reader returning an inconsistent model is a finding, not a pass."""
    from robot_state_format.model.urdf.reader import read_urdf

    def broken(data: bytes | str, file: str = "<string>") -> object:
        model = read_urdf(data, file=file)
        model.links.pop(next(iter(model.joints.values())).child)
        return model

    monkeypatch.setattr(harness, "read_urdf", broken)
    got = harness.classify("urdf", SAMPLE)
    assert got.kind == harness.FINDING and "names a missing link" in got.detail


def test_a_line_outside_the_document_is_a_finding() -> None:
    from robot_state_format.errors import Diagnostic, ModelError

    with pytest.raises(harness.InvariantBroken, match="outside the document"):
        harness.check_diagnostics(ModelError(Diagnostic("X", "m", harness.FILE, 7)), b"one line")


@pytest.mark.timeout(120)
def test_a_short_run_of_every_target_finds_nothing() -> None:
    # at least 30 inputs per target, however loaded the machine (a 1 s share once gave xacro a single input)
    out = subprocess.run([sys.executable, str(ROOT / "fuzz" / "run.py"), "--seconds", "5", "--min-inputs", "30"],
                         capture_output=True, text=True, timeout=110)
    assert out.returncode == 0, out.stdout[-3000:] + out.stderr[-3000:]
    for target in harness.TARGETS:  # every target ran and reached both outcome classes
        assert f"{target} success:" in out.stdout and f"{target} domain-error:" in out.stdout, out.stdout


@pytest.mark.parametrize("target,data,path", harness.load_reproducers(), ids=lambda v: getattr(v, "name", ""))
def test_kept_reproducers(target: str, data: object, path: Path) -> None:
    got = harness.classify(target, data, deadline=1.0)
    assert got.kind != harness.FINDING, got
    expected = harness.expected_outcome(path)
    if expected is not None:
        assert (got.kind, got.detail) == expected
