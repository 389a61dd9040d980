"""The state_publisher's 1 kHz path: one decoded JointState merged and its /tf written, in a few numpy calls.

:class:`HotPath` handles the common message, the one a joint-state publisher sends a thousand times a
second: the same name list as before (its plan cached per list), every name known or ignored, finite
values, a stamp newer than every stamp the cache holds, the clock going forward. It does what
:meth:`JointStateCache.update <robot_state_format.live.joint_cache.JointStateCache.update>` does for
such a message, merging through the cache's own
:meth:`~robot_state_format.live.joint_cache.JointStateCache.merge`, and writes the TF into a
:class:`~robot_state_format.ros.messages.PreparedTf` (the frame ids are in its buffer once) through a
:class:`~robot_state_format.ros.publisher_pose.TfWriter` (only the numbers the named joints move). Anything
else (a reset, a repeated or older stamp, a non-finite value, a quaternion or a mimic follower named,
duplicated names) is :data:`MISS`: the caller takes the general path, which handles and reports it.

The ``publish_frequency`` rule is robot_state_publisher's: a message is published when its stamp is at
least one period after the last published stamp of the least recently published joint it names
(every joint it names then gets this stamp); ``ignore_timestamp`` lifts it.
"""

from __future__ import annotations

import math
import sys
from collections.abc import Callable, Sequence
from typing import Final

import numpy as np
from numpy.typing import NDArray

from robot_state_format.live.cache_parts import Problem
from robot_state_format.live.joint_cache import JointStateCache
from robot_state_format.ros.messages import PreparedTf, TfEncoder
from robot_state_format.ros.publisher_pose import TfWriter
from robot_state_format.ros.publisher_scalar import SCALAR_MAX, ScalarTfWriter
from robot_state_format.ros.publisher_wire import Decoded

_MAX_PLANS = 64

WriterFactory = Callable[[PreparedTf, NDArray[np.intp], dict[int, tuple[float, float]]], TfWriter | None]
"""Makes the :class:`TfWriter` of one plan's slots (None: the plan writes :meth:`PreparedTf.write` instead)."""


class _Miss:
    """The type of :data:`MISS`."""

    __slots__ = ()


MISS: Final = _Miss()
"""What :meth:`HotPath.apply` returns for a message the general path must handle."""


class _Hot:
    """What one name list needs per message, against one compiled model."""

    __slots__ = ("bounds", "hi", "lim", "lo", "names", "plan", "scalar", "send", "send_list", "tf", "unknown",
                 "writer")

    def __init__(self, cache: JointStateCache, encoder: TfEncoder, names: tuple[str, ...],
                 writer: WriterFactory | None, pose7: Callable[[], NDArray[np.float64]]) -> None:
        plan = cache.plan(names)
        self.plan = plan
        n = len(names)
        self.send = plan.send
        self.tf: PreparedTf | None = encoder.prepared(plan.send) if len(plan.send) else None
        if len(plan.lim_src):
            all_limited = len(plan.lim_src) == n and bool((plan.lim_src == np.arange(n)).all())
            self.lim: NDArray[np.intp] | None = None if all_limited else plan.lim_src
            self.lo: NDArray[np.float64] | None = plan.lim_lo
            self.hi: NDArray[np.float64] | None = plan.lim_hi
        else:
            self.lim, self.lo, self.hi = None, None, None
        self.writer: TfWriter | None = None
        if self.tf is not None and writer is not None:
            q_of = dict(zip(plan.src.tolist(), plan.qdst.tolist(), strict=True))
            checked = {q_of[i]: (float(a), float(b))
                       for i, a, b in zip(plan.lim_src.tolist(), plan.lim_lo, plan.lim_hi, strict=True)}
            self.writer = writer(self.tf, plan.send, checked)
            if self.writer is not None:
                self.tf.write(pose7(), 0)  # the constant numbers (and frame ids) once; the writer keeps them
        self.scalar: ScalarTfWriter | None = None  # a short list: merged and written one float at a time
        self.bounds: list[tuple[float, float]] = []
        self.send_list: list[int] = plan.send.tolist()
        if self.writer is not None and n <= SCALAR_MAX and ScalarTfWriter.fits(self.writer):
            self.scalar = ScalarTfWriter(self.writer)
            # per entry: its limits, or the finite doubles (NaN and infinities fall outside either)
            self.bounds = [(-sys.float_info.max, sys.float_info.max)] * n
            for i, a, b in zip(plan.lim_src.tolist(), plan.lim_lo.tolist(), plan.lim_hi.tolist(), strict=True):
                self.bounds[i] = (a, b)
        self.unknown: Problem | None = None
        if plan.unknown:  # the same line as the general path's (one key per list of unknown names)
            shown = ", ".join(plan.unknown[:10]) + (f" and {len(plan.unknown) - 10} more"
                                                    if len(plan.unknown) > 10 else "")
            self.unknown = Problem("unknown:" + ",".join(plan.unknown[:10]),
                                   f"JointState joint(s) not in the model ignored: {shown}")

    @staticmethod
    def eligible(cache: JointStateCache, names: tuple[str, ...]) -> bool:
        plan = cache.plan(names)
        return bool(len(plan.src)) and not plan.quats and not len(plan.follower_send) and not plan.duplicates


class HotPath:
    """The common JointState against one runtime's cache (see the module text).

    ``pose7()``: rows ``x y z qx qy qz qw`` of every tree joint at the cache's q (the runtime's).
    After :meth:`apply`, :attr:`problems` holds what the message had wrong (limits, unknown names).
    """

    def __init__(self, cache: JointStateCache, encoder: TfEncoder,
                 pose7: Callable[[], NDArray[np.float64]], writer: WriterFactory | None = None) -> None:
        self.cache = cache
        self.writer = writer
        self.encoder = encoder
        self.pose7 = pose7
        self.problems: list[Problem] = []
        self._plans: dict[int, _Hot | None] = {}
        self._last: _Hot | None = None  # the plan that published last, at _last_stamp (its joints' stamp)
        self._last_stamp = -1

    def _hot(self, d: Decoded) -> _Hot | None:
        if d.key in self._plans:
            return self._plans[d.key]
        if len(self._plans) >= _MAX_PLANS:
            self._plans.clear()
        h = None
        if _Hot.eligible(self.cache, d.names):
            h = _Hot(self.cache, self.encoder, d.names, self.writer, self.pose7)
        self._plans[d.key] = h
        return h

    def apply(self, d: Decoded, now_ns: int) -> bytearray | _Miss | None:
        """Merge ``d``; the /tf message to publish now (a buffer rewritten by the next call), None when
        none is due, or :data:`MISS` (nothing done: the general path must take this message)."""
        h = self._hot(d)
        if h is None:
            return MISS
        c = self.cache
        stamp = d.stamp_ns
        if (stamp <= c.max_sent or stamp < c.max_value_stamp or stamp <= 0
                or (c.last_now_ns is not None and now_ns < c.last_now_ns)
                or (c.newest_ns is not None and stamp < c.newest_ns - c.jump_tolerance_ns)):
            return MISS
        if h.scalar is not None and self._merge_scalar(h, d):
            in_limits = True
        else:
            merged = self._merge(h, d)
            if merged is None:
                return MISS
            in_limits = merged
        c.last_now_ns = now_ns
        if h.tf is None:
            return None
        period = 0 if c.ignore_timestamp else c.publish_period_ns
        if period > 0:
            # the least recently published joint of the message: the plan's own last stamp when it
            # published last (all its joints then got that stamp), else read from the cache
            oldest = self._last_stamp if self._last is h and c.max_sent == self._last_stamp else \
                int(c.last_sent[h.send].min())
            if oldest >= 0 and stamp < oldest + period:
                return None
        self._last, self._last_stamp = h, stamp
        c.max_sent = stamp
        if h.scalar is not None:
            last_sent = c.views.last_sent
            for j in h.send_list:
                last_sent[j] = stamp
            return h.scalar.write(c.views.q, stamp, in_limits)
        c.last_sent[h.send] = stamp
        if h.writer is not None:
            return h.writer.write(c.q, stamp, in_limits)
        return h.tf.write(self.pose7(), stamp)

    def _merge_scalar(self, h: _Hot, d: Decoded) -> bool:
        """The message merged one float at a time when every value is finite and within its limits (no
        problem to report but unknown names); False (nothing done) otherwise."""
        pos = d.values(0)
        for v, (lo, hi) in zip(pos, h.bounds, strict=True):
            if not lo <= v <= hi:
                return False
        vel, eff = d.values(1), d.values(2)
        if (vel and not math.isfinite(sum(vel))) or (eff and not math.isfinite(sum(eff))):
            return False
        self.problems = [h.unknown] if h.unknown is not None else []
        self.cache.merge_values(h.plan, pos, vel, eff, d.stamp_ns)
        return True

    def _merge(self, h: _Hot, d: Decoded) -> bool | None:
        """The message merged with numpy, its problems in :attr:`problems`; whether every value checked is within
        its limits, or None (nothing done) for a value that is not finite."""
        pos, vel, eff = d.position, d.velocity, d.effort
        inside = None
        if h.lim is None and h.lo is not None and h.hi is not None:  # every entry limited: inside is finite too
            inside = (pos >= h.lo) & (pos <= h.hi)
            in_limits = bool(np.logical_and.reduce(inside))
        else:
            in_limits = False
        if (not in_limits and not math.isfinite(float(pos.sum()))) \
                or (len(vel) and not math.isfinite(float(vel.sum()))) \
                or (len(eff) and not math.isfinite(float(eff.sum()))):
            return None
        problems: list[Problem] = []
        self.problems = problems
        if h.unknown is not None:
            problems.append(h.unknown)
        if inside is not None:
            if not in_limits:
                problems.append(JointStateCache._limit_problem(d.names, h.plan, ~inside, pos.copy()))
        elif h.lo is not None and h.hi is not None:
            v = pos[h.lim]
            out = (v < h.lo) | (v > h.hi)
            in_limits = not out.any()
            if not in_limits:
                problems.append(JointStateCache._limit_problem(d.names, h.plan, out, v.copy()))
        else:
            in_limits = True  # nothing to check
        self.cache.merge(h.plan, pos, vel, eff, d.stamp_ns)  # the cache's own merge (its common case)
        return in_limits


def names_of(d: Decoded) -> Sequence[str]:
    """The names of a decoded message as the general path takes them."""
    return list(d.names)


__all__ = ["MISS", "HotPath", "names_of"]
