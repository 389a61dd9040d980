"""Hypothesis strategies of the fuzzing harness: mutated seeds (bytes or text) and USDF states."""

from __future__ import annotations

from hypothesis import strategies as st

from robot_state_format.usdf.types import FrameState, JointState, LinkState, ModelState, Stamp, WorldState

# Fragments that reach the readers' special cases: numbers at the grammar's edges, entity and
# DOCTYPE syntax, comments and declarations, the tolerated defects, names, xacro syntax.
TOKENS = [
    b"0", b"-0", b"1e-400", b"1e999", b"nan", b"-inf", b"1_0", b"\xd9\xa1", b"1.0.0", b".5", b"5.", b"0x10",
    b"1 2 3", b"1 2 3 4 5 6", b"1 2 3 4 5 6 7", b" ", b"\n", b"\t", b"\x00", b"\xef\xbb\xbf", b"\xff\xfe",
    b"<", b">", b"/>", b"</", b'"', b"'", b"=", b"&amp;", b"&e;", b"&#0;", b"&#x41;", b"<!--", b"-->",
    b'<?xml version="1.0"?>', b'<?xml version="0.0" encoding="latin-1"?>', b"<![CDATA[x]]>",
    b'<!DOCTYPE r [<!ENTITY e "x">]>', b"<!DOCTYPE r>", b"drake:", b"xmlns:drake=\"http://drake.mit.edu\"",
    b"world", b"__model__", b"::", b"a::b", b"link", b"joint", b"frame", b"model", b"pose", b"include",
    b"${1/0}", b"${pi}", b"$(arg x)", b"$(find nope)", b"<xacro:include filename=\"nope.xacro\"/>",
    b"<xacro:macro name=\"m\"><xacro:m/></xacro:macro><xacro:m/>", b"relative_to=\"\"", b"type=\"ball\"",
    b"<link_state name=\"l\"><pose>0 0 0 0 0 0</pose></link_state>", b"<stamp sec=\"1\" nanosec=\"999999999\"/>",
]


@st.composite
def mutated(draw: st.DrawFn, seeds: list[bytes]) -> bytes | str:
    """A seed with a few random edits (cuts, random bytes, tokens), as bytes or as text."""
    data = bytearray(draw(st.sampled_from(seeds)))
    for _ in range(draw(st.integers(1, 3))):
        pos = draw(st.integers(0, len(data)))
        cut = draw(st.integers(0, 8))
        insert = draw(st.sampled_from(TOKENS)) if draw(st.integers(0, 3)) else draw(st.binary(max_size=4))
        if draw(st.integers(0, 9)) == 0:
            insert = insert * draw(st.integers(2, 500))  # repetition: the scanners' worst cases
        data[pos:pos + cut] = insert
    raw = bytes(data)
    if draw(st.booleans()):
        return raw.decode("utf-8", "surrogateescape")  # a str, lone surrogates included
    return raw


_FLOATS = st.one_of(st.floats(allow_nan=False, allow_infinity=False), st.sampled_from([0.0, -0.0, 5e-324, 1e308]),
                    st.floats())  # non-finite: the writer refuses them (a domain error)
_NAMES = st.one_of(st.sampled_from(["a", "b", "l1", "j1", "base_link", "world", "a::b", " x", ""]),
                   st.text(min_size=1, max_size=8))
_VEC6 = st.none() | st.tuples(*[_FLOATS] * 6)
_VEC = st.none() | st.lists(_FLOATS, max_size=4).map(tuple)


@st.composite
def _model(draw: st.DrawFn, depth: int = 0) -> ModelState:
    nested = draw(st.lists(_model(depth + 1), max_size=2)) if depth < 1 else []
    return ModelState(
        name=draw(_NAMES), parent=draw(st.none() | _NAMES) if depth == 0 else None, pose=draw(_VEC6),
        twist=draw(_VEC6),
        link_states=draw(st.lists(st.builds(LinkState, _NAMES, _VEC6, _VEC6, _VEC6), max_size=3)),
        joint_states=draw(st.lists(st.builds(JointState, _NAMES, _VEC, _VEC, _VEC), max_size=3)),
        model_states=nested)


STATES = st.builds(
    WorldState, name=_NAMES, stamp=st.none() | st.builds(Stamp, st.integers(0, 2**63), st.integers(0, 10**9 - 1)),
    frames=st.lists(st.builds(FrameState, _NAMES, st.none() | _NAMES, _VEC6, _VEC6), max_size=2),
    model_states=st.lists(_model(), max_size=2))
