"""MuJoCo's name rules beyond the body tree: one namespace per object type, references that must resolve.

MuJoCo refuses a repeated name within an object type ("repeated name 'x' in geom"): geoms, sites,
cameras, lights, meshes, materials, textures, ... each have their own namespace; the elements of
``<actuator>``, ``<sensor>``, ``<tendon>`` and ``<equality>`` share one per section. It refuses an
actuator, sensor or fixed-tendon entry naming a joint that does not exist ("unknown transmission
target"), a sensor, tendon or equality constraint naming a site or body that does not exist, and
``fromto`` on a geom that is not a capsule, cylinder, box or ellipsoid.
"""

from __future__ import annotations

import re

from lxml import etree

from robot_state_format.model.mjcf.document import Document

__all__ = ["check_counts", "check_keyframes", "check_names"]

_SHARED = frozenset({"actuator", "sensor", "tendon", "equality"})
_REFERRING = frozenset({"actuator", "sensor", "fixed", "spatial", "equality"})  # children that name objects
_SKIP = frozenset({"body", "joint", "freejoint", "frame", "default", "include"})  # the body walk checks these


def check_names(doc: Document, joints: set[str]) -> None:
    seen: dict[tuple[str, str], etree._Element] = {}
    placed = [e for e in doc.root.iter("site", "body") if any(a.tag == "worldbody" for a in e.iterancestors())]
    sites = {str(e.get("name")) for e in placed if e.tag == "site" and e.get("name")}
    bodies = {str(e.get("name")) for e in placed if e.tag == "body" and e.get("name")} | {"world"}
    for el in doc.root.iter():
        if not isinstance(el.tag, str):
            continue
        parent = el.getparent()
        if (parent is not None and parent.tag == "default") or el.tag in _SKIP:
            continue
        if any(a.tag == "default" for a in el.iterancestors()):
            continue
        kind = str(parent.tag) if parent is not None and parent.tag in _SHARED else str(el.tag)
        if (parent is not None and parent.tag == "spatial") or (parent is not None and parent.tag == "fixed"):
            continue  # a tendon's path elements reference, they do not name
        name = el.get("name")
        if name:
            if (kind, name) in seen:
                doc.report(el, "MJCF_DUPLICATE_NAME", f"repeated name {name!r} in {kind}")
            else:
                seen[(kind, name)] = el
        if el.tag == "geom" and el.get("fromto") is not None \
                and (el.get("type") or "sphere") not in ("capsule", "cylinder", "box", "ellipsoid"):
            cls_type = None if el.get("type") else _default_type(doc, el)
            if (cls_type or el.get("type") or "sphere") not in ("capsule", "cylinder", "box", "ellipsoid"):
                doc.report(el, "MJCF_FROMTO", "fromto requires capsule, cylinder, box or ellipsoid in geom")
        if parent is not None and parent.tag in _REFERRING:
            for attr, names in (("joint", joints), ("site", sites), ("body", bodies), ("body1", bodies),
                                ("body2", bodies), ("site1", sites), ("site2", sites)):
                ref = el.get(attr)
                if ref is not None and ref not in names:
                    code = "MJCF_UNKNOWN_JOINT" if attr == "joint" else "MJCF_UNKNOWN_NAME"
                    doc.report(el, code, f"unknown {attr.rstrip('12')} {ref!r} (MuJoCo: unrecognized name)")


def _default_type(doc: Document, el: etree._Element) -> str | None:
    cls = el.get("class")
    if cls is None:
        for anc in el.iterancestors():
            if anc.get("childclass"):
                cls = anc.get("childclass")
                break
    return doc.defaults.get(cls or "main", {}).get("geom", {}).get("type")


_EXACT = {"rgba": 4, "ctrlrange": 2, "forcerange": 2, "actrange": 2, "actuatorfrcrange": 2, "dir": 3}
_AT_MOST = {"solref": 2, "solreflimit": 2, "solreffriction": 2, "solimp": 5, "solimplimit": 5, "solimpfriction": 5,
            "friction": 3, "gear": 6}


_INTEGER = frozenset({"condim", "contype", "conaffinity", "group", "priority"})  # and a texture's width, height
_INTEGER_TEXT = re.compile(r"^\s*[-+]?\d+\s*$")


def check_counts(doc: Document) -> None:
    """MuJoCo's counts of the attributes whose length does not vary ("attribute 'rgba' does not have
    enough data", "... has too much data": also every ``pos`` and a light's ``diffuse``), and its integer
    attributes ("bad format": ``condim``, ``contype``, ``group``, ``nuser_*``, ...); only the element kinds
    of the model (not ``<visual>``)."""
    for el in doc.root.iter():
        if not isinstance(el.tag, str):
            continue
        for attr, text in el.attrib.items():
            integer = attr in _INTEGER or str(attr).startswith("nuser_") or (
                el.tag == "texture" and attr in ("width", "height"))
            if integer and not _INTEGER_TEXT.match(str(text)):
                doc.report(el, "MJCF_BAD_VALUE", f"bad format in attribute {attr!r} (an integer)")
        if el.tag in ("visual", "rgba", "global", "map", "quality", "headlight"):
            continue
        for attr, text in el.attrib.items():
            n = _EXACT.get(str(attr), _AT_MOST.get(str(attr)))
            exact = attr in _EXACT or attr == "pos" or (attr == "diffuse" and el.tag == "light")
            if exact and n is None:
                n = 3
            if n is None:
                continue
            count = len(str(text).split())
            if count > n:
                doc.report(el, "MJCF_BAD_VALUE", f"attribute {attr!r} has too much data")
            elif exact and count < n:
                doc.report(el, "MJCF_BAD_VALUE", f"attribute {attr!r} does not have enough data")


_NQ = {"free": 7, "ball": 4, "hinge": 1, "slide": 1}
_NV = {"free": 6, "ball": 3, "hinge": 1, "slide": 1}


def check_keyframes(doc: Document, joint_types: list[str]) -> None:
    """A keyframe's ``qpos``, ``qvel`` and ``ctrl`` sizes, as MuJoCo checks them ("invalid qpos size")."""
    sizes = {"qpos": sum(_NQ[t] for t in joint_types), "qvel": sum(_NV[t] for t in joint_types),
             "ctrl": sum(1 for a in doc.root.iterchildren("actuator") for e in a if isinstance(e.tag, str))}
    for k, key in enumerate(el for kf in doc.root.iterchildren("keyframe") for el in kf.iterchildren("key")):
        for attr, n in sizes.items():
            text = key.get(attr)
            if text is not None and len(text.split()) != n:
                doc.report(key, "MJCF_KEYFRAME", f"keyframe {k}: invalid {attr} size, expected length {n}")
