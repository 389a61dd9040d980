"""Forward kinematics on a :class:`~robot_state_format.kinematics.tree.CompiledTree` (numpy only).

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
import threading
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from robot_state_format.errors import KinematicsError
from robot_state_format.kinematics import compiled
from robot_state_format.kinematics.plan import LevelPlan, PosePlan, build_single_form
from robot_state_format.kinematics.tree import QUATERNION_TOLERANCE, CompiledTree

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
            f"joint {_owner(tree, int(cols[0]), velocities)!r}: non-finite {what} {a[rows[0], cols[0]]!r}{where}"
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
        return check_q(tree, q, single=True)[0]
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


# --------------------------------------------------------------------------------------------
# kernels (layout: (3, 4, links, C) for transforms, (3, links, C) for vectors)


def _compose(p: FloatArray, x: FloatArray, out: FloatArray | None = None) -> FloatArray:
    """``p o x`` for stacks of 3x4 transforms ``(3, 4, k, C)`` (broadcastable), fixed summation order."""
    prod = p[:, :3, None] * x[None, :3]  # (3[i], 3[m], 4[j], k, C)
    out = np.add(prod[:, 0], prod[:, 1], out=out)
    out += prod[:, 2]
    out[:, 3] += p[:, 3]
    return out


def _quat_rotation(qx: FloatArray, qy: FloatArray, qz: FloatArray, qw: FloatArray) -> FloatArray:
    """``(3, 4, g, C)`` rotation-only transforms from unit quaternion components ``(g, C)``."""
    r = np.zeros((3, 4) + qx.shape)
    xx, yy, zz = qx * qx, qy * qy, qz * qz
    xy, xz, yz = qx * qy, qx * qz, qy * qz
    wx, wy, wz = qw * qx, qw * qy, qw * qz
    r[0, 0] = 1.0 - 2.0 * (yy + zz)
    r[0, 1] = 2.0 * (xy - wz)
    r[0, 2] = 2.0 * (xz + wy)
    r[1, 0] = 2.0 * (xy + wz)
    r[1, 1] = 1.0 - 2.0 * (xx + zz)
    r[1, 2] = 2.0 * (yz - wx)
    r[2, 0] = 2.0 * (xz - wy)
    r[2, 1] = 2.0 * (yz + wx)
    r[2, 2] = 1.0 - 2.0 * (xx + yy)
    return r


def _local(tree: CompiledTree, qat: FloatArray, out: FloatArray, *, generic_only: bool = False) -> FloatArray:
    """Fill ``out`` ``(3, 4, nlinks, C)`` with each link's transform from its parent (or the root).

    With ``generic_only`` only the universal, revolute2, planar, ball and floating rows are filled.
    """
    if not generic_only:
        _local_simple(tree, qat, out)
    _local_generic(tree, qat, out)
    return out


def _local_simple(tree: CompiledTree, qat: FloatArray, out: FloatArray) -> None:
    nr = tree.nroot
    if nr:
        out[:, :, :nr] = tree.root_x
    if tree.fixed_joints.size:
        out[:, :, nr + tree.fixed_joints] = tree.fixed_x
    for g in tree.rotary:
        th = qat[g.col]  # (g, C)
        x = g.m1 * np.sin(th)
        x += g.m02
        x -= g.m2 * np.cos(th)
        if g.m3 is not None:
            x += g.m3 * th
        out[:, :, nr + g.joints] = x
    if tree.prismatic is not None:
        p = tree.prismatic
        rows = nr + p.joints
        out[:3, :3, rows] = p.rot
        out[:, 3, rows] = p.d * qat[p.col] + p.t0


def _local_generic(tree: CompiledTree, qat: FloatArray, out: FloatArray) -> None:
    nr = tree.nroot
    if tree.two_axis is not None:
        u = tree.two_axis
        t1, t2 = qat[u.col], qat[u.col + 1]
        first = u.p[1] * np.sin(t1)
        first += u.p[0]
        first += u.p[2] * (1.0 - np.cos(t1))
        second = u.r[1] * np.sin(t2)
        second += u.r[0]
        second += u.r[2] * (1.0 - np.cos(t2))
        out[:, :, nr + u.joints] = _compose(first, second)
    if tree.planar is not None:
        pl = tree.planar
        yaw = qat[pl.col + 2]
        m = pl.m[1] * np.sin(yaw)
        m += pl.m[0]
        m += pl.m[2] * (1.0 - np.cos(yaw))
        m[:, 3] += pl.e1 * qat[pl.col]
        m[:, 3] += pl.e2 * qat[pl.col + 1]
        out[:, :, nr + pl.joints] = m
    for qg in tree.quaternion:
        c0 = qg.col + 3 if qg.floating else qg.col
        r = _quat_rotation(qat[c0], qat[c0 + 1], qat[c0 + 2], qat[c0 + 3])
        if qg.floating:
            r[:, 3] = qat[qg.col + np.arange(3)[:, None]]
        out[:, :, nr + qg.joints] = _compose(_compose(qg.a, r), qg.b)


def _view(a: FloatArray, *shape: int) -> FloatArray:
    """``a.reshape(shape)`` that must not copy (it is written through)."""
    r = a.reshape(shape)
    if r.base is None:  # pragma: no cover - the layouts used here always reshape as views
        raise AssertionError("internal error: reshape copied a view that is written to")
    return r


def _mix(ya: FloatArray, yb: FloatArray, sa: FloatArray, cs: FloatArray) -> None:
    """Columns ``a, b`` of ``Y Rot(q)`` in place: ``a' = a cos + b sin``, ``b' = b cos - a sin``."""
    t = ya * sa
    ya *= cs
    ya += yb * sa
    yb *= cs
    yb -= t


def _trig(tree: CompiledTree, qat: FloatArray) -> tuple[FloatArray, FloatArray]:
    """sin and cos of every rotary joint's angle, ``(nrot, C)`` each (shared for +-1 mimics).

    For joints about a negative coordinate axis the sine is negated (see ``PosePlan.trig_sign``).
    Computed from the half-angle tangent, ``t = tan(q/2)``: ``sin q = 2t / (1 + t^2)``,
    ``cos q = (1 - t^2) / (1 + t^2)``: numpy's float64 ``tan`` is vectorised where ``sin``/``cos``
    are not, which makes this several times faster; the results are within a few 1e-16 of
    ``np.sin``/``np.cos`` (near q = pi, t is about 1e16 and the formulas still hold).
    """
    plan = _plan(tree)
    t = np.tan(qat[plan.trig_cols] * 0.5)
    t2 = t * t
    inv = 1.0 / (1.0 + t2)
    s = (t + t) * inv
    c = (1.0 - t2) * inv
    if plan.trig_src is not None:
        s, c = s[plan.trig_src], c[plan.trig_src]
    if plan.trig_sign is not None:
        s = s * plan.trig_sign
    return s, c


def _plan(tree: CompiledTree) -> PosePlan:
    if tree.plan is None:  # pragma: no cover - compile_model always builds it
        raise KinematicsError("tree has no pose plan; build it with compile_model")
    return tree.plan


def _poses_t(tree: CompiledTree, qat: FloatArray, buf: FloatArray | None = None) -> FloatArray:
    """Transposed link poses ``(nlinks + 1, 4, 3, C)`` (last slot: the root frame, identity).

    ``buf`` (same shape) is reused when given.  One configuration goes through
    :func:`_poses_single` (the same products in fewer numpy calls).
    """
    plan = _plan(tree)
    nl, nr, c = plan.nlinks, plan.nroot, qat.shape[1]
    if c == 1:
        return _poses_single(tree, qat[:, 0], buf)
    w = buf if buf is not None and buf.shape == (nl + 1, 4, 3, c) else np.empty((nl + 1, 4, 3, c))
    w[nl] = 0.0
    for i in range(3):
        w[nl, i, i] = 1.0
    if nr:
        w[:nr] = plan.root_t
    s, co = _trig(tree, qat)
    gen = _local(tree, qat, np.empty((3, 4, nl, c)), generic_only=True) if plan.has_generic else None
    c3 = 3 * c
    # a chunk of a larger result is strided: its (row i, configuration) block is not contiguous,
    # so the constant products run once per row i, on (4, C) blocks
    split = w.strides[2] != c * w.strides[3]
    # every matrix product below has at least 2 rows and 3 columns: gemm, whose per-entry rounding
    # does not depend on the number of configurations (a 1-row or 1-column product would be gemv)
    # nor on how children are grouped into one product (checked by the tests: batch == single)
    for lv in plan.levels:
        for r0, r1, p, g in lv.runs:  # X_c = X_p K_c for every child of p in the run
            if split:  # one (4m x 4) @ (4 x C) product per row i, stacked in one call
                np.matmul(g, w[p].transpose(1, 0, 2),
                          out=_view(w[r0:r1].transpose(2, 0, 1, 3), 3, 4 * (r1 - r0), c))
            else:
                np.matmul(g, w[p].reshape(4, c3), out=_view(w[r0:r1], 4 * (r1 - r0), c3))
        for r0, r1, ca, cb, t0, t1 in lv.aligned:
            # X_c = (X_p A Q) Rot(e, q): mixes columns ca, cb in place (axis sign is in s)
            _mix(w[r0:r1, ca], w[r0:r1, cb], s[t0:t1, None, :], co[t0:t1, None, :])
        _level_rest(lv, w, qat, s, co, gen)
    _correct(plan, w)
    return w


def _level_rest(lv: LevelPlan, w: FloatArray, qat: FloatArray, s: FloatArray | None, co: FloatArray | None,
                gen: FloatArray | None) -> None:
    """The screw, prismatic and generic children of a level (after the constant products)."""
    c = w.shape[3]
    c3 = 3 * c
    for r0, r1, p, g, trig, cols, screw in lv.general:
        assert s is not None and co is not None
        e = np.matmul(g, w[p].reshape(4, c3)).reshape(r1 - r0, 9, 3, c)
        x = w[r0:r1]
        x += e[:, 0:4] * s[trig][:, None, None, :]
        x += e[:, 4:8] * (1.0 - co[trig])[:, None, None, :]
        if screw:
            x[:, 3] += e[:, 8] * qat[cols][:, None, :]
    for r0, r1, p, g, cols in lv.prismatic:  # g has a zero last row (never a 1-row product)
        d = np.matmul(g, w[p].reshape(4, c3))[: r1 - r0].reshape(r1 - r0, 3, c)
        w[r0:r1, 3] += d * qat[cols][:, None, :]
    r0, r1 = lv.generic
    if r1 > r0:
        assert gen is not None
        xp = w[lv.par[r0 - lv.start:r1 - lv.start]]  # (g, 4, 3, C), parents held as F = X D^-1
        loc = gen[:, :, r0:r1] if lv.ge_dp is None else _compose(lv.ge_dp, gen[:, :, r0:r1])
        lt = loc.transpose(2, 0, 1, 3)  # (g, 3[m], 4[j], C)
        prod = lt[:, :, :, None, :] * xp[:, :3, None, :, :]  # (g, 3[m], 4[j], 3[i], C)
        x = w[r0:r1]
        np.add(prod[:, 0], prod[:, 1], out=x)
        x += prod[:, 2]
        x[:, 3] += xp[:, 3]


def _correct(plan: PosePlan, w: FloatArray) -> None:
    """``X = F D`` for the links held as ``F`` during the levels."""
    c = w.shape[3]
    for r0, r1, g in plan.corr_ranges:
        w[r0:r1] = np.matmul(g, w[r0:r1].reshape(r1 - r0, 4, 3 * c)).reshape(r1 - r0, 4, 3, c)


def _poses_single(tree: CompiledTree, qa: FloatArray, buf: FloatArray | None = None) -> FloatArray:
    """:func:`_poses_t` for one configuration ``qa`` ``(nqa,)``: ``(nlinks + 1, 4, 3, 1)``.

    Held as the top rows of the poses, ``(links, 3, 4)``, so that a contiguous range of parents is
    one ``3n x 4`` matrix.  Per block of a level (see ``tree._blocks``): one product
    ``[X_p0; ...; X_p1] @ [G_c, G_c']`` (``G_c'``: ``G_c`` with the mixed columns swapped; gemm like
    the batch kernel's, so the same entries), one gather of each child's own parent, one
    multiplication by ``[1 or cos, 0 or sin]`` and one sum: the products and sums of :func:`_mix`,
    so the result equals the batch kernel's.  Every element-wise call is on contiguous 1-D data.

    Without ``buf`` the result is a view of this thread's scratch array, valid until the next call.
    """
    plan = _plan(tree)
    sc = _scratch(tree)  # sc.w: the root links and the root frame are set once, every other row is rewritten
    n = plan.trig_cols.size
    vals = sc.vals  # [1, 0, cos of the computed angles, sin of them] (as _trig)
    t = np.tan(qa[plan.trig_cols] * 0.5)
    t2 = t * t
    inv = 1.0 / (1.0 + t2)
    np.multiply(1.0 - t2, inv, out=vals[2:2 + n])
    np.multiply(t + t, inv, out=vals[2 + n:])
    assert plan.cs_index is not None
    sc.cs[...] = vals[plan.cs_index]  # every block's factors, flat
    s = co = gen = None
    qat = qa[:, None]
    if plan.has_general:
        s, co = _trig(tree, qat)
    if plan.has_generic:
        gen = _local(tree, qat, np.empty((3, 4, plan.nlinks, 1)), generic_only=True)
    for blocks, rest in sc.levels:
        for pv, g, idx, cs, m, ov in blocks:
            y = pv.dot(g).ravel()[idx]  # (2, k, 3, 4) flat
            y *= cs
            np.add(y[:m], y[m:], out=ov)
        if rest is not None:
            _level_rest(rest, sc.wt, qat, s, co, gen)
    for pv, g, idx, ov in sc.corr:  # X = F D for the links held as F
        ov[...] = pv.dot(g).ravel()[idx]
    if buf is not None:
        buf[...] = sc.wt
        return buf
    return sc.wt


def _level_parents(tree: CompiledTree) -> list[tuple[int, int, IntArray]]:
    """``(start, stop, parents)`` of every depth level (plain tuples: cheaper to loop over)."""
    cached = tree._cache.get("level_parents")
    if isinstance(cached, list):
        return cached
    out = [(lv.start, lv.stop, lv.par) for lv in _plan(tree).levels]
    tree._cache["level_parents"] = out
    return out


@dataclass
class _Scratch:
    """One thread's working array for :func:`_poses_single` and views of it for every block."""

    template: FloatArray  # (nlinks + 1, 3, 4): zeros, the root links' poses, the root frame (last)
    w: FloatArray
    wt: FloatArray  # w as (nlinks + 1, 4, 3, 1)
    cs: FloatArray
    vals: FloatArray  # [1, 0, cos..., sin...] of the computed angles
    levels: list[tuple[list[tuple[FloatArray, FloatArray, IntArray, FloatArray, int, FloatArray]], LevelPlan | None]]
    corr: list[tuple[FloatArray, FloatArray, IntArray, FloatArray]]
    zl: FloatArray  # (nlinks + 1, 6) twist sums (see _twists); the last row stays zero
    zl_steps: list[tuple[FloatArray, IntArray]]


def _scratch(tree: CompiledTree) -> _Scratch:
    local = tree._cache.get("scratch")
    if not isinstance(local, threading.local):
        local = threading.local()
        tree._cache.setdefault("scratch", local)
        local = tree._cache["scratch"]
        assert isinstance(local, threading.local)
    sc = getattr(local, "sc", None)
    if isinstance(sc, _Scratch):
        return sc
    plan = _plan(tree)
    build_single_form(plan)
    nl = plan.nlinks
    template = np.zeros((nl + 1, 3, 4))
    template[nl] = np.eye(4)[:3]
    template[:plan.nroot] = plan.root_t[..., 0].transpose(0, 2, 1)
    w = template.copy()
    assert plan.cs_index is not None
    cs = np.empty(plan.cs_index.size)
    levels = []
    o = 0
    for lv in plan.levels:
        views = []
        for a, b, p0, p1, g, idx in lv.blocks:
            m = 12 * (b - a)
            views.append((w[p0:p1].reshape(3 * (p1 - p0), 4), g, idx, cs[o:o + 2 * m], m, w[a:b].reshape(m)))
            o += 2 * m
        levels.append((views, lv if lv.rest else None))
    corr = [(w[p0:p1].reshape(3 * (p1 - p0), 4), g, idx, w[r0:r1].reshape(-1))
            for r0, r1, p0, p1, g, idx in plan.corr_blocks]
    zl = np.zeros((nl + 1, 6))
    vals = np.zeros(2 + 2 * plan.trig_cols.size)
    vals[0] = 1.0
    sc = _Scratch(template, w, w.transpose(0, 2, 1)[..., None], cs, vals, levels, corr, zl,
                  [(zl[a:b], p) for a, b, p in _level_parents(tree)])
    local.sc = sc
    return sc


def _world_t(tree: CompiledTree, w: FloatArray) -> FloatArray:
    """Apply ``model.pose`` (``X_world_root @ X``) to transposed poses ``(n, 4, 3, C)``.

    Element-wise (not BLAS): a matrix product with a dimension of 1 goes through gemv, whose
    rounding depends on the vector length, and single and batch results must stay identical.
    """
    t = tree.pose[None, None, :3, :3, None] * w[:, :, None, :, :]  # (n, 4, 3[i], 3[m], C)
    out = t[:, :, :, 0] + t[:, :, :, 1]
    out += t[:, :, :, 2]
    out[:, 3] += tree.pose[:3, 3, None]
    return out


def _chunks(n: int, chunk: int) -> list[tuple[int, int]]:
    """Ranges of ``chunk`` configurations (the last up to ``chunk + 1``): none of size 1 unless
    ``n == 1`` (a product with one column would go through gemv, see :func:`_poses_t`)."""
    chunk = max(2, int(chunk))
    out = [(i, min(n, i + chunk)) for i in range(0, n, chunk)]
    if len(out) > 1 and out[-1][1] - out[-1][0] == 1:
        out[-2:] = [(out[-2][0], n)]
    return out


def _set_bottom_row(out: FloatArray) -> None:
    out[..., 3, :3] = 0.0
    out[..., 3, 3] = 1.0


def _qat(tree: CompiledTree, q: FloatArray) -> FloatArray:
    """All-joint coordinates with the configuration axis last: ``(nqa, C)`` (as ``tree.expand_q``)."""
    qat = np.empty((tree.nqa, q.shape[0]))
    qat[tree.q_to_qa] = q.T
    for lv in tree.mimic_q:
        qat[lv.dst] = qat[lv.src] * lv.mult[:, None] + lv.off[:, None]
    return qat


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
        return _k_poses(tree, _k_q(tree, q), _k_consts(tree).link_template.copy()[None], world)[0][0]
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


# ---- twists ---------------------------------------------------------------------------------


def _cross(a: FloatArray, b: FloatArray) -> FloatArray:
    """Cross product of stacks of 3-vectors ``(k, 3, C)`` (broadcastable)."""
    a0, a1, a2 = a[:, 0], a[:, 1], a[:, 2]
    b0, b1, b2 = b[:, 0], b[:, 1], b[:, 2]
    return np.stack([a1 * b2 - a2 * b1, a2 * b0 - a0 * b2, a0 * b1 - a1 * b0], axis=1)


def _rotate(w: FloatArray, x: FloatArray) -> FloatArray:
    """``R x`` for transposed poses ``w`` ``(k, 4, 3, C)`` and vectors ``x`` ``(k, 3, C)``."""
    t = w[:, :3] * x[:, :, None, :]  # (k, 3[j], 3[i], C)
    return t[:, 0] + t[:, 1] + t[:, 2]


def _rotate_t(w: FloatArray, x: FloatArray) -> FloatArray:
    """``R^T x`` for transposed poses ``w`` ``(k, 4, 3, C)`` and vectors ``x`` ``(k, 3, C)``."""
    t = w[:, :3] * x[:, None, :, :]  # (k, 3[j], 3[i], C)
    return t[:, :, 0] + t[:, :, 1] + t[:, :, 2]


def _rotate_t_const(r: FloatArray, x: FloatArray) -> FloatArray:
    """``R^T x`` for constant rotations ``r`` ``(k, 3[i], 3[j], 1)`` and ``x`` ``(k, 3, C)``."""
    t = r * x[:, :, None, :]  # (k, 3[i], 3[j], C)
    return t[:, 0] + t[:, 1] + t[:, 2]


def _joint_rates(tree: CompiledTree, qat: FloatArray, vat: FloatArray) -> tuple[FloatArray, FloatArray]:
    """Angular velocity and origin velocity of each moving joint frame relative to its parent side.

    Both expressed in the moving joint frame; shape ``(njoints, 3, C)``.
    """
    nj, c = tree.njoints, qat.shape[1]
    w = np.zeros((nj, 3, c))
    v = np.zeros((nj, 3, c))
    cons = tree._twist_constants()
    for g, ax, pitch in zip(tree.rotary, cons.rot_axes, cons.rot_pitch):
        rate = vat[tree.joint_va[g.joints]][:, None, :]
        w[g.joints] = ax * rate
        if g.m3 is not None:
            v[g.joints] = (ax * pitch) * rate
    if tree.prismatic is not None:
        p = tree.prismatic
        v[p.joints] = cons.pri_axes * vat[tree.joint_va[p.joints]][:, None, :]
    if tree.two_axis is not None:
        u = tree.two_axis
        va0 = tree.joint_va[u.joints]
        a1, k2a1, k2k2a1, a2 = cons.two
        t2 = qat[u.col + 1][:, None, :]
        r2t_a1 = a1 - k2a1 * np.sin(t2) + k2k2a1 * (1.0 - np.cos(t2))  # Rot(axis2, q1)^T axis
        w[u.joints] = r2t_a1 * vat[va0][:, None, :] + a2 * vat[va0 + 1][:, None, :]
    if tree.planar is not None:
        pl = tree.planar
        va0 = tree.joint_va[pl.joints]
        e1, e2, n = cons.planar
        yaw = qat[pl.col + 2][:, None, :]
        cy, sy = np.cos(yaw), np.sin(yaw)
        xd, yd = vat[va0][:, None, :], vat[va0 + 1][:, None, :]
        v[pl.joints] = xd * (cy * e1 - sy * e2) + yd * (sy * e1 + cy * e2)
        w[pl.joints] = n * vat[va0 + 2][:, None, :]
    for qg in tree.quaternion:
        va0 = tree.joint_va[qg.joints]
        if qg.floating:
            v[qg.joints] = vat[va0[:, None] + np.arange(3)]
            w[qg.joints] = vat[va0[:, None] + np.arange(3, 6)]
        else:
            w[qg.joints] = vat[va0[:, None] + np.arange(3)]
    return w, v


@dataclass
class _TwistKernel:
    """Constant motion of the one-coordinate joints in their child frames (see :func:`_twists`)."""

    s: FloatArray  # (2, 3, njoints, 1): [linear, angular] per unit rate, in the child frame (0: others)
    col: IntArray  # (njoints,) the rate's va column (nva: none, a zero row)
    generic: IntArray  # joints with several coordinates (universal, revolute2, planar, ball, floating)


def _twist_kernel(tree: CompiledTree) -> _TwistKernel:
    cached = tree._cache.get("twist")
    if isinstance(cached, _TwistKernel):
        return cached
    cons = tree._twist_constants()
    nj = tree.njoints
    sm = np.zeros((nj, 2, 3, 1))  # filled per joint, then held as (2, 3, njoints, 1)
    col = np.full(nj, tree.nva, dtype=np.intp)
    rt = cons.offset_r[..., 0].transpose(0, 2, 1)  # R_JC^T per joint
    for g, ax, pitch in zip(tree.rotary, cons.rot_axes, cons.rot_pitch):
        for i, j in enumerate(g.joints):
            a = ax[i, :, 0]
            sm[j, 1, :, 0] = rt[j] @ a
            sm[j, 0, :, 0] = rt[j] @ (a * pitch[i, 0, 0] + np.cross(a, cons.offset_t[j, :, 0]))
            col[j] = tree.joint_va[j]
    if tree.prismatic is not None:
        for i, j in enumerate(tree.prismatic.joints):
            sm[j, 0, :, 0] = rt[j] @ cons.pri_axes[i, :, 0]
            col[j] = tree.joint_va[j]
    generic = [g.joints for g in (tree.two_axis, tree.planar) if g is not None] + [g.joints for g in tree.quaternion]
    kern = _TwistKernel(np.ascontiguousarray(sm.transpose(1, 2, 0, 3)), col,
                        np.concatenate(generic) if generic else np.zeros(0, dtype=np.intp))
    tree._cache["twist"] = kern
    return kern


def _twists(tree: CompiledTree, w_pose: FloatArray, qat: FloatArray, vat: FloatArray, body: bool) -> FloatArray:
    """``(nlinks, 6, C)`` twists (a view) from transposed poses ``(nlinks + 1, 4, 3, C)``; element-wise only.

    Each joint adds ``dw`` (angular) and ``dv`` (velocity of its child's origin) in the root frame;
    a link's angular velocity is the sum over the joints above it, and the velocity of its origin
    ``p`` is ``A + w x p`` with ``A`` the sum of ``dv - dw x p_child``: one sum per depth level.
    Vectors are held component first, ``(3, links, C)``, so every operation runs over all links
    (and configurations) at once.
    """
    nl, nr, c = tree.nlinks, tree.nroot, qat.shape[1]
    kern = _twist_kernel(tree)
    wp = np.ascontiguousarray(w_pose[:nl].transpose(1, 2, 0, 3))  # (4[j], 3[i], links, C): R^T rows, then p
    rate = np.concatenate([vat, np.zeros((1, c))])[kern.col]  # (njoints, C)
    x = kern.s * rate  # (2, 3, njoints, C): [uc, wc] in the child frames
    if kern.generic.size:
        cons = tree._twist_constants()
        g = kern.generic
        wj, vj = _joint_rates(tree, qat, vat)
        uj = vj[g] + _cross(wj[g], cons.offset_t[g])
        x[1][:, g] = _rotate_t_const(cons.offset_r[g], wj[g]).transpose(1, 0, 2)
        x[0][:, g] = _rotate_t_const(cons.offset_r[g], uj).transpose(1, 0, 2)
    r = wp[:, :, nr:nl]
    d = r[0] * x[:, 0, None]
    d += r[1] * x[:, 1, None]
    d += r[2] * x[:, 2, None]  # [dv, dw] = R [uc, wc] in the root frame, (2, 3, joints, C)
    pos = np.concatenate([wp[3], wp[3, :2]])  # (5, links, C): rows 1-3 and 2-4 are p rolled by 1 and 2
    dw = np.concatenate([d[1], d[1, :2]])
    d[0] -= dw[1:4] * pos[2:5, nr:] - dw[2:5] * pos[1:4, nr:]  # dv - dw x p
    # [A, w] per link, link first; last slot: the root frame (at rest)
    if c == 1:  # this thread's scratch array and views of its levels
        sc = _scratch(tree)
        zl, steps = sc.zl, sc.zl_steps
        zl[:nr] = 0.0
    else:
        zl = np.zeros((nl + 1, 6 * c))
        steps = [(zl[a:b], p) for a, b, p in _level_parents(tree)]
    zl[nr:nl] = d.reshape(6, nl - nr, c).transpose(1, 0, 2).reshape(nl - nr, 6 * c)
    for v, p in steps:
        np.add(v, zl.take(p, axis=0), out=v)
    z = np.ascontiguousarray(zl[:nl].reshape(nl, 6, c).transpose(1, 0, 2)).reshape(2, 3, nl, c)
    w = np.concatenate([z[1], z[1, :2]])
    z[0] += w[1:4] * pos[2:5] - w[2:5] * pos[1:4]  # A + w x p
    if body:  # R^T v: component j is sum_i R_ij v_i
        for k in range(2):
            v = z[k].copy()
            t = wp[:3, 0] * v[0]
            t += wp[:3, 1] * v[1]
            t += wp[:3, 2] * v[2]
            z[k] = t
    return z.reshape(6, nl, c).transpose(1, 0, 2)


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
        return _k_twists(tree, x, qa, q1, tree.expand_v(vv), body)[0]
    qa = _qa_single(tree, _check_single(tree, q))
    vv = check_v(tree, v, single=True)
    vat = tree.expand_v(vv[0])[:, None]
    qat = qa[:, None]
    return np.ascontiguousarray(_twists(tree, _poses_single(tree, qa), qat, vat, body)[..., 0])


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


def _k_poses(tree: CompiledTree, q: FloatArray, out: FloatArray, world: bool) -> tuple[FloatArray, FloatArray]:
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
