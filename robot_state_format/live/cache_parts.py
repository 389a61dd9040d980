"""The joint cache's parts: the :class:`Problem` lines it reports, the :class:`Update` it returns, the merge
plan of one name list (:class:`Plan`, with its indices as lists for the plain-float merge) and the cache's
arrays as memoryviews (:class:`CacheViews`)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from numpy.typing import NDArray

from robot_state_format.model.joint_limits import Range


class Problem:
    """Something wrong with one message: ``key`` groups repeats for throttled logging.

    ``text`` may be given as a function that writes it: it is called once, when the text is first
    read (a node at 1 kHz reads it only when its throttle lets a line out, so the line is not written
    a thousand times a second to be thrown away).
    """

    __slots__ = ("_text", "key")

    def __init__(self, key: str, text: str | Callable[[], str]) -> None:
        self.key = key
        self._text = text

    @property
    def text(self) -> str:
        t = self._text
        if not isinstance(t, str):
            t = self._text = t()
        return t

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Problem) and (self.key, self.text) == (other.key, other.text)

    def __hash__(self) -> int:
        return hash((self.key, self.text))

    def __repr__(self) -> str:
        return f"Problem(key={self.key!r}, text={self.text!r})"


@dataclass
class Update:
    """What the node must do after one message."""

    send: NDArray[np.intp]  # tree joint indices whose transform to publish now
    stamp_ns: int  # stamp of those transforms
    changed: bool = False  # any value changed (snapshot is due)
    problems: list[Problem] = field(default_factory=list)
    reset: str | None = None  # info line when time jumped backwards


@dataclass
class Slot:
    q: int
    v: int  # -1 when the dof has no velocity (quaternion w)
    moving: int  # index in moving_joint_names
    quat: int  # q index of the joint's quaternion start, or -1


@dataclass
class Plan:
    src: NDArray[np.intp]  # entry indices in the message arrays that carry a known dof
    qdst: NDArray[np.intp]
    vsrc: NDArray[np.intp]
    vdst: NDArray[np.intp]
    entry_moving: NDArray[np.intp]  # moving-joint index per src entry
    quats: tuple[int, ...]  # q start of every quaternion touched
    send: NDArray[np.intp]  # tree joints affected (itself + mimic followers), sorted
    follower_send: NDArray[np.intp]  # followers named in the message (republished from the leader)
    unknown: tuple[str, ...]
    duplicates: tuple[str, ...]
    lim_src: NDArray[np.intp]  # entry indices whose joint position has limits, and those limits
    lim_lo: NDArray[np.float64]
    lim_hi: NDArray[np.float64]
    epoch: int = -1  # cache epoch in which every joint of ``send`` was known to have a value
    whole: bool = False  # the message's entries are the q coordinates in order (src is 0..n-1)
    # out-of-limits pattern (``out.tobytes()``) -> (problem key, the <= 5 entries named, "and n more")
    limit_lines: dict[bytes, tuple[str, list[int], list[tuple[str, Range]], str]] = field(default_factory=dict)
    lists: PlanLists | None = None  # the index arrays as Python lists (merge_values), made on first use


@dataclass(frozen=True)
class PlanLists:
    """A plan's index arrays as lists of ints, for :meth:`JointStateCache.merge_values`."""

    q: list[tuple[int, int]]  # (entry, q index)
    v: list[tuple[int, int]]  # (entry, v index)
    moving: list[int]
    send: list[int]

    @staticmethod
    def of(plan: Plan) -> PlanLists:
        return PlanLists(list(zip(plan.src.tolist(), plan.qdst.tolist(), strict=True)),
                          list(zip(plan.vsrc.tolist(), plan.vdst.tolist(), strict=True)),
                          plan.entry_moving.tolist(), plan.send.tolist())


def array_view(a: NDArray[Any]) -> memoryview[Any]:
    """A memoryview of a 1-D contiguous array: its items as Python numbers (``ndarray.data``)."""
    view: memoryview[Any] = a.data
    return view


@dataclass(frozen=True)
class CacheViews:
    """The cache's arrays as memoryviews of the same memory: one number read or written without a numpy
    call (made again with the arrays, by :meth:`JointStateCache.reset`)."""

    q: memoryview[float]
    v: memoryview[float]
    effort: memoryview[float]
    value_stamp: memoryview[int]
    last_sent: memoryview[int]
    has_velocity: memoryview[bool]
    has_effort: memoryview[bool]


__all__ = ["CacheViews", "Plan", "PlanLists", "Problem", "Slot", "Update", "array_view"]
