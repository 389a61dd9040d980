"""MuJoCo's refusal of a moving body without mass ("mass and inertia of moving bodies must be larger than
mjMINVAL"), as measured against MuJoCo 4.0.

A body with joints must carry a mass, its own or that of the bodies welded to it (child bodies without
joints, recursively): a child that moves on its own joints does not count. A body's mass is its
``<inertial mass>``, else its geoms' (those of ``group`` 0 to 5, MuJoCo's ``inertiagrouprange``): a geom
has a mass unless its ``mass`` or ``density`` is 0 (or it is a plane); ``<compiler inertiafromgeom>``
``true`` takes the geoms even when an ``<inertial>`` is given, ``false`` never. The bodies an ``<attach>``
brings in are checked with their own model's document (``roots``: the attached body, or the bodies of an
attached world body); a body holding an ``<attach>`` is taken to have mass (what it welds there is not
counted here, so no body is refused for it). A ``<flexcomp>`` gives its body no mass (measured): its mass
goes to the bodies it makes, each on its own slides, and its pinned or rigid points weigh nothing.

A geom of a body (not of the world body) whose ``mass``, else ``density`` (1000), is negative (``-1``,
``-inf``) is refused ("mass, inertia or density are negative in geom"), unless an ``<inertial>`` stands in
for the geoms (``inertiafromgeom`` not ``true``): a ``mass`` of 0 or more takes over a negative density.
An ``<inertial>`` of a moving body's welded group must have every principal inertia of at least mjMINVAL
(``diaginertia="0 1 1"`` is refused as a missing mass). Any body's ``fullinertia`` must have positive
eigenvalues ("error 'inertia must have positive eigenvalues' in fullinertia"), and an ``<inertial>`` in use
(``inertiafromgeom`` not ``true``) whose principal inertias are not negative must satisfy A + B >= C
(unless ``<compiler balanceinertia="true">``).
"""

from __future__ import annotations

from itertools import permutations

import numpy as np
from lxml import etree

from robot_state_format.model.mjcf.document import MAIN, Document
from robot_state_format.model.mjcf.orient import vector

__all__ = ["check_inertials", "check_moving_mass", "check_negative_geoms"]

MIN_VALUE = 1e-15  # mjMINVAL


def _number(doc: Document, el: etree._Element, cls: str, attr: str) -> float | None:
    text = doc.lookup(el, cls, attr)
    if text is None:
        return None
    v = vector(text, 1, attr, lambda c, m: None)
    return v[0] if v else None


def _geoms(el: etree._Element, cls: str) -> list[tuple[etree._Element, str]]:
    out = []
    for c in el:
        if c.tag == "geom":
            out.append((c, c.get("class") or cls))
        elif c.tag == "frame":
            out += _geoms(c, c.get("childclass") or cls)
    return out


def _principal(inertial: etree._Element) -> tuple[list[float] | None, bool]:
    """The principal inertias of an ``<inertial>`` (None when unreadable) and whether from ``fullinertia``."""
    full = inertial.get("fullinertia")
    if full is not None:
        v = vector(full, 6, "fullinertia", lambda c, m: None)
        if v is None:
            return None, True
        xx, yy, zz, xy, xz, yz = v
        return [float(e) for e in np.linalg.eigvalsh(np.array([[xx, xy, xz], [xy, yy, yz], [xz, yz, zz]]))], True
    d = vector(inertial.get("diaginertia") or "", 3, "diaginertia", lambda c, m: None)
    return (list(d) if d is not None else None), False


def check_inertials(doc: Document) -> bool:
    """Report the first ``<inertial>`` MuJoCo refuses for its inertia alone (``MJCF_BAD_INERTIA``); True if
    there is one."""
    from_geoms = _from_geoms(doc)
    balance = any(c.get("balanceinertia") == "true" for c in doc.root.iterchildren("compiler"))
    for world in doc.root.iterchildren("worldbody"):
        for el in world.iter("inertial"):
            values, full = _principal(el)
            if values is None:
                continue  # unreadable: reported where it is read
            if full and min(values) <= 0:
                doc.report(el, "MJCF_BAD_INERTIA", "error 'inertia must have positive eigenvalues' in fullinertia")
                return True
            if from_geoms != "true" and not balance and min(values) >= 0 and any(
                    a + b < c for a, b, c in permutations(values)):
                doc.report(el, "MJCF_BAD_INERTIA", "inertia must satisfy A + B >= C; use 'balanceinertia' to fix "
                           f"(principal inertias {' '.join(f'{v:g}' for v in values)})")
                return True
    return False


def _own_mass(doc: Document, el: etree._Element, cls: str, from_geoms: str) -> bool:
    inertial = el.find("inertial")
    if inertial is not None and from_geoms != "true":
        mass = _number(doc, inertial, MAIN, "mass")
        values, _ = _principal(inertial)
        # an unreadable mass or inertia is reported elsewhere
        return (mass is None or mass > MIN_VALUE) and (values is None or min(values) >= MIN_VALUE)
    if from_geoms == "false":
        return False
    for g, gcls in _geoms(el, cls):
        group = _number(doc, g, gcls, "group") or 0.0
        if not 0 <= group <= 5 or (doc.lookup(g, gcls, "type") or "sphere") == "plane":
            continue
        mass = _number(doc, g, gcls, "mass")
        if mass is not None:
            if mass > MIN_VALUE:
                return True
            continue
        density = _number(doc, g, gcls, "density")
        if density is None or density > MIN_VALUE:
            return True
    return False


def _brings_bodies(el: etree._Element) -> bool:
    return any(c.tag == "attach" or (c.tag == "frame" and _brings_bodies(c)) for c in el)


def _joints(el: etree._Element) -> bool:
    return any(c.tag in ("joint", "freejoint") or (c.tag == "frame" and _joints(c)) for c in el)


def _bodies(el: etree._Element, cls: str) -> list[tuple[etree._Element, str]]:
    out = []
    for c in el:
        if c.tag == "body":
            out.append((c, c.get("childclass") or cls))
        elif c.tag == "frame":
            out += _bodies(c, c.get("childclass") or cls)
    return out


def _from_geoms(doc: Document) -> str:
    from_geoms = "auto"
    for comp in doc.root.iterchildren("compiler"):
        from_geoms = comp.get("inertiafromgeom", from_geoms)
    return from_geoms


def _signed(text: str | None) -> float | None:
    """The first number of ``text`` as MuJoCo reads it (``-inf`` included), or None."""
    try:
        return float(text.split()[0]) if text and text.split() else None
    except ValueError:
        return None  # a bad number is reported where the attribute is read


def _in_order(doc: Document) -> list[tuple[etree._Element, str]]:
    """The bodies of the world body with their classes, in document order (MuJoCo's body order)."""
    out: list[tuple[etree._Element, str]] = []
    stack = [(b, c) for wb in doc.root.iterchildren("worldbody") for b, c in _bodies(wb, MAIN)][::-1]
    while stack:
        body, cls = stack.pop()
        out.append((body, cls))
        stack.extend(_bodies(body, cls)[::-1])
    return out


def check_negative_geoms(doc: Document) -> bool:
    """Report the first geom of a body whose mass or density is negative (``MJCF_NEGATIVE_MASS``: MuJoCo stops
    there); True if there is one."""
    from_geoms = _from_geoms(doc)
    for body, cls in _in_order(doc):
        if body.find("inertial") is not None and from_geoms != "true":
            continue
        for g, gcls in _geoms(body, cls):
            mass = _signed(doc.lookup(g, gcls, "mass"))
            value = mass if mass is not None else _signed(doc.lookup(g, gcls, "density"))
            if value is not None and value < 0:
                doc.report(g, "MJCF_NEGATIVE_MASS", "mass, inertia or density are negative in geom "
                           f"({'mass' if mass is not None else 'density'} {value:g})")
                return True
    return False


def check_moving_mass(doc: Document, root: etree._Element | None = None) -> None:
    """Report every body with joints whose welded group has no mass (walked without recursion): the bodies of
    the document's world body, or ``root`` (an attached body, or a frame holding an attached world body)."""
    from_geoms = _from_geoms(doc)
    welded: dict[etree._Element, bool] = {}
    order: list[tuple[etree._Element, str]] = []
    if root is None:
        stack = [(b, c) for wb in doc.root.iterchildren("worldbody") for b, c in _bodies(wb, MAIN)]
    else:
        stack = [(root, root.get("childclass") or MAIN)] if root.tag == "body" else _bodies(root, MAIN)
    while stack:
        body, cls = stack.pop()
        order.append((body, cls))
        stack.extend(_bodies(body, cls))
    for body, cls in reversed(order):  # children before their parents
        welded[body] = _own_mass(doc, body, cls, from_geoms) or _brings_bodies(body) or any(
            welded.get(child, False) for child, _ in _bodies(body, cls) if not _joints(child))
    for body, _ in order:
        if _joints(body) and not welded[body]:
            doc.report(body, "MJCF_NO_MASS", "mass and inertia of moving bodies must be larger than mjMINVAL "
                       f"(body {body.get('name') or '(unnamed)'!r} has joints and no mass, nor a body welded to it)")
