"""The player's clock: real (monotonic time, real sleeps) or fake (tests: time moves only when the
player sleeps, so wake-up times are exact and nothing waits for real).

A clock gives ``now()`` in seconds and ``sleep_until(t, wake)``: return at ``t`` at the latest, or
earlier once ``wake`` is set (pause, resume, stop: the player re-reads its state then).
"""

from __future__ import annotations

import threading
import time
from typing import Protocol

SPIN_S = 0.02  # below this the real clock sleeps plainly (most precise); above it, on the event


class Clock(Protocol):
    def now(self) -> float:
        """Seconds on this clock (only differences count)."""
        ...

    def sleep_until(self, t: float, wake: threading.Event) -> None:
        """Return at ``t`` at the latest, earlier once ``wake`` is set."""
        ...


class MonotonicClock:
    """``time.monotonic``: long waits on ``wake`` (pause and stop act at once), the last
    ``spin_s`` as a plain sleep (no spinning: the scheduler favours sleepers)."""

    def __init__(self, spin_s: float = SPIN_S) -> None:
        self.spin_s = spin_s

    def now(self) -> float:
        return time.monotonic()

    def sleep_until(self, t: float, wake: threading.Event) -> None:
        left = t - time.monotonic()
        if left <= 0:
            return
        if left > self.spin_s:
            wake.wait(left - self.spin_s)
        else:
            time.sleep(left)


class FakeClock:
    """A clock for tests: ``now()`` moves only through :meth:`sleep_until` (to ``t`` at once, unless
    ``wake`` is set) and :meth:`advance`; every sleep is logged in ``sleeps`` as ``(from, to)``.

    Sleeping while ``wake`` is set returns at once without moving time (the player then re-reads a
    pause, resume or stop).
    """

    def __init__(self, start: float = 100.0) -> None:
        self._now = start
        self.sleeps: list[tuple[float, float]] = []
        self._lock = threading.Lock()

    def now(self) -> float:
        with self._lock:
            return self._now

    def advance(self, dt: float) -> None:
        with self._lock:
            self._now += dt

    def sleep_until(self, t: float, wake: threading.Event) -> None:
        if wake.is_set():
            return
        with self._lock:
            if t > self._now:
                self.sleeps.append((self._now, t))
                self._now = t
