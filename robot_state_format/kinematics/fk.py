"""Forward kinematics on a :class:`~robot_state_format.kinematics.tree.CompiledTree`.

With numba installed, poses and twists run in compiled kernels (:mod:`.kernel`, loaded on the first
call; see :mod:`.compiled`): one scalar loop per configuration, so :func:`forward` and
:func:`forward_batch` give the same bits.  Without numba (or ``ROBOT_STATE_FORMAT_KERNEL=numpy``)
they run the numpy path described below (:mod:`.fk_numpy`, :mod:`.twists_numpy`), which agrees with
the kernels to within 1e-12 and is itself bit-identical between single and batch.
:func:`joint_transforms` is numpy in both cases.

The numpy path:

Every function works on a batch internally: one configuration is a batch of one, so
:func:`forward` and :func:`forward_batch` (and the twist functions) give bit-identical results.
Link poses of a chunk of ``C`` configurations are held transposed, ``(links, 4, 3, C)``, so that
constant joint matrices apply as BLAS gemm products (``4 x 4`` by ``4 x 3C``) and joint motion as
element-wise numpy operations with a long contiguous inner loop (see
:mod:`robot_state_format.kinematics.plan`).  Element-wise operations run in a fixed order, and
every product is a gemm with at least two rows and three columns, whose per-entry rounding does
not depend on the number of configurations: that is what keeps single and batch identical (the
tests check it).

* Link poses are ``X_root_link`` (the Model's root frame); pass ``world=True`` for
  ``X_world_link = model.pose @ X_root_link``.
* :func:`joint_transforms` gives ``X_parent_child`` per tree joint (``X_root_child`` for joints
  whose parent is WORLD): what TF publishes.
* Twists are ``[linear, angular]``: the velocity of the link frame's origin and the link's
  angular velocity relative to the root frame, expressed in the root frame (``frame="root"``) or
  in the link frame (``frame="body"``: the same two vectors rotated by ``R_root_link^T``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from robot_state_format.errors import KinematicsError
from robot_state_format.kinematics import compiled
from robot_state_format.kinematics.fk_numpy import (
    _chunks,
    _local,
    _local_generic,
    _poses_single,
    _poses_t,
    _qat,
    _set_bottom_row,
    _world_t,
)
from robot_state_format.kinematics.tree import QUATERNION_TOLERANCE, CompiledTree
from robot_state_format.kinematics.twists_numpy import (
    _cross,
    _joint_rates,
    _rotate_t_const,
    _twist_kernel,
    _twists,
)
from robot_state_format.spatial import matrices_to_rpy

FloatArray = NDArray[np.float64]
IntArray = NDArray[np.intp]

DEFAULT_CHUNK = 1024
"""Configurations evaluated together inside a batch (keeps the working set in cache)."""

TWIST_CHUNK = 256
"""The same for twists, whose intermediate arrays are larger."""

__all__ = [
    "check_q",
    "check_v",
    "forward",
    "forward_batch",
    "joint_transforms",
    "joint_transforms_batch",
    "link_twists",
    "link_twists_batch",
    "pose6_and_twists",
    "poses_and_twists",
]


# --------------------------------------------------------------------------------------------
# input validation


def _as_batch(x: object, n: int, what: str, single: bool) -> FloatArray:
    try:
        a = np.asarray(x, dtype=np.float64)
    except (TypeError, ValueError):
        raise KinematicsError(f"{what} must be an array of numbers") from None
    if single:
        if a.shape != (n,):
            raise KinematicsError(f"{what} must have shape ({n},), got {a.shape}")
        return a.reshape(1, n)
    if a.ndim != 2 or a.shape[1] != n:
        raise KinematicsError(f"{what} must have shape (N, {n}), got {a.shape}")
    return a


def _owner(tree: CompiledTree, col: int, velocities: bool) -> str:
    for name in tree.moving_joint_names:
        s = tree.v_slice(name) if velocities else tree.q_slice(name)
        if s.start <= col < s.stop:
            return name
    return "?"


def _check_finite(tree: CompiledTree, a: FloatArray, velocities: bool) -> None:
    if a.shape[0] == 1 and math.isfinite(float(np.dot(a[0], a[0]))):
        return  # one call: a NaN or an infinity makes the sum of squares non-finite
    if not np.isfinite(a).all():
        rows, cols = np.nonzero(~np.isfinite(a))
        what = "velocity" if velocities else "position"
        where = f" (configuration {int(rows[0])})" if a.shape[0] > 1 else ""
        raise KinematicsError(
            f"joint {_owner(tree, int(cols[0]), velocities)!r}: non-finite {what} {float(a[rows[0], cols[0]])!r}{where}"
        )


def check_q(tree: CompiledTree, q: object, *, single: bool = False) -> FloatArray:
    """Validated ``(N, nq)`` copy-or-view of ``q``; quaternions are normalised.

    Raises :class:`KinematicsError` naming the joint for a wrong shape, a non-finite value or a
    quaternion whose norm differs from 1 by more than ``QUATERNION_TOLERANCE``.
    """
    a = _as_batch(q, tree.nq, "q", single)
    _check_finite(tree, a, False)
    if tree.quat_q_cols:
        a = np.array(a, dtype=np.float64, copy=True)
        for name, c in tree.quat_q_cols:
            quat = a[:, c:c + 4]
            norm = np.sqrt(np.sum(quat * quat, axis=1))
            bad = np.abs(norm - 1.0) > QUATERNION_TOLERANCE
            if bad.any():
                i = int(np.nonzero(bad)[0][0])
                where = f" (configuration {i})" if a.shape[0] > 1 else ""
                raise KinematicsError(
                    f"joint {name!r}: quaternion {quat[i].tolist()} is not unit (norm {norm[i]:.9g}, "
                    f"tolerance {QUATERNION_TOLERANCE:g}){where}"
                )
            a[:, c:c + 4] = quat / norm[:, None]
    return a


def _check_single(tree: CompiledTree, q: object) -> FloatArray:
    """:func:`check_q` for one configuration, returning ``(nq,)`` (fewer numpy calls)."""
    if tree.quat_q_cols:
        row: FloatArray = check_q(tree, q, single=True)[0]
        return row
    try:
        a = np.asarray(q, dtype=np.float64)
    except (TypeError, ValueError):
        raise KinematicsError("q must be an array of numbers") from None
    if a.shape != (tree.nq,):
        raise KinematicsError(f"q must have shape ({tree.nq},), got {a.shape}")
    if not math.isfinite(float(np.dot(a, a))):
        _check_finite(tree, a.reshape(1, -1), False)
    return a


def check_v(tree: CompiledTree, v: object, *, single: bool = False) -> FloatArray:
    """Validated ``(N, nv)`` view of ``v`` (shape and finiteness)."""
    a = _as_batch(v, tree.nv, "v", single)
    _check_finite(tree, a, True)
    return a


# public API


def _poses_chunk(tree: CompiledTree, qat: FloatArray, world: bool, buf: FloatArray | None = None) -> FloatArray:
    """Transposed poses of the real links ``(nlinks, 4, 3, C)``."""
    w = _poses_t(tree, qat, buf)[: tree.nlinks]
    return _world_t(tree, w) if world else w


def forward_batch(
    tree: CompiledTree,
    q: object,
    *,
    world: bool = False,
    out: FloatArray | None = None,
    chunk: int = DEFAULT_CHUNK,
) -> FloatArray:
    """Link poses ``(N, nlinks, 4, 4)`` for ``q`` of shape ``(N, nq)`` (root frame, or world).

    Without ``out`` the result is a read-write *view* whose memory is laid out configuration-last
    (``poses[:, link]`` is contiguous per entry; copy with ``np.ascontiguousarray`` if a C-ordered
    array is needed).  ``out`` may be a preallocated ``(N, nlinks, 4, 4)`` float64 array to fill:
    a C-ordered one, or (faster: no transposition) a result of an earlier call, reused.
    """
    qq = check_q(tree, q)
    n, nl = qq.shape[0], tree.nlinks
    shape = (n, nl, 4, 4)
    full: FloatArray | None = None
    if out is None:
        full = np.empty((nl + 1, 4, 4, n))  # [link (+ the root frame), column j, row i, configuration]
        if compiled.kernel() is not None:
            res = full[:nl].transpose(3, 0, 2, 1)
            _set_bottom_row(res)
            return _k_poses(tree, qq, res, world)[0]
    else:
        if out.shape != shape or out.dtype != np.float64:
            raise KinematicsError(f"out must be a float64 array of shape {shape}")
        base = out.base
        if (isinstance(base, np.ndarray) and base.shape == (nl + 1, 4, 4, n) and base.flags.c_contiguous
                and out.transpose(1, 3, 2, 0).flags.c_contiguous
                and out.__array_interface__["data"][0] == base.__array_interface__["data"][0]):
            full = base  # an earlier result: computed in place again
    if compiled.kernel() is not None:
        assert out is not None
        _set_bottom_row(out)
        return _k_poses(tree, qq, out, world)[0]
    if full is None:  # an ordinary array: compute by chunks and copy each into it
        assert out is not None
        _set_bottom_row(out)
        for a, b in _chunks(n, chunk):
            out[a:b, :, :3, :] = _poses_chunk(tree, _qat(tree, qq[a:b]), world).transpose(3, 0, 2, 1)
        return out
    full[:, :3, 3, :] = 0.0
    full[:, 3, 3, :] = 1.0
    for a, b in _chunks(n, chunk):  # in place: the chunk's poses are a strided view of the result
        w = _poses_t(tree, _qat(tree, qq[a:b]), full[:, :, :3, a:b])
        if world:
            full[:nl, :, :3, a:b] = _world_t(tree, w[:nl])
    return out if out is not None else full[:nl].transpose(3, 0, 2, 1)


def forward(tree: CompiledTree, q: object, *, world: bool = False) -> FloatArray:
    """Link poses ``(nlinks, 4, 4)`` for one configuration ``q`` of shape ``(nq,)``."""
    if compiled.kernel() is not None:
        poses: FloatArray = _k_poses(tree, _k_q(tree, q), _k_consts(tree).link_template.copy()[None], world)[0][0]
        return poses
    qa = _qa_single(tree, _check_single(tree, q))
    nl = tree.nlinks
    out = _tf_constants(tree).link_template.copy()
    w = _poses_single(tree, qa)[:nl]
    if world:
        out[:, :3, :] = _world_t(tree, w)[..., 0].transpose(0, 2, 1)
    else:
        out[:, :3, :] = w[..., 0].transpose(0, 2, 1)  # a view of the (links, 3, 4) rows: a plain copy
    return out


def _qa_single(tree: CompiledTree, q1: FloatArray) -> FloatArray:
    """``qa`` ``(nqa,)`` for one validated configuration (the values of :func:`_qat`)."""
    c = _tf_constants(tree)
    if c.affine is not None:  # mimic without chains: one gather, one multiply, one add
        return q1[c.affine[0]] * c.affine[1] + c.affine[2]
    return tree.expand_q(q1)


def joint_transforms_batch(tree: CompiledTree, q: object, *, chunk: int = DEFAULT_CHUNK) -> FloatArray:
    """``X_parent_child`` per tree joint for ``q`` of shape ``(N, nq)``: ``(N, njoints, 4, 4)``."""
    qq = check_q(tree, q)
    n = qq.shape[0]
    out = np.empty((n, tree.njoints, 4, 4))
    _set_bottom_row(out)
    for a, b in _chunks(n, chunk):
        local = _local(tree, _qat(tree, qq[a:b]), np.empty((3, 4, tree.nlinks, b - a)))
        out[a:b, :, :3, :] = local[:, :, tree.nroot:].transpose(3, 2, 0, 1)
    return out


@dataclass
class _TFConstants:
    """Per-joint constants in the one-configuration layout ``(g, 3, 4)``, and an output template."""

    template: FloatArray
    link_template: FloatArray  # (nlinks, 4, 4) zeros with the bottom rows [0, 0, 0, 1]
    rot: list[tuple[IntArray, IntArray, FloatArray, FloatArray, FloatArray, FloatArray | None]]  # col is (g, 1, 1)
    pri: tuple[IntArray, IntArray, FloatArray, FloatArray] | None
    gen: IntArray
    affine: tuple[IntArray, FloatArray, FloatArray] | None  # qa = q[src] * mult + off (no mimic chains)


def _tf_constants(tree: CompiledTree) -> _TFConstants:
    cached = tree._cache.get("tf")
    if isinstance(cached, _TFConstants):
        return cached
    template = np.zeros((tree.njoints, 4, 4))
    template[:, 3, 3] = 1.0
    if tree.fixed_joints.size:
        template[tree.fixed_joints, :3, :] = tree.fixed_x[..., 0].transpose(2, 0, 1)

    def one(m: FloatArray) -> FloatArray:
        return np.ascontiguousarray(m[..., 0].transpose(2, 0, 1))

    rot = [(g.joints, np.ascontiguousarray(g.col[:, None, None]), one(g.m02), one(g.m1), one(g.m2),
            None if g.m3 is None else one(g.m3)) for g in tree.rotary]
    pri = None
    if tree.prismatic is not None:
        p = tree.prismatic
        template[p.joints, :3, :3] = p.rot[..., 0].transpose(2, 0, 1)
        pri = (p.joints, p.col, np.ascontiguousarray(p.d[..., 0].T), np.ascontiguousarray(p.t0[..., 0].T))
    generic = [g.joints for g in (tree.two_axis, tree.planar) if g is not None] + [g.joints for g in tree.quaternion]
    gen = np.concatenate(generic) if generic else np.zeros(0, dtype=np.intp)
    affine = None
    if len(tree.mimic_q) <= 1:
        # x * 1 + 0 == x, and a follower is leader * m + o: the same arithmetic as expand_q
        src = np.empty(tree.nqa, dtype=np.intp)
        src[tree.q_to_qa] = np.arange(tree.nq)
        mult, off = np.ones(tree.nqa), np.zeros(tree.nqa)
        for lv in tree.mimic_q:
            back = np.empty(tree.nqa, dtype=np.intp)
            back[tree.q_to_qa] = np.arange(tree.nq)
            src[lv.dst] = back[lv.src]
            mult[lv.dst] = lv.mult
            off[lv.dst] = lv.off
        affine = (src, mult, off)
    link_template = np.zeros((tree.nlinks, 4, 4))
    link_template[:, 3, 3] = 1.0
    consts = _TFConstants(template, link_template, rot, pri, gen, affine)
    tree._cache["tf"] = consts
    return consts


def joint_transforms(tree: CompiledTree, q: object) -> FloatArray:
    """``X_parent_child`` per tree joint (``(njoints, 4, 4)``, order ``tree.joint_names``): TF's transforms.

    Same arithmetic as :func:`joint_transforms_batch` (identical results), laid out for one
    configuration so that it costs a handful of numpy calls.
    """
    q1 = _check_single(tree, q)
    c = _tf_constants(tree)
    qa = _qa_single(tree, q1)
    out = c.template.copy()
    for joints, col, m02, m1, m2, m3 in c.rot:
        th = qa[col]  # (g, 1, 1)
        x = m1 * np.sin(th)
        x += m02
        x -= m2 * np.cos(th)
        if m3 is not None:
            x += m3 * th
        out[joints, :3, :] = x
    if c.pri is not None:
        joints, col, d, t0 = c.pri
        out[joints, :3, 3] = d * qa[col][:, None] + t0
    if c.gen.size:
        local = np.empty((3, 4, tree.nlinks, 1))
        _local_generic(tree, qa[:, None], local)
        out[c.gen, :3, :] = local[:, :, tree.nroot + c.gen, 0].transpose(2, 0, 1)
    return out


def _check_frame(frame: str) -> bool:
    if frame not in ("root", "body"):
        raise KinematicsError(f"frame must be 'root' or 'body', got {frame!r}")
    return frame == "body"


def link_twists_batch(
    tree: CompiledTree, q: object, v: object, *, frame: str = "root", chunk: int = TWIST_CHUNK
) -> FloatArray:
    """Link twists ``(N, nlinks, 6)`` = ``[linear, angular]`` for ``q`` ``(N, nq)`` and ``v`` ``(N, nv)``."""
    body = _check_frame(frame)
    qq = check_q(tree, q)
    vv = check_v(tree, v)
    if vv.shape[0] != qq.shape[0]:
        raise KinematicsError(f"q and v hold different numbers of configurations ({qq.shape[0]}, {vv.shape[0]})")
    n = qq.shape[0]
    if compiled.kernel() is not None:
        x, qa = _k_poses(tree, qq, np.empty((n, tree.nlinks, 4, 4)), False)
        return _k_twists(tree, x, qa, qq, tree.expand_v(vv), body)
    out = np.empty((n, tree.nlinks, 6))
    for a, b in _chunks(n, chunk):
        qat = _qat(tree, qq[a:b])
        vat = np.ascontiguousarray(tree.expand_v(vv[a:b]).T)
        out[a:b] = _twists(tree, _poses_t(tree, qat), qat, vat, body).transpose(2, 0, 1)
    return out


def link_twists(tree: CompiledTree, q: object, v: object, *, frame: str = "root") -> FloatArray:
    """Link twists ``(nlinks, 6)``: ``[linear, angular]`` of each link origin (see module doc)."""
    body = _check_frame(frame)
    if compiled.kernel() is not None:
        q1 = _k_q(tree, q)
        vv = check_v(tree, v, single=True)
        x, qa = _k_poses(tree, q1, np.empty((1, tree.nlinks, 4, 4)), False)
        twists: FloatArray = _k_twists(tree, x, qa, q1, tree.expand_v(vv), body)[0]
        return twists
    qa = _qa_single(tree, _check_single(tree, q))
    vv = check_v(tree, v, single=True)
    vat = tree.expand_v(vv[0])[:, None]
    qat = qa[:, None]
    return np.ascontiguousarray(_twists(tree, _poses_single(tree, qa), qat, vat, body)[..., 0])


# ---- one pose pass for poses and twists (snapshots) ------------------------------------------


def poses_and_twists(tree: CompiledTree, q: object, v: object | None, *,
                     va: FloatArray | None = None) -> tuple[FloatArray, FloatArray | None]:
    """``(forward(tree, q), link_twists(tree, q, v))`` from one pose pass (the same arithmetic, bit for
    bit: the tests check it); twists None when ``v`` is None.

    ``va``: ``tree.expand_v(v)`` when the caller has it already (saves recomputing it).
    """
    if compiled.kernel() is not None:
        q1 = _k_q(tree, q)
        x, qa = _k_poses(tree, q1, _k_consts(tree).link_template.copy()[None], False)
        if v is None:
            return x[0], None
        vk = tree.expand_v(check_v(tree, v, single=True)[0]) if va is None else va
        return x[0], _k_twists(tree, x, qa, q1, np.asarray(vk, dtype=np.float64)[None], False)[0]
    qa = _qa_single(tree, _check_single(tree, q))
    w = _poses_single(tree, qa)
    poses = _tf_constants(tree).link_template.copy()
    poses[:, :3, :] = w[:tree.nlinks, ..., 0].transpose(0, 2, 1)
    tw = _numpy_twists(tree, w, qa, v, va)
    return poses, np.ascontiguousarray(tw) if tw is not None else None


def pose6_and_twists(tree: CompiledTree, q: object, v: object | None, *,
                     va: FloatArray | None = None) -> tuple[FloatArray, FloatArray | None]:
    """``(poses_to_pose6(poses), twists)`` of :func:`poses_and_twists`: ``(nlinks, 6)`` ``x y z roll pitch
    yaw`` in the root frame, the same numbers, without assembling the 4x4 poses on the numpy path
    (the rotations are read where the pose pass left them).  ``-0.0`` is written ``0.0``."""
    if compiled.kernel() is not None:
        poses, tw = poses_and_twists(tree, q, v, va=va)
        return _pose6(poses[:, :3, 3], poses[:, :3, :3]), tw
    qa = _qa_single(tree, _check_single(tree, q))
    wt = _poses_single(tree, qa)  # (links + 1, 4, 3, 1): wt[l, j, i] = X[i, j]
    w = wt[:tree.nlinks, ..., 0]
    return _pose6(w[:, 3, :], w[:, :3, :].transpose(0, 2, 1)), _numpy_twists(tree, wt, qa, v, va)


def _numpy_twists(tree: CompiledTree, wt: FloatArray, qa: FloatArray, v: object | None,
                  va: FloatArray | None) -> FloatArray | None:
    """Root-frame twists ``(nlinks, 6)`` (a view) from the numpy pose pass ``wt`` of ``qa`` (None when ``v`` is)."""
    if v is None:
        return None
    vv = check_v(tree, v, single=True)
    vat = (tree.expand_v(vv[0]) if va is None else va)[:, None]
    twists: FloatArray = _twists(tree, wt, qa[:, None], vat, False)[..., 0]
    return twists


def _pose6(p: FloatArray, rot: FloatArray) -> FloatArray:
    out = np.empty((p.shape[0], 6))
    out[:, :3] = p
    out[:, 3:] = matrices_to_rpy(rot)
    out += 0.0  # -0.0 -> 0.0
    return out


# ---- the compiled path (see kinematics/kernel.py) --------------------------------------------


def _k_consts(tree: CompiledTree) -> compiled.KernelConstants:
    cached = tree._cache.get("kernel")
    if isinstance(cached, compiled.KernelConstants):
        return cached
    kern = _twist_kernel(tree)
    return compiled.constants(tree, kern.s, kern.col, _tf_constants(tree).affine)


def _k_q(tree: CompiledTree, q: object) -> FloatArray:
    """``(1, nq)`` for one configuration: shape checked (finiteness: by the kernel), quaternions normalised."""
    if tree.quat_q_cols:
        return check_q(tree, q, single=True)
    try:
        a = np.asarray(q, dtype=np.float64)
    except (TypeError, ValueError):
        raise KinematicsError("q must be an array of numbers") from None
    if a.shape != (tree.nq,):
        raise KinematicsError(f"q must have shape ({tree.nq},), got {a.shape}")
    return a.reshape(1, tree.nq)


def _k_poses(tree: CompiledTree, q: FloatArray, out: FloatArray, world: bool) -> tuple[FloatArray, FloatArray | None]:
    """Rows 0-2 of ``out`` ``(C, nlinks, 4, 4)`` from ``q`` ``(C, nq)`` by the compiled kernel; and ``qa``
    ``(C, nqa)`` (for twists: None unless numpy computed it)."""
    k, cons = compiled.kernel(), _k_consts(tree)
    assert k is not None
    gen, qa = cons.no_gen, None
    if cons.affine:
        ok = k.poses(q, cons.src, cons.mo, cons.f, cons.ij, cons.root, gen, cons.pose, world, out)
    else:
        qa = _qa_single(tree, q[0])[None] if q.shape[0] == 1 else np.ascontiguousarray(_qat(tree, q).T)
        if cons.has_generic:  # universal, revolute2, planar, ball, floating: numpy, as (C, nlinks, 3, 4)
            loc = _local(tree, np.ascontiguousarray(qa.T), np.zeros((3, 4, tree.nlinks, q.shape[0])),
                         generic_only=True)
            gen = np.ascontiguousarray(loc.transpose(3, 2, 0, 1))
        ok = k.poses(qa, cons.id_src, cons.id_mo, cons.f, cons.ij, cons.root, gen, cons.pose, world, out)
    if not ok:
        _check_finite(tree, q, False)
    return out, qa


def _k_twists(tree: CompiledTree, x: FloatArray, qa: FloatArray | None, q: FloatArray, va: FloatArray,
              body: bool) -> FloatArray:
    """Twists ``(C, nlinks, 6)`` from the poses ``x`` of :func:`_k_poses` and ``va`` ``(C, nva)``."""
    k, cons = compiled.kernel(), _k_consts(tree)
    assert k is not None
    xg = cons.no_xg
    if cons.has_generic:
        assert qa is not None
        xg = _generic_twists(tree, np.ascontiguousarray(qa.T), np.ascontiguousarray(va.T))
    out = np.empty((x.shape[0], tree.nlinks, 6))
    k.twists(x, np.ascontiguousarray(va, dtype=np.float64), cons.s, cons.it, tree.nroot, xg, body, out)
    return out


def _generic_twists(tree: CompiledTree, qat: FloatArray, vat: FloatArray) -> FloatArray:
    """Child-frame twists ``(C, njoints, 6)`` of the generic joints (zero elsewhere), as :func:`_twists`."""
    cons = tree._twist_constants()
    g = _twist_kernel(tree).generic
    wj, vj = _joint_rates(tree, qat, vat)
    uj = vj[g] + _cross(wj[g], cons.offset_t[g])
    xg = np.zeros((qat.shape[1], tree.njoints, 6))
    xg[:, g, :3] = _rotate_t_const(cons.offset_r[g], uj).transpose(2, 0, 1)
    xg[:, g, 3:] = _rotate_t_const(cons.offset_r[g], wj[g]).transpose(2, 0, 1)
    return xg
