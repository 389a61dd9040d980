"""Both kinematics kernels in one bench process: the default (numpy) and the opt-in numba extra.

``numba_kernel()`` loads the compiled kernels (None when numba is not installed); ``using(k, fn)`` wraps
``fn`` so that each call runs with kernel ``k`` (None: numpy), so that the two can be timed in the same
interleaved rounds.  The switch is one dictionary store (``compiled``'s per-process choice).
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path
from types import ModuleType
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # this tree's package, as the benches use

from robot_state_format.kinematics import compiled


def numba_kernel() -> ModuleType | None:
    """The compiled kernels, warmed (None without numba); the process stays on numpy otherwise."""
    compiled.use_kernel(True)
    try:
        k = compiled.kernel()
        if k is not None:
            compiled.warm()
        return k
    finally:
        compiled.use_kernel(False)


def using(k: ModuleType | None, fn: Callable[[], Any]) -> Callable[[], Any]:
    def run() -> Any:
        compiled._state["k"] = k
        return fn()
    return run
