"""Fuzzing the URDF reader: random XML, mutated real documents and random attribute values must
produce a Model or one of the project's own errors, never another exception."""

from __future__ import annotations

import os

from fuzz_outcome import assert_reads_or_refuses
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from repo_paths import REPO_ROOT, TEST_DIR

from robot_state_format.model.urdf.reader import read_urdf

# RSF_FUZZ_SCALE=20 for a long local fuzzing run; the default keeps the suite quick.
SCALE = float(os.environ.get("RSF_FUZZ_SCALE", "1"))
SAMPLES = REPO_ROOT / "robot_state_format" / "samples"
SEEDS = [(SAMPLES / n).read_bytes() for n in ("double_pendulum.urdf", "arm7_gripper.urdf", "drake_ext.urdf")]
SEEDS.append((TEST_DIR / "fixtures" / "urdf" / "drake_joints.urdf").read_bytes())

TAGS = ["robot", "link", "joint", "parent", "child", "origin", "axis", "limit", "mimic", "inertial", "mass",
        "inertia", "visual", "collision", "geometry", "box", "cylinder", "sphere", "mesh", "capsule",
        "material", "color", "texture", "dynamics", "calibration", "safety_controller", "drake:joint",
        "drake:ellipsoid", "drake:screw_thread_pitch", "gazebo"]
ATTRS = ["name", "type", "link", "xyz", "rpy", "quat_xyzw", "lower", "upper", "effort", "velocity", "joint",
         "multiplier", "offset", "value", "ixx", "ixy", "ixz", "iyy", "iyz", "izz", "size", "radius",
         "length", "filename", "scale", "rgba", "a", "b", "c", "damping", "friction", "k_velocity"]
VALUES = st.one_of(
    st.sampled_from(["", "0", "1", "-1", "nan", "inf", "-inf", "1e400", "0 0 0", "1 0 0", "0 0", "a b c",
                     "1 2 3 4", "revolute", "continuous", "prismatic", "fixed", "floating", "planar", "ball",
                     "screw", "universal", "l0", "l1", "l2", "j0", "j1", "\u00e9", "1,2,3", "\ud800"]),
    st.floats(allow_nan=True, allow_infinity=True).map(repr),
    st.text(alphabet=st.characters(blacklist_characters="\x00"), max_size=12),  # lone surrogates too
)


def _escape(s: str) -> str:
    return s.replace("&", "&amp;").replace("<", "&lt;").replace('"', "&quot;")


def _attrs() -> st.SearchStrategy[str]:
    return st.dictionaries(st.sampled_from(ATTRS), VALUES, max_size=4).map(
        lambda d: "".join(f' {k}="{_escape(v)}"' for k, v in d.items()))


def _element(depth: int) -> st.SearchStrategy[str]:
    if depth == 0:
        return st.builds(lambda t, a: f"<{t}{a}/>", st.sampled_from(TAGS), _attrs())
    return st.builds(lambda t, a, kids: f"<{t}{a}>{''.join(kids)}</{t}>", st.sampled_from(TAGS), _attrs(),
                     st.lists(_element(depth - 1), max_size=4))


DOCUMENTS = st.builds(
    lambda a, kids: f'<robot xmlns:drake="http://drake.mit.edu"{a}>{"".join(kids)}</robot>',
    _attrs(), st.lists(_element(2), max_size=6))


def _read(data: bytes | str) -> None:
    assert_reads_or_refuses(read_urdf, data)


@settings(max_examples=int(40 * SCALE), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(DOCUMENTS)
def test_random_structured_documents(doc: str) -> None:
    _read(doc)


@settings(max_examples=int(60 * SCALE), deadline=None)
@given(st.sampled_from(SEEDS), st.lists(st.tuples(st.integers(0, 10_000), st.integers(0, 40), st.binary(max_size=8)),
                                        min_size=1, max_size=5))
def test_mutated_samples(seed: bytes, edits: list[tuple[int, int, bytes]]) -> None:
    data = bytearray(seed)
    for pos, cut, insert in edits:
        pos %= len(data) + 1
        data[pos:pos + cut] = insert
    _read(bytes(data))


@settings(max_examples=int(60 * SCALE), deadline=None)
@given(st.sampled_from(SEEDS), st.integers(0, 400), VALUES)
def test_random_attribute_values_in_samples(seed: bytes, which: int, value: str) -> None:
    text = seed.decode()
    quotes = [i for i, ch in enumerate(text) if ch == '"']
    pairs = list(zip(quotes[0::2], quotes[1::2]))
    start, end = pairs[which % len(pairs)]
    _read(text[:start + 1] + _escape(value) + text[end:])


@settings(max_examples=int(40 * SCALE), deadline=None)
@given(st.binary(max_size=200))
def test_random_bytes(data: bytes) -> None:
    _read(data)
