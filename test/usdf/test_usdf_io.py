"""USDF reader, writer, XSD and atomic writes: fixtures, round trips, crash safety."""

from __future__ import annotations

import math
import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from repo_paths import REPO_ROOT, TEST_DIR

from robot_state_format.errors import Severity, UsdfError
from robot_state_format.usdf.atomic import atomic_write
from robot_state_format.usdf.reader import read_world_state, read_world_state_file
from robot_state_format.usdf.types import FrameState, JointState, LinkState, ModelState, Stamp, WorldState
from robot_state_format.usdf.validate import validate_schema
from robot_state_format.usdf.writer import write_world_state, write_world_state_file

FIX = TEST_DIR / "fixtures" / "usdf"
VALID = sorted((FIX / "valid").glob("*.xml"))
INVALID = sorted((FIX / "invalid").glob("*.xml"))

# (code, line) each invalid fixture must report — read off the fixture text by hand.
EXPECTED = {
    "bad_stamp": ("USDF_BAD_STAMP", 3),
    "bad_version": ("USDF_VERSION_UNSUPPORTED", 2),
    "cycle": ("USDF_PARENT_CYCLE", 3),
    "dof_mismatch": ("USDF_DOF_MISMATCH", 4),
    "duplicate_frame_model": ("USDF_DUPLICATE_NAME", 4),
    "duplicate_link": ("USDF_DUPLICATE_NAME", 5),
    "duplicate_pose": ("USDF_DUPLICATE_ELEMENT", 5),
    "empty_name": ("USDF_BAD_NAME", 3),
    "entity": ("USDF_XML_ENTITY", 5),
    "inf": ("USDF_NON_FINITE", 4),
    "missing_name": ("USDF_MISSING_NAME", 3),
    "nan": ("USDF_NON_FINITE", 5),
    "negative_stamp": ("USDF_BAD_STAMP", 3),
    "nested_parent": ("USDF_NESTED_PARENT", 5),
    "non_numeric": ("USDF_NOT_A_NUMBER", 4),
    "order": ("USDF_ORDER", 5),
    "overflow": ("USDF_NON_FINITE", 4),
    "proposal_unrepaired": ("USDF_XML_SYNTAX", 6),
    "reserved_world": ("USDF_BAD_NAME", 3),
    "scoped_frame_name": ("USDF_BAD_NAME", 3),
    "self_link_cycle": ("USDF_PARENT_CYCLE", 3),
    "stray_text": ("USDF_UNEXPECTED_TEXT", 3),
    "underscore_number": ("USDF_NOT_A_NUMBER", 4),
    "unknown_attribute": ("USDF_UNKNOWN_ATTRIBUTE", 3),
    "unknown_element": ("USDF_UNKNOWN_ELEMENT", 4),
    "unknown_parent": ("USDF_UNKNOWN_PARENT", 3),
    "wrong_arity": ("USDF_ARITY", 4),
    "wrong_root": ("USDF_ROOT", 2),
}
# Faults XSD 1.0 cannot express: parent resolution, equal DOF counts, decimal overflow to infinity.
SEMANTIC_ONLY = {"cycle", "self_link_cycle", "unknown_parent", "dof_mismatch", "overflow"}


def test_every_invalid_fixture_has_an_expectation() -> None:
    assert {p.stem for p in INVALID} == set(EXPECTED)


@pytest.mark.parametrize("path", INVALID, ids=lambda p: p.stem)
def test_invalid_fixture_fails_with_code_and_line(path: Path) -> None:
    with pytest.raises(UsdfError) as exc:
        read_world_state_file(path)
    code, line = EXPECTED[path.stem]
    found = [(d.code, d.line) for d in exc.value.diagnostics]
    assert (code, line) in found, found
    assert all(d.file == str(path) for d in exc.value.diagnostics)


@pytest.mark.parametrize("path", INVALID, ids=lambda p: p.stem)
def test_xsd_rejects_invalid_fixtures(path: Path) -> None:
    if path.stem in SEMANTIC_ONLY:
        assert validate_schema(path.read_bytes()) == []  # documented: only the reader catches these
        return
    try:
        problems = validate_schema(path.read_bytes())
    except UsdfError:  # not even well-formed XML
        return
    assert problems, f"XSD accepted {path.name}"


def test_proposal_example_unrepaired_reports_each_fault_line() -> None:
    # The proposal's example: unterminated quote on line 6, </twist> closing <wrench> on line 9.
    with pytest.raises(UsdfError) as exc:
        read_world_state_file(FIX / "invalid" / "proposal_unrepaired.xml", lenient=True)
    lines = [d.line for d in exc.value.diagnostics if d.code == "USDF_XML_SYNTAX"]
    assert lines == [6, 9]


def test_proposal_example_repaired_validates() -> None:
    # the proposal's example with only its two XML typos mended (the unterminated quote of line 6,
    # </twist> closing <wrench> on line 9): its <world> root and missing version are warnings
    path = FIX / "valid" / "proposal_example.xml"
    unrepaired = (FIX / "invalid" / "proposal_unrepaired.xml").read_text().splitlines()
    repaired = path.read_text().splitlines()
    assert [i for i, (a, b) in enumerate(zip(unrepaired, repaired), 1) if a != b] == [6, 9]
    for lenient in (False, True):
        res = read_world_state(path.read_bytes(), lenient=lenient)
        assert {w.code for w in res.warnings} == {"USDF_ROOT_SPELLING", "USDF_VERSION_MISSING"}
    assert all(w.severity is Severity.WARNING for w in res.warnings)
    s = res.state
    assert s.name == "world_1"
    assert [f.name for f in s.frames] == ["odom"]
    assert s.frames[0].parent == "world"
    pr2 = s.model("pr2")
    assert pr2 is not None and pr2.parent == "odom"
    assert pr2.pose == (0.0,) * 6
    link = pr2.link("r_shoulder_pan_link")
    assert link is not None
    assert link.pose == (1.0, 0.0, 1.0, 0.0, 0.0, 0.0)
    assert link.wrench == (0.0,) * 6


def test_full_fixture_values() -> None:
    s = read_world_state_file(FIX / "valid" / "full.xml").state
    assert s.stamp == Stamp(1700000000, 250000000)
    assert s.version == "1.0"
    odom = s.frame("odom")
    assert odom is not None and odom.parent is None  # absent parent: the world, kept as absent
    assert odom.pose == (1.5, -2.0, 0.0, 0.0, 0.0, 1.5707963267948966)
    pr2 = s.model("pr2")
    assert pr2 is not None
    assert pr2.joint("r_shoulder_pan_joint") == JointState("r_shoulder_pan_joint", (0.3,), (0.25,), (1.25e-3,))
    assert pr2.joint("torso_lift_joint") == JointState("torso_lift_joint", (0.1,), None, None)
    assert pr2.joint("fixed_mount") == JointState("fixed_mount", (), None, None)
    ball = pr2.joint("head_ball")
    assert ball is not None and ball.positions is not None and len(ball.positions) == 4
    gripper = s.model("pr2::gripper")
    assert gripper is not None and gripper.link("finger") == LinkState("finger")
    assert gripper.joint("finger_joint") == JointState("finger_joint", None, None, (-0.5,))
    cup = s.model("cup")
    assert cup is not None and cup.parent == "pr2::r_shoulder_pan_link"


def test_partial_fixture_number_spellings() -> None:
    s = read_world_state_file(FIX / "valid" / "partial.xml").state
    a = s.model_states[0].link_states[0]
    assert a.pose is None and a.wrench is None
    assert a.twist == (1e-300, -0.0, 2.5, 0.5, 5.0, 1e10)
    assert math.copysign(1.0, a.twist[1]) == -1.0
    assert s.model_states[0].joint_states[0].velocities == (0.5, -0.25)
    assert s.frames[0].parent == "world"  # empty <parent> means world
    assert s.version == "1.3"  # a later minor version reads


def test_special_names_are_unescaped() -> None:
    s = read_world_state_file(FIX / "valid" / "special_names.xml").state
    assert s.name == "names & things"
    m = s.model_states[0]
    assert m.name == "r<2>"
    assert m.link_states[0].name == "a::b"
    assert m.joint_states[0].name == 'j "q" \u00e9'
    assert s.frames[0].parent == "r<2>::a::b"


@pytest.mark.parametrize("path", VALID, ids=lambda p: p.stem)
def test_read_write_read_hand_written(path: Path) -> None:
    first = read_world_state_file(path).state
    for pretty in (True, False):
        text = write_world_state(first, pretty=pretty)
        assert validate_schema(text) == []
        again = read_world_state(text).state
        assert again == first
        assert _float_bits(again) == _float_bits(first)
        assert write_world_state(again, pretty=pretty) == text  # stable output


def test_lenient_mode_accepts_order_and_unknown_elements_with_warnings() -> None:
    for name in ("order", "unknown_element"):
        res = read_world_state((FIX / "invalid" / f"{name}.xml").read_bytes(), lenient=True)
        assert res.warnings and all(w.severity is Severity.WARNING for w in res.warnings)
    # errors that are not spelling matters stay errors in lenient mode
    with pytest.raises(UsdfError):
        read_world_state((FIX / "invalid" / "nan.xml").read_bytes(), lenient=True)


def test_all_errors_collected_in_one_error() -> None:
    text = ('<world_state name="w" version="1.0">\n'
            '  <frame name="a"><pose>1 2</pose></frame>\n'
            '  <frame name="b"><pose>x 0 0 0 0 0</pose></frame>\n'
            '  <frame name="a"/>\n'
            '</world_state>\n')
    with pytest.raises(UsdfError) as exc:
        read_world_state(text, file="s.usdf")
    got = [(d.code, d.line) for d in exc.value.diagnostics]
    assert got == [("USDF_ARITY", 2), ("USDF_NOT_A_NUMBER", 3), ("USDF_DUPLICATE_NAME", 4)]
    assert str(exc.value).startswith("s.usdf:2: error: [USDF_ARITY]")


# --------------------------------------------------------------------------------------------
# writer refusals


@pytest.mark.parametrize("bad", [math.nan, math.inf, -math.inf])
def test_writer_refuses_non_finite(bad: float) -> None:
    state = WorldState("w", frames=[FrameState("f", pose=(0.0, 0.0, bad, 0.0, 0.0, 0.0))])
    with pytest.raises(UsdfError) as exc:
        write_world_state(state)
    assert exc.value.code == "USDF_NON_FINITE"
    state = WorldState("w", model_states=[ModelState("m", joint_states=[JointState("j", torques=(bad,))])])
    with pytest.raises(UsdfError):
        write_world_state(state)


@pytest.mark.parametrize("state, code", [
    (WorldState("w", frames=[FrameState("f", pose=(0.0,) * 5)]), "USDF_ARITY"),  # type: ignore[arg-type]
    (WorldState("w", frames=[FrameState("")]), "USDF_BAD_NAME"),
    (WorldState("w", frames=[FrameState(" f")]), "USDF_BAD_NAME"),
    (WorldState("w", frames=[FrameState("a::b")]), "USDF_BAD_NAME"),
    (WorldState("w", model_states=[ModelState("world")]), "USDF_BAD_NAME"),
    (WorldState("w", frames=[FrameState("a\x01")]), "USDF_BAD_NAME"),
    (WorldState("w", stamp=Stamp(1, 10**9)), "USDF_BAD_STAMP"),
    (WorldState("w", model_states=[ModelState("m", model_states=[ModelState("n", parent="world")])]),
     "USDF_NESTED_PARENT"),
    (WorldState("w", version="2.0"), "USDF_VERSION_UNSUPPORTED"),
])
def test_writer_refuses_invalid_states(state: WorldState, code: str) -> None:
    with pytest.raises(UsdfError) as exc:
        write_world_state(state)
    assert exc.value.code == code


def test_writer_accepts_numpy_floats_losslessly() -> None:
    import numpy as np

    vals = np.array([0.1, -0.0, 1e-310, np.nextafter(1.0, 2.0), -123456.789e10, np.pi])
    state = WorldState("w", model_states=[ModelState("m", joint_states=[JointState("j", tuple(vals))])])
    got = read_world_state(write_world_state(state)).state.model_states[0].joint_states[0].positions
    assert got is not None
    assert [v.hex() for v in got] == [float(v).hex() for v in vals]


# --------------------------------------------------------------------------------------------
# hypothesis round trips

_xml_char = st.characters(codec="utf-8", min_codepoint=0x20, exclude_categories=("Cs",),
                          exclude_characters="\ufffe\uffff") | st.sampled_from("\t\n\r&<>\"'")
_names = st.text(_xml_char, min_size=1, max_size=12).filter(lambda s: s == s.strip(" \t\n\r"))
_local = _names.filter(lambda s: "::" not in s and s != "world")
_f = st.floats(allow_nan=False, allow_infinity=False)
_vec6 = st.tuples(_f, _f, _f, _f, _f, _f)
_arr = st.lists(_f, max_size=7).map(tuple)
_opt6 = st.none() | _vec6


@st.composite
def _joint(draw: st.DrawFn) -> JointState:
    n = draw(st.integers(0, 6))
    vel = draw(st.none() | st.lists(_f, min_size=n, max_size=n).map(tuple))
    tor = draw(st.none() | st.lists(_f, min_size=n, max_size=n).map(tuple))
    return JointState(draw(_names), draw(st.none() | _arr), vel, tor)


def _unique_by_name(items: list) -> list:  # type: ignore[type-arg]
    seen: set[str] = set()
    out = []
    for it in items:
        if it.name not in seen:
            seen.add(it.name)
            out.append(it)
    return out


@st.composite
def _model(draw: st.DrawFn, depth: int = 0, parents: tuple[str, ...] = ()) -> ModelState:
    links = _unique_by_name(draw(st.lists(st.builds(LinkState, _names, _opt6, _opt6, _opt6), max_size=4)))
    joints = _unique_by_name(draw(st.lists(_joint(), max_size=4)))
    nested = _unique_by_name(draw(st.lists(_model(depth + 1), max_size=2))) if depth < 2 else []
    parent = draw(st.sampled_from((None, "world") + parents)) if depth == 0 else None
    return ModelState(draw(_local), parent, draw(_opt6), draw(_opt6), links, joints, nested)


@st.composite
def _world(draw: st.DrawFn) -> WorldState:
    frames: list[FrameState] = []
    for name in draw(st.lists(_local, max_size=4, unique=True)):
        parent = draw(st.sampled_from([None, "world"] + [f.name for f in frames]))
        frames.append(FrameState(name, parent, draw(_opt6), draw(_opt6)))
    taken = {f.name for f in frames}
    models = [m for m in _unique_by_name(draw(st.lists(_model(0, tuple(taken)), max_size=3)))
              if m.name not in taken]
    stamp = draw(st.none() | st.builds(Stamp, st.integers(0, 2**63), st.integers(0, 10**9 - 1)))
    return WorldState(draw(_names), "1.0", stamp, frames, models)


def _float_bits(obj: object) -> list[str]:
    """Every float in a state, as exact hex, in traversal order."""
    out: list[str] = []
    if isinstance(obj, float):
        out.append(obj.hex())
    elif isinstance(obj, (list, tuple)):
        for v in obj:
            out.extend(_float_bits(v))
    elif hasattr(obj, "__dataclass_fields__"):
        for k in obj.__dataclass_fields__:  # type: ignore[attr-defined]
            out.extend(_float_bits(getattr(obj, k)))
    return out


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_world(), st.booleans())
def test_hypothesis_write_read_round_trip(state: WorldState, pretty: bool) -> None:
    text = write_world_state(state, pretty=pretty)
    back = read_world_state(text).state
    assert back == state
    assert _float_bits(back) == _float_bits(state)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_world())
def test_hypothesis_xsd_accepts_writer_output(state: WorldState) -> None:
    assert validate_schema(write_world_state(state, pretty=False)) == []


# --------------------------------------------------------------------------------------------
# atomic files


def test_write_file_and_read_back(tmp_path: Path) -> None:
    state = read_world_state_file(FIX / "valid" / "full.xml").state
    target = tmp_path / "restart.usdf"
    write_world_state_file(state, target)
    assert read_world_state_file(target).state == state
    write_world_state_file(WorldState("other"), target)
    assert read_world_state_file(target).state.name == "other"
    assert [p.name for p in tmp_path.iterdir()] == ["restart.usdf"]  # no temporary left behind


def test_atomic_write_io_error_is_usdf_error(tmp_path: Path) -> None:
    with pytest.raises(UsdfError) as exc:
        atomic_write(tmp_path / "missing_dir" / "x.usdf", b"data")
    assert exc.value.code == "USDF_IO"


def test_read_missing_file_is_usdf_io(tmp_path: Path) -> None:
    with pytest.raises(UsdfError) as exc:
        read_world_state_file(tmp_path / "nope.usdf")
    assert exc.value.code == "USDF_IO"


_WRITER = textwrap.dedent("""
    import sys
    from robot_state_format.usdf.atomic import atomic_write
    path = sys.argv[1]
    payloads = [(b"A" * 300000) + b"\\nEND-A\\n", (b"B" * 150000) + b"\\nEND-B\\n"]
    print("ready", flush=True)
    for i in range(200):
        print(i, flush=True)  # about to write number i: the test kills the process at a write it chooses
        atomic_write(path, payloads[i % 2])
""")


def test_kill_9_during_atomic_writes_never_leaves_torn_file(tmp_path: Path) -> None:
    target = tmp_path / "restart.usdf"
    a, b = (b"A" * 300000) + b"\nEND-A\n", (b"B" * 150000) + b"\nEND-B\n"
    target.write_bytes(a)
    env = dict(os.environ, PYTHONPATH=str(REPO_ROOT))
    killed_mid_run = 0
    for at_write in (0, 1, 3, 10, 30, 60, 100, 150):  # kill points by progress, not by sleeping
        proc = subprocess.Popen([sys.executable, "-c", _WRITER, str(target)], stdout=subprocess.PIPE, env=env)
        assert proc.stdout is not None
        assert proc.stdout.readline().strip() == b"ready"
        while proc.stdout.readline().strip() not in (str(at_write).encode(), b""):
            pass
        proc.send_signal(signal.SIGKILL)
        rc = proc.wait(timeout=30)
        proc.stdout.close()
        killed_mid_run += rc == -signal.SIGKILL
        data = target.read_bytes()
        assert data in (a, b), f"torn file after a kill at write {at_write}: {len(data)} bytes"
    assert killed_mid_run >= 4  # the kills really landed mid-run, not after the 200 writes


@pytest.mark.parametrize("leaf, code, line", [
    ('<pose frame="x">0 0 0 0 0 0</pose>', "USDF_UNKNOWN_ATTRIBUTE", 3),
    ("<pose>0 0 0 <b/>0 0 0</pose>", "USDF_UNKNOWN_ELEMENT", 3),
    # libxml2 numbers an element by the line its start tag ends on
    ("<pose\n   frame='x'>0 0 0 0 0 0</pose>", "USDF_UNKNOWN_ATTRIBUTE", 4),
])
@pytest.mark.parametrize("as_bytes", [True, False])
def test_leaf_elements_hold_only_numbers(leaf: str, code: str, line: int, as_bytes: bool) -> None:
    text = f'<world_state name="w" version="1.0">\n  <frame name="f">\n    {leaf}\n  </frame>\n</world_state>\n'
    with pytest.raises(UsdfError) as exc:
        read_world_state(text.encode() if as_bytes else text)
    assert (code, line) in [(d.code, d.line) for d in exc.value.diagnostics]
    assert validate_schema(text)  # the XSD agrees


def test_fast_and_tolerant_parse_paths_agree() -> None:
    data = (FIX / "valid" / "full.xml").read_bytes()
    plain = read_world_state(data).state
    # a BOM, leading blank lines or another declaration take parse_xml's tolerant path
    for variant in (b"\xef\xbb\xbf" + data, b"\n\n" + data, data.replace(b'encoding="UTF-8"', b"")):
        res = read_world_state(variant)
        assert res.state == plain
    assert read_world_state(data.decode()).state == plain  # str input


def test_lone_surrogate_is_the_readers_own_error() -> None:
    with pytest.raises(UsdfError) as info:
        read_world_state('<world_state name="w" version="1.0">\n<frame name="\ud800"/></world_state>')
    assert info.value.code == "USDF_XML_ENCODING" and info.value.diagnostics[0].line == 2


def test_document_without_version_reads_as_the_current_version() -> None:
    text = b'<?xml version="1.0" encoding="UTF-8"?>\n<world_state name="w">\n</world_state>\n'
    res = read_world_state(text)
    assert [(w.code, w.line, w.severity) for w in res.warnings] == [("USDF_VERSION_MISSING", 2, Severity.WARNING)]
    assert res.state.version == "1.0"
    assert 'version="1.0"' in write_world_state(res.state)  # the writer still writes it
    assert validate_schema(text) == []
