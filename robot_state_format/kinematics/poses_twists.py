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

FloatArray = NDArray[np.float64]

__all__ = ["poses_and_twists"]


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
