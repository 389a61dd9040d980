"""The numpy path of link twists (:func:`robot_state_format.kinematics.fk.link_twists`) and joint rates."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from robot_state_format.kinematics.compiled_tree import CompiledTree

FloatArray = NDArray[np.float64]
IntArray = NDArray[np.intp]


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
    ancestors: FloatArray  # (nlinks, njoints): 1 where joint j moves link l (j's child is l or above it)
    ancestors_t: FloatArray  # its transpose, C-ordered


def ancestor_matrix(tree: CompiledTree) -> FloatArray:
    """``(nlinks, njoints)`` 0/1: joint ``j`` (child link ``nroot + j``) is on link ``l``'s path to the root."""
    nr, nj = tree.nroot, tree.njoints
    anc = np.zeros((tree.nlinks, nj))
    for j in range(nj):  # parents come first
        link = nr + j
        par = int(tree.link_parent[link])
        if par >= 0:
            anc[link] = anc[par]
        anc[link, j] = 1.0
    return anc


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
    anc = ancestor_matrix(tree)
    kern = _TwistKernel(np.ascontiguousarray(sm.transpose(1, 2, 0, 3)), col,
                        np.concatenate(generic) if generic else np.zeros(0, dtype=np.intp), anc,
                        np.ascontiguousarray(anc.T))
    tree._cache["twist"] = kern
    return kern


def _twists(tree: CompiledTree, w_pose: FloatArray, qat: FloatArray, vat: FloatArray, body: bool) -> FloatArray:
    """``(nlinks, 6, C)`` twists (a view) from transposed poses ``(nlinks + 1, 4, 3, C)``; element-wise only.

    Each joint adds ``dw`` (angular) and ``dv`` (velocity of its child's origin) in the root frame;
    a link's angular velocity is the sum over the joints above it, and the velocity of its origin
    ``p`` is ``A + w x p`` with ``A`` the sum of ``dv - dw x p_child``: both sums are one matrix
    product by the constant 0/1 ancestor matrix.
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
    # [A, w] per link: the sums over the joints above each link, one product by the 0/1 ancestor matrix
    # (a gemm: exact products, summed in joint order whatever C is, so single and batch stay identical)
    if c == 1:
        z = np.dot(d.reshape(6, nl - nr), kern.ancestors_t).reshape(2, 3, nl, 1)
    else:
        z = np.matmul(kern.ancestors, d.reshape(6, nl - nr, c)).reshape(2, 3, nl, c)
    w = np.concatenate([z[1], z[1, :2]])
    z[0] += w[1:4] * pos[2:5] - w[2:5] * pos[1:4]  # A + w x p
    if body:  # R^T v: component j is sum_i R_ij v_i
        for k in range(2):
            v = z[k].copy()
            t = wp[:3, 0] * v[0]
            t += wp[:3, 1] * v[1]
            t += wp[:3, 2] * v[2]
            z[k] = t
    out: FloatArray = z.reshape(6, nl, c).transpose(1, 0, 2)
    return out
