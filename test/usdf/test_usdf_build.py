"""USDF states from Models: hand-derived poses and twists, SnapshotBuilder text, model validation."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from repo_paths import REPO_ROOT, TEST_DIR

from robot_state_format.errors import Severity
from robot_state_format.model.types import WORLD, Joint, JointType, Limits, Link, Mimic, Model
from robot_state_format.spatial import pose6_to_transform, pose_to_transform, transform_to_pose6
from robot_state_format.usdf.build import Placement, SnapshotBuilder, state_from_model, world_poses
from robot_state_format.usdf.reader import read_world_state, read_world_state_file
from robot_state_format.usdf.types import FrameState, JointState, LinkState, ModelState, Stamp, WorldState
from robot_state_format.usdf.validate import validate_against_model, validate_schema
from robot_state_format.usdf.writer import write_world_state

SAMPLES = REPO_ROOT / "robot_state_format" / "samples"
FIX = TEST_DIR / "fixtures" / "usdf"
S45 = math.sqrt(0.5)


def _t(xyz: tuple[float, float, float], rpy: tuple[float, float, float] = (0.0, 0.0, 0.0)) -> np.ndarray:
    return pose_to_transform(xyz, rpy)


def bot() -> Model:
    """Floating base, prismatic, ball, revolute and a mimic follower (hand-built)."""
    m = Model(name="bot", format="urdf")
    for n in ("base", "carriage", "head", "arm", "tip"):
        m.links[n] = Link(n)
    m.joints["free"] = Joint("free", JointType.FLOATING, WORLD, "base")
    m.joints["slider"] = Joint("slider", JointType.PRISMATIC, "base", "carriage", origin=_t((1, 0, 0)),
                               axis=(0.0, 0.0, 1.0), limits=Limits(-0.5, 0.5))
    m.joints["neck"] = Joint("neck", JointType.BALL, "carriage", "head", origin=_t((0, 0, 0.5)))
    m.joints["hinge"] = Joint("hinge", JointType.REVOLUTE, "base", "arm", origin=_t((0, 1, 0)),
                              axis=(1.0, 0.0, 0.0), limits=Limits(-1.0, 1.0))
    m.joints["finger"] = Joint("finger", JointType.REVOLUTE, "arm", "tip", origin=_t((0, 0, 1)),
                               axis=(1.0, 0.0, 0.0), mimic=[Mimic("hinge", 2.0, 0.1)])
    return m


POSITIONS = {"free": [1.0, 2.0, 3.0, 0.0, 0.0, S45, S45], "slider": 0.3, "neck": [S45, 0.0, 0.0, S45],
             "hinge": 0.2}


def _close(pose: tuple[float, ...] | None, expected: tuple[float, ...], tol: float = 1e-12) -> None:
    assert pose is not None
    a, b = pose6_to_transform(pose), pose6_to_transform(expected)
    assert np.allclose(a, b, atol=tol, rtol=0), (pose, expected)


def test_hand_derived_link_poses_and_joint_values() -> None:
    s = state_from_model(bot(), POSITIONS, stamp=(7, 8))
    assert s.stamp == Stamp(7, 8)
    (ms,) = s.model_states
    assert ms.name == "bot" and ms.parent is None
    _close(ms.pose, (0, 0, 0, 0, 0, 0))
    assert ms.twist is None  # no velocities given: absent, not zero
    half_pi = math.pi / 2
    # base: x y z = 1 2 3, yaw 90 deg (quaternion 0 0 s45 s45)
    _close(ms.link("base").pose, (1, 2, 3, 0, 0, half_pi))  # type: ignore[union-attr]
    # carriage: base ∘ T(1,0,0) ∘ T(0,0,0.3) → (1,2,3) + Rz90 (1,0,0.3) = (1,3,3.3)
    _close(ms.link("carriage").pose, (1, 3, 3.3, 0, 0, half_pi))  # type: ignore[union-attr]
    # head: carriage ∘ T(0,0,0.5) ∘ Rx(90)
    _close(ms.link("head").pose, (1, 3, 3.8, half_pi, 0, half_pi))  # type: ignore[union-attr]
    # arm: base ∘ T(0,1,0) ∘ Rx(0.2) → (1,2,3) + Rz90 (0,1,0) = (0,2,3)
    _close(ms.link("arm").pose, (0, 2, 3, 0.2, 0, half_pi))  # type: ignore[union-attr]
    # tip: finger = 2 * 0.2 + 0.1 = 0.5; position (0,2,3) + Rz90 Rx(0.2) (0,0,1) = (sin .2, 2, 3 + cos .2)
    _close(ms.link("tip").pose, (math.sin(0.2), 2, 3 + math.cos(0.2), 0.7, 0, half_pi))  # type: ignore[union-attr]
    assert ms.joint("finger").positions == pytest.approx((0.5,), abs=1e-15, rel=0)  # type: ignore[union-attr]
    assert ms.joint("neck").positions == pytest.approx((S45, 0, 0, S45), rel=0, abs=1e-12)  # type: ignore[union-attr]
    assert ms.joint("free").positions == pytest.approx((1, 2, 3, 0, 0, S45, S45),
                                                       rel=0, abs=1e-12)  # type: ignore[union-attr]
    assert all(js.velocities is None and js.torques is None for js in ms.joint_states)
    assert {ls.name for ls in ms.link_states} == {"base", "carriage", "head", "arm", "tip"}


def test_hand_derived_twists_and_torques() -> None:
    s = state_from_model(bot(), POSITIONS, {"hinge": 1.0}, {"slider": 4.0})
    (ms,) = s.model_states
    assert ms.twist == (0.0,) * 6  # the model frame of a robot file is fixed in the world
    # arm spins about its x axis = world y (Rz90 x); the origin is on the axis
    assert ms.link("arm").twist == pytest.approx((0, 0, 0, 0, 1, 0), abs=1e-12, rel=0)  # type: ignore[union-attr]
    # tip: omega = 1 + 2 (mimic rate) about world y; v = omega_arm x (p_tip - p_arm)
    assert ms.link("tip").twist == pytest.approx(  # type: ignore[union-attr]
        (math.cos(0.2), 0, -math.sin(0.2), 0, 3, 0), abs=1e-12, rel=0)
    assert ms.link("base").twist == pytest.approx((0,) * 6, rel=0, abs=1e-12)  # type: ignore[union-attr]
    assert ms.joint("finger").velocities == pytest.approx((2.0,), rel=0, abs=1e-12)  # type: ignore[union-attr]
    assert ms.joint("slider").torques == (4.0,)  # type: ignore[union-attr]
    assert ms.joint("hinge").torques is None  # type: ignore[union-attr]  # not given: absent


@pytest.mark.parametrize("pretty", [True, False])
@pytest.mark.parametrize("with_v, with_e, stamp", [(False, False, None), (True, False, (1, 2)), (True, True, None)])
def test_snapshot_builder_text_equals_writer(pretty: bool, with_v: bool, with_e: bool,
                                             stamp: tuple[int, int] | None) -> None:
    from robot_state_format.kinematics.fk import forward, link_twists

    model = bot()
    b = SnapshotBuilder(model, pretty=pretty)
    t = b.tree
    q = t.q_from_mapping(POSITIONS)
    v = t.v_from_mapping({"hinge": 0.5, "free": [0.1, 0.2, 0.3, 0.4, 0.5, 0.6], "neck": [1, 2, 3]}) \
        if with_v else None
    e = np.arange(t.nv, dtype=float) if with_e else None
    text = b.build(q, v, e, stamp=stamp)
    assert text == write_world_state(b.state(q, v, e, stamp=stamp), pretty=pretty)
    # precomputed poses/twists (what the node passes) give the same text
    pre = b.build(q, v, e, link_poses=forward(t, q), link_twists=link_twists(t, q, v) if v is not None else None,
                  stamp=stamp)
    assert pre == text
    assert validate_schema(text) == []
    back = read_world_state(text).state
    assert validate_against_model(back, model, check_poses=True) == []


def test_snapshot_builder_refuses_non_finite() -> None:
    from robot_state_format.errors import UsdfError

    b = SnapshotBuilder(bot())
    q = b.tree.q_from_mapping(POSITIONS)
    e = np.full(b.tree.nv, np.nan)
    with pytest.raises(UsdfError) as exc:
        b.build(q, np.zeros(b.tree.nv), e)
    assert exc.value.code == "USDF_NON_FINITE"


# --------------------------------------------------------------------------------------------
# samples (readers by the URDF/SDFormat engineers)


def test_double_pendulum_sample() -> None:
    from robot_state_format.model import load_model_file

    model = load_model_file(SAMPLES / "double_pendulum.urdf")
    s = state_from_model(model, {"joint A": 0.5, "joint B": -0.25}, {"joint A": 1.0})
    ms = s.model_states[0]
    # joint A at (0,0,-0.05) about y; joint B 1 m below link B's origin, about y
    _close(ms.link("link C").pose, (-math.sin(0.5), 0, -0.05 - math.cos(0.5), 0, 0.25, 0))  # type: ignore[union-attr]
    assert ms.link("link C").twist == pytest.approx(  # type: ignore[union-attr]
        (-math.cos(0.5), 0, math.sin(0.5), 0, 1, 0), abs=1e-12, rel=0)


def test_nested_world_sample_world_poses_match_hand_derivation() -> None:
    from robot_state_format.model import load_model_file

    model = load_model_file(SAMPLES / "nested_world.sdf")
    s = state_from_model(model, {})
    assert [m.name for m in s.model_states] == ["robot", "box"]
    assert [m.name for m in s.model("robot").model_states] == ["arm", "gripper"]  # type: ignore[union-attr]
    wp = world_poses(s)
    pi = math.pi
    # the sample's header lists these world poses, derived by hand
    expected = {"robot::arm": (1, 0.2, 0.5, 0, 0, pi / 2), "robot::arm::upper": (1, 0.2, 0.6, 0, 0, pi / 2),
                "robot::arm::lower": (1, 0.2, 1.1, 0, 0, pi), "robot::gripper::palm": (1, 0.2, 1.15, 0, 0, pi),
                "box::body": (2, 0, 0, 0, 0, 0)}
    for name, pose in expected.items():
        assert np.allclose(wp[name], pose6_to_transform(pose), atol=1e-12, rtol=0), name
    text = write_world_state(s)
    assert validate_against_model(read_world_state(text).state, model, check_poses=True) == []


# --------------------------------------------------------------------------------------------
# world poses of hand-written states


def test_world_poses_through_frames_models_and_links() -> None:
    s = read_world_state_file(FIX / "valid" / "full.xml").state
    wp = world_poses(s)
    odom = pose6_to_transform((1.5, -2, 0, 0, 0, math.pi / 2))
    assert np.allclose(wp["odom"], odom, rtol=0, atol=1e-12)
    assert np.allclose(wp["pr2"], odom, rtol=0, atol=1e-12)  # pose zero in odom
    # r_shoulder_pan_link at (-0.05, -0.188, 0.959) yaw 0.3 in pr2 = odom: rotate by 90 deg, add (1.5, -2, 0)
    link = wp["pr2::r_shoulder_pan_link"]
    assert np.allclose(link[:3, 3], (1.5 + 0.188, -2 - 0.05, 0.959), rtol=0, atol=1e-12)
    assert transform_to_pose6(link)[5] == pytest.approx(math.pi / 2 + 0.3, rel=0, abs=1e-12)
    # the cup sits 0.1 m along that link's x axis
    yaw = math.pi / 2 + 0.3
    assert np.allclose(wp["cup"][:3, 3], link[:3, 3] + 0.1 * np.array([math.cos(yaw), math.sin(yaw), 0]),
                       rtol=0, atol=1e-12)
    assert np.allclose(wp["pr2::gripper"][:3, 3], (1.5 + 0.188, -2 + 0.8, 0.79), rtol=0, atol=1e-12)
    assert "pr2::gripper::finger" not in wp  # absent pose is not zero
    assert "pr2::base_link" in wp


# --------------------------------------------------------------------------------------------
# validation against a model


def _codes(diags: list) -> list[tuple[str, str | None, Severity]]:  # type: ignore[type-arg]
    return [(d.code, d.element, d.severity) for d in diags]


def test_validate_against_model_reports_each_problem() -> None:
    model = bot()
    s = WorldState("w", model_states=[ModelState("bot", link_states=[LinkState("base"), LinkState("ghost")],
                                                  joint_states=[
                                                      JointState("slider", (0.9,)),
                                                      JointState("neck", (0.0, 0.0, 0.0)),
                                                      JointState("hinge", (0.1,), (1.0, 2.0)),
                                                      JointState("free", (0, 0, 0, 0, 0, 0, 2.0)),
                                                      JointState("nope", (1.0,)),
                                                  ])])
    got = _codes(validate_against_model(s, model))
    assert ("USDF_UNKNOWN_LINK", "link_state[name=ghost]", Severity.ERROR) in got
    assert ("USDF_UNKNOWN_JOINT", "joint_state[name=nope]", Severity.ERROR) in got
    assert ("USDF_POSITION_LIMIT", "joint_state[name=slider]", Severity.WARNING) in got
    assert ("USDF_DOF_MISMATCH", "joint_state[name=neck]", Severity.ERROR) in got
    assert ("USDF_DOF_MISMATCH", "joint_state[name=hinge]", Severity.ERROR) in got
    assert ("USDF_BAD_QUATERNION", "joint_state[name=free]", Severity.ERROR) in got
    assert len(got) == 6


def test_validate_complete_state_for_replay() -> None:
    """``complete``: the model_state named as the model, positions for every independent moving joint."""
    model = bot()
    full = state_from_model(model, POSITIONS)
    assert validate_against_model(full, model, complete=True) == []
    # the mimic follower may be left out; the floating base and the hinge may not
    (ms,) = full.model_states
    ms.joint_states = [js for js in ms.joint_states if js.name not in ("finger", "free", "hinge")]
    got = validate_against_model(full, model, complete=True)
    assert [(d.code, d.severity, d.message) for d in got] == [
        ("USDF_MISSING_POSITIONS", Severity.ERROR, "no positions for moving joint(s) 'free', 'hinge'")]
    assert validate_against_model(full, model) == []  # without complete: a partial state is fine
    # a joint_state with velocities only does not give positions
    ms.joint_states.append(JointState("hinge", None, (0.5,)))
    assert "'free', 'hinge'" in validate_against_model(full, model, complete=True)[0].message
    # another name: matched as the lone model_state without complete, refused with it (and nothing else)
    other = state_from_model(model, POSITIONS, name="w")
    other.model_states[0].name = "other"
    assert validate_against_model(other, model) == []
    got = validate_against_model(other, model, complete=True)
    assert [(d.code, d.message) for d in got] == [
        ("USDF_MODEL_MISSING", "no model_state named 'bot' (the file has 'other')")]
    assert validate_against_model(WorldState("w"), model, complete=True)[0].message == (
        "no model_state named 'bot' (the file has none)")
    # eleven missing joints: ten named, the rest counted
    chain = Model(name="chain", format="urdf")
    chain.links["l0"] = Link("l0")
    for i in range(1, 12):
        chain.links[f"l{i}"] = Link(f"l{i}")
        chain.joints[f"j{i}"] = Joint(f"j{i}", JointType.REVOLUTE, f"l{i - 1}", f"l{i}", axis=(0.0, 0.0, 1.0))
    (d,) = validate_against_model(WorldState("w", model_states=[ModelState("chain")]), chain, complete=True)
    assert d.message == ("no positions for moving joint(s) 'j1', 'j2', 'j3', 'j4', 'j5', 'j6', 'j7', 'j8', "
                         "'j9', 'j10' and 1 more")


def test_validate_refuses_non_finite_joint_values() -> None:
    model = bot()
    for bad in (JointState("hinge", (math.nan,)), JointState("hinge", (0.1,), (math.inf,)),
                JointState("hinge", (0.1,), (0.0,), (-math.inf,))):
        s = WorldState("w", model_states=[ModelState("bot", joint_states=[bad])])
        got = validate_against_model(s, model)
        assert [(d.code, d.element, d.message) for d in got] == [
            ("USDF_NON_FINITE", "joint_state[name=hinge]", "joint 'hinge' has a non-finite value")]


def test_validate_pose_consistency() -> None:
    model = bot()
    s = state_from_model(model, POSITIONS)
    assert validate_against_model(s, model, check_poses=True) == []
    arm = s.model_states[0].link("arm")
    assert arm is not None and arm.pose is not None
    arm.pose = (arm.pose[0] + 1e-3, *arm.pose[1:])  # type: ignore[assignment]
    got = _codes(validate_against_model(s, model, check_poses=True))
    assert got == [("USDF_POSE_MISMATCH", "link_state[name=arm]", Severity.ERROR)]
    assert validate_against_model(s, model, check_poses=True, tolerance=1e-2) == []


def test_validate_other_model_state_is_a_warning() -> None:
    s = state_from_model(bot(), POSITIONS)
    s.model_states.append(ModelState("table"))
    got = _codes(validate_against_model(s, bot()))
    assert got == [("USDF_MODEL_NOT_DESCRIBED", "model_state[name=table]", Severity.WARNING)]


def test_snapshot_builder_world_with_moving_nested_models() -> None:
    from robot_state_format.model import load_model_file

    model = load_model_file(SAMPLES / "nested_world.sdf")
    b = SnapshotBuilder(model, pretty=False)
    t = b.tree
    q = t.q_from_mapping({"robot::shoulder": 0.3, "robot::arm::elbow_joint": 0.2})
    v = t.v_from_mapping({"robot::shoulder": 1.0})
    text = b.build(q, v, stamp=(1, 2))
    state = read_world_state(text).state
    assert state == b.state(q, v, stamp=(1, 2))
    assert validate_against_model(state, model, check_poses=True) == []
    robot = state.model("robot")
    assert robot is not None and robot.twist == (0.0,) * 6  # fixed to the world through base
    # gripper frame rides on arm::lower, which turns with the shoulder (axis z through (0.2, 0) in
    # the robot frame, the arm model's origin): twist = (w x (p - axis point), w) with w = (0, 0, 1)
    grip = state.model("robot::gripper")
    assert grip is not None and grip.pose is not None and grip.twist is not None
    px, py = grip.pose[0] - 0.2, grip.pose[1]
    assert grip.twist == pytest.approx((-py, px, 0, 0, 0, 1), abs=1e-12, rel=0)
    arm = state.model("robot::arm")
    assert arm is not None and arm.twist == pytest.approx((0, 0, 0, 0, 0, 1), abs=1e-12, rel=0)
    # links of a moving nested model are at rest relative to it when only the shoulder moves
    assert all(ls.twist == pytest.approx((0,) * 6, abs=1e-12, rel=0) for ls in arm.link_states)


_angle = st.floats(-3.0, 3.0, allow_nan=False)


@settings(max_examples=40, deadline=None)
@given(st.lists(_angle, min_size=3, max_size=3), st.lists(st.floats(-1, 1), min_size=4, max_size=4)
       .filter(lambda v: sum(x * x for x in v) > 1e-3), st.lists(_angle, min_size=2, max_size=2),
       st.lists(st.floats(-5, 5, allow_nan=False), min_size=12, max_size=12), st.booleans())
def test_hypothesis_snapshot_text_matches_writer_and_kinematics(xyz: list[float], quat: list[float],
                                                                joints: list[float], vel: list[float],
                                                                pretty: bool) -> None:
    n = math.sqrt(sum(x * x for x in quat))
    quat = [x / n for x in quat]
    model = bot()
    b = SnapshotBuilder(model, pretty=pretty)
    t = b.tree
    q = t.q_from_mapping({"free": xyz + quat, "slider": joints[0] / 10, "neck": quat, "hinge": joints[1]})
    v = np.array(vel[: t.nv])
    text = b.build(q, v, v, stamp=(5, 6))
    state = read_world_state(text).state
    assert text == write_world_state(state, pretty=pretty)
    assert [d.code for d in validate_against_model(state, model, check_poses=True, tolerance=1e-7)
            if d.severity is Severity.ERROR] == []


# --------------------------------------------------------------------------------------------
# placement: the top-level model_state posed from outside the model (the state_publisher's TF pose)

POSE = (1.0, -2.0, 0.25, 0.0, -0.0, 0.5)
PARENT_POSE = (0.0, 0.0, 1.0, 0.1, 0.2, 0.3)


def _placed_by_hand(state: WorldState, pose: tuple[float, ...] | None, parent: str | None,
                    parent_pose: tuple[float, ...] | None) -> WorldState:
    """The expected state, written out field by field (what the state_publisher's snapshot holds)."""
    top = state.model_states[0]
    first = ModelState(top.name, parent, pose,  # type: ignore[arg-type]
                       top.twist if pose is not None and parent is None else None,
                       top.link_states, top.joint_states, top.model_states)
    frames = [] if parent is None else [FrameState(parent, None, parent_pose)]  # type: ignore[arg-type]
    return WorldState(state.name, state.version, state.stamp, frames, [first, *state.model_states[1:]])


PLACEMENTS = [(POSE, None, None), (None, None, None), (POSE, "map", PARENT_POSE), (POSE, "map", None),
              (POSE, 'odom <&> "x"', PARENT_POSE), (None, "map", PARENT_POSE), (POSE, "7.5", None),
              (POSE, "0.5 1.5", PARENT_POSE)]


@pytest.mark.parametrize("pose, parent, parent_pose", PLACEMENTS)
@pytest.mark.parametrize("pretty", [True, False])
def test_placement_text_equals_writer_of_hand_placed_state(pose: tuple[float, ...] | None, parent: str | None,
                                                           parent_pose: tuple[float, ...] | None,
                                                           pretty: bool) -> None:
    b = SnapshotBuilder(bot(), pretty=pretty)
    t = b.tree
    rng = np.random.default_rng(15)
    for with_v, with_e in ((False, False), (True, False), (True, True)):
        quat, neck = rng.normal(size=4), rng.normal(size=4)
        q = t.q_from_mapping({"free": [*rng.normal(size=3), *(quat / np.linalg.norm(quat))],
                              "slider": rng.uniform(-0.5, 0.5), "neck": list(neck / np.linalg.norm(neck)),
                              "hinge": rng.uniform(-1.0, 1.0)})
        v = rng.normal(size=t.nv) if with_v else None
        e = rng.normal(size=t.nv) if with_e else None
        placement = Placement(pose, parent, parent_pose)
        expected = _placed_by_hand(b.state(q, v, e, stamp=(3, 4)), pose, parent, parent_pose)
        text = b.build(q, v, e, stamp=(3, 4), placement=placement)
        assert text == write_world_state(expected, pretty=pretty)
        assert b.state(q, v, e, stamp=(3, 4), placement=placement) == expected
        back = read_world_state(text).state
        ms = back.model_states[0]
        assert (ms.parent, ms.pose) == (parent, pose)
        assert (ms.twist is None) == (v is None or pose is None or parent is not None)
        assert back.frames == ([] if parent is None else [FrameState(parent, None, parent_pose)])  # type: ignore[arg-type]
        assert validate_schema(text) == []


def test_placement_shape_selects_the_template_and_numbers_fill_it() -> None:
    b = SnapshotBuilder(bot())
    q = b.tree.q_from_mapping(POSITIONS)
    shapes = [Placement(POSE), Placement(None), Placement(POSE, "a"), Placement(POSE, "b"),
              Placement(POSE, "a", PARENT_POSE), Placement(None, "a", PARENT_POSE)]
    texts = [b.build(q, placement=p) for p in shapes]
    assert len(set(texts)) == len(shapes)
    assert len(b._templates) == len(shapes)
    for p, text in zip(shapes, texts, strict=True):
        assert text == write_world_state(b.state(q, placement=p))
    # the same shape with other numbers: no new template, the new numbers in the text
    moved = Placement((5.0, 6.0, 7.0, 0.0, 0.0, 0.0), "a", (8.0, 9.0, 1e-7, 0.0, 0.0, -1e17))
    text = b.build(q, placement=moved)
    assert len(b._templates) == len(shapes)
    back = read_world_state(text).state
    assert back.model_states[0].pose == moved.pose and back.frames[0].pose == moved.parent_pose
    assert b.build(q, placement=None) == write_world_state(b.state(q))  # unplaced: the model's own pose


def test_placement_is_checked_and_ignored_for_worlds() -> None:
    from robot_state_format.errors import UsdfError
    from robot_state_format.model import load_model_file

    with pytest.raises(UsdfError) as exc:
        Placement((1.0, 2.0, 3.0))
    assert exc.value.code == "USDF_ARITY"
    b = SnapshotBuilder(bot())
    q = b.tree.q_from_mapping(POSITIONS)
    with pytest.raises(UsdfError) as exc:
        b.build(q, placement=Placement((math.nan, 0.0, 0.0, 0.0, 0.0, 0.0)))
    assert exc.value.code == "USDF_NON_FINITE"
    with pytest.raises(UsdfError) as exc:  # "world" is reserved: never a frame's name
        b.build(q, placement=Placement(POSE, "world"))
    assert exc.value.code == "USDF_BAD_NAME"
    world = SnapshotBuilder(load_model_file(SAMPLES / "nested_world.sdf"))
    qw = np.zeros(world.tree.nq)
    p = Placement(POSE, "map", PARENT_POSE)
    assert world.build(qw, placement=p) == world.build(qw)
    assert world.state(qw, placement=p) == world.state(qw)
