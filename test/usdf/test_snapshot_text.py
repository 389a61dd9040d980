"""The precompiled snapshot text (usdf/snapshot_text.py): byte-identical to the USDF writer, absent
values left out, and the one-pass poses + twists equal to forward / link_twists bit for bit."""

from __future__ import annotations

import zlib

import numpy as np
import pytest
from repo_paths import REPO_ROOT

from robot_state_format.kinematics import fk
from robot_state_format.kinematics.fk import poses_and_twists
from robot_state_format.model import load_model_file
from robot_state_format.model.types import WORLD, Joint, JointType, Link, Mimic, Model
from robot_state_format.usdf import snapshot_text
from robot_state_format.usdf.build import SnapshotBuilder
from robot_state_format.usdf.reader import read_world_state
from robot_state_format.usdf.validate import validate_schema
from robot_state_format.usdf.writer import write_world_state

SAMPLES = REPO_ROOT / "robot_state_format" / "samples"
MODELS = ["arm7_gripper.urdf", "nested_world.sdf", "double_pendulum.urdf", "drake_ext.urdf"]


def _mixed() -> Model:
    """Floating base, planar, ball, prismatic, universal and a mimic chain (every joint kind)."""
    m = Model(name="mixed", format="sdf")
    for n in ("base", "sled", "head", "slide", "uni", "f1", "f2"):
        m.links[n] = Link(n)
    m.joints["free"] = Joint("free", JointType.FLOATING, WORLD, "base")
    m.joints["plane"] = Joint("plane", JointType.PLANAR, "base", "sled", axis=(0.0, 0.0, 1.0))
    m.joints["neck"] = Joint("neck", JointType.BALL, "sled", "head")
    m.joints["rail"] = Joint("rail", JointType.PRISMATIC, "head", "slide", axis=(1.0, 0.0, 0.0))
    m.joints["cross"] = Joint("cross", JointType.UNIVERSAL, "base", "uni", axis=(1.0, 0.0, 0.0),
                              axis2=(0.0, 1.0, 0.0))
    m.joints["lead"] = Joint("lead", JointType.REVOLUTE, "uni", "f1", axis=(0.0, 0.0, 1.0))
    m.joints["follow"] = Joint("follow", JointType.REVOLUTE, "f1", "f2", axis=(0.0, 1.0, 0.0),
                               mimic=[Mimic("lead", -1.5, 0.25)])
    return m


def _models() -> list[tuple[str, Model]]:
    out = [(name, load_model_file(SAMPLES / name)) for name in MODELS]
    out.append(("mixed", _mixed()))
    return out


def _random_q(b: SnapshotBuilder, rng: np.random.Generator, scale: float) -> np.ndarray:
    t = b.tree
    q = rng.uniform(-1.0, 1.0, t.nq) * scale
    for _name, c in t.quat_q_cols:
        quat = rng.normal(size=4)
        q[c:c + 4] = quat / np.linalg.norm(quat)
    return q


@pytest.mark.parametrize("name, model", _models(), ids=[n for n, _ in _models()])
def test_text_equals_writer_on_random_states(name: str, model: Model) -> None:
    rng = np.random.default_rng(zlib.crc32(name.encode()))
    for pretty in (True, False):
        b = SnapshotBuilder(model, pretty=pretty)
        t = b.tree
        nm = len(t.moving_joint_names)
        for trial in range(40):
            # tiny and huge magnitudes too: those values are written through repr (orjson's exponents differ)
            scale = [1.0, 1e-6, 1e-9, 3e16, 1e-300, 1e-12][trial % 6]
            q = _random_q(b, rng, scale)
            quat_cols = {c + i for _n, c in t.quat_q_cols for i in range(4)}
            plain = [i for i in range(t.nq) if i not in quat_cols]
            if plain and trial % 3 == 0:
                q[plain[int(rng.integers(len(plain)))]] = -0.0
            v = rng.normal(size=t.nv) * scale if trial % 2 else None
            e = rng.normal(size=t.nv) if trial % 4 == 1 else None
            stamp = (int(rng.integers(0, 2**31)), int(rng.integers(0, 10**9))) if trial % 3 else None
            known = rng.random(nm) < 0.6 if trial % 2 == 0 and nm else None
            text = b.build(q, v, e, stamp=stamp, known=known)
            assert text == write_world_state(b.state(q, v, e, stamp=stamp, known=known), pretty=pretty)
            if trial < 3:
                assert validate_schema(text) == []


def test_repr_fallback_gives_the_same_text(monkeypatch: pytest.MonkeyPatch) -> None:
    model = _mixed()
    b = SnapshotBuilder(model)
    rng = np.random.default_rng(3)
    q = _random_q(b, rng, 1.0)
    q[0] = 1e-7  # an exponent
    v = rng.normal(size=b.tree.nv)
    fast = b.build(q, v, stamp=(3, 4))
    monkeypatch.setattr(snapshot_text, "orjson", None)
    assert b.build(q, v, stamp=(3, 4)) == fast == write_world_state(b.state(q, v, stamp=(3, 4)))


def _below(model: Model, joint: str) -> set[str]:
    """Links whose pose depends on ``joint``: its child and everything under it (walked on the Model)."""
    out = {model.joints[joint].child}
    grew = True
    while grew:
        grew = False
        for j in model.joints.values():
            if j.parent in out and j.child not in out:
                out.add(j.child)
                grew = True
    return out


def test_unknown_joints_are_left_out_with_what_hangs_below() -> None:
    model = _mixed()
    b = SnapshotBuilder(model)
    t = b.tree
    rng = np.random.default_rng(4)
    q = _random_q(b, rng, 1.0)
    v = rng.normal(size=t.nv)
    full = read_world_state(b.build(q, v, stamp=(1, 2))).state
    known = np.array([n != "cross" for n in t.moving_joint_names])
    part = read_world_state(b.build(q, v, stamp=(1, 2), known=known)).state
    (fm,), (pm,) = full.model_states, part.model_states
    gone_links = _below(model, "cross")  # uni, f1, f2
    assert gone_links == {"uni", "f1", "f2"}
    assert {ls.name for ls in pm.link_states} == {ls.name for ls in fm.link_states} - gone_links
    for ls in pm.link_states:  # what is kept is unchanged
        assert ls == fm.link(ls.name)
    # the joint itself is absent; lead and its follower are measured (lead is known) and stay
    assert {js.name for js in pm.joint_states} == {js.name for js in fm.joint_states} - {"cross"}
    assert part.stamp == full.stamp and pm.pose == fm.pose
    # an unknown leader takes its mimic follower with it
    known = np.array([n != "lead" for n in t.moving_joint_names])
    part = read_world_state(b.build(q, v, known=known)).state
    assert {js.name for js in part.model_states[0].joint_states} == {"free", "plane", "neck", "rail", "cross"}
    assert {ls.name for ls in part.model_states[0].link_states} == {"base", "sled", "head", "slide", "uni"}
    # nothing known: no joint_state and no moving link; the model_state itself stays
    none = read_world_state(b.build(q, v, known=np.zeros(len(t.moving_joint_names), dtype=bool))).state
    assert none.model_states[0].joint_states == [] and none.model_states[0].link_states == []
    # every joint known is the full document
    assert b.build(q, v, known=np.ones(len(t.moving_joint_names), dtype=bool)) == b.build(q, v)


def test_nested_model_fixed_to_an_unknown_link_has_no_pose() -> None:
    model = load_model_file(SAMPLES / "nested_world.sdf")
    b = SnapshotBuilder(model)
    t = b.tree
    q = t.q_from_mapping({"robot::shoulder": 0.3, "robot::arm::elbow_joint": 0.2})
    known = np.array([n != "robot::shoulder" for n in t.moving_joint_names])
    state = read_world_state(b.build(q, known=known)).state
    grip = state.model("robot::gripper")  # rides on arm::lower, below the shoulder
    assert grip is not None and grip.pose is None and grip.link_states == []
    full = read_world_state(b.build(q)).state
    robot, full_robot = state.model("robot"), full.model("robot")
    assert robot is not None and full_robot is not None and robot.pose == full_robot.pose


@pytest.mark.parametrize("name, model", _models(), ids=[n for n, _ in _models()])
def test_poses_and_twists_equal_forward_and_link_twists_bit_for_bit(name: str, model: Model) -> None:
    from robot_state_format.kinematics.tree import compile_model

    t = compile_model(model)
    rng = np.random.default_rng(7)
    for _ in range(5):
        b = SnapshotBuilder(model, t)
        q = _random_q(b, rng, 2.0)
        v = rng.normal(size=t.nv)
        poses, twists = poses_and_twists(t, q, v)
        assert np.array_equal(poses, fk.forward(t, q))
        assert twists is not None and np.array_equal(twists, fk.link_twists(t, q, v))
        p2, none = poses_and_twists(t, q, None)
        assert none is None and np.array_equal(p2, poses)


def test_names_needing_escapes_come_out_as_the_writer_escapes_them() -> None:
    """The template's text is the writer's (derived, not written twice): names with XML specials too."""
    m = Model(name='w&"<x>"', format="urdf")
    for n in ("base", "a&b", "c<d>", 'e"f'):
        m.links[n] = Link(n)
    m.joints["j&1"] = Joint("j&1", JointType.REVOLUTE, "base", "a&b", axis=(0.0, 0.0, 1.0))
    m.joints["j<2>"] = Joint("j<2>", JointType.PRISMATIC, "a&b", "c<d>", axis=(1.0, 0.0, 0.0))
    m.joints['j"3'] = Joint('j"3', JointType.FIXED, "c<d>", 'e"f')
    for pretty in (True, False):
        b = SnapshotBuilder(m, pretty=pretty)
        q = np.array([0.25, -1.5])
        text = b.build(q, np.array([1.0, 2.0]), stamp=(5, 6))
        assert text == write_world_state(b.state(q, np.array([1.0, 2.0]), stamp=(5, 6)), pretty=pretty)
        assert 'name="a&amp;b"' in text and 'name="c&lt;d&gt;"' in text and 'name="j&amp;1"' in text
        back = read_world_state(text).state
        assert back.name == 'w&"<x>"' and back.stamp == (5, 6)
        ms = back.model_states[0]
        assert ms.joint("j<2>") is not None and ms.joint("j<2>").positions == (-1.5,)  # type: ignore[union-attr]
        assert ms.link('e"f') is not None


def test_derived_template_refuses_a_document_that_is_not_one_layout() -> None:
    marks = snapshot_text.sentinels(4)
    r = [float.__repr__(x) for x in marks.tolist()]
    doc = f'<a><p>{r[0]} {r[1]}</p><q>{r[2]} {r[3]}</q></a>'
    t = snapshot_text.derive_template(doc, marks)
    values = np.array([1.5, -2.0, 3.25, 0.0, np.nan])
    assert t.render(values) == "<a><p>1.5 -2.0</p><q>3.25 0.0</q></a>"
    with pytest.raises(ValueError, match="twice"):
        snapshot_text.derive_template(f"<a><p>{r[0]} {r[1]}</p><q>{r[1]}</q></a>", marks)
    with pytest.raises(ValueError, match="consecutive"):
        snapshot_text.derive_template(f"<a><p>{r[1]} {r[0]}</p></a>", marks)
    with pytest.raises(ValueError, match="stamp"):
        snapshot_text.derive_template(doc, marks, "<stamp/>")
    assert len(set(r)) == 4 and len({float.__repr__(x) for x in snapshot_text.sentinels(100000).tolist()}) == 100000
