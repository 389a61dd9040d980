"""Link poses and twists of one configuration with one pose pass (for snapshots).

``poses_and_twists(tree, q, v)`` returns exactly ``(forward(tree, q), link_twists(tree, q, v))``
(the same arithmetic, bit for bit: the tests check it) while computing the poses once.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

from robot_state_format.kinematics import compiled, fk
from robot_state_format.kinematics.compiled_tree import CompiledTree
from robot_state_format.kinematics.fk_numpy import _poses_single
from robot_state_format.kinematics.twists_numpy import _twists
from robot_state_format.spatial import matrices_to_rpy

FloatArray = NDArray[np.float64]

__all__ = ["pose6_and_twists", "poses_and_twists"]


def poses_and_twists(tree: CompiledTree, q: object, v: object | None, *,
                     va: FloatArray | None = None) -> tuple[FloatArray, FloatArray | None]:
    """``(forward(tree, q), link_twists(tree, q, v))``; twists None when ``v`` is None.

    ``va``: ``tree.expand_v(v)`` when the caller has it already (saves recomputing it).
    """
    if compiled.kernel() is not None:
        q1 = fk._k_q(tree, q)
        x, qa = fk._k_poses(tree, q1, fk._k_consts(tree).link_template.copy()[None], False)
        if v is None:
            return x[0], None
        vk = tree.expand_v(fk.check_v(tree, v, single=True)[0]) if va is None else va
        return x[0], fk._k_twists(tree, x, qa, q1, np.asarray(vk, dtype=np.float64)[None], False)[0]
    qa = fk._qa_single(tree, fk._check_single(tree, q))
    nl = tree.nlinks
    w = _poses_single(tree, qa)
    poses = fk._tf_constants(tree).link_template.copy()
    poses[:, :3, :] = w[:nl, ..., 0].transpose(0, 2, 1)
    if v is None:
        return poses, None
    vv = fk.check_v(tree, v, single=True)
    vat = (tree.expand_v(vv[0]) if va is None else va)[:, None]
    twists = np.ascontiguousarray(_twists(tree, w, qa[:, None], vat, False)[..., 0])
    return poses, twists


def pose6_and_twists(tree: CompiledTree, q: object, v: object | None, *,
                     va: FloatArray | None = None) -> tuple[FloatArray, FloatArray | None]:
    """``(poses_to_pose6(poses), twists)`` of :func:`poses_and_twists`: ``(nlinks, 6)`` ``x y z roll pitch
    yaw`` in the root frame, the same numbers, without assembling the 4x4 poses on the numpy path
    (the rotations are read where the pose pass left them).  ``-0.0`` is written ``0.0``."""
    if compiled.kernel() is not None:
        poses, tw = poses_and_twists(tree, q, v, va=va)
        return _pose6(poses[:, :3, 3], poses[:, :3, :3]), tw
    qa = fk._qa_single(tree, fk._check_single(tree, q))
    nl = tree.nlinks
    wt = _poses_single(tree, qa)  # (links + 1, 4, 3, 1): wt[l, j, i] = X[i, j]
    w = wt[:nl, ..., 0]
    pose6 = _pose6(w[:, 3, :], w[:, :3, :].transpose(0, 2, 1))
    if v is None:
        return pose6, None
    vv = fk.check_v(tree, v, single=True)
    vat = (tree.expand_v(vv[0]) if va is None else va)[:, None]
    return pose6, _twists(tree, wt, qa[:, None], vat, False)[..., 0]


def _pose6(p: FloatArray, rot: FloatArray) -> FloatArray:
    out = np.empty((p.shape[0], 6))
    out[:, :3] = p
    out[:, 3:] = matrices_to_rpy(rot)
    out += 0.0  # -0.0 -> 0.0
    return out
