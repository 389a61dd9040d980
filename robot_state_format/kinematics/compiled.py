"""Access to the compiled kinematics kernels (:mod:`robot_state_format.kinematics.kernel`) and their constants.

The default is numpy: no JIT compiler is imported unless asked for.  numba is an optional extra
(``pip install 'robot_state_format[fast]'`` or ``apt install python3-numba``), opted into with the
environment variable ``ROBOT_STATE_FORMAT_KERNEL=numba`` or a node's ``kinematics_kernel`` parameter
(:func:`select`); then :func:`kernel` imports it on first use only.  A request for numba where it
cannot be imported says so in one line and runs numpy.  :func:`constants` lays a tree's joint
constants out for the kernels (once per tree).
"""

from __future__ import annotations

import importlib
import os
import sys
from dataclasses import dataclass
from types import ModuleType
from typing import TYPE_CHECKING

import numpy as np
from numpy.typing import NDArray

from robot_state_format.kinematics import kernel_codes as codes

if TYPE_CHECKING:  # the CLI imports this module: keep it to numpy
    from robot_state_format.kinematics.compiled_tree import CompiledTree

FloatArray = NDArray[np.float64]
IntArray = NDArray[np.int64]

ENV = "ROBOT_STATE_FORMAT_KERNEL"
"""``numpy`` (the default when unset) or ``numba``: the kinematics kernel of this process, unless a node's
``kinematics_kernel`` parameter chose (:func:`select`)."""

KERNELS = ("numpy", "numba")

INSTALL_HINT = "pip install 'robot_state_format[fast]' (or apt install python3-numba)"

KERNEL_MODULE = "robot_state_format.kinematics.kernel"
"""The numba kernels (imported by name: see :func:`_load`)."""

_state: dict[str, ModuleType | None] = {}
_default = {"kernel": False}
_chosen: dict[str, str] = {}  # "kernel": what select() was given (wins over ENV)
_said: set[str] = set()

__all__ = ["ENV", "INSTALL_HINT", "KERNELS", "KernelConstants", "constants", "kernel", "requested", "select",
           "set_default", "use_kernel", "warm"]


def set_default(enabled: bool) -> bool:
    """Whether this process uses the kernels when neither ``ROBOT_STATE_FORMAT_KERNEL`` nor :func:`select`
    chose (False unless changed: the default install has no JIT).  Returns the previous default."""
    before = _default["kernel"]
    _default["kernel"] = enabled
    _state.clear()
    return before


def requested() -> str:
    """The kernel asked for: :func:`select`'s choice, else ``ROBOT_STATE_FORMAT_KERNEL``, else the default
    (an unknown value of the variable is returned as it is: :func:`kernel` says so and runs numpy)."""
    if "kernel" in _chosen:
        return _chosen["kernel"]
    env = os.environ.get(ENV, "").strip().lower()
    if env:
        return env
    return "numba" if _default["kernel"] else "numpy"


def _load() -> tuple[ModuleType | None, str]:
    """(:mod:`robot_state_format.kinematics.kernel`, "") or (None, why it cannot be imported).

    Loaded by name on the first kinematics call: numba is an optional, heavy dependency (its import
    costs about 1-3 s and ~150 MB), which importing this module (the CLI does) must not pay for.
    """
    try:
        return importlib.import_module(KERNEL_MODULE), ""
    except ImportError as exc:
        if isinstance(exc, ModuleNotFoundError) and exc.name in ("numba", "llvmlite"):
            return None, f"numba is not installed: {INSTALL_HINT}"
        return None, f"numba cannot be imported ({exc}): {INSTALL_HINT}"


def _problem(want: str) -> tuple[ModuleType | None, str]:
    """The kernel module for ``want`` (None: numpy) and the one line saying why numba is not used ("")."""
    if want == "numpy":
        return None, ""
    if want != "numba":
        return None, f"kinematics kernel {want!r}: expected one of {', '.join(KERNELS)}; using numpy"
    mod, why = _load()
    return mod, (f"kinematics kernel numba: {why}; using numpy" if mod is None else "")


def kernel() -> ModuleType | None:
    """The kernel module (numba imported and the kernels loaded from the cache or compiled), or None (numpy)."""
    if "k" not in _state:
        mod, problem = _problem(requested())
        if problem and "kernel" not in _chosen and problem not in _said:
            _said.add(problem)  # asked for by the environment variable: said once, on stderr
            print(f"robot_state_format: {ENV}={os.environ.get(ENV, '')!s}: {problem}", file=sys.stderr)
        _state["k"] = mod
    return _state["k"]


def select(name: str) -> str | None:
    """Use kernel ``name`` (``numpy`` or ``numba``) in this process from now on (a node's
    ``kinematics_kernel`` parameter); returns the one line saying why numba is not used, or None."""
    want = str(name).strip().lower()
    _chosen["kernel"] = want
    _state.clear()
    mod, problem = _problem(want)
    _state["k"] = mod
    return problem or None


def warm() -> bool:
    """Load (or compile, the first time) every kernel signature fk uses, so that no kinematics call
    pays for it later; True when the kernels are in use.  Long-running processes (the nodes) call it
    at start-up: loading from numba's cache costs about 1-3 s (numba's import, and scipy's when
    installed, which numba probes for BLAS), compiling without a cache about 5-10 s."""
    k = kernel()
    if k is None:
        return False
    q, src, mo = np.zeros((1, 1)), np.zeros(1, dtype=np.int64), np.array([[1.0], [0.0]])
    f, ij = np.zeros((1, 4, 3, 4)), np.array([[k.ROTARY, 0, -1]], dtype=np.int64)
    root, gen, pose = np.zeros((0, 3, 4)), np.zeros((1, 1, 3, 4)), np.eye(4)
    out = np.zeros((1, 1, 4, 4))
    k.poses(q, src, mo, f, ij, root, gen, pose, False, out)  # C-ordered result (forward, twists)
    k.poses(q, src, mo, f, ij, root, gen, pose, False, np.zeros((1, 4, 4, 1)).transpose(3, 0, 2, 1))  # batch
    it = np.array([[0, -1]], dtype=np.int64)
    k.twists(out, np.zeros((1, 1)), np.zeros((1, 6)), it, 0, np.zeros((1, 1, 6)), False, np.zeros((1, 1, 6)))
    return True


def use_kernel(enabled: bool | None) -> None:
    """Force the numpy path (False), the kernels if numba imports (True), or decide again on next use (None:
    also forgets :func:`select`'s choice)."""
    _state.clear()
    if enabled is None:
        _chosen.clear()
    elif enabled is False:
        _state["k"] = None
    else:
        _state["k"] = _load()[0]


@dataclass
class KernelConstants:
    f: FloatArray  # (njoints, 4, 3, 4)
    ij: IntArray  # (njoints, 3): kind, qa column, parent link
    root: FloatArray  # (nroot, 3, 4)
    pose: FloatArray  # (4, 4) X_world_root
    has_generic: bool
    no_gen: FloatArray  # (1, 1, 3, 4) placeholder when there is no generic joint
    s: FloatArray  # (njoints, 6): child-frame twist per unit rate
    it: IntArray  # (njoints, 2): va column (-1 fixed, -2 generic), parent link
    no_xg: FloatArray  # (1, 1, 6) placeholder
    src: IntArray  # (nqa,) the q column of each qa entry ...
    mo: FloatArray  # (2, nqa) ... times mo[0] plus mo[1] (mimic); None below: qa computed by numpy
    affine: bool  # src/mo hold the mimic arithmetic (no mimic chain, no generic joint)
    id_src: IntArray  # (nqa,) identity: for a qa computed by numpy
    id_mo: FloatArray  # (2, nqa) ones, zeros
    link_template: FloatArray  # (nlinks, 4, 4) zeros and the bottom rows [0, 0, 0, 1]


def constants(tree: CompiledTree, twist_s: FloatArray, twist_col: IntArray,
              affine: tuple[NDArray[np.intp], FloatArray, FloatArray] | None) -> KernelConstants:
    """The kernels' constants of ``tree`` (cached on it); ``twist_s`` ``(2, 3, njoints, 1)`` and
    ``twist_col`` (``nva``: no rate) are the one-coordinate joints' twists (``fk._twist_kernel``)."""
    cached = tree._cache.get("kernel")
    if isinstance(cached, KernelConstants):
        return cached
    nj = tree.njoints
    f = np.zeros((nj, 4, 3, 4))
    ij = np.zeros((nj, 3), dtype=np.int64)
    ij[:, 0] = codes.GENERIC
    ij[:, 2] = np.where(tree.joint_parent < 0, -1, tree.joint_parent)  # tree.ROOT: the root frame
    if tree.fixed_joints.size:
        f[tree.fixed_joints, 0] = tree.fixed_x[..., 0].transpose(2, 0, 1)
        ij[tree.fixed_joints, 0] = codes.FIXED
    for g in tree.rotary:
        for n, m in enumerate((g.m02, g.m1, g.m2) + (() if g.m3 is None else (g.m3,))):
            f[g.joints, n] = m[..., 0].transpose(2, 0, 1)
        ij[g.joints, 0] = codes.ROTARY if g.m3 is None else codes.SCREW
        ij[g.joints, 1] = g.col
    if tree.prismatic is not None:
        p = tree.prismatic
        f[p.joints, 0, :, :3] = p.rot[..., 0].transpose(2, 0, 1)
        f[p.joints, 0, :, 3] = p.t0[..., 0].T
        f[p.joints, 1, :, 3] = p.d[..., 0].T
        ij[p.joints, 0] = codes.PRISMATIC
        ij[p.joints, 1] = p.col
    has_generic = bool(np.any(ij[:, 0] == codes.GENERIC))
    root = np.ascontiguousarray(tree.root_poses[:, :3, :]) if tree.nroot else np.zeros((0, 3, 4))
    s = np.ascontiguousarray(twist_s[..., 0].transpose(2, 0, 1).reshape(nj, 6))
    it = np.zeros((nj, 2), dtype=np.int64)
    it[:, 0] = np.where(twist_col < tree.nva, twist_col, -1)
    it[ij[:, 0] == codes.GENERIC, 0] = -2
    it[:, 1] = ij[:, 2]
    id_src = np.arange(tree.nqa, dtype=np.int64)
    id_mo = np.zeros((2, tree.nqa))
    id_mo[0] = 1.0
    use = affine is not None and not has_generic
    src, mo = id_src, id_mo
    if affine is not None and use:
        src, mo = affine[0].astype(np.int64), np.ascontiguousarray(np.stack([affine[1], affine[2]]))
    template = np.zeros((tree.nlinks, 4, 4))
    template[:, 3, 3] = 1.0
    consts = KernelConstants(f, ij, root, np.ascontiguousarray(tree.pose, dtype=np.float64), has_generic,
                             np.zeros((1, 1, 3, 4)), s, it, np.zeros((1, 1, 6)), src, mo, use, id_src, id_mo,
                             template)
    tree._cache["kernel"] = consts
    return consts
