"""Throttled logging for the nodes, keyed per kind of message, without rclpy's per-call-site rules.

rclpy's logger remembers the severity (and the throttle options) of each *call site* (function,
file, line) and raises ``ValueError: Logger severity cannot be changed between calls`` when one
line logs at two severities, which once killed ``state_publisher`` inside a JointState callback.
So the nodes throttle here, per message kind (:class:`LogThrottle`), and emit through
:func:`emit`, where every severity has its own call site. No rclpy import: the logger is duck-typed
(anything with ``info`` / ``warning`` / ``error`` methods).
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from typing import Any

DEFAULT_PERIOD_S = 5.0
MAX_KEYS = 1000  # keys can hold joint names: the table is bounded


class LogThrottle:
    """At most one line per ``period_s`` for each key; repeats in between are counted."""

    def __init__(self, period_s: float = DEFAULT_PERIOD_S, clock: Callable[[], float] = time.monotonic) -> None:
        self.period_s = float(period_s)
        self._clock = clock
        self._seen: dict[str, tuple[float, int]] = {}

    def admit(self, key: str) -> tuple[bool, int]:
        """``(True, n)`` when a line for ``key`` may go out now (``n`` repeats were held back since
        the last one), ``(False, 0)`` when it is held back (and counted)."""
        now = self._clock()
        last, suppressed = self._seen.get(key, (-math.inf, 0))
        if now - last < self.period_s:
            self._seen[key] = (last, suppressed + 1)
            return False, 0
        if len(self._seen) >= MAX_KEYS:
            self._seen.clear()
        self._seen[key] = (now, 0)
        return True, suppressed

    def text(self, key: str, text: str | Callable[[], str]) -> str | None:
        """``text`` (with the count of held-back repeats) when it may be logged now, else None; a
        function giving the text is called only then."""
        ok, suppressed = self.admit(key)
        if not ok:
            return None
        if not isinstance(text, str):
            text = text()
        extra = f" ({suppressed} more like this in the last {self.period_s:.0f} s)" if suppressed else ""
        return text + extra


def emit(logger: Any, severity: str, text: str) -> None:
    """Log ``text`` at ``severity`` (``info``, ``warning`` or ``error``), one call site per severity."""
    if severity == "info":
        logger.info(text)
    elif severity == "warning":
        logger.warning(text)
    else:
        logger.error(text)


def throttled(throttle: LogThrottle, logger: Any, severity: str, key: str, text: str | Callable[[], str]) -> bool:
    """Log ``text`` at ``severity`` unless ``key`` was logged within the throttle period; never raises
    (a logging failure must not stop a node). True when the line went out.  ``text`` may be a function
    writing the line: called only when the line goes out."""
    try:
        line = throttle.text(key, text)
        if line is None:
            return False
        emit(logger, severity, line)
    except Exception:  # noqa: BLE001 a logging failure never stops the caller (a node)
        return False
    return True
