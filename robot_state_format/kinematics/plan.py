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
    # one-configuration form (see fk._poses_single): per child, its constant and the constant with the
    # mixed rows swapped (and signed), stacked ``(k, 8, 4)``; and ``(k, 8, 1)`` indices into
    # ``[1, 0, cos..., sin...]`` giving the factors of those 8 rows (1 and 0 for rows left alone)
    g_stack: FloatArray | None = None  # (k, 4, 4)
    gg: FloatArray | None = None  # (k, 8, 4)
    cs_idx: IntArray | None = None  # (k, 8, 1)
    # the same cut into blocks with a contiguous parent range (see tree._blocks): (first, stop,
    # first parent, stop parent, (8m, 4) constants, (8, m, 3) indices)
    blocks: list[tuple[int, int, int, int, FloatArray, IntArray]] = field(default_factory=list)
    rest: bool = False  # any general, prismatic or generic child (see fk._level_rest)
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
