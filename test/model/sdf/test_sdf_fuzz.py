"""Fuzzing: read_sdf raises nothing but RobotStateFormatError on mangled input."""

from __future__ import annotations

import pytest
from fuzz_outcome import assert_reads_or_refuses, check_diagnostics, check_model
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from repo_paths import REPO_ROOT

from robot_state_format.errors import ModelError
from robot_state_format.model.sdf import read_sdf

SAMPLES = REPO_ROOT / "robot_state_format" / "samples"
SEEDS = [(SAMPLES / n).read_text() for n in ("two_links_orthogonal_1.sdf", "nested_world.sdf")]

TAGS = ["model", "link", "joint", "frame", "pose", "parent", "child", "axis", "axis2", "xyz", "include", "uri",
        "world", "static", "limit", "lower", "upper", "mimic", "geometry", "box", "size", "visual", "collision",
        "drake:joint", "drake:parent", "drake:child", "inertial", "mass", "screw_thread_pitch", "thread_pitch"]
ATTRS = ["name", "type", "relative_to", "attached_to", "expressed_in", "canonical_link", "placement_frame",
         "frame", "joint", "merge", "rotation_format", "degrees", "axis"]
WORDS = st.sampled_from(["", "world", "__model__", "a", "b", "a::b", "::a", "l", "m", "m::l", "1", "0 0 1",
                         "1 2 3 0 0 0", "nan", "1e400", "revolute", "fixed", "ball", "screw", "gearbox", "true",
                         "quat_xyzw", "0 0 0 0 0 0 0", "-1", "x y z"])


def _check(text: bytes | str) -> None:
    assert_reads_or_refuses(read_sdf, text)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.sampled_from(SEEDS), data=st.data())
def test_mutated_samples(seed: str, data: st.DataObject) -> None:
    text = seed
    for _ in range(data.draw(st.integers(1, 4))):
        i = data.draw(st.integers(0, len(text)))
        j = data.draw(st.integers(i, min(len(text), i + 40)))
        repl = data.draw(st.one_of(st.text(max_size=8), WORDS, st.sampled_from(["<", ">", "/>", '"', "&amp;"])))
        text = text[:i] + repl + text[j:]
    _check(text)


@st.composite
def element(draw: st.DrawFn, depth: int = 0) -> str:
    tag = draw(st.sampled_from(TAGS))
    attrs = "".join(f' {a}="{draw(WORDS)}"' for a in draw(st.lists(st.sampled_from(ATTRS), max_size=3, unique=True)))
    if depth > 2:
        return f"<{tag}{attrs}>{draw(WORDS)}</{tag}>"
    kids = draw(st.lists(element(depth + 1), max_size=3))
    body = "".join(kids) if kids else draw(WORDS)
    return f"<{tag}{attrs}>{body}</{tag}>"


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(version=st.sampled_from(["1.4", "1.5", "1.6", "1.7", "1.8", "1.9", "1.10", "1.11", "2.0", ""]),
       root=st.sampled_from(["model", "world"]), kids=st.lists(element(), max_size=6))
def test_random_documents(version: str, root: str, kids: list[str]) -> None:
    text = (f'<sdf version="{version}" xmlns:drake="http://drake.mit.edu"><{root} name="r">'
            f'{"".join(kids)}</{root}></sdf>')
    _check(text)


@settings(max_examples=60, deadline=None)
@given(st.binary(max_size=200))
def test_random_bytes(data: bytes) -> None:
    _check(data)
    _check(b'<sdf version="1.9">' + data)


def _nested(depth: int) -> str:
    return '<sdf version="1.9">' + '<model name="m"><link name="l"/>' * depth + "</model>" * depth + "</sdf>"


def test_deep_nesting_is_an_error_not_a_crash() -> None:
    # 3000 nested models: past libxml2's depth bound (256; huge_tree stays off), refused with the line
    text = _nested(3000)
    with pytest.raises(ModelError) as exc:
        read_sdf(text)
    first = exc.value.diagnostics[0]
    assert (first.code, first.line) == ("XML_SYNTAX", 1) and "depth" in first.message.lower(), first
    check_diagnostics(exc.value, text)


def test_nesting_within_the_bound_is_read_in_full() -> None:
    # 120 nested models: every level's link is in the model, each scoped under all its parents
    model = read_sdf(_nested(120))
    check_model(model)
    assert len(model.links) == 120
    assert max(name.count("::") for name in model.links) == 119
