"""The numpy path of :mod:`robot_state_format.kinematics.fk`: link poses level by level (see its module doc).

Used when the compiled kernels (:mod:`~robot_state_format.kinematics.kernel`) are not available.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from robot_state_format.errors import KinematicsError
from robot_state_format.kinematics.compiled_tree import CompiledTree
from robot_state_format.kinematics.plan import LevelPlan, PosePlan, build_single_form
from robot_state_format.spatial import quaternion_components_to_rotation

FloatArray = NDArray[np.float64]
IntArray = NDArray[np.intp]


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
    quaternion_components_to_rotation(qx, qy, qz, qw, out=r[:, :3])
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
    vals = np.zeros(2 + 2 * plan.trig_cols.size)
    vals[0] = 1.0
    sc = _Scratch(template, w, w.transpose(0, 2, 1)[..., None], cs, vals, levels, corr)
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
