"""Per-joint state cache for the state publisher: merge JointState messages into q, v, effort.

No rclpy here: the node hands plain arrays in and gets back which tree joints to publish.
Rules (documented in docs/state_publisher.md):

* partial messages merge; joints absent from a message keep their last value;
* mimic followers are always computed from their leader (transitively); a follower's own value in
  a message is ignored, but naming it makes its transform (re)published from the cached leader;
* multi-DOF joints are set through named sub-joints ``<joint>/<dof>`` (MoveIt's names):
  floating ``trans_x trans_y trans_z rot_x rot_y rot_z rot_w``, planar ``x y theta``,
  ball ``rot_x rot_y rot_z rot_w``, universal/revolute2 ``axis1 axis2``; quaternions are normalised;
* a stamp is never sent twice for a joint; with a publish period, a message's transforms are sent
  when its stamp is at least one period after the last sent stamp of the least recently sent joint it
  affects (robot_state_publisher's rule), and then every joint it affects is sent;
  ``ignore_timestamp`` lifts that throttle and keeps the message stamps (as robot_state_publisher);
* a stamp older than the newest seen by more than ``jump_tolerance_ns`` (bag loop, simulation
  reset), or the node clock going backwards, resets the cache (one info line);
* bad input never raises: the message (or the bad entries) is dropped and a :class:`Problem` says why;
* a position outside its joint's limits is used as given (as robot_state_publisher does), and named in
  a :class:`Problem` (key ``limits:<joints>``, so the node's throttled warning is per set of joints).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np
from numpy.typing import NDArray

from robot_state_format.live.cache_parts import CacheViews, Plan, PlanLists, Problem, Slot, Update, array_view
from robot_state_format.model.joint_limits import Range, describe, position_ranges
from robot_state_format.model.types import JointType, Model
from robot_state_format.playback.sub_joints import MULTI_DOF_NAMES

_QUAT_OFFSET = {JointType.FLOATING: 3, JointType.BALL: 0}
_PLAN_CACHE_SIZE = 64


def _short(names: Sequence[str], shown: int = 10) -> str:
    """Joint names for a log line: the first ``shown``, then how many more (messages can be huge)."""
    return ", ".join(names[:shown]) + (f" and {len(names) - shown} more" if len(names) > shown else "")


def _due(last_sent: NDArray[np.int64], stamp: int, period: int) -> bool:
    """robot_state_publisher's rule: a message is published when its stamp is at least one period after
    the last published stamp of the least recently published joint it names (never published: due)."""
    oldest = int(last_sent.min()) if len(last_sent) else -1
    return oldest < 0 or stamp >= oldest + period


def _put(pairs: list[tuple[int, int]], values: Sequence[float], has: memoryview[bool],
         target: memoryview[float]) -> None:
    """``target[dst] = values[src]`` and ``has[dst] = True`` for each ``(src, dst)``."""
    for src, dst in pairs:
        has[dst] = True
        target[dst] = values[src]


class JointStateCache:
    """Holds the current q, v and effort of a compiled tree and decides what TF to publish.

    ``tree`` is a :class:`robot_state_format.kinematics.tree.CompiledTree` (duck-typed: it needs
    ``joint_names``, ``moving_joint_names``, ``q_slice``, ``v_slice``, ``nq``, ``nv``, ``neutral``).
    """

    def __init__(self, model: Model, tree: Any, *, publish_period_ns: int = 0,
                 ignore_timestamp: bool = False, jump_tolerance_ns: int = 1_000_000_000) -> None:
        self.model = model
        self.tree = tree
        self.publish_period_ns = int(publish_period_ns)
        self.ignore_timestamp = bool(ignore_timestamp)
        self.jump_tolerance_ns = int(jump_tolerance_ns)
        tree_joints: list[str] = list(tree.joint_names)
        self._tree_index = {n: i for i, n in enumerate(tree_joints)}
        self.moving_names: list[str] = list(tree.moving_joint_names)
        moving_index = {n: i for i, n in enumerate(self.moving_names)}

        # Mimic: follower -> leader (model-relative names); affected tree joints per moving joint.
        followers: dict[str, list[str]] = {}
        for name in tree_joints:
            joint = model.joints.get(name)
            if joint is not None and joint.mimic:
                followers.setdefault(joint.mimic[0].joint, []).append(name)
        # Followers all of whose coordinates are mimicked are not in q (the tree's rule).
        self.mimic_followers = set(getattr(tree, "mimic_followers",
                                           [n for lst in followers.values() for n in lst])) - set(tree.moving_joint_names)

        def closure(name: str) -> list[int]:
            out, stack, seen = [], [name], set()
            while stack:
                n = stack.pop()
                if n in seen:
                    continue
                seen.add(n)
                if n in self._tree_index:
                    out.append(self._tree_index[n])
                stack.extend(followers.get(n, ()))
            return out

        self._affected: list[NDArray[np.intp]] = [np.array(sorted(closure(n)), dtype=np.intp)
                                                   for n in self.moving_names]
        self._follower_affected = {n: np.array(sorted(closure(n)), dtype=np.intp)
                                   for n in self.mimic_followers}
        # Root leader of each follower (moving index), to know whether it has a value.
        self._follower_root: dict[str, int] = {}
        for n in self.mimic_followers:
            lead, hops = n, 0
            while lead in self.mimic_followers and hops <= len(tree_joints):
                lead = model.joints[lead].mimic[0].joint
                hops += 1
            if lead in moving_index:
                self._follower_root[n] = moving_index[lead]

        self._slots: dict[str, Slot] = {}
        self._bounds: dict[int, Range] = {}  # q index -> (lower, upper) of the limited positions
        self.fixed_or_ignored: set[str] = set()
        for name in tree_joints:
            joint = model.joints.get(name)
            if joint is None:
                continue
            if name in moving_index:
                qs, vs = tree.q_slice(name), tree.v_slice(name)
                mi = moving_index[name]
                for k, bounds in enumerate(position_ranges(joint)):
                    if bounds is not None:
                        self._bounds[qs.start + k] = bounds
                quat = qs.start + _QUAT_OFFSET[joint.type] if joint.type in _QUAT_OFFSET else -1
                if joint.type in MULTI_DOF_NAMES:
                    for suffix, qi, vi in MULTI_DOF_NAMES[joint.type]:
                        self._add_slot(f"{name}/{suffix}", Slot(qs.start + qi,
                                                                 vs.start + vi if vi is not None else -1,
                                                                 mi, quat))
                else:
                    self._add_slot(name, Slot(qs.start, vs.start, mi, -1))
            elif name not in self.mimic_followers:
                self.fixed_or_ignored.add(name)
        self._plans: dict[tuple[str, ...], Plan] = {}
        self.reset()

    def _add_slot(self, name: str, slot: Slot) -> None:
        self._slots[name] = slot
        scoped = self.model.scoped(name)
        if scoped != name and scoped not in self._slots:
            self._slots[scoped] = slot

    # -- state -------------------------------------------------------------------------------
    def reset(self) -> None:
        """Forget every value and stamp (start of the node, or time jumped backwards)."""
        self.q: NDArray[np.float64] = np.asarray(self.tree.neutral(), dtype=np.float64).copy()
        self.v: NDArray[np.float64] = np.zeros(int(self.tree.nv))
        self.effort: NDArray[np.float64] = np.zeros(int(self.tree.nv))
        nt, nm = len(self._tree_index), len(self.moving_names)
        self.has_value = np.zeros(nm, dtype=bool)  # per moving joint
        self.value_stamp = np.full(nm, np.iinfo(np.int64).min, dtype=np.int64)
        self.last_sent = np.full(nt, -1, dtype=np.int64)  # per tree joint, ns
        self.tree_has_value = np.zeros(nt, dtype=bool)
        self.newest_ns: int | None = None
        self.last_now_ns: int | None = None
        self.stamp_ns: int = 0  # stamp of the newest applied state
        self.max_value_stamp = int(np.iinfo(np.int64).min)  # max of value_stamp
        self.max_sent = -1  # max of last_sent
        self._epoch = getattr(self, "_epoch", 0) + 1
        self.seen_velocity = False  # any velocity / effort received since the last reset
        self.seen_effort = False
        # per velocity coordinate: reported by some JointState (a value nobody measured is absent, not 0)
        self.has_velocity = np.zeros(int(self.tree.nv), dtype=bool)
        self.has_effort = np.zeros(int(self.tree.nv), dtype=bool)
        self.views = CacheViews(array_view(self.q), array_view(self.v), array_view(self.effort), array_view(self.value_stamp),
                                array_view(self.last_sent), array_view(self.has_velocity), array_view(self.has_effort))

    def reset_stamps(self) -> None:
        """Forget the stamps (value and sent), keep the values."""
        self.value_stamp[:] = np.iinfo(np.int64).min
        self.last_sent[:] = -1
        self.newest_ns = None
        self.max_value_stamp = int(np.iinfo(np.int64).min)
        self.max_sent = -1

    def missing_joints(self) -> list[str]:
        """Moving joints no JointState has reported since the last reset (mimic followers are not
        listed: they follow their leader). Empty when the state is complete (also for a model without
        moving joints)."""
        return [self.moving_names[int(i)] for i in np.flatnonzero(~self.has_value)]

    @property
    def complete(self) -> bool:
        """Every moving joint has a measured value."""
        return bool(self.has_value.all())

    def joint_has_value(self, name: str) -> bool:
        i = self._tree_index.get(name)
        return bool(self.tree_has_value[i]) if i is not None else False

    # -- plans -------------------------------------------------------------------------------
    def _plan(self, names: tuple[str, ...]) -> Plan:
        plan = self._plans.get(names)
        if plan is not None:
            return plan
        src, qdst, vsrc, vdst, entry_moving = [], [], [], [], []
        quats: set[int] = set()
        send: set[int] = set()
        fsend: set[int] = set()
        unknown: list[str] = []
        seen: set[str] = set()
        dups: list[str] = []
        lim_src: list[int] = []
        lim: list[Range] = []
        for i, name in enumerate(names):
            if name in seen:
                dups.append(name)
            seen.add(name)
            slot = self._slots.get(name)
            if slot is not None:
                src.append(i)
                qdst.append(slot.q)
                if slot.q in self._bounds:
                    lim_src.append(i)
                    lim.append(self._bounds[slot.q])
                entry_moving.append(slot.moving)
                if slot.v >= 0:
                    vsrc.append(i)
                    vdst.append(slot.v)
                if slot.quat >= 0:
                    quats.add(slot.quat)
                send.update(self._affected[slot.moving].tolist())
            elif name in self.mimic_followers:
                fsend.update(self._follower_affected[name].tolist())
            elif name not in self.fixed_or_ignored:
                unknown.append(name)
        ip = np.intp
        plan = Plan(np.array(src, ip), np.array(qdst, ip), np.array(vsrc, ip), np.array(vdst, ip),
                     np.array(entry_moving, ip), tuple(sorted(quats)), np.array(sorted(send), ip),
                     np.array(sorted(fsend - send), ip), tuple(unknown), tuple(dups), np.array(lim_src, ip),
                     np.array([b[0] for b in lim], dtype=np.float64), np.array([b[1] for b in lim], dtype=np.float64))
        plan.whole = len(plan.src) == len(names) and bool((plan.src == np.arange(len(names))).all())
        if len(self._plans) >= _PLAN_CACHE_SIZE:
            self._plans.clear()
        self._plans[names] = plan
        return plan

    @staticmethod
    def _limit_problem(names: Sequence[str], plan: Plan, out: NDArray[np.bool_], v: NDArray[np.float64]) -> Problem:
        pattern = out.tobytes()
        known = plan.limit_lines.get(pattern)
        if known is None:  # a repeated pattern (the usual case at 1 kHz) costs one dictionary look-up
            idx = np.flatnonzero(out).tolist()
            key = "limits:" + ",".join([names[i] for i in plan.lim_src[idx[:10]].tolist()])
            shown = idx[:5]
            known = (key, shown, [(names[i], (lo, hi)) for i, lo, hi in zip(
                plan.lim_src[shown].tolist(), plan.lim_lo[shown].tolist(), plan.lim_hi[shown].tolist())],
                f" and {len(idx) - 5} more" if len(idx) > 5 else "")
            if len(plan.limit_lines) >= _PLAN_CACHE_SIZE:
                plan.limit_lines.clear()
            plan.limit_lines[pattern] = known
        key, shown, named, more = known

        def text() -> str:  # written when read (see Problem); ``v`` is this message's own copy
            lines = [describe(name, x, bounds) for (name, bounds), x in zip(named, v[shown].tolist())]
            return "JointState value(s) outside the joint limits, used as given: " + "; ".join(lines) + more
        return Problem(key, text)

    # -- the hot path --------------------------------------------------------------------------
    def update(self, names: Sequence[str], position: Sequence[float] | NDArray[np.float64],  # noqa: C901, PLR0915 (complexity 28, 91 statements): to be split, issue 38
               velocity: Sequence[float] | NDArray[np.float64], effort: Sequence[float] | NDArray[np.float64],
               stamp_ns: int, now_ns: int) -> Update:
        """Merge one JointState; return which tree joints to publish, at which stamp."""
        empty = np.empty(0, dtype=np.intp)
        n = len(names)
        if n == 0:
            return Update(empty, 0, problems=[Problem("empty", "empty JointState (no joint names): dropped")])
        pos = np.asarray(position, dtype=np.float64)
        vel = np.asarray(velocity, dtype=np.float64)
        eff = np.asarray(effort, dtype=np.float64)
        for label, arr, required in (("position", pos, True), ("velocity", vel, False), ("effort", eff, False)):
            if len(arr) != n and (required or len(arr) != 0):
                need = f"{n}" if required else f"0 or {n}"
                return Update(empty, 0, problems=[Problem(
                    f"length-{label}", f"JointState {label} has {len(arr)} values for {n} names "
                    f"(expected {need}): message dropped")])
        plan = self._plan(tuple(names))
        problems: list[Problem] = []
        if plan.duplicates:
            return Update(empty, 0, problems=[Problem(
                "duplicate", f"JointState names joint(s) {_short(sorted(set(plan.duplicates)))} "
                "more than once: message dropped")])
        if plan.unknown:  # a message may name 1e5 unknown joints: the key and the line stay short
            shown = ", ".join(plan.unknown[:10]) + (f" and {len(plan.unknown) - 10} more"
                                                    if len(plan.unknown) > 10 else "")
            problems.append(Problem("unknown:" + ",".join(plan.unknown[:10]),
                                    f"JointState joint(s) not in the model ignored: {shown}"))
        if len(plan.lim_src):
            v = pos[plan.lim_src]
            out = (v < plan.lim_lo) | (v > plan.lim_hi)
            if out.any():  # used as given (as robot_state_publisher does), named in a throttled warning
                problems.append(self._limit_problem(names, plan, out, v))

        # Time: a zero stamp means now; a jump backwards resets. (ignore_timestamp only lifts the
        # throttle below: the transforms keep the message stamp, as robot_state_publisher's do.)
        reset_line = None
        stamp = int(now_ns) if stamp_ns <= 0 else int(stamp_ns)
        if self.last_now_ns is not None and now_ns < self.last_now_ns:
            reset_line = (f"clock jumped backwards by {(self.last_now_ns - now_ns) / 1e9:.3f} s: "
                          "joint state and TF stamps reset")
            self.reset()
        elif self.newest_ns is not None and stamp < self.newest_ns - self.jump_tolerance_ns:
            if self.ignore_timestamp:
                # timestamps are not trusted to order the state (e.g. publishers on different clocks):
                # forget the stamps, keep every joint's value
                reset_line = (f"JointState stamp jumped backwards by {(self.newest_ns - stamp) / 1e9:.3f} s: "
                              "TF stamps reset (joint values kept: ignore_timestamp)")
                self.reset_stamps()
            else:
                reset_line = (f"JointState stamp jumped backwards by {(self.newest_ns - stamp) / 1e9:.3f} s: "
                              "joint state and TF stamps reset")
                self.reset()
        self.last_now_ns = int(now_ns)

        if (len(plan.src) and not plan.quats and not len(plan.follower_send) and stamp >= self.max_value_stamp
                and math.isfinite(float(pos.sum())) and (not len(vel) or math.isfinite(float(vel.sum())))
                and (not len(eff) or math.isfinite(float(eff.sum())))):
            return self._fast_update(plan, pos, vel, eff, stamp, problems, reset_line)

        src, qdst, entry_moving = plan.src, plan.qdst, plan.entry_moving
        values = pos[src]
        finite = np.isfinite(values)
        fresh = self.value_stamp[entry_moving] <= stamp  # older data never overwrites newer
        keep = finite & fresh
        subset = not bool(keep.all())
        if not bool(finite.all()):
            bad = [names[int(i)] for i in src[~finite]]
            problems.append(Problem("nonfinite", f"JointState non-finite position(s) dropped for {_short(bad)}"))
        if subset:
            src, qdst, entry_moving, values = src[keep], qdst[keep], entry_moving[keep], values[keep]
        changed = len(src) > 0
        if changed:
            old_quats = {s: self.q[s:s + 4].copy() for s in plan.quats}
            self.q[qdst] = values
            for s, old in old_quats.items():
                quat = self.q[s:s + 4]
                norm = float(np.sqrt(quat @ quat))
                if not norm > 1e-9:
                    self.q[s:s + 4] = old
                    problems.append(Problem("quaternion", "JointState quaternion of zero length dropped"))
                else:
                    quat /= norm
            self.has_value[entry_moving] = True
            self.value_stamp[entry_moving] = stamp
            self.max_value_stamp = max(self.max_value_stamp, stamp)
            if len(plan.vsrc):
                if len(vel):
                    self.seen_velocity = True
                    self.has_velocity[plan.vdst] = True
                    self._merge(self.v, vel, plan.vsrc, plan.vdst, names, src if subset else None, problems, "velocity")
                if len(eff):
                    self.seen_effort = True
                    self.has_effort[plan.vdst] = True
                    self._merge(self.effort, eff, plan.vsrc, plan.vdst, names, src if subset else None, problems,
                                "effort")
            if stamp > self.stamp_ns:
                self.stamp_ns = stamp
        if self.newest_ns is None or stamp > self.newest_ns:
            self.newest_ns = stamp

        # Which transforms to send: affected joints with a value, never the same stamp twice.
        if subset:
            moving = np.unique(entry_moving)
            cand = (np.unique(np.concatenate([self._affected[int(m)] for m in moving] + [plan.follower_send]))
                    if len(moving) else plan.follower_send)
        else:
            cand = plan.send if not len(plan.follower_send) else np.union1d(plan.send, plan.follower_send)
        if len(plan.follower_send) or subset:
            self.refresh_has_value()
        elif changed:
            self.tree_has_value[plan.send] = True
        if len(cand):
            cand = cand[self.tree_has_value[cand]]
            last = self.last_sent[cand]
            ok = last < stamp
            if self.publish_period_ns > 0 and not self.ignore_timestamp and not _due(last, stamp,
                                                                                     self.publish_period_ns):
                ok[:] = False
            cand = cand[ok]
            self.last_sent[cand] = stamp
            if len(cand):
                self.max_sent = max(self.max_sent, stamp)
        return Update(cand, stamp, changed, problems, reset_line)

    def _fast_update(self, plan: Plan, pos: NDArray[np.float64], vel: NDArray[np.float64],
                     eff: NDArray[np.float64], stamp: int, problems: list[Problem], reset_line: str | None) -> Update:
        """The common case with few numpy calls: all values finite, stamp not older than any value."""
        self.merge(plan, pos, vel, eff, stamp)
        cand = plan.send
        period = 0 if self.ignore_timestamp else self.publish_period_ns
        if not (self.max_sent < 0 or (stamp > self.max_sent and stamp >= self.max_sent + period)):
            last = self.last_sent[cand]
            ok = last < stamp
            if period > 0 and not _due(last, stamp, period):
                ok[:] = False
            cand = cand[ok]
        if len(cand):
            self.last_sent[cand] = stamp
            self.max_sent = max(self.max_sent, stamp)
        return Update(cand, stamp, True, problems, reset_line)

    def merge(self, plan: Plan, pos: NDArray[np.float64], vel: NDArray[np.float64], eff: NDArray[np.float64],
              stamp: int) -> None:
        """The values of one JointState through its plan (:meth:`plan`), in a few numpy assignments: the common
        case of :meth:`update` (every value finite, ``stamp`` not older than any value held, nothing reset) and the
        state_publisher's 1 kHz path, which checks the same conditions before calling it."""
        self.q[plan.qdst] = pos if plan.whole else pos[plan.src]
        em = plan.entry_moving
        self.value_stamp[em] = stamp
        if plan.epoch != self._epoch:  # once per plan and epoch: every joint it names now has a value
            self.has_value[em] = True
            self.tree_has_value[plan.send] = True
            plan.epoch = self._epoch
        self.max_value_stamp = stamp
        if len(plan.vsrc):
            if len(vel):
                self.seen_velocity = True
                self.has_velocity[plan.vdst] = True
                self.v[plan.vdst] = vel[plan.vsrc]
            if len(eff):
                self.seen_effort = True
                self.has_effort[plan.vdst] = True
                self.effort[plan.vdst] = eff[plan.vsrc]
        if stamp > self.stamp_ns:
            self.stamp_ns = stamp
        if self.newest_ns is None or stamp > self.newest_ns:
            self.newest_ns = stamp

    def merge_values(self, plan: Plan, pos: Sequence[float], vel: Sequence[float], eff: Sequence[float],
                     stamp: int) -> None:
        """:meth:`merge` with the values as floats, one number at a time through :attr:`views`: for a short
        name list in the node process, cheaper than :meth:`merge`'s numpy calls (docs/performance.md); the
        same cache afterwards, bit for bit (test_state_publisher_scalar.py)."""
        lists = plan.lists
        if lists is None:
            lists = plan.lists = PlanLists.of(plan)
        views = self.views
        q = views.q
        for src, dst in lists.q:
            q[dst] = pos[src]
        value_stamp = views.value_stamp
        for m in lists.moving:
            value_stamp[m] = stamp
        if plan.epoch != self._epoch:  # once per plan and epoch: every joint it names now has a value
            self.has_value[plan.entry_moving] = True
            self.tree_has_value[plan.send] = True
            plan.epoch = self._epoch
        self.max_value_stamp = stamp
        if lists.v:
            if vel:
                self.seen_velocity = True
                _put(lists.v, vel, views.has_velocity, views.v)
            if eff:
                self.seen_effort = True
                _put(lists.v, eff, views.has_effort, views.effort)
        if stamp > self.stamp_ns:
            self.stamp_ns = stamp
        if self.newest_ns is None or stamp > self.newest_ns:
            self.newest_ns = stamp

    def plan(self, names: tuple[str, ...]) -> Plan:
        """The merge plan of one name list (cached per list)."""
        return self._plan(names)

    def _merge(self, target: NDArray[np.float64], arr: NDArray[np.float64], vsrc: NDArray[np.intp],
               vdst: NDArray[np.intp], names: Sequence[str], kept_src: NDArray[np.intp] | None,
               problems: list[Problem], what: str) -> None:
        """Velocities or efforts into ``target``; a non-finite entry keeps the old value, with a warning."""
        if len(arr) == 0:
            return
        if kept_src is not None:
            mask = np.isin(vsrc, kept_src)
            vsrc, vdst = vsrc[mask], vdst[mask]
        vals = arr[vsrc]
        ok = np.isfinite(vals)
        if ok.all():
            target[vdst] = vals
        else:
            target[vdst[ok]] = vals[ok]
            bad = sorted({names[int(i)] for i in vsrc[~ok]})
            problems.append(Problem(f"nonfinite_{what}",
                                    f"JointState non-finite {what}(s) dropped for {_short(bad)}"))

    def refresh_has_value(self) -> None:
        for m in np.flatnonzero(self.has_value):
            self.tree_has_value[self._affected[int(m)]] = True
        for name, root in self._follower_root.items():
            if self.has_value[root]:
                self.tree_has_value[self._tree_index[name]] = True

    # -- views for the snapshot ---------------------------------------------------------------
    def adopt(self, old: JointStateCache) -> None:
        """Take over what ``old`` (the cache of the previous model) knows, after a model change:
        the values and value stamps of the moving joints both models have (same name and type), the
        last sent stamp of every joint both trees have (so a repeated stamp is still never re-sent),
        and the clock bookkeeping."""
        for name in self.moving_names:
            if name not in old.moving_names or name not in old.model.joints:
                continue
            if old.model.joints[name].type is not self.model.joints[name].type:
                continue
            i_old, i_new = old.moving_names.index(name), self.moving_names.index(name)
            if old.has_value[i_old]:
                q, v, e = old.joint_values(name)
                self.q[self.tree.q_slice(name)] = q
                vs_old, vs_new = old.tree.v_slice(name), self.tree.v_slice(name)
                self.v[vs_new] = v
                self.effort[vs_new] = e
                self.has_velocity[vs_new] = old.has_velocity[vs_old]
                self.has_effort[vs_new] = old.has_effort[vs_old]
                self.has_value[i_new] = True
                self.value_stamp[i_new] = old.value_stamp[i_old]
        for name, i in self._tree_index.items():
            j = old._tree_index.get(name)
            if j is not None:
                self.last_sent[i] = old.last_sent[j]
        self.refresh_has_value()
        self.max_sent = int(self.last_sent.max()) if len(self.last_sent) else -1
        self.max_value_stamp = int(self.value_stamp.max()) if len(self.value_stamp) else self.max_value_stamp
        self.stamp_ns, self.newest_ns, self.last_now_ns = old.stamp_ns, old.newest_ns, old.last_now_ns
        self.seen_velocity, self.seen_effort = old.seen_velocity, old.seen_effort

    def velocities(self) -> NDArray[np.float64] | None:
        """The velocity vector when a JointState reported every velocity coordinate, else None: a
        velocity nobody reported is absent from snapshots (and so are the link twists), never 0."""
        return self.v if self.seen_velocity and bool(self.has_velocity.all()) else None

    def efforts(self) -> NDArray[np.float64] | None:
        """The effort vector when every coordinate was reported, else None (see :meth:`velocities`)."""
        return self.effort if self.seen_effort and bool(self.has_effort.all()) else None

    def joint_values(self, name: str) -> tuple[NDArray[np.float64], NDArray[np.float64], NDArray[np.float64]]:
        """q, v, effort of one moving (non-mimic) joint."""
        qs, vs = self.tree.q_slice(name), self.tree.v_slice(name)
        return self.q[qs], self.v[vs], self.effort[vs]
