"""MJCF numbers, positions and the five orientation forms, as MuJoCo's compiler reads them.

* ``quat``: ``w x y z`` (w first), normalised (an unnormalised one is accepted);
* ``axisangle``: ``x y z angle``, the axis normalised, the angle in the compiler's unit;
* ``euler``: three angles applied per ``<compiler eulerseq>`` letter by letter: a lower-case letter
  rotates about the moving (already rotated) axis (``R = R @ R_i``), an upper-case one about the
  fixed axis (``R = R_i @ R``); mixed case is legal;
* ``xyaxes``: the x axis normalised, y made orthogonal to it (Gram-Schmidt) and normalised,
  ``z = x cross y``;
* ``zaxis``: the minimal rotation taking (0, 0, 1) to the normalised vector (half a turn about x
  when it points down the z axis).

At most one form per element (MuJoCo refuses more: "multiple orientation specifiers").
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np
from numpy.typing import NDArray

from robot_state_format.numbers import NumberError, parse_numbers
from robot_state_format.spatial import Transform, axis_angle_to_matrix, quaternion_to_matrix

__all__ = ["ORIENTATION_ATTRS", "euler_matrix", "orientation", "pose", "vector", "xyaxes_matrix", "zaxis_matrix"]

ORIENTATION_ATTRS = ("quat", "axisangle", "euler", "xyaxes", "zaxis")
MIN_NORM = 1e-15  # MuJoCo's mjMINVAL: a shorter vector cannot be normalised
Getter = Callable[[str], "str | None"]
Fail = Callable[[str, str], None]


def vector(text: str, count: int | None, what: str, fail: Fail) -> tuple[float, ...] | None:
    """``count`` numbers (any count when None) of an attribute, or None after ``fail(code, message)``."""
    try:
        values = parse_numbers(text).values
    except NumberError as exc:
        fail("MJCF_BAD_NUMBER", f"{what}: {exc}")
        return None
    if count is not None and len(values) != count:
        fail("MJCF_BAD_VALUE", f"{what} needs {count} numbers, got {len(values)} ({text.strip()!r})")
        return None
    return values


def _unit(v: NDArray[np.float64]) -> NDArray[np.float64] | None:
    n = float(np.linalg.norm(v))
    return v / n if n >= MIN_NORM else None


def euler_matrix(angles: tuple[float, ...], seq: str) -> NDArray[np.float64]:
    """Rotation of three angles (radians) per the ``eulerseq`` letters (see the module text)."""
    r = np.eye(3)
    for letter, angle in zip(seq, angles):
        axis = {"x": (1.0, 0.0, 0.0), "y": (0.0, 1.0, 0.0), "z": (0.0, 0.0, 1.0)}[letter.lower()]
        step = axis_angle_to_matrix(axis, angle)
        r = r @ step if letter.islower() else step @ r
    return r


def xyaxes_matrix(values: tuple[float, ...]) -> NDArray[np.float64] | None:
    x = _unit(np.array(values[:3], dtype=float))
    if x is None:
        return None
    y0 = np.array(values[3:6], dtype=float)
    y = _unit(y0 - x * float(x @ y0))
    if y is None:
        return None
    z = _unit(np.cross(x, y))
    if z is None:
        return None
    return np.column_stack([x, y, z])


def zaxis_matrix(values: tuple[float, ...]) -> NDArray[np.float64] | None:
    v = _unit(np.array(values[:3], dtype=float))
    if v is None:
        return None
    axis = np.cross(np.array([0.0, 0.0, 1.0]), v)
    s = float(np.linalg.norm(axis))
    axis = np.array([1.0, 0.0, 0.0]) if s < MIN_NORM else axis / s
    return axis_angle_to_matrix(tuple(axis), math.atan2(s, float(v[2])))


def orientation(get: Getter, explicit: Callable[[str], bool], angle_scale: float, eulerseq: str,
                fail: Fail) -> NDArray[np.float64]:
    """The rotation an element's orientation attributes give (identity when none); ``get`` reads an
    attribute (defaults included), ``explicit`` says whether the element itself sets it."""
    given = [a for a in ORIENTATION_ATTRS if explicit(a)]
    if len(given) > 1:
        fail("MJCF_ORIENTATION", f"multiple orientation specifiers are not allowed ({', '.join(given)})")
        return np.eye(3)
    if not given:
        given = [a for a in ORIENTATION_ATTRS if get(a) is not None][:1]  # from a default class
    if not given:
        return np.eye(3)
    attr = given[0]
    text = get(attr)
    assert text is not None
    counts = {"quat": 4, "axisangle": 4, "euler": 3, "xyaxes": 6, "zaxis": 3}
    values = vector(text, counts[attr], attr, fail)
    if values is None:
        return np.eye(3)
    rot: NDArray[np.float64] | None
    if attr == "quat":
        q = np.array(values, dtype=float)
        n = float(np.linalg.norm(q))
        rot = quaternion_to_matrix((q[1] / n, q[2] / n, q[3] / n, q[0] / n)) if n >= MIN_NORM else None
    elif attr == "axisangle":
        axis = _unit(np.array(values[:3], dtype=float))
        rot = axis_angle_to_matrix(tuple(axis), values[3] * angle_scale) if axis is not None else None
    elif attr == "euler":
        rot = euler_matrix(tuple(v * angle_scale for v in values), eulerseq)
    elif attr == "xyaxes":
        rot = xyaxes_matrix(values)
    else:
        rot = zaxis_matrix(values)
    if rot is None:
        fail("MJCF_ORIENTATION", f"{attr}={text.strip()!r}: a zero-length vector cannot be normalised")
        return np.eye(3)
    return rot


def pose(get: Getter, explicit: Callable[[str], bool], angle_scale: float, eulerseq: str, fail: Fail) -> Transform:
    """X_parent_element from ``pos`` and the orientation attributes."""
    x = np.eye(4)
    text = get("pos")
    if text is not None:
        p = vector(text, 3, "pos", fail)
        if p is not None:
            x[:3, 3] = p
    x[:3, :3] = orientation(get, explicit, angle_scale, eulerseq, fail)
    return x
