"""``<flexcomp>``: the bodies and joints MuJoCo 4.0 makes for a flexible object (measured against it).

The points of every type built from attributes (``grid``, ``circle``, ``square``, ``disc``, ``box``,
``cylinder``, ``ellipsoid``: mjcf/flexcomp_points.py), listed (``direct``) or read from a mesh file
(``mesh``: mjcf/flexcomp_mesh.py), the last two times ``scale`` and without the points no element names
(later points renumbered, the names follow), each placed by the flexcomp's ``pos`` and orientation in its parent:

* ``dof="full"`` (the default): a body ``NAME_I`` per point ``I`` not pinned (``<pin id|range|grid|
  gridrange>``), at the point, with the parent's axes and three unnamed slide joints along x, y, z; its
  mass ``mass / points`` (pinned points counted) with MuJoCo's inertia ``m * 2 inertiabox^2 / 3``;
* ``dof="radial"``: the same bodies, point 0 always pinned, one slide along the point's direction from
  the body's origin (a point at the origin is refused: MuJoCo's "axis too small");
* ``dof="trilinear"`` / ``"quadratic"``: ``NAME_I_J_K`` at the 2 x 2 x 2 (3 x 3 x 3) corners (and
  midpoints) of the points' axis-aligned bounding box, I along x, each with the three slides; their
  masses are left absent (MuJoCo gives node i ``mass`` times the integral of its shape function over
  the flex's elements divided by their measure: this needs every type's element list, not built here);
* ``rigid="true"`` or every point pinned: no body (the points move with the parent);
* pins name points (``full``, ``radial``) or nodes (``trilinear``, ``quadratic``); grid pins only on a
  grid or interpolated flexcomp; a flexcomp in a body with joints and no pin is refused, as MuJoCo does.

MuJoCo's refusals are refused on the flexcomp's line with MuJoCo's reason (``MJCF_BAD_FLEXCOMP``).
``type="gmsh"`` is not read: refused (``MJCF_UNSUPPORTED``).
At most :data:`~robot_state_format.limits.MAX_XML_ELEMENTS` points.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable

import numpy as np
from lxml import etree

from robot_state_format.model.mjcf.document import Document
from robot_state_format.model.mjcf.flexcomp_mesh import mesh_points
from robot_state_format.model.mjcf.flexcomp_points import box_points, grid_points, square_points, used_points
from robot_state_format.model.mjcf.orient import vector
from robot_state_format.model.mjcf.shapes import element_pose
from robot_state_format.spatial import Transform

__all__ = ["flex_bodies"]

_AXES = ("1 0 0", "0 1 0", "0 0 1")
MIN_VALUE = 1e-15  # mjMINVAL


def _points(doc: Document, el: etree._Element, dim: int, dim_attr: int) -> tuple[np.ndarray, tuple[int, int, int]] | None:
    """The flexcomp's points (before its pose) and the counts its pins index by; None after a report."""
    def fail(code: str, msg: str) -> None:
        doc.report(el, code, msg)

    def refuse(msg: str) -> None:
        fail("MJCF_BAD_FLEXCOMP", msg)

    kind = el.get("type", "grid")
    if kind in ("direct", "mesh", "gmsh"):
        return None if kind != "direct" else _direct(doc, el, fail, refuse)
    count = vector(el.get("count") or "10 10 10", 3, "count", fail)
    spacing = vector(el.get("spacing") or "0.02 0.02 0.02", 3, "spacing", fail)
    if count is None or spacing is None:
        return None
    n = (int(count[0]), int(count[1]), int(count[2]))
    if min(n) < 1 or (el.get("dof") == "radial" and dim_attr == 3 and min(n) < 2):
        refuse("Count too small")
        return None
    radius = vector(el.get("radius") or "0.005", 1, "radius", fail) or (0.005,)
    margin = vector(el.get("margin") or "0", 1, "margin", fail) or (0.0,)
    if min(spacing) < 2 * radius[0] + margin[0]:
        refuse("Spacing must be larger than geometry size")
        return None
    if kind in ("grid", "circle"):
        pts = grid_points(n, spacing, dim, kind == "circle", refuse)
    elif kind in ("square", "disc"):
        pts = square_points(n, spacing, kind == "disc", refuse)
    elif kind in ("box", "cylinder", "ellipsoid"):
        pts = box_points(kind, n, spacing, dim, refuse)
    else:
        fail("MJCF_BAD_VALUE", f"<flexcomp type={kind!r}>: not a flexcomp type")
        return None
    return None if pts is None else (pts, n)


def _direct(doc: Document, el: etree._Element, fail: Callable[[str, str], None],
            refuse: Callable[[str], None]) -> tuple[np.ndarray, tuple[int, int, int]] | None:
    values = vector(el.get("point") or "", None, "point", fail)
    if values is None or len(values) % 3 or not values:
        refuse("Point and element required" if not values else "Point size must be a multiple of 3")
        return None
    scale = vector(el.get("scale") or "1 1 1", 3, "scale", fail) or (1.0, 1.0, 1.0)
    pts_d = np.array(values, dtype=float).reshape(-1, 3) * np.array(scale)
    return pts_d, (len(pts_d), 1, 1)


def _pinned(doc: Document, el: etree._Element, n: tuple[int, int, int], npnt: int) -> set[int] | None:
    """The pinned point (node) ids, or None after refusing a pin id out of range."""
    out: set[int] = set()

    def index(i: tuple[int, ...]) -> int:
        full = (*i, 0, 0)[:3]
        return (full[0] * n[1] + full[1]) * n[2] + full[2]

    for pin in el.iterchildren("pin"):
        def fail(code: str, msg: str, where: etree._Element = pin) -> None:
            doc.report(where, code, msg)

        for attr in ("id", "range", "grid", "gridrange"):
            text = pin.get(attr)
            if text is None:
                continue
            v = [int(x) for x in (vector(text, None, attr, fail) or ())]
            if attr in ("id", "range") and any(i < 0 or i >= npnt for i in v):
                fail("MJCF_BAD_FLEXCOMP", f"pin{attr} out of range (a point id from 0 to {npnt - 1})")
                return None
            if attr == "id":
                out.update(v)
            elif attr == "range":
                for a, b in zip(v[::2], v[1::2]):
                    out.update(range(a, b + 1))
            else:
                dim = 3 if n[2] > 1 else 2
                if attr == "grid":
                    out.update(index(tuple(v[k:k + dim])) for k in range(0, len(v) - dim + 1, dim))
                else:
                    for k in range(0, len(v) - 2 * dim + 1, 2 * dim):
                        lo, hi = v[k:k + dim], v[k + dim:k + 2 * dim]
                        out.update(index(c) for c in itertools.product(*(range(a, b + 1) for a, b in zip(lo, hi))))
    return out


def _body(name: str, pos: np.ndarray, line: int | None, mass: float | None, inertiabox: float,
          axes: tuple[str, ...]) -> etree._Element:
    """A point's body: at ``pos``, the parent's axes, ``mass`` (when known) with MuJoCo's explicit
    inertia, slides along ``axes``."""
    def text(v: np.ndarray | tuple[float, ...]) -> str:
        return " ".join(repr(float(x)) for x in v)

    body = etree.Element("body", name=name, pos=text(pos))
    body.sourceline = line
    if mass is not None:
        i = mass * 2.0 * inertiabox * inertiabox / 3.0
        etree.SubElement(body, "inertial", pos="0 0 0", mass=repr(mass), diaginertia=text((i, i, i))).sourceline = line
    for axis in axes:
        j = etree.SubElement(body, "joint", type="slide", axis=axis)
        j.sourceline = line
    return body


def _scalar(doc: Document, el: etree._Element, attr: str, default: str) -> float | None:
    got = vector(el.get(attr) or default, 1, attr, lambda c, m: doc.report(el, c, m))
    return None if got is None else got[0]


def _settings(doc: Document, el: etree._Element, kind: str) -> tuple[int, int, float, float] | None:
    """``dim`` (as built, as written), ``mass`` and ``inertiabox``, checked as MuJoCo checks them."""
    dim_v = _scalar(doc, el, "dim", "2")
    mass, box = _scalar(doc, el, "mass", "1"), _scalar(doc, el, "inertiabox", "0.005")
    if dim_v is None or mass is None or box is None:
        return None
    if not 1 <= int(dim_v) <= 3:
        doc.report(el, "MJCF_BAD_FLEXCOMP", "Invalid dim, must be between 1 and 3")
        return None
    if mass < MIN_VALUE or box < MIN_VALUE:
        doc.report(el, "MJCF_BAD_FLEXCOMP", "Mass and inertiabox must be larger than mjMINVAL")
        return None
    return (2 if kind in ("square", "disc") else int(dim_v)), int(dim_v), mass, box


def _source(doc: Document, el: etree._Element, kind: str, dim: int,
            dim_attr: int) -> tuple[np.ndarray, tuple[int, int, int], list[int] | None] | None:
    """The points (before the pose), the counts pins index by, and a mesh's elements."""
    def fail(code: str, msg: str) -> None:
        doc.report(el, code, msg)

    if kind != "mesh":
        found = _points(doc, el, dim, dim_attr)
        return None if found is None else (found[0], found[1], None)
    if dim == 3 and el.get("origin") is None:
        fail("MJCF_BAD_FLEXCOMP", "origin must be specified for mesh flexcomps if dim=3")
        return None
    origin = vector(el.get("origin") or "0 0 0", 3, "origin", fail)
    meshed = None if origin is None else mesh_points(doc, el, dim, origin, fail)
    if meshed is None:
        return None
    scale = vector(el.get("scale") or "1 1 1", 3, "scale", fail) or (1.0, 1.0, 1.0)
    return meshed[0] * np.array(scale), (len(meshed[0]), 1, 1), meshed[1]


def _used(doc: Document, el: etree._Element, pts: np.ndarray, elements: list[int] | None,
          dim: int) -> tuple[np.ndarray, list[int]] | None:
    """The points a ``direct`` or ``mesh`` flexcomp's elements name, and their indices before."""
    if elements is None:
        listed = vector(el.get("element") or "", None, "element", lambda c, m: doc.report(el, c, m))
        elements = [int(e) for e in listed or ()]
    if not elements:
        doc.report(el, "MJCF_BAD_FLEXCOMP", "Point and element required")
        return None
    if len(elements) % (dim + 1) or any(len(set(elements[k:k + dim + 1])) <= dim
                                        for k in range(0, len(elements), dim + 1)):
        doc.report(el, "MJCF_BAD_FLEXCOMP", "repeated vertex in element" if len(elements) % (dim + 1) == 0
                   else "Element size must be a multiple of dim+1")
        return None
    return used_points(pts, elements, lambda m: doc.report(el, "MJCF_BAD_FLEXCOMP", m))


def _point_bodies(doc: Document, el: etree._Element, placed: np.ndarray, keep: list[int], pinned: set[int],
                  each: float, box: float) -> list[etree._Element] | None:
    """``dof="full"`` / ``"radial"``: a body per point not pinned, named by its index after unused points."""
    name, radial, out = el.get("name") or "", el.get("dof") == "radial", []
    for i, (old, p) in enumerate(zip(keep, placed)):
        if old in pinned:
            continue
        axes: tuple[str, ...] = _AXES
        if radial:
            norm = float(np.linalg.norm(p))
            if norm < MIN_VALUE:
                doc.report(el, "MJCF_BAD_FLEXCOMP", f"point {i} is at the body's origin: its radial slide "
                           "has no axis (MuJoCo: axis too small in joint)")
                return None
            axes = (" ".join(repr(float(v)) for v in p / norm),)
        out.append(_body(f"{name}_{i}", p, el.sourceline, each, box, axes))
    return out


def flex_bodies(doc: Document, el: etree._Element, x_body_parent: Transform, body: str,
                body_moves: bool) -> list[etree._Element] | None:
    """The ``<body>`` elements MuJoCo makes for the flexcomp ``el`` (in its parent's frame, in the body
    ``body``, which has joints when ``body_moves``; ``x_body_parent`` places the flexcomp's parent, a
    ``<frame>``, in it): positioned in the body, with its axes; None when refused (reported)."""
    kind, dof = el.get("type", "grid"), el.get("dof", "full")
    if kind == "gmsh":
        doc.report(el, "MJCF_UNSUPPORTED", f"<flexcomp type={kind!r}> is not read (its points come from the "
                   f"file {el.get('file')!r}); remove it or use type=\"direct\" with the mesh's points")
        return None
    if dof not in ("full", "radial", "trilinear", "quadratic"):
        doc.report(el, "MJCF_BAD_VALUE", f"<flexcomp dof={dof!r}>: not one of full, radial, trilinear, quadratic")
        return None
    settings = _settings(doc, el, kind)
    source = None if settings is None else _source(doc, el, kind, settings[0], settings[1])
    if settings is None or source is None:
        return None
    (dim, _, mass, box), (pts, n, elements) = settings, source
    if kind != "grid" and dof not in ("trilinear", "quadratic") and any(
            p.get("grid") is not None or p.get("gridrange") is not None for p in el.iterchildren("pin")):
        doc.report(el, "MJCF_BAD_FLEXCOMP", "Pin grid(range) can only be used with grid or interpolated")
        return None
    rigid = el.get("rigid", "false") == "true"
    pinned = set() if rigid else _pinned(doc, el, n if dof in ("full", "radial") else (2, 2, 2) if
                                         dof == "trilinear" else (3, 3, 3), len(pts))
    if pinned is None:
        return None
    if dof == "radial":
        pinned.add(0)
    keep, every = list(range(len(pts))), pts  # the nodes' bounding box holds the points no element names too
    if kind in ("direct", "mesh"):
        got = _used(doc, el, pts, elements, dim)
        if got is None:
            return None
        pts, keep = got
    if rigid or (dof in ("full", "radial") and all(i in pinned for i in keep)):
        return []  # MuJoCo makes the flex rigid: its points move with the parent
    if body_moves and not pinned:
        doc.report(el, "MJCF_FLEX_PIN", f"body {body!r} has joints but no flex vertices/nodes are pinned to it")
        return None
    x = x_body_parent @ element_pose(doc, el)
    if dof in ("full", "radial"):
        return _point_bodies(doc, el, pts @ x[:3, :3].T + x[:3, 3], keep, pinned, mass / len(pts), box)
    every = every @ x[:3, :3].T + x[:3, 3]
    lo, hi = every.min(axis=0), every.max(axis=0)
    if float(np.min(hi - lo)) < MIN_VALUE:
        doc.report(el, "MJCF_BAD_FLEXCOMP", f"the points are flat along {'xyz'[int(np.argmin(hi - lo))]} in the body: "
                   f"no {dof} cell (MuJoCo: flex grid rotation R0 is not orthonormal)")
        return None
    steps = 2 if dof == "trilinear" else 3
    out = []
    for node, (i, j, k) in enumerate(itertools.product(range(steps), repeat=3)):
        if node in pinned:
            continue  # node masses (MuJoCo: shape-function integrals over the elements) left absent
        frac = np.array([i, j, k], dtype=float) / (steps - 1)
        out.append(_body(f"{el.get('name') or ''}_{i}_{j}_{k}", lo + (hi - lo) * frac, el.sourceline, None, box,
                         _AXES))
    return out
