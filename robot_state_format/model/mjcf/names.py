"""MuJoCo's name rules beyond the body tree: one namespace per object type, references that must resolve.

MuJoCo refuses a repeated name within an object type ("repeated name 'x' in geom"): geoms, sites,
cameras, lights, meshes, materials, textures, ... each have their own namespace; the elements of
``<actuator>``, ``<sensor>``, ``<tendon>`` and ``<equality>`` share one per section. It refuses an
actuator, sensor or fixed-tendon entry naming a joint that does not exist ("unknown transmission
target"), and ``fromto`` on a geom that is not a capsule, cylinder, box or ellipsoid.
"""

from __future__ import annotations

from lxml import etree

from robot_state_format.model.mjcf.document import Document

__all__ = ["check_names"]

_SHARED = frozenset({"actuator", "sensor", "tendon", "equality"})
_SKIP = frozenset({"body", "joint", "freejoint", "frame", "default", "include"})  # the body walk checks these


def check_names(doc: Document, joints: set[str]) -> None:
    seen: dict[tuple[str, str], etree._Element] = {}
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
        if parent is not None and (parent.tag in ("actuator", "sensor") or parent.tag == "fixed"):
            ref = el.get("joint")
            if ref is not None and ref not in joints:
                doc.report(el, "MJCF_UNKNOWN_JOINT", f"unknown joint {ref!r} (MuJoCo: unknown transmission target)")


def _default_type(doc: Document, el: etree._Element) -> str | None:
    cls = el.get("class")
    if cls is None:
        for anc in el.iterancestors():
            if anc.get("childclass"):
                cls = anc.get("childclass")
                break
    return doc.defaults.get(cls or "main", {}).get("geom", {}).get("type")
