"""Compiled (numba) kernels for link poses and twists, one configuration after another.

:mod:`robot_state_format.kinematics.fk` uses them when numba is installed (it imports this module on
the first kinematics call, not before: numba's import costs about half a second).  Every
configuration runs the same scalar code, in a fixed order of operations, whether it comes alone
(``forward``) or in a batch (``forward_batch``): single and batch results are identical bit for bit.
Without numba (or with ``ROBOT_STATE_FORMAT_KERNEL=numpy``) fk falls back to its numpy path, whose
results agree with these to within 1e-12 (not bit for bit: the sums run in another order).

Compiled code is cached on disk by :mod:`.kernel_cache`, keyed on a hash of this file,
``kernel_codes.py`` and the numba/llvmlite versions (a change to any of them compiles afresh, in a
directory of its own): next to this module when its directory is writable, else in numba's user-wide
cache directory (``NUMBA_CACHE_DIR`` or ``~/.cache``), so a read-only install (colcon, a system
package) caches too.

Constants (built by :func:`constants`, once per tree):

* ``f`` ``(njoints, 4, 3, 4)``: per joint ``[m02, m1, m2, m3]`` (rotary: ``X(q) = m1 sin q + m02 -
  m2 cos q [+ m3 q]``, the arithmetic of ``fk.joint_transforms``); prismatic: ``m02 = [R | t0]``
  and the translation's rate in column 3 of ``m1``; fixed: ``m02``.
* ``ij`` ``(njoints, 3)``: kind (:data:`FIXED`, :data:`ROTARY`, :data:`SCREW`, :data:`PRISMATIC`,
  :data:`GENERIC`), the ``qa`` column, the parent link (-1: the root frame).
* generic joints (universal, revolute2, planar, ball, floating) come in precomputed by numpy, per
  configuration: their local transform (``gen``) and their child-frame twist (``xg``).  So the
  kernels hold no quaternion arithmetic: a ball or floating joint's rotation comes from
  :func:`robot_state_format.spatial.quaternion_components_to_rotation`, through the numpy path.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit
from numpy.typing import NDArray

from robot_state_format.kinematics import kernel_cache
from robot_state_format.kinematics.kernel_codes import FIXED, GENERIC, PRISMATIC, ROTARY, SCREW

__all__ = ["FIXED", "GENERIC", "PRISMATIC", "ROTARY", "SCREW", "poses", "twists"]

FloatArray = NDArray[np.float64]
IntArray = NDArray[np.int64]


@njit(cache=False, nogil=True)  # cached by kernel_cache.attach (below)
def poses(q: FloatArray, src: IntArray, mo: FloatArray, f: FloatArray, ij: IntArray, root: FloatArray,  # pragma: no cover  # noqa: C901 (complexity 35): to be split, issue 38
          gen: FloatArray, pose: FloatArray, world: bool, out: FloatArray) -> bool:
    """Fill rows 0-2 of ``out`` ``(C, nlinks, 4, 4)`` with the link poses of each row of ``q``.

    ``qa[k] = q[src[k]] * mo[0, k] + mo[1, k]`` (mimic followers; ``x * 1 + 0 == x`` for the
    others).  Returns False, with ``out`` unfilled, when a value of ``q`` is not finite.
    """
    nc = q.shape[0]
    for c in range(nc):
        for k in range(q.shape[1]):
            if not math.isfinite(q[c, k]):
                return False
    nqa = src.shape[0]
    qa = np.empty((nc, nqa))
    for c in range(nc):
        for k in range(nqa):
            qa[c, k] = q[c, src[k]] * mo[0, k] + mo[1, k]
    nj = ij.shape[0]
    nr = root.shape[0]
    nl = nr + nj
    x = np.empty((nl, 3, 4))
    loc = np.empty((3, 4))
    for i in range(nr):
        for a in range(3):
            for b in range(4):
                x[i, a, b] = root[i, a, b]
    for c in range(nc):
        for j in range(nj):
            link = nr + j
            kind = ij[j, 0]
            if kind == FIXED:
                for a in range(3):
                    for b in range(4):
                        loc[a, b] = f[j, 0, a, b]
            elif kind in (ROTARY, SCREW):
                th = qa[c, ij[j, 1]]
                s = math.sin(th)
                co = math.cos(th)
                for a in range(3):
                    for b in range(4):
                        v = f[j, 1, a, b] * s
                        v = v + f[j, 0, a, b]
                        v = v - f[j, 2, a, b] * co
                        if kind == SCREW:
                            v = v + f[j, 3, a, b] * th
                        loc[a, b] = v
            elif kind == PRISMATIC:
                th = qa[c, ij[j, 1]]
                for a in range(3):
                    for b in range(3):
                        loc[a, b] = f[j, 0, a, b]
                    loc[a, 3] = f[j, 1, a, 3] * th + f[j, 0, a, 3]
            else:
                for a in range(3):
                    for b in range(4):
                        loc[a, b] = gen[c, link, a, b]
            p = ij[j, 2]
            if p < 0:
                for a in range(3):
                    for b in range(4):
                        x[link, a, b] = loc[a, b]
            else:
                for a in range(3):
                    x0 = x[p, a, 0]
                    x1 = x[p, a, 1]
                    x2 = x[p, a, 2]
                    for b in range(4):
                        x[link, a, b] = x0 * loc[0, b] + x1 * loc[1, b] + x2 * loc[2, b]
                    x[link, a, 3] += x[p, a, 3]
        for i in range(nl):
            if world:
                for a in range(3):
                    for b in range(4):
                        v = pose[a, 0] * x[i, 0, b] + pose[a, 1] * x[i, 1, b]
                        v = v + pose[a, 2] * x[i, 2, b]
                        if b == 3:
                            v = v + pose[a, 3]
                        out[c, i, a, b] = v
            else:
                for a in range(3):
                    for b in range(4):
                        out[c, i, a, b] = x[i, a, b]
    return True


@njit(cache=False, nogil=True)  # cached by kernel_cache.attach (below)
def twists(x: FloatArray, va: FloatArray, s: FloatArray, it: IntArray, nr: int, xg: FloatArray,  # pragma: no cover
           body: bool, out: FloatArray) -> None:
    """Fill ``out`` ``(C, nlinks, 6)`` with ``[linear, angular]`` twists of every link.

    ``x`` ``(C, nlinks, >= 3, 4)``: link poses in the root frame; ``va`` ``(C, nva)``; ``s``
    ``(njoints, 6)``: a one-coordinate joint's child-frame twist per unit rate; ``it`` ``(njoints,
    2)``: the rate's ``va`` column (-1: fixed, -2: generic, taken from ``xg`` ``(C, njoints, 6)``)
    and the parent link (-1: the root frame).  The root links are at rest.
    """
    nc = x.shape[0]
    nj = it.shape[0]
    nl = nr + nj
    w = np.zeros((nl, 3))
    v = np.zeros((nl, 3))
    d = np.empty(6)
    for c in range(nc):
        for j in range(nj):
            link = nr + j
            col = it[j, 0]
            if col >= 0:
                rate = va[c, col]
                for k in range(6):
                    d[k] = s[j, k] * rate
            elif col == -1:
                for k in range(6):
                    d[k] = 0.0
            else:
                for k in range(6):
                    d[k] = xg[c, j, k]
            p = it[j, 1]
            for a in range(3):
                r0 = x[c, link, a, 0]
                r1 = x[c, link, a, 1]
                r2 = x[c, link, a, 2]
                dv = r0 * d[0] + r1 * d[1] + r2 * d[2]
                dw = r0 * d[3] + r1 * d[4] + r2 * d[5]
                if p < 0:
                    v[link, a] = dv
                    w[link, a] = dw
                else:
                    v[link, a] = v[p, a] + dv
                    w[link, a] = w[p, a] + dw
            if p >= 0:  # + w_parent x (p_link - p_parent)
                e0 = x[c, link, 0, 3] - x[c, p, 0, 3]
                e1 = x[c, link, 1, 3] - x[c, p, 1, 3]
                e2 = x[c, link, 2, 3] - x[c, p, 2, 3]
                v[link, 0] += w[p, 1] * e2 - w[p, 2] * e1
                v[link, 1] += w[p, 2] * e0 - w[p, 0] * e2
                v[link, 2] += w[p, 0] * e1 - w[p, 1] * e0
        for i in range(nl):
            if i < nr:
                for k in range(6):
                    out[c, i, k] = 0.0
            elif body:  # R^T v, R^T w
                for a in range(3):
                    out[c, i, a] = x[c, i, 0, a] * v[i, 0] + x[c, i, 1, a] * v[i, 1] + x[c, i, 2, a] * v[i, 2]
                    out[c, i, 3 + a] = x[c, i, 0, a] * w[i, 0] + x[c, i, 1, a] * w[i, 1] + x[c, i, 2, a] * w[i, 2]
            else:
                for a in range(3):
                    out[c, i, a] = v[i, a]
                    out[c, i, 3 + a] = w[i, a]


kernel_cache.attach(poses, twists)
