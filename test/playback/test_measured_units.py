"""ROS-free pieces of "only measured state is shared" and "no logging path stops a node": the joint cache's
missing joints, snapshot_checks, the log throttle, the joint-state source's modes, the set-up's uv fallback."""

from __future__ import annotations

import functools
import importlib.util
import json
import math
from pathlib import Path
from typing import Any

import pytest
from repo_paths import REPO_ROOT

from robot_state_format.kinematics.tree import compile_model
from robot_state_format.live.joint_cache import JointStateCache
from robot_state_format.log_throttle import LogThrottle, emit, throttled
from robot_state_format.model.loader import load_model
from robot_state_format.playback import snapshot_checks as sc
from robot_state_format.usdf.build import SnapshotBuilder, state_from_model
from robot_state_format.usdf.reader import read_world_state
from robot_state_format.usdf.types import Stamp
from robot_state_format.usdf.writer import write_world_state

ROOT = REPO_ROOT
LIM = '<limit lower="-1" upper="2" effort="1" velocity="1"/>'
ROBOT = f"""<robot name="u">
 <link name="base"/><link name="l1"/><link name="l2"/><link name="f"/><link name="tool"/>
 <joint name="j1" type="revolute"><parent link="base"/><child link="l1"/><axis xyz="0 0 1"/>{LIM}</joint>
 <joint name="j2" type="prismatic"><parent link="l1"/><child link="l2"/><axis xyz="1 0 0"/>{LIM}</joint>
 <joint name="j4" type="revolute"><parent link="l1"/><child link="f"/><axis xyz="0 0 1"/>
   <mimic joint="j1" multiplier="2"/>{LIM}</joint>
 <joint name="tool_mount" type="fixed"><parent link="l2"/><child link="tool"/></joint>
</robot>"""
FIXED_ONLY = '<robot name="rigid"><link name="a"/><link name="b"/><joint name="m" type="fixed"><parent link="a"/>' \
             '<child link="b"/></joint></robot>'


def _cache(text: str = ROBOT) -> JointStateCache:
    model = load_model(text)
    return JointStateCache(model, compile_model(model))


def test_a_joint_has_no_value_until_reported_and_followers_follow_their_leader() -> None:
    cache = _cache()
    assert cache.missing_joints() == ["j1", "j2"] and not cache.complete  # j4 follows j1
    s = 1_000_000_000
    up = cache.update(["j2"], [0.5], [], [], 100 * s, 100)
    assert cache.missing_joints() == ["j1"]
    assert sorted(cache.tree.joint_names[i] for i in up.send) == ["j2"]  # no transform for j1, j4
    cache.update(["j1"], [0.25], [], [], 101 * s, 101)
    assert cache.complete and cache.stamp_ns == 101 * s
    cache.update(["j1"], [0.3], [], [], 96 * s, 102)  # stamp 5 s back: reset, only j1 known
    assert cache.missing_joints() == ["j2"]


def test_a_velocity_or_effort_nobody_reported_is_absent_not_zero() -> None:
    # two publishers: one reports j1 with velocity and effort, the other j2 with positions only
    cache = _cache()
    s = 1_000_000_000
    cache.update(["j1"], [0.25], [1.5], [0.75], 100 * s, 100)
    cache.update(["j2"], [0.5], [], [], 100 * s, 101)
    assert cache.complete
    assert cache.velocities() is None and cache.efforts() is None  # j2's velocity was never measured
    builder = SnapshotBuilder(cache.model, cache.tree)  # what state_publisher and state_store snapshot
    partial = read_world_state(builder.build(cache.q, cache.velocities(), cache.efforts(), stamp=Stamp(100, 0))).state
    joints = {j.name: j for j in partial.model_states[0].joint_states}
    assert joints["j1"].positions == (0.25,) and joints["j2"].positions == (0.5,)
    assert all(j.velocities is None and j.torques is None for j in joints.values())
    assert all(ls.twist is None for ls in partial.model_states[0].link_states)
    cache.update(["j2"], [0.5], [-2.0], [0.125], 101 * s, 102)  # now every coordinate was reported
    v, e = cache.velocities(), cache.efforts()
    assert v is not None and e is not None
    assert v[cache.tree.v_slice("j1")].tolist() == [1.5] and v[cache.tree.v_slice("j2")].tolist() == [-2.0]
    assert e[cache.tree.v_slice("j1")].tolist() == [0.75] and e[cache.tree.v_slice("j2")].tolist() == [0.125]


def test_a_model_without_moving_joints_is_complete_at_once() -> None:
    cache = _cache(FIXED_ONLY)
    assert cache.complete and cache.missing_joints() == []


def test_unmeasured_joints_and_what_allow_partial_writes() -> None:
    model = load_model(ROBOT)
    full = state_from_model(model, {"j1": 0.25, "j2": 0.5}, None, stamp=(3, 4))
    assert sc.unmeasured_joints(full, model) == []
    partial = sc.drop_unmeasured(full, model, ["j1"])
    ms = partial.model("u")
    assert ms is not None
    assert [js.name for js in ms.joint_states] == ["j2"]  # j1 and its follower j4 left out, not zero
    assert {ls.name for ls in ms.link_states} == {"base"}  # everything below j1 is unknown
    assert sc.unmeasured_joints(partial, model) == ["j1"]
    assert sc.moved_links(model, {"j2"}) == {"l2", "tool"}
    assert full.model("u").joint("j1").positions == (0.25,)  # type: ignore[union-attr]  # the copy was pruned
    text = write_world_state(partial)
    assert "j1" not in text and "j2" in text


def test_age_refusal() -> None:
    assert sc.age_refusal(0.5, 1.0) is None
    assert sc.age_refusal(100.0, 0.0) is None  # 0 = no limit
    why = sc.age_refusal(12.34, 10.0)
    assert why is not None and "12.3 s old (max_snapshot_age 10 s)" in why


def test_missing_refusal_names_the_joints() -> None:
    why = sc.missing_refusal([f"j{i}" for i in range(25)], 30)
    assert "25 of 30" in why and "j0, j1" in why and "and 5 more" in why and "allow_partial" in why


class _Logger:
    def __init__(self) -> None:
        self.lines: list[tuple[str, str]] = []

    def info(self, text: str) -> None:
        self.lines.append(("info", text))

    def warning(self, text: str) -> None:
        self.lines.append(("warning", text))

    def error(self, text: str) -> None:
        self.lines.append(("error", text))


def test_throttle_per_key_counts_held_back_repeats() -> None:
    now = [0.0]
    throttle = LogThrottle(5.0, clock=lambda: now[0])
    log = _Logger()
    for _ in range(3):
        throttled(throttle, log, "warning", "a", "bad a")
    throttled(throttle, log, "info", "b", "reset b")
    now[0] = 6.0
    throttled(throttle, log, "warning", "a", "bad a")
    assert log.lines == [("warning", "bad a"), ("info", "reset b"),
                         ("warning", "bad a (2 more like this in the last 5 s)")]


def test_a_line_given_as_a_function_is_written_only_when_it_goes_out() -> None:
    """The 1 kHz JointState path hands its warning over unwritten: held-back repeats never call it."""
    now = [0.0]
    throttle = LogThrottle(5.0, clock=lambda: now[0])
    log = _Logger()
    calls: list[int] = []

    def line(k: int) -> str:
        calls.append(k)
        return f"bad a {k}"
    for k in range(4):
        throttled(throttle, log, "warning", "a", functools.partial(line, k))
    now[0] = 6.0
    throttled(throttle, log, "warning", "a", functools.partial(line, 9))
    assert calls == [0, 9]
    assert log.lines == [("warning", "bad a 0"), ("warning", "bad a 9 (3 more like this in the last 5 s)")]


def test_rclpy_logger_at_two_severities_through_the_throttle() -> None:
    """rclpy raises when one call site logs at two severities (what killed state_publisher); ``emit``
    has one call site per severity, so alternating severities through it never raises."""
    rclpy_logging = pytest.importorskip("rclpy.logging", reason="rclpy is not installed")
    logger = rclpy_logging.get_logger("rsf_test_throttle")
    throttle = LogThrottle(0.0)

    def one_site(severity: str) -> None:
        # The level is chosen in a statement of its own, so the log call is one bytecode instruction on every
        # Python: rclpy keys a call site by (file, line, instruction), and Python 3.12 compiles
        # `(logger.info if c else logger.warning)("x")` into two calls, which rclpy then counts as two sites.
        level = rclpy_logging.LoggingSeverity.INFO if severity == "info" else rclpy_logging.LoggingSeverity.WARN
        logger.log("x", level)

    one_site("info")
    with pytest.raises(ValueError, match="severity cannot be changed"):
        one_site("warning")
    for severity in ("warning", "info", "warning", "error", "info"):
        assert throttled(throttle, logger, severity, "k", f"line at {severity}")
        emit(logger, severity, "again")


def test_throttled_never_raises() -> None:
    class Broken:
        def warning(self, text: str) -> None:
            raise ValueError("Logger severity cannot be changed between calls.")

    assert throttled(LogThrottle(), Broken(), "warning", "k", "text") is False


# -- the joint-state source ------------------------------------------------------------------------------
def test_sweep_values_follow_from_the_stamp() -> None:
    from robot_state_format.playback.trajectory import channels, sample, sample_at_stamp

    model = load_model(ROBOT)
    chans, quats = channels(model)
    names, pos, vel = sample_at_stamp(chans, quats, 1_700_000_001_250_000_000)
    assert names == ["j1", "j2"]
    t = 1.25  # 1_700_000_001.25 s mod 4 s
    for k, p in enumerate(pos):  # limits -1..2: centre 0.5, amplitude 0.75, phase k
        assert p == pytest.approx(0.5 + 0.75 * math.sin(2 * math.pi * 0.25 * t + k), abs=1e-12, rel=0)
    assert sample(chans, quats, t)[1] == pytest.approx(pos, abs=1e-12, rel=0)
    assert vel[0] == pytest.approx(0.75 * 2 * math.pi * 0.25 * math.cos(2 * math.pi * 0.25 * t), abs=1e-12, rel=0)


def test_fixed_values_and_defaults() -> None:
    from robot_state_format.playback.trajectory import SourceError, fixed_positions

    model = load_model(ROBOT)
    names, pos, defaulted = fixed_positions(model, {"j2": 1.5})
    assert (names, pos, defaulted) == (["j1", "j2"], [0.0, 1.5], ["j1"])
    limited = load_model(ROBOT.replace('lower="-1" upper="2"', 'lower="0.5" upper="2"'))
    assert fixed_positions(limited, {})[1] == [1.25, 1.25]  # 0 is outside the limits: their middle
    for bad in ({"j4": 1.0}, {"nope": 1.0}, {"j1": math.nan}, {"j1": [1, 2]}, {"j1": "x"}):
        with pytest.raises(SourceError):
            fixed_positions(model, bad)


def test_values_files(tmp_path: Path) -> None:
    from robot_state_format.playback.trajectory import SourceError, read_values_file

    model = load_model(ROBOT)
    (tmp_path / "list.json").write_text(json.dumps([{"j1": 0.1, "j2": 0.2}, {"j1": -0.1, "j2": 0.3}]))
    assert read_values_file(tmp_path / "list.json", model) == [(["j1", "j2"], [0.1, 0.2]), (["j1", "j2"], [-0.1, 0.3])]
    (tmp_path / "one.yaml").write_text("j1: 0.75\nj2: 1.0\n")
    assert read_values_file(tmp_path / "one.yaml", model) == [(["j1", "j2"], [0.75, 1.0])]
    state = state_from_model(model, {"j1": 0.4, "j2": 0.6}, None, stamp=Stamp(1, 2))
    (tmp_path / "s.usdf").write_text(write_world_state(state))
    names, pos = read_values_file(tmp_path / "s.usdf", model)[0]
    assert dict(zip(names, pos)) == {"j1": 0.4, "j2": 0.6}  # the follower j4 is left to its leader
    with pytest.raises(SourceError, match="is a directory"):
        read_values_file(tmp_path, model)
    (tmp_path / "bad.json").write_text("[1, 2]")
    with pytest.raises(SourceError, match="expected a mapping"):
        read_values_file(tmp_path / "bad.json", model)


# -- the set-up's uv fallback ------------------------------------------------------------------------------
def _setup_module() -> Any:
    spec = importlib.util.spec_from_file_location("rsf_setup_under_test", ROOT / "scripts" / "setup.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_setup_says_once_why_uv_is_not_used_and_what_it_costs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                             capsys: pytest.CaptureFixture[str]) -> None:
    setup = _setup_module()
    monkeypatch.setattr(setup, "VENV", tmp_path / "venv")
    (tmp_path / "venv" / "bin").mkdir(parents=True)
    monkeypatch.setattr(setup, "host_pip", lambda: False)
    calls: list[list[str]] = []

    def failing_pip(args: list[str], what: str, logfile: Path) -> None:
        calls.append(args)
        raise setup.SetupError(f"{what} failed (exit 1)\nERROR: No matching distribution found for uv>=0.4")

    monkeypatch.setattr(setup, "pip_install", failing_pip)
    log = tmp_path / "setup.log"
    assert setup.ensure_uv(log) is None
    assert setup.ensure_uv(log) is None and setup.ensure_uv(log) is None
    err = capsys.readouterr().err
    assert len(calls) == 1  # tried once, not once per install stage
    assert err.count("uv is not available") == 1
    assert "No matching distribution found for uv" in err and "20-30 s longer" in err
