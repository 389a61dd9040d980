"""The points of a ``<flexcomp>`` before its pose, per ``type`` (measured against MuJoCo 4.0).

``c`` is ``count``, ``s`` ``spacing``, ``g(i, a) = s[a] * (i - (c[a] - 1) / 2)`` the grid coordinate:

* ``grid`` (and ``circle`` unless ``dim="1"``): ``dim="1"`` ``c[0]`` points ``(g(i, 0), 0, 0)``;
  ``dim="2"`` ``c[0] x c[1]`` points ``(g(i, 0), g(j, 1), 0)``, x slowest; ``dim="3"`` all three, x
  slowest then y then z. The elements MuJoCo makes must exist and name existing points: a count below 2
  where the dimension needs two is refused (``No elements were created in grid``), and so is a 2-D
  flex whose ``c[2]`` exceeds 1 (its element ids pass the point count);
* ``circle`` with ``dim="1"`` (``c[0]`` at least 4): ``c[0] - 1`` points on the circle of radius ``s[0] / (2 sin(t / 2))``,
  ``t = 2 pi / (c[0] - 1)``, point ``i`` at angle ``i t`` in the xy plane;
* ``square`` / ``disc``: the 2-D grid (``dim`` forced to 2); a disc's point ``p`` becomes
  ``max(|px|, |py|) * (px, py) / |(px, py)|`` scaled by ``s[a] (c[a] - 1) / 2`` per axis;
* ``box`` / ``cylinder`` / ``ellipsoid``: the surface of the ``c`` grid, every count at least 2 (else
  ``No elements were created in box``): with ``dim="3"`` first a centre point at the origin; then the
  faces z = min and z = max (x slowest, then y; only z = min when ``dim="2"``, the box is open there),
  then y = min and y = max without the rows already placed (x slowest, then z), then x = min and x = max
  (y, then z). Each grid point ``u = 2 i / (c - 1) - 1`` per axis, ``h = s (c - 1) / 2``: a box puts it
  at ``u h``; a cylinder at ``(max(|ux|, |uy|) (ux, uy) / |(ux, uy)| (hx, hy), uz hz)``; an ellipsoid
  at ``u / |u| * h``;
* ``direct``: the ``point`` list times ``scale``; points no ``element`` names are dropped (later
  points renumbered).

Each function returns the points (n x 3) and the grid counts the pins index by, or None after a report.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable

import numpy as np
from numpy.typing import NDArray

from robot_state_format import limits

__all__ = ["box_points", "grid_points", "square_points", "used_points"]

Fail = Callable[[str], None]
Points = NDArray[np.float64]


def _g(i: int, c: int, s: float) -> float:
    return s * (i - 0.5 * (c - 1))


def _too_many(n: int, fail: Fail) -> bool:
    if n > limits.MAX_XML_ELEMENTS:
        fail(f"<flexcomp> of {n} points, more than {limits.MAX_XML_ELEMENTS} (RSF_MAX_XML_ELEMENTS)")
        return True
    return False


def grid_points(c: tuple[int, int, int], s: tuple[float, ...], dim: int, circle: bool,
                fail: Fail) -> Points | None:
    """The ``grid`` (or ``circle``) points of ``dim`` dimensions."""
    if dim == 1:
        if c[0] < (4 if circle else 2):
            fail("No elements were created in grid")
            return None
        if _too_many(c[0], fail):
            return None
        if circle:
            theta = 2 * np.pi / (c[0] - 1)
            radius = s[0] / np.sin(theta / 2) / 2
            return np.array([[radius * np.cos(theta * i), radius * np.sin(theta * i), 0.0]
                             for i in range(c[0] - 1)], dtype=float).reshape(-1, 3)
        return np.array([[_g(i, c[0], s[0]), 0.0, 0.0] for i in range(c[0])], dtype=float)
    if dim == 2:
        if c[0] < 2 or c[1] < 2:
            fail("No elements were created in grid")
            return None
        npnt = c[0] * c[1]
        last = c[2] * c[1] * (c[0] - 1) + c[2] * (c[1] - 1)  # the highest point id MuJoCo's elements use
        if last >= npnt:
            fail(f"element 2 has point id {last if c[0] == 2 and c[1] == 2 else c[2] * c[1]}, number of "
                 f"points is {npnt} (a 2-D flex needs count[2] = 1)")
            return None
        if _too_many(npnt, fail):
            return None
        return np.array([[_g(i, c[0], s[0]), _g(j, c[1], s[1]), 0.0]
                         for i, j in itertools.product(range(c[0]), range(c[1]))], dtype=float)
    if min(c) < 2:
        fail("No elements were created in grid")
        return None
    if _too_many(c[0] * c[1] * c[2], fail):
        return None
    return np.array([[_g(i, c[0], s[0]), _g(j, c[1], s[1]), _g(k, c[2], s[2])]
                     for i, j, k in itertools.product(range(c[0]), range(c[1]), range(c[2]))], dtype=float)


def square_points(c: tuple[int, int, int], s: tuple[float, ...], disc: bool, fail: Fail) -> Points | None:
    """The ``square`` (``disc``) points: the 2-D grid, projected onto the disc."""
    pts = grid_points(c, s, 2, False, fail)
    if pts is None or not disc:
        return pts
    size = (0.5 * s[0] * (c[0] - 1), 0.5 * s[1] * (c[1] - 1))
    out = pts.copy()
    for p in out:
        length = max(abs(p[0]), abs(p[1]))
        norm = float(np.hypot(p[0], p[1]))
        if norm > 0:
            p[0], p[1] = p[0] / norm, p[1] / norm
        p[0] *= size[0] * length
        p[1] *= size[1] * length
    return out


def _project(kind: str, ijk: tuple[int, int, int], c: tuple[int, int, int], s: tuple[float, ...]) -> list[float]:
    u = np.array([2.0 * ijk[a] / (c[a] - 1) - 1 for a in range(3)])
    h = np.array([0.5 * s[a] * (c[a] - 1) for a in range(3)])
    if kind == "cylinder":
        length = max(abs(u[0]), abs(u[1]))
        norm = float(np.hypot(u[0], u[1]))
        if norm > 0:
            u[:2] /= norm
        u[:2] *= length
    elif kind == "ellipsoid":
        norm = float(np.linalg.norm(u))
        if norm > 0:
            u /= norm
    return [float(v) for v in u * h]


def box_points(kind: str, c: tuple[int, int, int], s: tuple[float, ...], dim: int, fail: Fail) -> Points | None:
    """The surface points of a ``box``, ``cylinder`` or ``ellipsoid`` (see the module text)."""
    if min(c) < 2:
        fail("No elements were created in box")
        return None
    if _too_many(2 * (c[0] * c[1] + c[0] * c[2] + c[1] * c[2]) + 1, fail):
        return None
    opened = dim == 2
    pts: list[list[float]] = [[0.0, 0.0, 0.0]] if dim == 3 else []
    for iz in (0, c[2] - 1):
        if opened and iz != 0:
            continue
        pts += [_project(kind, (ix, iy, iz), c, s) for ix in range(c[0]) for iy in range(c[1])]
    zs = range(1, c[2]) if opened else range(1, c[2] - 1)
    for iy in (0, c[1] - 1):
        pts += [_project(kind, (ix, iy, iz), c, s) for ix in range(c[0]) for iz in zs]
    for ix in (0, c[0] - 1):
        pts += [_project(kind, (ix, iy, iz), c, s) for iy in range(1, c[1] - 1) for iz in zs]
    return np.array(pts, dtype=float)


def used_points(pts: Points, element: list[int], fail: Fail) -> tuple[Points, list[int]] | None:
    """The points an element names (in order) and, for each kept point, its index in ``pts``."""
    for i, e in enumerate(element):
        if e < 0 or e >= len(pts):
            fail(f"element {i} has point id {e}, number of points is {len(pts)}")
            return None
    keep = sorted(set(element))
    return pts[keep], keep
