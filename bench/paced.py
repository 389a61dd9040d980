"""A stream sent at a fixed rate, shared by the benchmarks that feed a node JointStates."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any


def paced(seconds: float, rate: float, send: Callable[[], None], wait: Callable[[float], None],
          until: Callable[[], bool] | None = None, proc: Any = None) -> bool:
    """Call ``send`` ``rate`` times a second for ``seconds`` (or until ``until()``), ``wait(dt)`` in between
    (spinning the caller's node); whether ``until`` came. A stream that fell behind by more than 0.1 s
    (a loaded machine) goes on from now rather than bursting. ``proc``: a node process that must stay alive."""
    period = 1.0 / rate
    start = time.monotonic()
    k = 0
    while True:
        now = time.monotonic()
        if until is not None and until():
            return True
        if now - start >= seconds:
            return False
        if proc is not None and not proc.alive():
            raise RuntimeError(proc.describe())
        due = start + k * period
        if now >= due:
            send()
            k += 1
            if now - due > 0.1:
                k = int((now - start) / period) + 1
            continue
        wait(min(0.002, due - now))
