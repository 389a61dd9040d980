"""Mimic joints: the assignments ``qa[dst] = qa[src] * multiplier + offset`` grouped in dependency order."""

from __future__ import annotations

import math

import numpy as np
from numpy.typing import NDArray

from robot_state_format.errors import KinematicsError
from robot_state_format.kinematics.compiled_tree import MimicLevel
from robot_state_format.model.types import Joint, JointType, Model

IntArray = NDArray[np.intp]

__all__ = ["compile_mimic"]


def compile_mimic(
    model: Model, joint_order: list[Joint], jidx: dict[str, int], joint_qa: IntArray, joint_va: IntArray
) -> tuple[list[MimicLevel], list[MimicLevel], set[str], IntArray]:
    """Mimic assignments grouped in dependency order; followers whose every coordinate mimics."""
    scalar = {JointType.BALL, JointType.FLOATING}
    entries: dict[int, tuple[int, int, float, float, str]] = {}  # dst qa -> (src qa, src va, m, o, joint)
    dst_va: dict[int, int] = {}
    counted: dict[str, set[int]] = {}
    qa, va = joint_qa.tolist(), joint_va.tolist()
    for k, j in enumerate(joint_order):
        if not j.mimic:
            continue
        for mim in j.mimic:
            if j.type in scalar or j.nq == 0:
                raise KinematicsError(f"joint {j.name!r}: a {j.type.value} joint cannot mimic another joint")
            leader_name = mim.joint
            if leader_name not in jidx:
                raise KinematicsError(f"joint {j.name!r} mimics unknown joint {leader_name!r} (not a tree joint)")
            lk = jidx[leader_name]
            leader = joint_order[lk]
            if leader.type in scalar or leader.nq == 0:
                raise KinematicsError(
                    f"joint {j.name!r} mimics {leader_name!r}, a {leader.type.value} joint without scalar positions"
                )
            if not (0 <= mim.dof < j.nq) or not (0 <= mim.leader_dof < leader.nq):
                raise KinematicsError(f"joint {j.name!r}: mimic coordinate index out of range")
            if not (math.isfinite(mim.multiplier) and math.isfinite(mim.offset)):
                raise KinematicsError(f"joint {j.name!r}: mimic multiplier and offset must be finite")
            dst = qa[k] + mim.dof
            src = qa[lk] + mim.leader_dof
            if dst in entries:
                raise KinematicsError(f"joint {j.name!r}: coordinate {mim.dof} mimics two joints")
            entries[dst] = (src, va[lk] + mim.leader_dof, float(mim.multiplier), float(mim.offset), j.name)
            dst_va[dst] = va[k] + mim.dof
            counted.setdefault(j.name, set()).add(mim.dof)
    for j in model.constraints.values():
        if j.mimic:
            pass  # constraints are not evaluated; their mimic data stays in the Model
    # dependency levels (Kahn): an entry is ready when its source is not a pending destination
    depth: dict[int, int] = {}

    def level_of(first: int) -> int:
        """Follow the leaders up to one whose level is known (a chain of thousands of mimic joints is
        valid): no recursion."""
        path: list[int] = []
        on_path: set[int] = set()
        dst = first
        while dst not in depth and dst in entries:
            if dst in on_path:
                cyc = [entries[d][4] for d in path[path.index(dst):]] + [entries[dst][4]]
                raise KinematicsError(f"mimic cycle: {' -> '.join(cyc)}")
            path.append(dst)
            on_path.add(dst)
            dst = entries[dst][0]
        lv = depth.get(dst, -1)  # a source that mimics nothing sits below level 0
        for d in reversed(path):
            lv += 1
            depth[d] = lv
        return depth[first]

    for dst in entries:
        level_of(dst)
    levels_q: list[MimicLevel] = []
    levels_v: list[MimicLevel] = []
    for lv in range(max(depth.values(), default=-1) + 1):
        ds = sorted(d for d in entries if depth[d] == lv)
        levels_q.append(MimicLevel(
            dst=np.array(ds, dtype=np.intp),
            src=np.array([entries[d][0] for d in ds], dtype=np.intp),
            mult=np.array([entries[d][2] for d in ds]),
            off=np.array([entries[d][3] for d in ds]),
        ))
        levels_v.append(MimicLevel(
            dst=np.array([dst_va[d] for d in ds], dtype=np.intp),
            src=np.array([entries[d][1] for d in ds], dtype=np.intp),
            mult=np.array([entries[d][2] for d in ds]),
            off=np.zeros(len(ds)),
        ))
    followers = {name for name, dofs in counted.items() if len(dofs) == joint_order[jidx[name]].nq}
    return levels_q, levels_v, followers, np.array(sorted(entries), dtype=np.intp)
