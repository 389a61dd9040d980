"""Compile a :class:`~robot_state_format.model.types.Model` into flat arrays for the kinematics.

:func:`compile_model` does all the dictionary and graph work once: link order, parent indices,
constant per-joint matrices grouped by joint type, the position/velocity layout and the mimic
resolution order.  Evaluating a configuration (see :mod:`robot_state_format.kinematics.fk`) then
only runs vectorised numpy code on these arrays.

Layouts
-------
* ``link_names``: root links first (declaration order), then every other link breadth-first
  by depth; within a depth level, links are grouped by how the pose kernel treats their joint
  (fixed, revolute about X/Y/Z, screw, prismatic, other) and then by parent (see
  :mod:`robot_state_format.kinematics.plan`).  Parents always precede children.
* ``joint_names``: tree joints in the order of their child links, so joint ``j`` moves link
  ``nroot + j``.
* ``q`` (size ``nq``): the positions of every *independent* moving joint, in joint order, each
  in the layout of :mod:`robot_state_format.model.types` (floating ``x y z qx qy qz qw``, ball
  ``qx qy qz qw``, planar ``x y yaw``).  Joints all of whose coordinates mimic another joint are
  not in ``q``; a 2-DOF joint with only one mimicked coordinate keeps its full slice and the
  mimicked entry is ignored.  ``v`` (size ``nv``) is the same for velocities (ball: angular
  velocity of the child-side joint frame, expressed in that frame; floating: linear velocity of
  its origin then angular velocity, both expressed in the child-side joint frame, as Pinocchio's
  free-flyer).
* ``qa``/``va`` ("all" coordinates, sizes ``nqa``/``nva``): the same for every moving tree joint,
  mimic followers included.

Joint motion ``motion(q)`` in the joint frame J (axes unit vectors in J):

* revolute, continuous: rotation by ``q`` about ``axis``; prismatic: translation ``q * axis``;
* screw: rotation by ``q`` about ``axis`` and translation ``screw_pitch * q / (2 pi)`` along it;
* universal, revolute2: ``Rot(axis, q0) @ Rot(axis2, q1)`` -- ``axis`` is fixed in the parent
  side, ``axis2`` (given at the zero configuration) is carried by the first rotation, i.e. fixed
  in the child side: two revolute joints in series, as libsdformat/Gazebo describe them;
* planar: ``Trans(x * e1 + y * e2) @ Rot(axis, yaw)`` with ``axis`` the plane normal n and the
  in-plane basis ``e1`` = the unit projection onto the plane of the first of X, Y, Z with the
  smallest ``|n_i|``, ``e2 = n x e1`` (n = Z gives e1 = X, e2 = Y);
* ball: rotation by the unit quaternion; floating: translation then rotation.
"""

from __future__ import annotations

import math

import numpy as np
from numpy.typing import NDArray

from robot_state_format.errors import KinematicsError
from robot_state_format.kinematics.compiled_tree import (
    QUATERNION_TOLERANCE,
    ROOT,
    CompiledTree,
    KinematicsWarning,
)
from robot_state_format.kinematics.joint_axes import EYE4, JointInfo, joint_info, planar_basis, transform
from robot_state_format.kinematics.joint_groups import compile_groups
from robot_state_format.kinematics.mimic import compile_mimic
from robot_state_format.kinematics.plan_build import compile_plan
from robot_state_format.model.types import WORLD, Joint, JointType, Model

FloatArray = NDArray[np.float64]
IntArray = NDArray[np.intp]

__all__ = ["QUATERNION_TOLERANCE", "ROOT", "CompiledTree", "KinematicsWarning", "compile_model", "planar_basis"]


def compile_model(model: Model) -> CompiledTree:  # noqa: C901, PLR0915 (complexity 21, 111 statements): to be split, issue 38
    """Compile ``model``'s tree joints into a :class:`CompiledTree`.

    Raises :class:`KinematicsError` for a joint with an unknown parent/child link, a link that is
    the child of two joints, a cycle among tree joints, a zero axis, a mimic joint whose leader is
    unknown (or not a moving tree joint), mimic on a quaternion joint, or a mimic cycle.
    """
    links = list(model.links)
    link_set = set(links)
    joints = list(model.joints.values())
    child_of: dict[str, Joint] = {}
    children: dict[str, list[Joint]] = {}
    for j in joints:
        if j.type is JointType.GEARBOX:
            raise KinematicsError(f"joint {j.name!r}: gearbox joints are constraints, not tree joints")
        if j.child not in link_set:
            raise KinematicsError(f"joint {j.name!r}: unknown child link {j.child!r}")
        if j.parent not in link_set and j.parent != WORLD:
            raise KinematicsError(f"joint {j.name!r}: unknown parent link {j.parent!r}")
        if j.child in child_of:
            raise KinematicsError(
                f"link {j.child!r} is the child of two joints ({child_of[j.child].name!r}, {j.name!r})"
            )
        child_of[j.child] = j
        children.setdefault(j.parent, []).append(j)
    roots = [n for n in links if n not in child_of]

    # breadth-first from the roots and from WORLD (a link actually named "world" is an ordinary link)
    world = "\0root-frame" if WORLD in link_set else WORLD
    order: list[str] = list(roots)
    joint_order: list[Joint] = []
    frontier = list(children.get(world, []))
    default_axis = (1.0, 0.0, 0.0) if model.format == "urdf" else (0.0, 0.0, 1.0)
    all_origins = _transforms([j.origin for j in joints], joints, "origin")
    all_offsets = _transforms([j.child_offset for j in joints], joints, "child_offset")
    offset_is_eye = (all_offsets == EYE4).all(axis=(1, 2)).tolist() if joints else []
    infos: dict[str, JointInfo] = {}
    shared: dict[tuple[object, ...], JointInfo] = {}  # joints with identity offsets and the same type and axis
    for i, j in enumerate(joints):
        key = (j.type, j.axis) if offset_is_eye[i] and isinstance(j.axis, (tuple, type(None))) else None
        info = shared.get(key) if key is not None else None
        if info is None:
            info = joint_info(j, default_axis, all_offsets[i], offset_is_eye[i])
            if key is not None:
                shared[key] = info
        infos[j.name] = info

    # how the pose kernel treats each joint: its kind, then whether it is held (one int, ordered alike)
    kind_held = {name: info.kind * 2 + info.held for name, info in infos.items()}
    level0_joints = sorted(frontier, key=lambda j: kind_held[j.name])
    order.extend(j.child for j in level0_joints)
    joint_order.extend(level0_joints)
    current = list(order)
    index = {n: i for i, n in enumerate(order)}  # of each link in `order`
    spans: list[tuple[int, int]] = []  # the links of each depth below level 0 (one per pass)
    while current:
        nxt: list[Joint] = []
        for name in current:
            nxt.extend(children.get(name, []))
        # within a level, group joints by how the pose kernel treats them, then by parent
        nxt.sort(key=lambda j: (kind_held[j.name], index[j.parent]))
        current = [j.child for j in nxt]
        for child in current:
            index[child] = len(index)
        if current:
            spans.append((len(order), len(order) + len(current)))
        order.extend(current)
        joint_order.extend(nxt)
    if len(order) != len(links):
        missing = sorted(set(links) - set(order))
        raise KinematicsError(f"the joints form a cycle: links {', '.join(missing)} are not reachable from a root")
    nroot = len(roots)
    level0 = nroot + len(level0_joints)
    parent_index = [ROOT if j.parent == world else index[j.parent] for j in joint_order]
    joint_parent = np.array(parent_index, dtype=np.intp)
    link_parent = np.array([ROOT] * nroot + parent_index, dtype=np.intp)
    levels = [(start, stop, link_parent[start:stop]) for start, stop in spans]

    root_poses = np.stack([np.asarray(model.links[n].pose, dtype=np.float64) for n in roots]) if roots else (
        np.zeros((0, 4, 4)))
    if not np.all(np.isfinite(root_poses)):
        raise KinematicsError("a root link pose is not finite")

    # coordinate layout over every moving tree joint
    names = [j.name for j in joint_order]
    jidx = {n: k for k, n in enumerate(names)}
    joint_qa = np.full(len(names), -1, dtype=np.intp)
    joint_va = np.full(len(names), -1, dtype=np.intp)
    nqa = nva = 0
    qa_index: dict[str, tuple[int, int]] = {}
    va_index: dict[str, tuple[int, int]] = {}
    nqs = [j.type.nq for j in joint_order]
    nvs = [j.type.nv for j in joint_order]
    qa_start = [-1] * len(names)
    va_start = [-1] * len(names)
    for k, j in enumerate(joint_order):
        nq, nv = nqs[k], nvs[k]
        if nq > 0:
            qa_start[k], va_start[k] = nqa, nva
            qa_index[j.name] = (nqa, nqa + nq)
            va_index[j.name] = (nva, nva + nv)
            nqa += nq
            nva += nv
    joint_qa[:] = qa_start
    joint_va[:] = va_start

    mimic_q, mimic_v, followers, mimicked = compile_mimic(model, joint_order, jidx, joint_qa, joint_va)

    q_index: dict[str, tuple[int, int]] = {}
    v_index: dict[str, tuple[int, int]] = {}
    q_to_qa: list[int] = []
    v_to_va: list[int] = []
    moving: list[str] = []
    quat_q_cols: list[tuple[str, int]] = []
    for k, j in enumerate(joint_order):
        nq, nv = nqs[k], nvs[k]
        if nq == 0 or j.name in followers:
            continue
        moving.append(j.name)
        q0, v0 = len(q_to_qa), len(v_to_va)
        q_index[j.name] = (q0, q0 + nq)
        v_index[j.name] = (v0, v0 + nv)
        q_to_qa.extend(range(qa_start[k], qa_start[k] + nq))
        v_to_va.extend(range(va_start[k], va_start[k] + nv))
        if j.type is JointType.BALL:
            quat_q_cols.append((j.name, q0))
        elif j.type is JointType.FLOATING:
            quat_q_cols.append((j.name, q0 + 3))
    partial = {
        j.name: sorted(m.dof for m in j.mimic) for j in joint_order if j.mimic and j.name not in followers
    }

    model_index = {j.name: i for i, j in enumerate(joints)}
    order_idx = np.array([model_index[j.name] for j in joint_order], dtype=np.intp)
    origins, offsets = all_origins[order_idx], all_offsets[order_idx]
    tree = CompiledTree(
        model_name=model.name if not model.is_world else "",
        pose=np.array(model.pose, dtype=np.float64),
        link_names=order,
        joint_names=names,
        joint_types=[j.type for j in joint_order],
        joint_parent=joint_parent,
        link_parent=link_parent,
        nroot=nroot,
        root_poses=root_poses,
        root_x=np.ascontiguousarray(root_poses[:, :3, :].transpose(1, 2, 0)[..., None]),
        level0=level0,
        levels=levels,
        moving_joint_names=moving,
        nq=len(q_to_qa),
        nv=len(v_to_va),
        nqa=nqa,
        nva=nva,
        joint_qa=joint_qa,
        joint_va=joint_va,
        q_to_qa=np.array(q_to_qa, dtype=np.intp),
        v_to_va=np.array(v_to_va, dtype=np.intp),
        mimic_q=mimic_q,
        mimic_v=mimic_v,
        mimic_followers=sorted(followers, key=jidx.__getitem__),
        mimicked_qa=mimicked,
        fixed_joints=np.zeros(0, dtype=np.intp),
        fixed_x=np.zeros((3, 4, 0, 1)),
        rotary=[],
        prismatic=None,
        two_axis=None,
        planar=None,
        quaternion=[],
        quat_q_cols=quat_q_cols,
        child_offset=offsets,
        constraint_names=list(model.constraints),
        _q_index=q_index,
        _v_index=v_index,
        _qa_index=qa_index,
        _va_index=va_index,
        _partial_mimic=partial,
    )
    ji = [infos[j.name] for j in joint_order]
    compile_groups(tree, joint_order, ji, origins, offsets)
    tree.plan = compile_plan(tree, joint_order, ji, origins, offsets)
    return tree


def _transforms(ts: list[object], joints: list[Joint], what: str) -> FloatArray:
    """``(n, 4, 4)`` finite transforms (``KinematicsError`` naming the first bad joint)."""
    if not ts:
        return np.zeros((0, 4, 4))
    try:
        a = np.array(ts, dtype=np.float64)
    except (TypeError, ValueError):
        a = np.zeros(0)
    if a.shape == (len(ts), 4, 4) and math.isfinite(float(a.sum())):
        return a
    for t, j in zip(ts, joints):
        transform(t, j, what)
    raise KinematicsError(f"{what}: every joint's must be a finite 4x4 transform")  # pragma: no cover
