"""Forward kinematics: hand-derived poses for every joint type, mimic, twists, batches."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest
import reference_kinematics as ref
from repo_paths import REPO_ROOT

from robot_state_format.errors import KinematicsError
from robot_state_format.kinematics import fk
from robot_state_format.kinematics.tree import KinematicsWarning, compile_model, planar_basis
from robot_state_format.model.types import WORLD, Joint, JointType, Link, Mimic, Model

SAMPLES = REPO_ROOT / "robot_state_format" / "samples"
S45 = math.sqrt(0.5)


def T(x: float = 0.0, y: float = 0.0, z: float = 0.0, roll: float = 0.0, pitch: float = 0.0,
      yaw: float = 0.0) -> np.ndarray:
    return ref.pose(x, y, z, roll, pitch, yaw)


def R(rows: list[list[float]], p: tuple[float, float, float] = (0.0, 0.0, 0.0)) -> np.ndarray:
    t = np.eye(4)
    t[:3, :3] = rows
    t[:3, 3] = p
    return t


def chain(*joints: Joint, fmt: str = "urdf", root_pose: np.ndarray | None = None) -> Model:
    """A model whose links are named by the joints (parent/child given in each joint)."""
    links: dict[str, Link] = {}
    for j in joints:
        for n in (j.parent, j.child):
            if n != WORLD and n not in links:
                links[n] = Link(n)
    m = Model(name="robot", format=fmt, links=links, joints={j.name: j for j in joints})
    if root_pose is not None:
        m.links[next(iter(links))].pose = root_pose
    return m


def pose_of(model: Model, q: np.ndarray | list[float], link: str, **kw: object) -> np.ndarray:
    tree = compile_model(model)
    return fk.forward(tree, np.asarray(q, dtype=float), **kw)[tree.link_index(link)]  # type: ignore[arg-type]


# ---------------------------------------------------------------------------------------------
# hand-derived poses, one joint type at a time


def test_revolute_chain_urdf() -> None:
    # j1: origin (1,0,0), axis z, q1 = pi/2 -> b at (1,0,0) with Rz(90) = [[0,-1,0],[1,0,0],[0,0,1]]
    # j2: origin (0.5,0,0) in b, axis z, q2 = pi/2 -> c = T(1,0,0) Rz90 T(0.5,0,0) Rz90:
    #     position (1,0,0) + Rz90 (0.5,0,0) = (1, 0.5, 0); rotation Rz180 = diag(-1,-1,1)
    m = chain(Joint("j1", JointType.REVOLUTE, "a", "b", origin=T(1, 0, 0), axis=(0, 0, 1)),
              Joint("j2", JointType.REVOLUTE, "b", "c", origin=T(0.5, 0, 0), axis=(0, 0, 1)))
    q = [math.pi / 2, math.pi / 2]
    np.testing.assert_allclose(pose_of(m, q, "b"), R([[0, -1, 0], [1, 0, 0], [0, 0, 1]], (1, 0, 0)), atol=1e-15, rtol=0)
    np.testing.assert_allclose(pose_of(m, q, "c"), R([[-1, 0, 0], [0, -1, 0], [0, 0, 1]], (1, 0.5, 0)),
                               atol=1e-15, rtol=0)


def test_revolute_general_axis_and_origin_rotation() -> None:
    # origin rpy (0,0,pi/2) (Rz90), axis (1,1,0)/sqrt2 in J, q = pi:
    # Rot(u, pi) = 2 u u^T - I = [[0,1,0],[1,0,0],[0,0,-1]]; pose = Rz90 @ that
    #  = [[0,-1,0],[1,0,0],[0,0,1]] @ [[0,1,0],[1,0,0],[0,0,-1]] = [[-1,0,0],[0,1,0],[0,0,-1]]
    m = chain(Joint("j", JointType.REVOLUTE, "a", "b", origin=T(0, 0, 2, yaw=math.pi / 2), axis=(S45, S45, 0)))
    np.testing.assert_allclose(pose_of(m, [math.pi], "b"), R([[-1, 0, 0], [0, 1, 0], [0, 0, -1]], (0, 0, 2)),
                               atol=1e-15, rtol=0)


def test_continuous_negative_axis() -> None:
    # axis -z, q = pi/2 is a rotation by -pi/2 about z: [[0,1,0],[-1,0,0],[0,0,1]]
    m = chain(Joint("j", JointType.CONTINUOUS, "a", "b", axis=(0, 0, -1)))
    np.testing.assert_allclose(pose_of(m, [math.pi / 2], "b"), R([[0, 1, 0], [-1, 0, 0], [0, 0, 1]]), atol=1e-15,
                               rtol=0)


def test_prismatic() -> None:
    # origin (0,0,1) rpy (0,0,pi/2); axis y in J; q = 0.3: position (0,0,1) + Rz90 (0,0.3,0) = (-0.3, 0, 1)
    m = chain(Joint("j", JointType.PRISMATIC, "a", "b", origin=T(0, 0, 1, yaw=math.pi / 2), axis=(0, 1, 0)))
    np.testing.assert_allclose(pose_of(m, [0.3], "b"), R([[0, -1, 0], [1, 0, 0], [0, 0, 1]], (-0.3, 0, 1)),
                               atol=1e-15, rtol=0)


def test_screw_pitch_is_metres_per_revolution() -> None:
    # pitch 0.1 m per 2 pi; q = pi -> half a turn: Rz180 and 0.05 m along z
    m = chain(Joint("j", JointType.SCREW, "a", "b", axis=(0, 0, 1), screw_pitch=0.1), fmt="sdf")
    np.testing.assert_allclose(pose_of(m, [math.pi], "b"), R([[-1, 0, 0], [0, -1, 0], [0, 0, 1]], (0, 0, 0.05)),
                               atol=1e-15, rtol=0)


@pytest.mark.parametrize("jtype", [JointType.UNIVERSAL, JointType.REVOLUTE2])
def test_two_axis_joints_rotate_about_axis_then_axis2(jtype: JointType) -> None:
    # Rx(90) = [[1,0,0],[0,0,-1],[0,1,0]], Ry(90) = [[0,0,1],[0,1,0],[-1,0,0]]
    # Rx(90) @ Ry(90) = [[0,0,1],[1,0,0],[0,1,0]]   (row by row: [0,0,1], [1,0,0], [0,1,0])
    m = chain(Joint("j", jtype, "a", "b", axis=(1, 0, 0), axis2=(0, 1, 0)), fmt="sdf")
    q = [math.pi / 2, math.pi / 2]
    np.testing.assert_allclose(pose_of(m, q, "b"), R([[0, 0, 1], [1, 0, 0], [0, 1, 0]]), atol=1e-15, rtol=0)
    # only the second angle: Ry(90)
    np.testing.assert_allclose(pose_of(m, [0, math.pi / 2], "b"), R([[0, 0, 1], [0, 1, 0], [-1, 0, 0]]),
                               atol=1e-15, rtol=0)


def test_planar_basis_and_pose() -> None:
    # normal z: e1 = x, e2 = y; q = (0.2, 0.3, pi/2): position (0.2, 0.3, 0), Rz90
    m = chain(Joint("j", JointType.PLANAR, "a", "b", axis=(0, 0, 1)))
    np.testing.assert_allclose(pose_of(m, [0.2, 0.3, math.pi / 2], "b"),
                               R([[0, -1, 0], [1, 0, 0], [0, 0, 1]], (0.2, 0.3, 0)), atol=1e-15, rtol=0)
    # normal x: smallest |n_i| first at y -> e1 = y, e2 = x cross y = z; q = (0.2, 0.3, 0) -> (0, 0.2, 0.3)
    m = chain(Joint("j", JointType.PLANAR, "a", "b", axis=(1, 0, 0)))
    np.testing.assert_allclose(pose_of(m, [0.2, 0.3, 0.0], "b"), T(0, 0.2, 0.3), atol=1e-15, rtol=0)
    # normal y: e1 = x, e2 = y cross x = -z
    e1, e2 = planar_basis((0.0, 1.0, 0.0))
    np.testing.assert_allclose(e1, [1, 0, 0], rtol=0, atol=1e-12)
    np.testing.assert_allclose(e2, [0, 0, -1], rtol=0, atol=1e-12)


def test_ball_quaternion_xyzw() -> None:
    # (0, 0, sin 45, cos 45) is Rz(90)
    m = chain(Joint("j", JointType.BALL, "a", "b", origin=T(1, 0, 0)), fmt="sdf")
    np.testing.assert_allclose(pose_of(m, [0, 0, S45, S45], "b"),
                               R([[0, -1, 0], [1, 0, 0], [0, 0, 1]], (1, 0, 0)), atol=1e-15, rtol=0)


def test_floating_translation_then_quaternion() -> None:
    # (1, 2, 3) then (sin 45, 0, 0, cos 45) = Rx(90) = [[1,0,0],[0,0,-1],[0,1,0]]
    m = chain(Joint("j", JointType.FLOATING, WORLD, "b"))
    np.testing.assert_allclose(pose_of(m, [1, 2, 3, S45, 0, 0, S45], "b"),
                               R([[1, 0, 0], [0, 0, -1], [0, 1, 0]], (1, 2, 3)), atol=1e-15, rtol=0)


def test_fixed_and_root_pose() -> None:
    # root link sits at its Link.pose; fixed child: root @ origin
    m = chain(Joint("j", JointType.FIXED, "a", "b", origin=T(0, 1, 0)), root_pose=T(0, 0, 5, yaw=math.pi / 2))
    # (0,0,5) + Rz90 (0,1,0) = (-1, 0, 5)
    np.testing.assert_allclose(pose_of(m, [], "b"), R([[0, -1, 0], [1, 0, 0], [0, 0, 1]], (-1, 0, 5)), atol=1e-15,
                               rtol=0)


def test_world_pose_applied_on_request() -> None:
    m = chain(Joint("j", JointType.PRISMATIC, "a", "b", axis=(1, 0, 0)))
    m.pose = T(0, 0, 1, yaw=math.pi)
    # root frame: (0.5, 0, 0); world: (0,0,1) + Rz180 (0.5,0,0) = (-0.5, 0, 1)
    np.testing.assert_allclose(pose_of(m, [0.5], "b")[:3, 3], [0.5, 0, 0], atol=1e-15, rtol=0)
    np.testing.assert_allclose(pose_of(m, [0.5], "b", world=True)[:3, 3], [-0.5, 0, 1], atol=1e-15, rtol=0)
    tree = compile_model(m)
    batch = fk.forward_batch(tree, np.array([[0.5]]), world=True)
    assert np.array_equal(batch[0], fk.forward(tree, np.array([0.5]), world=True))


def test_sdf_child_offset_two_links_orthogonal() -> None:
    # SDFormat two_links_orthogonal_1: linkB at (0.1,0,0.1), joint pose (0,0,-0.1) in linkB -> joint
    # frame at (0.1,0,0): origin T(0.1,0,0), child offset T(0,0,0.1).  At q = 0.78 about y:
    #   B = (0.1,0,0) + Ry(q) (0,0,0.1) = (0.1 + 0.1 sin q, 0, 0.1 cos q)
    # two_links_orthogonal_2: joint pose (-0.1,0,0) in link2 -> joint at (0,0,0.1):
    #   2 = (0,0,0.1) + Ry(q) (0.1,0,0) = (0.1 cos q, 0, 0.1 - 0.1 sin q)
    q = 0.78
    m1 = chain(Joint("jointAB", JointType.REVOLUTE, "linkA", "linkB", origin=T(0.1, 0, 0),
                     child_offset=T(0, 0, 0.1), axis=(0, 1, 0)), fmt="sdf")
    m2 = chain(Joint("joint12", JointType.REVOLUTE, "link1", "link2", origin=T(0, 0, 0.1),
                     child_offset=T(0.1, 0, 0), axis=(0, 1, 0)), fmt="sdf")
    p1 = pose_of(m1, [q], "linkB")
    p2 = pose_of(m2, [q], "link2")
    np.testing.assert_allclose(p1[:3, 3], [0.1 + 0.1 * math.sin(q), 0, 0.1 * math.cos(q)], atol=1e-15, rtol=0)
    np.testing.assert_allclose(p2[:3, 3], [0.1 * math.cos(q), 0, 0.1 - 0.1 * math.sin(q)], atol=1e-15, rtol=0)
    np.testing.assert_allclose(p1[:3, :3], ref.rot_y(q), atol=1e-15, rtol=0)
    assert np.linalg.norm(p1[:3, 3] - p2[:3, 3]) > 0.1  # same zero pose, very different at 0.78


# ---------------------------------------------------------------------------------------------
# an independent reference (test/reference_kinematics.py: first-principles rotations, a recursive
# walk over the Model's joints, its own mimic resolution) on a tree of every type


def independent_values(tree, q: np.ndarray) -> dict[str, np.ndarray]:  # type: ignore[no-untyped-def]
    """``{joint: coordinates}`` of the independent joints in ``q`` (the layout under test)."""
    return {name: q[tree.q_slice(name)] for name in tree.moving_joint_names}


def independent_rates(tree, v: np.ndarray) -> dict[str, np.ndarray]:  # type: ignore[no-untyped-def]
    return {name: v[tree.v_slice(name)] for name in tree.moving_joint_names}


def rand_transform(rng: np.random.Generator) -> np.ndarray:
    x, y, z = rng.uniform(-1, 1, 3)
    roll, pitch, yaw = rng.uniform(-math.pi, math.pi, 3)
    return ref.pose(x, y, z, roll, pitch, yaw)


def unit(rng: np.random.Generator) -> tuple[float, float, float]:
    v = rng.normal(size=3)
    v /= np.linalg.norm(v)
    return (float(v[0]), float(v[1]), float(v[2]))


def every_type_model(rng: np.random.Generator, offsets: bool = True) -> Model:
    """A tree using every joint type, random origins, child offsets and axes (some aligned)."""
    spec = [
        ("floating", JointType.FLOATING, WORLD), ("rev_z", JointType.REVOLUTE, "floating"),
        ("rev_gen", JointType.REVOLUTE, "floating"), ("cont_negx", JointType.CONTINUOUS, "rev_z"),
        ("prism", JointType.PRISMATIC, "rev_z"), ("screw", JointType.SCREW, "prism"),
        ("uni", JointType.UNIVERSAL, "rev_gen"), ("rev2", JointType.REVOLUTE2, "uni"),
        ("planar", JointType.PLANAR, "cont_negx"), ("ball", JointType.BALL, "planar"),
        ("fixed", JointType.FIXED, "ball"), ("rev_y", JointType.REVOLUTE, "fixed"),
        ("follower", JointType.REVOLUTE, "rev_y"), ("follower2", JointType.PRISMATIC, "follower"),
    ]
    joints = []
    for name, jt, parent in spec:
        j = Joint(name, jt, parent, name, origin=rand_transform(rng),
                  child_offset=rand_transform(rng) if offsets and name not in ("rev_z", "cont_negx", "rev_y")
                  else np.eye(4))
        j.axis = {"rev_z": (0.0, 0.0, 1.0), "cont_negx": (-1.0, 0.0, 0.0), "rev_y": (0.0, 1.0, 0.0)}.get(name, unit(rng))
        j.axis2 = unit(rng)
        j.screw_pitch = 0.37
        joints.append(j)
    by = {j.name: j for j in joints}
    by["follower"].mimic = [Mimic("rev_y", multiplier=-1.0, offset=0.0)]
    by["follower2"].mimic = [Mimic("follower", multiplier=0.5, offset=0.1)]
    by["rev2"].mimic = [Mimic("rev_gen", multiplier=2.0, offset=-0.3, dof=1)]
    m = Model(name="robot", format="sdf", links={"base": Link("base", pose=rand_transform(rng))},
              joints={j.name: j for j in joints})
    for j in joints:
        m.links[j.child] = Link(j.child)
    m.joints["base_fixed"] = Joint("base_fixed", JointType.FIXED, "base", "extra", origin=rand_transform(rng))
    m.links["extra"] = Link("extra")
    return m


def random_q(tree, rng: np.random.Generator, n: int) -> np.ndarray:  # type: ignore[no-untyped-def]
    q = rng.uniform(-math.pi, math.pi, (n, tree.nq))
    for _, c in tree.quat_q_cols:
        quat = rng.normal(size=(n, 4))
        q[:, c:c + 4] = quat / np.linalg.norm(quat, axis=1, keepdims=True)
    return q


def test_every_type_matches_reference() -> None:
    rng = np.random.default_rng(1)
    for trial in range(4):
        m = every_type_model(rng, offsets=trial % 2 == 0)
        tree = compile_model(m)
        assert tree.mimic_followers == ["follower", "follower2"]
        for q in random_q(tree, rng, 5):
            allq = tree.all_joint_positions(q)
            # mimic resolved by hand: follower = -rev_y, follower2 = 0.5 follower + 0.1,
            # rev2[1] = 2 rev_gen - 0.3 (rev2[0] independent)
            assert allq["follower"][0] == -q[tree.q_slice("rev_y")][0]
            assert allq["follower2"][0] == pytest.approx(0.5 * allq["follower"][0] + 0.1, abs=1e-15, rel=0)
            assert allq["rev2"][1] == pytest.approx(2 * q[tree.q_slice("rev_gen")][0] - 0.3, abs=1e-15, rel=0)
            assert allq["rev2"][0] == q[tree.q_slice("rev2")][0]
            values = independent_values(tree, q)
            expected = ref.link_poses(m, values)
            assert set(expected) == set(tree.link_names)
            poses = fk.forward(tree, q)
            for i, name in enumerate(tree.link_names):
                np.testing.assert_allclose(poses[i], expected[name], atol=1e-12, err_msg=name, rtol=0)
            world = fk.forward(tree, q, world=True)
            expected_world = ref.link_poses(m, values, world=True)
            for i, name in enumerate(tree.link_names):
                np.testing.assert_allclose(world[i], expected_world[name], atol=1e-12, err_msg=name, rtol=0)
            ref_q = ref.resolve_mimic(m, values)
            for name, got in allq.items():
                np.testing.assert_allclose(got, ref_q.get(name, np.zeros(0)), rtol=0, atol=1e-15, err_msg=name)
            jt = fk.joint_transforms(tree, q)
            for k, name in enumerate(tree.joint_names):
                j = m.joints[name]
                np.testing.assert_allclose(jt[k], ref.joint_transform(m, j, ref_q.get(name, ())), atol=1e-12,
                                           err_msg=name, rtol=0)


def test_batch_equals_single_bit_for_bit() -> None:
    rng = np.random.default_rng(2)
    m = every_type_model(rng)
    tree = compile_model(m)
    qs = random_q(tree, rng, 37)
    vs = rng.normal(size=(37, tree.nv))
    singles = np.stack([fk.forward(tree, q) for q in qs])
    twists = np.stack([fk.link_twists(tree, q, v) for q, v in zip(qs, vs)])
    tfs = np.stack([fk.joint_transforms(tree, q) for q in qs])
    expected = ref.link_poses(m, independent_values(tree, qs[0]))  # what they all equal, independently
    for i, name in enumerate(tree.link_names):
        np.testing.assert_allclose(singles[0, i], expected[name], rtol=0, atol=1e-12, err_msg=name)
    for chunk in (1, 2, 5, 16, 36, 256):
        assert np.array_equal(fk.forward_batch(tree, qs, chunk=chunk), singles)
        out = np.empty((37, tree.nlinks, 4, 4))
        assert np.array_equal(fk.forward_batch(tree, qs, chunk=chunk, out=out), singles)
        assert np.array_equal(fk.link_twists_batch(tree, qs, vs, chunk=chunk), twists)
        assert np.array_equal(fk.joint_transforms_batch(tree, qs, chunk=chunk), tfs)
    m.pose = rand_transform(rng)
    tree = compile_model(m)
    worlds = np.stack([fk.forward(tree, q, world=True) for q in qs])
    for chunk in (4, 256):
        assert np.array_equal(fk.forward_batch(tree, qs, chunk=chunk, world=True), worlds)
    np.testing.assert_allclose(worlds[3], m.pose @ singles[3], atol=1e-12, rtol=0)


# ---------------------------------------------------------------------------------------------
# twists against finite differences


def test_twists_match_finite_differences_of_the_reference() -> None:
    rng = np.random.default_rng(3)
    for _ in range(3):
        m = every_type_model(rng)
        tree = compile_model(m)
        for q in random_q(tree, rng, 3):
            v = rng.normal(size=tree.nv)
            tw = fk.link_twists(tree, q, v)
            body = fk.link_twists(tree, q, v, frame="body")
            expected = ref.link_twists(m, independent_values(tree, q), independent_rates(tree, v))
            now = ref.link_poses(m, independent_values(tree, q))
            for i, name in enumerate(tree.link_names):
                np.testing.assert_allclose(tw[i, :3], expected[name][:3], atol=1e-6, err_msg=f"linear {name}", rtol=0)
                np.testing.assert_allclose(tw[i, 3:], expected[name][3:], atol=1e-6, err_msg=f"angular {name}", rtol=0)
                rot = now[name][:3, :3]
                np.testing.assert_allclose(body[i, :3], rot.T @ tw[i, :3], atol=1e-12, rtol=0)
                np.testing.assert_allclose(body[i, 3:], rot.T @ tw[i, 3:], atol=1e-12, rtol=0)


def test_twist_hand_derived() -> None:
    # URDF arm: j1 about z at origin, link b; j2 about z at (1,0,0) in b.  At q = 0 with
    # v = (1, 0): c's origin is at (1,0,0) + 0 -> wait: c sits at (1,0,0); omega = (0,0,1);
    # linear = omega x (1,0,0) = (0,1,0).  With v = (1, 2): omega_c = (0,0,3), linear still (0,1,0)
    # (j2 rotates c about its own origin).
    m = chain(Joint("j1", JointType.REVOLUTE, "a", "b", axis=(0, 0, 1)),
              Joint("j2", JointType.REVOLUTE, "b", "c", origin=T(1, 0, 0), axis=(0, 0, 1)))
    tree = compile_model(m)
    tw = fk.link_twists(tree, np.zeros(2), np.array([1.0, 2.0]))
    np.testing.assert_allclose(tw[tree.link_index("b")], [0, 0, 0, 0, 0, 1], atol=1e-15, rtol=0)
    np.testing.assert_allclose(tw[tree.link_index("c")], [0, 1, 0, 0, 0, 3], atol=1e-15, rtol=0)
    np.testing.assert_allclose(tw[tree.link_index("a")], np.zeros(6), atol=0, rtol=0)


# ---------------------------------------------------------------------------------------------
# mimic resolution


def mimic_chain_model() -> Model:
    # declared in reverse dependency order with names sorting against it:
    # "a_last" mimics "m_mid" mimics "z_first" (independent)
    return chain(
        Joint("a_last", JointType.REVOLUTE, "l2", "l3", axis=(0, 0, 1), mimic=[Mimic("m_mid", 2.0, 0.5)]),
        Joint("m_mid", JointType.REVOLUTE, "l1", "l2", axis=(0, 0, 1), mimic=[Mimic("z_first", -1.0, 0.25)]),
        Joint("z_first", JointType.REVOLUTE, "l0", "l1", axis=(0, 0, 1)),
    )


def test_mimic_chain_in_dependency_order() -> None:
    tree = compile_model(mimic_chain_model())
    assert tree.moving_joint_names == ["z_first"] and tree.nq == 1
    allq = tree.all_joint_positions(np.array([0.3]))
    # m_mid = -1 * 0.3 + 0.25 = -0.05; a_last = 2 * -0.05 + 0.5 = 0.4
    assert allq["m_mid"][0] == pytest.approx(-0.05, abs=1e-15, rel=0)
    assert allq["a_last"][0] == pytest.approx(0.4, abs=1e-15, rel=0)
    # all three rotate about z at the origin: l3 yaw = 0.3 - 0.05 + 0.4 = 0.65
    np.testing.assert_allclose(fk.forward(tree, np.array([0.3]))[tree.link_index("l3")], T(yaw=0.65), atol=1e-15,
                               rtol=0)
    va = tree.all_joint_velocities(np.array([2.0]))
    assert va["m_mid"][0] == -2.0 and va["a_last"][0] == -4.0


def test_mimic_cycle_and_unknown_leader_rejected_at_compile() -> None:
    m = chain(Joint("j1", JointType.REVOLUTE, "a", "b", mimic=[Mimic("j2")]),
              Joint("j2", JointType.REVOLUTE, "b", "c", mimic=[Mimic("j1")]))
    with pytest.raises(KinematicsError, match="mimic cycle"):
        compile_model(m)
    m = chain(Joint("j1", JointType.REVOLUTE, "a", "b", mimic=[Mimic("nope")]))
    with pytest.raises(KinematicsError, match="nope"):
        compile_model(m)
    m = chain(Joint("j1", JointType.BALL, "a", "b"), Joint("j2", JointType.REVOLUTE, "b", "c", mimic=[Mimic("j1")]))
    with pytest.raises(KinematicsError, match="j1"):
        compile_model(m)


def test_follower_value_ignored_with_warning() -> None:
    tree = compile_model(mimic_chain_model())
    q, warns = tree.resolve_mapping({"z_first": 0.1, "a_last": 3.0})
    assert q.tolist() == [0.1]
    assert any("a_last" in w and "mimic" in w for w in warns)
    with pytest.warns(KinematicsWarning, match="a_last"):
        tree.q_from_mapping({"a_last": 3.0})


# ---------------------------------------------------------------------------------------------
# names, validation


def test_names_scoped_and_unscoped() -> None:
    m = chain(Joint("inner::j", JointType.REVOLUTE, "a", "b"), Joint("other::k", JointType.PRISMATIC, "b", "c"),
              Joint("k", JointType.PRISMATIC, "c", "d"))
    tree = compile_model(m)
    q = tree.q_from_mapping({"robot::inner::j": 0.5, "j": 0.5, "other::k": [0.2]})
    assert q[tree.q_slice("inner::j")][0] == 0.5 and q[tree.q_slice("other::k")][0] == 0.2
    # "k" is the model-relative name of a joint: exact names win over suffixes
    assert tree.resolve_joint("k") == "k"
    with pytest.raises(KinematicsError, match="unknown joint"):
        tree.q_from_mapping({"nope": 1.0})
    with pytest.raises(KinematicsError, match="expected 1"):
        tree.q_from_mapping({"j": [1.0, 2.0]})
    m2 = chain(Joint("x::j", JointType.REVOLUTE, "a", "b"), Joint("y::j", JointType.REVOLUTE, "b", "c"))
    with pytest.raises(KinematicsError, match="ambiguous"):
        compile_model(m2).q_from_mapping({"j": 1.0})


def test_bad_configurations_name_the_joint() -> None:
    m = chain(Joint("hinge", JointType.REVOLUTE, "a", "b"), Joint("shoulder", JointType.BALL, "b", "c"))
    tree = compile_model(m)
    with pytest.raises(KinematicsError, match="shape"):
        fk.forward(tree, np.zeros(3))
    with pytest.raises(KinematicsError, match="hinge"):
        fk.forward(tree, np.array([np.nan, 0, 0, 0, 1]))
    with pytest.raises(KinematicsError, match=r"shoulder.*not unit"):
        fk.forward(tree, np.array([0, 0, 0, 0, 1.1]))
    with pytest.raises(KinematicsError, match="configuration 1"):
        fk.forward_batch(tree, np.array([[0, 0, 0, 0, 1.0], [0, 0, 0, 0, 0.5]]))
    # within tolerance: accepted and normalised
    p = fk.forward(tree, np.array([0, 0, 0, 0, 1 + 5e-7]))
    np.testing.assert_allclose(p[2], np.eye(4), atol=1e-15, rtol=0)
    with pytest.raises(KinematicsError, match="velocity"):
        fk.link_twists(tree, np.array([0, 0, 0, 0, 1.0]), np.array([0, np.inf, 0, 0]))


def test_tree_errors() -> None:
    with pytest.raises(KinematicsError, match="two joints"):
        compile_model(chain(Joint("j1", JointType.FIXED, "a", "b"), Joint("j2", JointType.FIXED, "c", "b")))
    with pytest.raises(KinematicsError, match="cycle"):
        m = chain(Joint("j1", JointType.FIXED, "a", "b"), Joint("j2", JointType.FIXED, "b", "a"))
        compile_model(m)
    with pytest.raises(KinematicsError, match="axis"):
        compile_model(chain(Joint("j", JointType.REVOLUTE, "a", "b", axis=(0, 0, 0))))


def test_warning_free_compile_and_neutral() -> None:
    rng = np.random.default_rng(5)
    tree = compile_model(every_type_model(rng))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        q = tree.neutral()
    assert q[tree.q_slice("ball")].tolist() == [0, 0, 0, 1]
    assert q[tree.q_slice("floating")].tolist() == [0, 0, 0, 0, 0, 0, 1]


def test_batch_equals_single_on_sample_with_mimic() -> None:
    from robot_state_format.model.loader import load_model_file

    tree = compile_model(load_model_file(SAMPLES / "arm7_gripper.urdf"))
    assert tree.mimic_followers == ["finger_right_joint"]
    rng = np.random.default_rng(9)
    qs = rng.uniform(-1, 1, (9, tree.nq))
    tfs = fk.joint_transforms_batch(tree, qs, chunk=4)
    poses = fk.forward_batch(tree, qs, chunk=4)
    for k, q in enumerate(qs):
        assert np.array_equal(fk.joint_transforms(tree, q), tfs[k])
        assert np.array_equal(fk.forward(tree, q), poses[k])
    # the follower moves exactly like its leader (multiplier 1, offset 0)
    allq = tree.all_joint_positions(qs[0])
    assert allq["finger_right_joint"][0] == allq["finger_left_joint"][0]


def test_forward_batch_reuses_an_earlier_result_as_out() -> None:
    rng = np.random.default_rng(11)
    tree = compile_model(every_type_model(rng))
    qa, qb = random_q(tree, rng, 6), random_q(tree, rng, 6)
    first = fk.forward_batch(tree, qa)
    expect_b = np.stack([fk.forward(tree, q) for q in qb])
    again = fk.forward_batch(tree, qb, out=first)
    assert again is first
    assert np.array_equal(first, expect_b)
    with pytest.raises(KinematicsError, match="out must be"):
        fk.forward_batch(tree, qb, out=np.empty((5, tree.nlinks, 4, 4)))


def test_lenient_mapping_and_gearbox_rejected() -> None:
    tree = compile_model(mimic_chain_model())
    q, warns = tree.resolve_mapping({"z_first": 0.2, "ghost": 1.0}, strict=False)
    assert q.tolist() == [0.2] and any("ghost" in w for w in warns)
    v, warns = tree.resolve_mapping({"m_mid": 1.0}, velocities=True)
    assert v.tolist() == [0.0] and any("m_mid" in w for w in warns)
    with pytest.raises(KinematicsError, match="gearbox"):
        compile_model(chain(Joint("g", JointType.GEARBOX, "a", "b")))


def test_single_results_are_fresh_arrays_and_threads_do_not_interfere() -> None:
    import threading

    rng = np.random.default_rng(21)
    tree = compile_model(every_type_model(rng))
    qs = random_q(tree, rng, 24)
    vs = rng.normal(size=(24, tree.nv))
    expect = fk.forward_batch(tree, qs)
    expect_tw = fk.link_twists_batch(tree, qs, vs)
    first = fk.forward(tree, qs[0])
    fk.forward(tree, qs[1])  # must not change the first result
    assert np.array_equal(first, expect[0])
    errors: list[int] = []

    def work(offset: int) -> None:
        for _ in range(20):
            for k in range(offset, 24, 4):
                if not (np.array_equal(fk.forward(tree, qs[k]), expect[k])
                        and np.array_equal(fk.link_twists(tree, qs[k], vs[k]), expect_tw[k])):
                    errors.append(k)

    threads = [threading.Thread(target=work, args=(i,)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []


def test_compiled_tree_pickles_and_deep_copies_after_use() -> None:
    import copy
    import pickle

    rng = np.random.default_rng(5)
    tree = compile_model(every_type_model(rng))
    q = random_q(tree, rng, 1)[0]
    expect = fk.forward(tree, q)  # fills the caches (per-thread scratch included)
    for other in (pickle.loads(pickle.dumps(tree)), copy.deepcopy(tree)):
        assert np.array_equal(fk.forward(other, q), expect)


@pytest.mark.parametrize("value,says", [
    (True, "must be a number or a list of numbers, got True"),
    ("1.5", "must be a number or a list of numbers, got '1.5'"),
    ([True], "must be a number or a list of numbers"),
    ([[1.0]], "must be a number or a list of numbers"),
    ([1.0, 2.0], "expected 1 position value(s), got 2"),
    ([math.nan], "must be finite"),
])
def test_joint_values_must_be_numbers(value: object, says: str) -> None:
    from robot_state_format.model.loader import load_model_file

    tree = compile_model(load_model_file(SAMPLES / "double_pendulum.urdf"))
    with pytest.raises(KinematicsError) as info:
        tree.q_from_mapping({"joint A": value})
    assert says in str(info.value) and "joint 'joint A'" in str(info.value)
    # numbers of any numeric kind are taken
    assert tree.q_from_mapping({"joint A": np.float32(0.5)})[0] == 0.5
    assert tree.q_from_mapping({"joint A": 2})[0] == 2.0
