"""The pose kernels' per-level constants (:class:`~.plan.PosePlan`) of a compiled tree."""

from __future__ import annotations

import math

import numpy as np
from numpy.typing import NDArray

from robot_state_format.kinematics.compiled_tree import CompiledTree
from robot_state_format.kinematics.joint_axes import (
    EYE4,
    KIND_ALIGNED_X,
    KIND_ALIGNED_Y,
    KIND_ALIGNED_Z,
    KIND_GENERAL,
    KIND_GENERIC,
    KIND_PRISMATIC,
    JointInfo,
    skew,
)
from robot_state_format.kinematics.plan import LevelPlan, PosePlan, transposed
from robot_state_format.model.types import Joint, JointType

FloatArray = NDArray[np.float64]
IntArray = NDArray[np.intp]

__all__ = ["compile_plan"]


def compile_plan(tree: CompiledTree, joint_order: list[Joint], infos: list[JointInfo], origins: FloatArray,  # noqa: C901, PLR0915 (complexity 37, 128 statements): to be split, issue 38
                  offsets: FloatArray) -> PosePlan:
    """The per-level constants used by the pose kernels (see :mod:`.plan`)."""
    nl, nr, nj = tree.nlinks, tree.nroot, tree.njoints
    rotary = (JointType.REVOLUTE, JointType.CONTINUOUS, JointType.SCREW)
    rot_index: dict[int, int] = {}
    for k, j in enumerate(joint_order):
        if j.type in rotary:
            rot_index[k] = len(rot_index)
    # sin/cos sharing: a follower q = +-leader (offset 0) reuses the leader's values
    mimic = {}
    for mlv in tree.mimic_q:
        for d, sidx, m, o in zip(mlv.dst.tolist(), mlv.src.tolist(), mlv.mult.tolist(), mlv.off.tolist()):
            mimic[d] = (sidx, m, o)
    trig_cols: list[int] = []
    trig_row: dict[int, int] = {}
    trig_src: list[int] = []
    trig_sign: list[float] = []
    joint_qa = tree.joint_qa.tolist()
    for k in rot_index:
        col, sign = joint_qa[k], 1.0
        while col in mimic and mimic[col][1] in (1.0, -1.0) and mimic[col][2] == 0.0:
            sign *= mimic[col][1]
            col = mimic[col][0]
        if col not in trig_row:
            trig_row[col] = len(trig_cols)
            trig_cols.append(col)
        trig_src.append(trig_row[col])
        trig_sign.append(sign)

    # X_link = F_link @ D: what each held link's frame F still lacks (D = Q^T child_offset)
    kinds = [info.kind for info in infos]
    qmats = np.repeat(EYE4[None], nj, axis=0)
    for k, info in enumerate(infos):
        if info.q is not None:
            qmats[k] = info.q
    aligned_kinds = (KIND_ALIGNED_X, KIND_ALIGNED_Y, KIND_ALIGNED_Z)
    is_al = np.array([kd in aligned_kinds for kd in kinds], dtype=bool)
    held = np.array([info.held for info in infos], dtype=bool)
    link_d = np.repeat(EYE4[None], nl + 1, axis=0)
    if held.any():
        hk = np.nonzero(held)[0]
        link_d[nr + hk] = qmats[hk].transpose(0, 2, 1) @ offsets[hk]
    jpar = np.where(tree.joint_parent < 0, nl, tree.joint_parent)
    parent_held = np.zeros(nj, dtype=bool)
    if held.any():
        held_link = np.zeros(nl + 1, dtype=bool)
        held_link[nr:nl] = held
        parent_held = held_link[jpar]
    # a = D_parent @ origin (the parent is held as X D^-1); constant K = a @ Q (aligned) or a @ child_offset
    amat = origins.copy()
    if parent_held.any():
        ph = np.nonzero(parent_held)[0]
        amat[ph] = link_d[jpar[ph]] @ origins[ph]
    right = np.where(is_al[:, None, None], qmats, offsets)
    kmat = amat @ right if nj else np.zeros((0, 4, 4))
    kt = kmat.transpose(0, 2, 1)  # transposed constants (the layout of LevelPlan)
    is_generic = np.array([kd == KIND_GENERIC for kd in kinds], dtype=bool)
    any_generic = bool(is_generic.any())

    spans: list[tuple[int, int, IntArray]] = []
    if tree.level0 > nr:
        spans.append((nr, tree.level0, np.full(tree.level0 - nr, nl, dtype=np.intp)))
    spans.extend(tree.levels)
    levels: list[LevelPlan] = []
    par_all = np.where(tree.link_parent < 0, nl, tree.link_parent).astype(np.intp)
    for start, stop, _ in spans:
        par = par_all[start:stop]
        lk = kinds[start - nr:stop - nr]
        parl = par.tolist()

        first: dict[int, int] = {}
        last: dict[int, int] = {}
        for i, x in enumerate(lk):
            first.setdefault(x, i)
            last[x] = i

        def span(kd: int, start: int = start, first: dict[int, int] = first,
                 last: dict[int, int] = last) -> tuple[int, int]:
            return (start + first[kd], start + last[kd] + 1) if kd in first else (start, start)

        aligned: list[tuple[int, int, int, int, int, int]] = []
        for kd, (ca, cb) in zip(aligned_kinds, ((1, 2), (2, 0), (0, 1))):
            r0, r1 = span(kd)
            if r1 > r0:
                # rotary rows follow link order, so the group's sin/cos rows are contiguous
                aligned.append((r0, r1, ca, cb, rot_index[r0 - nr], rot_index[r1 - 1 - nr] + 1))
                for link in range(r0, r1):
                    trig_sign[rot_index[link - nr]] *= infos[link - nr].sign
        g_stack = np.array(kt[start - nr:stop - nr])
        if any_generic:
            gen_rows = is_generic[start - nr:stop - nr]
            if gen_rows.any():
                g_stack[gen_rows] = EYE4
        g_rows = g_stack.reshape(-1, 4)
        ge_dp: list[FloatArray] = []
        runs: list[tuple[int, int, int, FloatArray]] = []
        gr_runs: list[tuple[int, int, int, FloatArray, IntArray, IntArray, bool]] = []
        pr_runs: list[tuple[int, int, int, FloatArray, IntArray]] = []
        link = start
        while link < stop:
            kd, p = lk[link - start], parl[link - start]
            end = link
            while end < stop and lk[end - start] == kd and parl[end - start] == p:
                end += 1
            if kd != KIND_GENERIC:
                runs.append((link, end, p, g_rows[4 * (link - start):4 * (end - start)]))  # contiguous
                if kd < KIND_GENERAL:  # fixed or aligned: nothing more
                    link = end
                    continue
            ks = range(link - nr, end - nr)
            cols = tree.joint_qa[link - nr:end - nr]
            if kd == KIND_GENERIC:
                ge_dp.extend(link_d[p] for _ in ks)
            if kd == KIND_GENERAL:
                extra = []
                screw = False
                for k in ks:
                    j, a, b = joint_order[k], amat[k], offsets[k]
                    ax = np.array(infos[k].axis)
                    kk = skew(ax)
                    e = np.zeros((9, 4))
                    e[0:4] = transposed(a @ kk @ b)
                    e[4:8] = transposed(a @ kk @ kk @ b)
                    if j.type is JointType.SCREW:
                        pitch = float(j.screw_pitch) / (2.0 * math.pi)
                        e[8, :3] = a[:3, :3] @ ax * pitch
                        screw = screw or pitch != 0.0
                    extra.append(e)
                gr_runs.append((link, end, p, np.ascontiguousarray(np.concatenate(extra)),
                                np.array([rot_index[k] for k in ks], dtype=np.intp), cols, screw))
            elif kd == KIND_PRISMATIC:
                e1 = np.zeros((end - link + 1, 4))  # a zero last row keeps the product a gemm (see fk_numpy._poses_t)
                for i, k in enumerate(ks):
                    e1[i, :3] = amat[k][:3, :3] @ np.array(infos[k].axis)
                pr_runs.append((link, end, p, e1, cols))
            link = end
        ge0, ge1 = span(KIND_GENERIC)
        ge_const = None
        if ge_dp and not all(np.array_equal(x, EYE4) for x in ge_dp):
            ge_const = np.ascontiguousarray(np.stack([x[:3, :] for x in ge_dp], axis=-1)[..., None])
        levels.append(LevelPlan(
            start=start, stop=stop, par=par, runs=runs, aligned=aligned, general=gr_runs, prismatic=pr_runs,
            generic=(ge0, ge1), g_stack=g_stack, ge_dp=ge_const,
        ))
    for lv in levels:
        lv.rest = bool(lv.general or lv.prismatic or lv.generic[1] > lv.generic[0])
    sign_arr = np.array(trig_sign)
    src_arr = np.array(trig_src, dtype=np.intp)
    identity_src = trig_src == list(range(len(trig_src)))
    corr_ranges: list[tuple[int, int, FloatArray]] = []
    if held.any():
        hl = (nr + np.nonzero(held)[0]).tolist()
        r0 = hl[0]
        for i, nxt in zip(hl, hl[1:] + [-1]):
            if nxt != i + 1:
                corr_ranges.append((r0, i + 1, np.ascontiguousarray(link_d[r0:i + 1].transpose(0, 2, 1))))
                r0 = nxt
    return PosePlan(
        nlinks=nl,
        nroot=nr,
        root_t=np.ascontiguousarray(tree.root_poses.transpose(0, 2, 1)[:, :, :3, None]),
        levels=levels,
        trig_cols=np.array(trig_cols, dtype=np.intp),
        trig_src=None if identity_src else src_arr,
        trig_sign=None if all(x == 1.0 for x in trig_sign) else sign_arr.reshape(-1, 1),
        has_generic=any(lv.generic[1] > lv.generic[0] for lv in levels),
        corr_ranges=corr_ranges,
        has_general=any(lv.general for lv in levels),
    )
