"""Real-time scheduling for playback, only when asked (``realtime_playback``), and undone after.

* :func:`raise_thread_priority`: SCHED_FIFO for the calling thread (the player: sub-millisecond
  wake-ups under load; it only ever sleeps between publications, so it cannot starve others);
* :class:`ProcessScheduling`: the calling thread (a node's executor, which shares the GIL with the
  player) at a real-time priority below the player's, and a short GIL switch interval for the
  process; :meth:`ProcessScheduling.restore` puts back exactly what :meth:`ProcessScheduling.apply`
  changed.
"""

from __future__ import annotations

import contextlib
import os
import sys
import threading
from dataclasses import dataclass

PLAYER_PRIORITY = 10
EXECUTOR_PRIORITY = 5
SWITCH_INTERVAL_S = 0.0002


def raise_thread_priority(priority: int = PLAYER_PRIORITY) -> str | None:
    """SCHED_FIFO for the calling thread when permitted; None, or why it was not."""
    try:
        prio = min(priority, os.sched_get_priority_max(os.SCHED_FIFO))
        os.sched_setscheduler(threading.get_native_id(), os.SCHED_FIFO, os.sched_param(prio))
    except (AttributeError, OSError) as exc:
        return f"no real-time priority for playback ({exc})"
    return None


@dataclass
class _Saved:
    switch_interval: float
    policy: int | None  # None: the scheduler was not changed
    priority: int


class ProcessScheduling:
    """Real-time settings of the process while playback runs (see the module text)."""

    def __init__(self) -> None:
        self._saved: _Saved | None = None
        self.note: str | None = None  # why the scheduler stayed as it was

    @property
    def applied(self) -> bool:
        return self._saved is not None

    def apply(self) -> None:
        if self._saved is not None:
            return
        saved = _Saved(sys.getswitchinterval(), None, 0)
        sys.setswitchinterval(SWITCH_INTERVAL_S)
        try:
            policy, priority = os.sched_getscheduler(0), os.sched_getparam(0).sched_priority
            os.sched_setscheduler(0, os.SCHED_FIFO, os.sched_param(EXECUTOR_PRIORITY))
            saved.policy, saved.priority = policy, priority
            self.note = None
        except (AttributeError, OSError) as exc:
            self.note = f"no real-time priority for the executor ({exc})"
        self._saved = saved

    def restore(self) -> None:
        saved, self._saved = self._saved, None
        if saved is None:
            return
        sys.setswitchinterval(saved.switch_interval)
        if saved.policy is not None:
            with contextlib.suppress(AttributeError, OSError):
                os.sched_setscheduler(0, saved.policy, os.sched_param(saved.priority))
