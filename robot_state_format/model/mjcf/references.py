"""Names an MJCF element refers to must exist, as MuJoCo refuses a model with a dangling reference.

MuJoCo 4.0 refuses a sensor whose object is not there ("unrecognized name 'x' of sensorized object"), a
contact ``<pair>`` or ``<exclude>`` naming a missing geom or body ("geom 'floor' not found in collision
0"), an actuator, equality or tendon naming a missing joint, site, body, tendon or geom, a geom naming a
missing material or height field, a material naming a missing texture, a light or camera whose ``target``
names a missing body, an actuator without a transmission target (``test/model/mjcf/test_mjcf_references.py``).
The names are those of the expanded document (includes, replicates) and of the built Model (flexcomp
bodies, bodies and joints an ``<attach>`` brings in); a model with an ``<attach>`` is not checked for the
other kinds (the attached model's sites, geoms and tendons are not in this document).
"""

from __future__ import annotations

from pathlib import Path

from lxml import etree

from robot_state_format.model.mjcf.document import Document
from robot_state_format.model.types import Model

__all__ = ["check_references"]

# attribute → kind, per top-level section (MuJoCo's reference attributes)
_SECTIONS: dict[str, dict[str, str]] = {
    "sensor": {"site": "site", "joint": "joint", "tendon": "tendon", "actuator": "actuator", "body": "body",
               "geom1": "geom", "geom2": "geom", "body1": "body", "body2": "body", "subtree1": "body",
               "subtree2": "body", "camera": "camera"},
    "actuator": {"joint": "joint", "jointinparent": "joint", "tendon": "tendon", "site": "site",
                 "refsite": "site", "body": "body"},
    "contact": {"geom1": "geom", "geom2": "geom", "body1": "body", "body2": "body"},
    "equality": {"body1": "body", "body2": "body", "site1": "site", "site2": "site", "joint1": "joint",
                 "joint2": "joint", "tendon1": "tendon", "tendon2": "tendon"},
    "tendon": {"joint": "joint", "site": "site", "geom": "geom", "sidesite": "site"},
}
_OBJTYPES = {"body": "body", "xbody": "body", "geom": "geom", "site": "site", "camera": "camera",
             "joint": "joint", "tendon": "tendon", "actuator": "actuator"}
_NAMED_BY_FILE = frozenset({"mesh", "texture", "hfield", "skin"})
_TRANSMISSIONS = ("joint", "jointinparent", "tendon", "site", "body", "cranksite")
# checked by names.check_names on the children of these (MJCF_UNKNOWN_JOINT / MJCF_UNKNOWN_NAME), and an
# equality <joint>'s joints by the mimic reading
_CHECKED_PARENTS = frozenset({"actuator", "sensor", "equality"})  # (a tendon's path is not checked there)
_CHECKED_ATTRS = frozenset({"joint", "site", "body", "body1", "body2", "site1", "site2"})


def _names(doc: Document, model: Model) -> dict[str, set[str]]:
    out: dict[str, set[str]] = {k: set() for k in ("body", "joint", "geom", "site", "camera", "tendon",
                                                   "actuator", "material", "texture", "hfield")}
    out["body"] |= {"world", *model.links}
    out["joint"] |= set(model.joints)
    for el in doc.root.iter():
        if not isinstance(el.tag, str) or any(a.tag == "default" for a in el.iterancestors()):
            continue
        tag, name = str(el.tag), el.get("name")
        parent = el.getparent()
        section = parent.tag if parent is not None else None
        if tag in _NAMED_BY_FILE and section == "asset" and name is None and el.get("file"):
            name = Path(str(el.get("file"))).stem
        if name is None:
            continue
        if tag == "freejoint":
            tag = "joint"
        elif section == "actuator":
            tag = "actuator"
        elif section == "tendon":
            tag = "tendon"
        if tag in out:
            out[tag].add(name)
    return out


def _check(doc: Document, el: etree._Element, attr: str, kind: str, names: dict[str, set[str]]) -> None:
    value = el.get(attr)
    if value is not None and value not in names[kind]:
        doc.report(el, "MJCF_UNKNOWN_REFERENCE", f"{attr}={value!r}: no {kind} of that name (MuJoCo refuses a "
                   "dangling reference)")


def check_references(doc: Document, model: Model) -> None:
    """Report every reference to a name that is not there (``MJCF_UNKNOWN_REFERENCE``)."""
    if any(True for _ in doc.root.iter("attach")):
        return
    names = _names(doc, model)
    for section in doc.root:
        table = _SECTIONS.get(str(section.tag))
        if table is None:
            continue
        for el in section.iter():
            if el is section or not isinstance(el.tag, str):
                continue
            parent = el.getparent()
            done = parent is not None and parent.tag in _CHECKED_PARENTS
            for attr, kind in table.items():
                if done and (attr in _CHECKED_ATTRS or (el.tag == "joint" and section.tag == "equality")):
                    continue
                _check(doc, el, attr, kind, names)
            if section.tag == "sensor":
                for attr, type_attr in (("objname", "objtype"), ("refname", "reftype")):
                    obj = _OBJTYPES.get(el.get(type_attr) or "")
                    if obj is not None:
                        _check(doc, el, attr, obj, names)
    for section in doc.root.iterchildren("actuator"):
        for el in section:
            if isinstance(el.tag, str) and el.tag != "plugin" and not any(el.get(a) for a in _TRANSMISSIONS):
                doc.report(el, "MJCF_UNKNOWN_REFERENCE", "missing transmission target for actuator (one of "
                           f"{', '.join(_TRANSMISSIONS)})")
    for world in doc.root.iterchildren("worldbody"):  # a <body> straight under <mujoco> is ignored by MuJoCo
        for el in world.iter("geom"):
            _check(doc, el, "material", "material", names)
            _check(doc, el, "hfield", "hfield", names)
        for el in world.iter("light", "camera"):  # "unknown target body in light", whatever the mode
            if el.get("target"):
                _check(doc, el, "target", "body", names)
    for el in doc.root.iter("material"):
        if el.getparent() is not None and el.getparent().tag == "asset":
            _check(doc, el, "texture", "texture", names)
