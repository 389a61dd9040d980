"""Level-by-level evaluation plan for link poses (built once by ``compile_model``).

Link poses are held transposed, one ``(4, 3, C)`` block per link: ``W[l, j, i, n]`` is entry
``(i, j)`` of link ``l``'s 3x4 pose in configuration ``n``.  For every depth level the children are
contiguous, so one stacked matrix product ``G_c (4x4) @ W[parent] (4 x 3C)`` (BLAS, per child) gives
``X_parent @ K_c`` for a constant ``K_c`` of each child; joint motion is then applied element-wise:

* fixed: ``K = origin @ child_offset``; nothing else.
* revolute/continuous ("aligned"): ``Rot(axis, q) = Q Rot(e, q) Q^T`` with e = +-X/Y/Z (``Q = I``
  when the axis is one of them, else ``Q`` turns Z onto the axis); ``K = origin @ Q``, then two
  columns are mixed with ``cos q``/``sin q``.  What remains, ``D = Q^T @ child_offset``, is folded
  into the children's constants and applied to the link itself after the last level (the link is
  held as ``F = X D^-1`` meanwhile).
* screw ("general"): ``K = M0`` and a second product gives ``X_p M1``, ``X_p M2`` and the
  translation direction; Rodrigues combines them.
* prismatic: ``K = origin @ child_offset`` plus the rotated axis direction times ``q``.
* universal, revolute2, planar, ball, floating ("generic"): ``K = I`` and the local transform
  is composed element-wise.
"""

from __future__ import annotations

import functools
import threading
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
from numpy.typing import NDArray

FloatArray = NDArray[np.float64]
IntArray = NDArray[np.intp]


@dataclass
class LevelPlan:
    """One depth level: links ``[start, stop)`` with parents ``par`` (``nlinks`` = the root frame).

    Within a level links are ordered by kind, then by whether they are held transformed, then by
    parent, so each kind is a contiguous range and each *run* (same kind, same parent) is one
    matrix product ``G_run (4m x 4) @ W[parent]``.
    """

    start: int
    stop: int
    par: IntArray
    runs: list[tuple[int, int, int, FloatArray]]  # (first link, stop link, parent, (4m, 4) constants)
    # aligned revolute ranges: (first link, stop link, column a, column b, first trig row, stop trig row)
    aligned: list[tuple[int, int, int, int, int, int]]
    # general rotary runs: (first, stop, parent, (9m, 4) [M1^T; M2^T; screw row] per link, trig rows,
    # qa columns, any screw)
    general: list[tuple[int, int, int, FloatArray, IntArray, IntArray, bool]]
    # prismatic runs: (first, stop, parent, (m + 1, 4) rotated-axis rows and a zero row, qa columns)
    prismatic: list[tuple[int, int, int, FloatArray, IntArray]]
    generic: tuple[int, int]
    # one-configuration form (see fk_numpy._poses_single): per child, its constant and the constant with the
    # mixed rows swapped (and signed), stacked ``(k, 8, 4)``; and ``(k, 8, 1)`` indices into
    # ``[1, 0, cos..., sin...]`` giving the factors of those 8 rows (1 and 0 for rows left alone)
    g_stack: FloatArray | None = None  # (k, 4, 4)
    gg: FloatArray | None = None  # (k, 8, 4)
    cs_idx: IntArray | None = None  # (k, 8, 1)
    # the same cut into blocks with a contiguous parent range (see tree._blocks): (first, stop,
    # first parent, stop parent, (8m, 4) constants, (8, m, 3) indices)
    blocks: list[tuple[int, int, int, int, FloatArray, IntArray]] = field(default_factory=list)
    rest: bool = False  # any general, prismatic or generic child (see fk_numpy._level_rest)
    ge_dp: FloatArray | None = None  # (3, 4, g, 1): parents' pending D for generic children (None: all I)


@dataclass
class PosePlan:
    """Everything :func:`robot_state_format.kinematics.fk.forward_batch` needs besides ``qa``."""

    nlinks: int
    nroot: int
    root_t: FloatArray  # (nroot, 4, 3, 1) transposed root poses
    levels: list[LevelPlan]
    trig_cols: IntArray  # qa columns whose sin/cos are computed
    trig_src: IntArray | None  # rotary index -> computed trig row (None: identity)
    trig_sign: FloatArray | None  # (nrot, 1) -1 for mimic multipliers of -1 and, for aligned joints,
    # negative axes (None: all +1)
    has_generic: bool
    # links held as F = X D^-1 during the levels, in contiguous ranges (first, stop, (k, 4, 4) D^T):
    # X = F D is applied after the last level
    corr_ranges: list[tuple[int, int, FloatArray]]
    has_general: bool = False  # any screw/general rotary run (needs sin/cos per rotary joint)
    cs_index: IntArray | None = None  # (8, nlinks - nroot, 1): every level's cs_idx, in link order
    corr_blocks: list[tuple[int, int, int, int, FloatArray, IntArray]] = field(default_factory=list)  # X = D F


def transposed(m: FloatArray) -> FloatArray:
    """``m^T`` as a contiguous 4x4 (the constant layout of :class:`LevelPlan`)."""
    return np.ascontiguousarray(np.asarray(m, dtype=np.float64).T)


def aligned_columns(axis: Sequence[float] | FloatArray) -> tuple[int, int, float] | None:
    """Columns mixed by a rotation about ``axis`` if it is exactly +-X/Y/Z: ``(a, b, sign)``."""
    for i, (a, b) in enumerate(((1, 2), (2, 0), (0, 1))):
        if abs(float(axis[i])) == 1.0 and float(axis[(i + 1) % 3]) == 0.0 and float(axis[(i + 2) % 3]) == 0.0:
            return a, b, float(np.sign(axis[i]))
    return None


_SINGLE_LOCK = threading.Lock()


def build_single_form(plan: PosePlan) -> None:
    """Fill the one-configuration form of ``plan`` (``gg``, ``cs_idx``, ``blocks``, ``cs_index``,
    ``corr_blocks``): built on first use, as only the one-configuration kernel needs it.

    X_c = G_c X_p (rows 0-3) and the same with the mixed rows swapped and signed (rows 4-7);
    X_c = rows 0-3 * [1 or cos] + rows 4-7 * [0 or sin]: the same products as the batch kernel's
    column mixing (a sign moved from sin onto a constant row is exact).
    """
    with _SINGLE_LOCK:
        if plan.cs_index is not None:
            return
        nl, nr, levels = plan.nlinks, plan.nroot, plan.levels
        ntrig = plan.trig_cols.size
        gs_all = np.concatenate([lv.g_stack for lv in levels if lv.g_stack is not None]) if levels else np.zeros(
            (0, 4, 4))
        gg_all = np.concatenate([gs_all, gs_all], axis=1)
        idx_all = np.zeros((nl - nr, 8), dtype=np.intp)
        idx_all[:, 4:] = 1
        al_rows: list[int] = []
        al_ca: list[int] = []
        al_cb: list[int] = []
        al_t: list[int] = []
        for lv in levels:
            for r0, r1, ca, cb, t0, _ in lv.aligned:
                al_rows.extend(range(r0 - nr, r1 - nr))
                al_ca.extend([ca] * (r1 - r0))
                al_cb.extend([cb] * (r1 - r0))
                al_t.extend(range(t0, t0 + r1 - r0))
        if al_rows:
            rr, ca_a, cb_a, tt = (np.array(x, dtype=np.intp) for x in (al_rows, al_ca, al_cb, al_t))
            sg = plan.trig_sign[tt] if plan.trig_sign is not None else np.ones((tt.size, 1))
            row = plan.trig_src[tt] if plan.trig_src is not None else tt
            gg_all[rr, 4 + ca_a] = sg * gs_all[rr, cb_a]
            gg_all[rr, 4 + cb_a] = -sg * gs_all[rr, ca_a]
            idx_all[rr, ca_a] = idx_all[rr, cb_a] = 2 + row
            idx_all[rr, 4 + ca_a] = idx_all[rr, 4 + cb_a] = 2 + ntrig + row
        for lv in levels:
            lv.gg = gg_all[lv.start - nr:lv.stop - nr]
            lv.cs_idx = idx_all[lv.start - nr:lv.stop - nr, :, None]
            lv.blocks = _blocks(lv.start, lv.stop, lv.par, lv.gg)
        plan.corr_blocks = [b for r0, r1, g in plan.corr_ranges for b in _blocks(r0, r1, np.arange(r0, r1), g, 1024)]
        plan.cs_index = np.concatenate([_cs_flat(lv) for lv in levels]) if levels else np.zeros(0, dtype=np.intp)


def _cs_flat(lv: LevelPlan) -> IntArray:
    """The level's factor indices in the order of its blocks' results ``(2, m, 3, 4)``, flat."""
    assert lv.cs_idx is not None
    parts = []
    for a, b, *_ in lv.blocks:
        ci = lv.cs_idx[a - lv.start:b - lv.start, :, 0].reshape(b - a, 2, 1, 4).transpose(1, 0, 2, 3)
        parts.append(np.broadcast_to(ci, (2, b - a, 3, 4)).ravel())
    return np.concatenate(parts) if parts else np.zeros(0, dtype=np.intp)


BLOCK_LIMIT = 128
"""Largest children x parents count of one product in the one-configuration pose kernel."""


@functools.lru_cache(maxsize=256)
def _block_grid(k: int, r: int) -> IntArray:
    """``(r // 4, 1, 3, 4)`` offsets ``i k r + 4 h + j`` of :func:`_blocks`' gather indices."""
    h = np.arange(r // 4)[:, None, None, None]
    i = np.arange(3)[None, None, :, None]
    j = np.arange(4)[None, None, None, :]
    return i * (k * r) + h * 4 + j


def _blocks(start: int, stop: int, par: IntArray, g: FloatArray,
            limit: int = BLOCK_LIMIT) -> list[tuple[int, int, int, int, FloatArray, IntArray]]:
    """Children ``[start, stop)`` of parents ``par`` with constants ``g`` ``(k, r, 4)`` cut into blocks.

    A block ``(a, b, p0, p1, B, idx)`` is one product ``P @ B``: ``P`` ``(3n, 4)`` the poses (top rows)
    of the contiguous parent range ``[p0, p1)``, ``B`` ``(4, r m)`` the constants of children ``[a, b)``
    (``B[:, (c, r)] = g[c, r]``); ``idx`` picks each child's own parent from the ``(n, 3, m, r)``
    result, flat, in the order ``(r // 4, m, 3, 4)``.
    """
    r = g.shape[1]
    out: list[tuple[int, int, int, int, FloatArray, IntArray]] = []
    parl = par.tolist()
    a = start
    while a < stop:
        b, p0, p1 = a + 1, parl[a - start], parl[a - start] + 1
        while b < stop:
            q0, q1 = min(p0, parl[b - start]), max(p1, parl[b - start] + 1)
            if (b + 1 - a) * (q1 - q0) > limit:
                break
            b, p0, p1 = b + 1, q0, q1
        k = b - a
        # idx[h, c, i, j] = ((pidx[c] * 3 + i) * k + c) * r + 4 h + j
        tc = ((par[a - start:b - start] - p0) * (3 * k) + np.arange(k)) * r
        idx = (tc[None, :, None, None] + _block_grid(k, r)).ravel()  # order (r // 4, k, 3, 4)
        bmat = g[a - start:b - start].transpose(2, 0, 1).reshape(4, k * r)
        out.append((a, b, p0, p1, np.ascontiguousarray(bmat), idx))
        a = b
    return out
