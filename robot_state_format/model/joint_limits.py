"""Joint position limits as ranges per degree of freedom, and the warning for a value outside them.

Values outside the limits are used as given (as robot_state_publisher and the simulators' state files
do): every place a joint value enters (the command line's ``--positions``, JointState messages into
``state_publisher``) names it in a warning. Continuous joints, joints without ``<limit>`` and a missing
or infinite bound have no limit on that side; a ``lower > upper`` pair (SDFormat's way of saying
"unlimited" in some files) limits nothing.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from typing import Any

from robot_state_format.model.types import Joint, JointType, Model

Range = tuple[float, float]

_LIMITED = {JointType.REVOLUTE: 1, JointType.PRISMATIC: 1, JointType.SCREW: 1,
            JointType.UNIVERSAL: 2, JointType.REVOLUTE2: 2}


def position_ranges(joint: Joint) -> tuple[Range | None, ...]:
    """``(lower, upper)`` of each limited position of ``joint`` (``-inf``/``inf`` for an open side), None
    for a position without limits; empty for joint types that have none (continuous, ball, ...)."""
    n = _LIMITED.get(joint.type, 0)
    out: list[Range | None] = []
    for limits in (joint.limits, joint.limits2)[:n]:
        lo = limits.lower if limits is not None and limits.lower is not None else -math.inf
        hi = limits.upper if limits is not None and limits.upper is not None else math.inf
        out.append((lo, hi) if lo <= hi and (math.isfinite(lo) or math.isfinite(hi)) else None)
    return tuple(out)


def _num(x: float) -> str:
    """Short where that loses nothing (``2``, ``-1.5``), else every digit (``1.0000001``)."""
    short = f"{x:g}"
    return short if float(short) == x else repr(x)


def describe(name: str, value: float, bounds: Range) -> str:
    """``joint 'j' = 2 is outside its limits [-1, 1]``."""
    return f"joint {name!r} = {_num(value)} is outside its limits [{_num(bounds[0])}, {_num(bounds[1])}]"


def outside(bounds: Range | None, value: float) -> bool:
    return bounds is not None and (value < bounds[0] or value > bounds[1])


def limit_warnings(model: Model, values: Mapping[str, Any], resolve: Callable[[str], str] | None = None
                   ) -> list[str]:
    """One line per given value outside its joint's limits (names as given; ``resolve`` maps a given
    name to the model-relative one). Names that are not joints and values that are not numbers are
    left to the readers of the values, which refuse them."""
    out: list[str] = []
    for name, value in values.items():
        try:
            joint = model.joints.get(resolve(str(name)) if resolve is not None else str(name))
        except Exception:  # noqa: BLE001 an unknown or ambiguous name: reported by whoever resolves it
            continue
        if joint is None or joint.mimic:
            continue
        numbers = value if isinstance(value, (list, tuple)) else [value]
        for bounds, v in zip(position_ranges(joint), numbers):
            if bounds is not None and isinstance(v, (int, float)) and not isinstance(v, bool) \
                    and outside(bounds, float(v)):
                out.append(describe(str(name), float(v), bounds))
    return out
