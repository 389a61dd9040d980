"""The kinematics default of one-shot commands: numpy, not the compiled kernels.

A command computes a configuration or two, for which loading numba (about 1-3 s) costs far more
than the numpy path; commands that reach the kinematics wrap their ``func`` in
:func:`numpy_kinematics` (``ROBOT_STATE_FORMAT_KERNEL=numba`` still wins).  This module, not
``cli/__init__.py``, imports the kinematics so that ``--help`` stays light.
"""

from __future__ import annotations

import argparse
import functools
from collections.abc import Callable

from robot_state_format.kinematics import compiled

Command = Callable[[argparse.Namespace], int]


def numpy_kinematics(func: Command) -> Command:
    """``func`` run with numpy kinematics by default, the previous default restored after it."""
    @functools.wraps(func)
    def run(args: argparse.Namespace) -> int:
        before = compiled.set_default(False)
        try:
            return int(func(args))
        finally:
            compiled.set_default(before)
    return run
