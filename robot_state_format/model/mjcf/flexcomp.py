"""``<flexcomp>``: the bodies and joints MuJoCo 4.0 makes for a flexible object (measured against it).

Read for ``type="grid"`` (``count`` points ``spacing`` apart, centred on the origin, x slowest then y
then z; ``scale`` does not apply) and ``type="direct"`` (the ``point`` list, times ``scale``), each point
placed by the flexcomp's ``pos`` and orientation in its parent:

* ``dof="full"`` (the default): a body ``NAME_I`` per point ``I`` not pinned (``<pin id|range|grid|
  gridrange>``), at the point, with the parent's axes and three unnamed slide joints along x, y, z;
* ``dof="trilinear"`` / ``"quadratic"``: ``NAME_I_J_K`` at the 2 x 2 x 2 (3 x 3 x 3) corners (and
  midpoints) of the points' axis-aligned bounding box, I along x, each with the three slides;
* ``rigid="true"``: no body (the points move with the parent);
* pins name points (``full``) or nodes (``trilinear``, ``quadratic``), which then get no body; a flexcomp
  in a body with joints and no pin is refused, as MuJoCo refuses it.

Other types (``box``, ``cylinder``, ``ellipsoid``, ``square``, ``disc``, ``circle``, ``mesh``,
``gmsh``) and ``dof="radial"`` are not read: ``MJCF_UNSUPPORTED`` (a warning) says their bodies are
missing. At most :data:`~robot_state_format.limits.MAX_XML_ELEMENTS` points.
"""

from __future__ import annotations

import itertools

import numpy as np
from lxml import etree

from robot_state_format import limits
from robot_state_format.model.mjcf.document import Document
from robot_state_format.model.mjcf.orient import vector
from robot_state_format.model.mjcf.shapes import element_pose
from robot_state_format.spatial import Transform

__all__ = ["flex_bodies"]

_AXES = ("1 0 0", "0 1 0", "0 0 1")


def _points(doc: Document, el: etree._Element) -> tuple[np.ndarray, tuple[int, int, int]] | None:
    def fail(code: str, msg: str) -> None:
        doc.report(el, code, msg)

    kind = el.get("type", "grid")
    if kind == "grid":
        count = vector(el.get("count") or "10 10 1", 3, "count", fail)
        spacing = vector(el.get("spacing") or "0.02 0.02 0.02", 3, "spacing", fail)
        if count is None or spacing is None:
            return None
        n = tuple(max(int(c), 1) for c in count)
        if n[0] * n[1] * n[2] > limits.MAX_XML_ELEMENTS:  # the pins' grid indices need the point count
            fail("MJCF_TOO_LARGE", f"<flexcomp> of {n[0] * n[1] * n[2]} points, more than "
                 f"{limits.MAX_XML_ELEMENTS} (RSF_MAX_XML_ELEMENTS)")
            return None
        pts = [[spacing[a] * (i[a] - (n[a] - 1) / 2.0) for a in range(3)]
               for i in itertools.product(range(n[0]), range(n[1]), range(n[2]))]
        return np.array(pts, dtype=float), (n[0], n[1], n[2])
    values = vector(el.get("point") or "", None, "point", fail)
    if values is None or len(values) % 3:
        fail("MJCF_BAD_VALUE", "<flexcomp point> needs three numbers per point")
        return None
    scale = vector(el.get("scale") or "1 1 1", 3, "scale", fail) or (1.0, 1.0, 1.0)
    pts_d = np.array(values, dtype=float).reshape(-1, 3) * np.array(scale)
    return pts_d, (len(pts_d), 1, 1)


def _pinned(doc: Document, el: etree._Element, n: tuple[int, int, int]) -> set[int]:
    out: set[int] = set()

    def index(i: tuple[int, ...]) -> int:
        full = (*i, 0, 0)[:3]
        return (full[0] * n[1] + full[1]) * n[2] + full[2]

    for pin in el.iterchildren("pin"):
        fail = (lambda p: lambda c, m: doc.report(p, c, m))(pin)
        for attr in ("id", "range", "grid", "gridrange"):
            text = pin.get(attr)
            if text is None:
                continue
            v = [int(x) for x in (vector(text, None, attr, fail) or ())]
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


def _body(name: str, pos: np.ndarray, line: int | None) -> etree._Element:
    body = etree.Element("body", name=name, pos=" ".join(repr(float(v)) for v in pos))
    body.sourceline = line
    for axis in _AXES:
        j = etree.SubElement(body, "joint", type="slide", axis=axis)
        j.sourceline = line
    return body


def flex_bodies(doc: Document, el: etree._Element, x_body_parent: Transform, body: str,
                body_moves: bool) -> list[etree._Element] | None:
    """The ``<body>`` elements MuJoCo makes for the flexcomp ``el`` (in its parent's frame, in the body
    ``body``, which has joints when ``body_moves``; ``x_body_parent`` places the flexcomp's parent, a
    ``<frame>``, in it): positioned in the body, with its axes; None when this kind is not read (reported)."""
    kind, dof = el.get("type", "grid"), el.get("dof", "full")
    if kind not in ("grid", "direct") or dof not in ("full", "trilinear", "quadratic"):
        doc.report(el, "MJCF_UNSUPPORTED", f"<flexcomp type={kind!r} dof={dof!r}> is not read: the bodies it would "
                   "add are missing from this model", warning=True)
        return None
    if el.get("rigid", "false") == "true":
        return []
    found = _points(doc, el)
    if found is None:
        return None
    pts, n = found
    if body_moves and el.find("pin") is None:
        doc.report(el, "MJCF_FLEX_PIN", f"body {body!r} has joints but no flex vertices/nodes are pinned to it")
        return None
    x = x_body_parent @ element_pose(doc, el)
    placed = pts @ x[:3, :3].T + x[:3, 3]
    name = el.get("name") or ""
    line = el.sourceline
    if dof == "full":
        pinned = _pinned(doc, el, n)
        return [_body(f"{name}_{i}", p, line) for i, p in enumerate(placed) if i not in pinned]
    lo, hi = placed.min(axis=0), placed.max(axis=0)
    steps = 2 if dof == "trilinear" else 3
    pinned = _pinned(doc, el, (steps, steps, steps))  # pins name the nodes here
    out = []
    for node, (i, j, k) in enumerate(itertools.product(range(steps), repeat=3)):
        if node in pinned:
            continue
        frac = np.array([i, j, k], dtype=float) / (steps - 1)
        out.append(_body(f"{name}_{i}_{j}_{k}", lo + (hi - lo) * frac, line))
    return out
