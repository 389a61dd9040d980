"""KDL's arithmetic where robot_state_publisher's quaternion sign rests on a tie (ros/kdl_ties.py).

The expected branches are what the C++ robot_state_publisher (3.3.3 on Debian's orocos-kdl 1.5.1 and urdfdom
3.0.1, built by ../shared/anchors) published on 2026-11-30 for go1 and tiago_dual (example-robot-data), where
this node's rule had given the opposite sign: ``camera_chin`` (0.70711, 0, -0.70711, 0) and ``camera_right``
(0.70106, -0.70106, -0.0923, -0.0923) on /tf_static, ``arm_left_4_link`` (-0.44759, 0.54742, -0.54742,
-0.44759) on /tf at 0.2 rad. test_rsp_anchor.py runs the same models through the C++ node itself.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from tie_models import TIES

from robot_state_format.ros.kdl_ties import (
    KdlRows,
    W,
    X,
    Y,
    Z,
    constant_branch,
    joint_axis,
    kdl_norm,
    near_tie,
    near_ties,
    rotary_branch,
    urdf_joints,
    urdf_matrix,
)

HALF_PI = 1.5707963267948966
PI = 3.141592653589793


def _mat(m: tuple[float, ...]) -> np.ndarray:
    return np.array(m).reshape(3, 3)


def test_urdf_matrix_is_the_rotation_of_rpy() -> None:
    assert urdf_matrix(0.0, 0.0, 0.0) == (1.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0)
    r, p, y = 0.3, -0.7, 1.1  # fixed axes: Rz(y) Ry(p) Rx(r), by hand
    cx, sx, cy, sy, cz, sz = math.cos(r), math.sin(r), math.cos(p), math.sin(p), math.cos(y), math.sin(y)
    rz = np.array([[cz, -sz, 0], [sz, cz, 0], [0, 0, 1]])
    ry = np.array([[cy, 0, sy], [0, 1, 0], [-sy, 0, cy]])
    rx = np.array([[1, 0, 0], [0, cx, -sx], [0, sx, cx]])
    np.testing.assert_allclose(_mat(urdf_matrix(r, p, y)), rz @ ry @ rx, rtol=0, atol=1e-15)


def test_kdl_norm_and_the_joint_axis() -> None:
    assert kdl_norm((3.0, 4.0, 0.0)) == 5.0
    assert kdl_norm((0.0, -2.0, 0.0)) == 2.0
    assert kdl_norm((0.0, 0.0, 0.0)) == 0.0
    assert joint_axis(urdf_matrix(0, 0, 0), (0.0, 0.0, 2.0)) == (0.0, 0.0, 1.0)
    assert joint_axis(urdf_matrix(0, 0, 0), (0.0, 0.0, 0.0)) is None
    # the axis in the parent frame: the origin's rotation applied (a quarter turn about x takes y to z)
    np.testing.assert_allclose(joint_axis(urdf_matrix(HALF_PI, 0, 0), (0.0, 1.0, 0.0)), (0, 0, 1), rtol=0, atol=1e-15)


def test_the_branches_the_cpp_node_took_on_ties() -> None:
    chin = urdf_matrix(PI, HALF_PI, 0.0)  # go1's camera_joint_chin: m00 and m22 are both zero in exact arithmetic
    assert abs(chin[0] - chin[8]) < 1e-15
    assert constant_branch(chin) == X
    assert constant_branch(urdf_matrix(PI, 0.2618, -HALF_PI)) == X  # go1's camera_joint_right
    m = urdf_matrix(HALF_PI, -HALF_PI, 0.0)  # tiago_dual's arm_left_4_joint, axis z
    axis = joint_axis(m, (0.0, 0.0, 1.0))
    assert axis is not None
    assert rotary_branch(axis, m, 0.2) == Y  # the C++ node's sign at 0.2 rad
    seen = set()
    for q in np.linspace(-0.39, 2.35, 80).tolist():  # the joint's range: y and z tie wherever w does not lead
        r = _mat(urdf_matrix(0, 0, 0))  # Rot(axis, q) m by hand (Rodrigues), for its trace
        k = np.array([[0, -axis[2], axis[1]], [axis[2], 0, -axis[0]], [-axis[1], axis[0], 0]])
        rot = r + math.sin(q) * k + (1 - math.cos(q)) * (k @ k)
        trace = float(np.trace(rot @ _mat(m)))
        b = rotary_branch(axis, m, q)
        assert b == W if trace > 1e-9 else b in (Y, Z), q
        seen.add(b)
    assert seen == {W, Y, Z}  # which of the tied two wins depends on the angle's rounding: redone per message
    assert constant_branch(urdf_matrix(0.0, 0.0, 0.3)) == W  # no tie: the trace decides
    assert constant_branch(urdf_matrix(0.0, 0.0, PI)) == Z  # half a turn about z: m22 = 1 is the largest


def test_near_ties_are_where_the_rule_cannot_decide() -> None:
    s = math.sqrt(0.5)
    assert not near_tie(0.0, 0.0, 0.0, 1.0)
    assert near_tie(s, 0.0, -s, 0.0)  # x^2 = z^2, w = 0
    assert near_tie(0.0, 0.65, -0.65, math.sqrt(1 - 0.845))  # y^2 = z^2 past 120 degrees
    assert not near_tie(0.0, 0.6, -0.6, math.sqrt(1 - 0.72))  # w leads (under 120 degrees): no tie can matter
    assert not near_tie(0.8, 0.6, 0.0, 0.0)  # x^2 clearly the largest
    rows = np.array([[s, 0.0, -s, 0.0], [0.8, 0.6, 0.0, 0.0], [0.0, 0.0, 0.0, 1.0], [0.0, 0.65, -0.65, 0.39370],
                     [0.0, 0.6, -0.6, 0.52915]])
    assert near_ties(rows).tolist() == [0, 3]


def test_rows_only_from_urdf() -> None:
    names = ["cam_joint", "ja", "jb", "jc", "jp"]
    k = KdlRows.of(TIES, names)
    assert sorted(k.constant) == [0, 4] and sorted(k.rotary) == [1, 2, 3]
    assert k.constant[0] == X
    assert not KdlRows.of("<sdf version='1.9'><model name='m'/></sdf>", names)
    assert not KdlRows.of("not xml <robot", names)
    # an entity is never expanded (the safe parser): the document is refused, our rule stands
    bomb = '<?xml version="1.0"?><!DOCTYPE r [<!ENTITY a "aaaa">]><robot name="r">&a;</robot>'
    assert not KdlRows.of(bomb, names)
    # a joint whose numbers do not read is left to our rule; the others are kept
    bad = TIES.replace('rpy="1.5707963267948966 0 0"', 'rpy="1.5707963267948966 0 nan"')
    joints = urdf_joints(bad)
    assert "jb" not in joints and "ja" in joints


def test_the_node_gives_kdls_sign_where_the_rule_gives_the_other() -> None:
    pytest.importorskip("rclpy", reason="rclpy is not installed (run the tests through ./run test)")
    from robot_state_format.kinematics.joint_quaternions import joint_pose7
    from robot_state_format.model.loader import load_model
    from robot_state_format.ros.description import LoadedDescription
    from robot_state_format.ros.messages import kdl_quaternion_signs
    from robot_state_format.ros.publisher_runtime import Runtime

    rt = Runtime(LoadedDescription(TIES, load_model(TIES), "ties"), "", 0, True)
    tree = rt.tree
    rows = {name: i for i, name in enumerate(tree.joint_names)}
    rt.cache.q[:] = 0.2
    got = rt.joint_pose7().copy()
    plain = joint_pose7(tree, rt.cache.q)
    kdl_quaternion_signs(plain[:, 3:])
    np.testing.assert_allclose(np.abs(got), np.abs(plain), rtol=0, atol=1e-15)  # the same rotations
    a, cam = rows["ja"], rows["cam_joint"]
    assert plain[a, 3 + Z] > 0 and got[a, 3 + Y] > 0  # the rule took z, KDL's rounding takes y
    np.testing.assert_allclose(got[a, 3:], -plain[a, 3:], rtol=0, atol=0)
    assert got[cam, 3 + X] > 0
    frames, x = rt.static_transforms()
    from robot_state_format.ros.messages import transforms_to_msgs

    (static,) = [t for t in transforms_to_msgs(frames, x, 0, rt.fix_static) if t.child_frame_id == "cam"]
    assert static.transform.rotation.x > 0.7
