"""What libsdformat 12's URDF conversion (the one Gazebo uses) refuses in a URDF urdfdom loads.

One rule, two uses (docs/sdformat.md "URDF read as part of SDFormat"): a URDF an SDFormat
``<include>`` pulls in is read by libsdformat, so there each refusal is an error
(``model/sdf/urdf_include.py``); a plain URDF is judged by urdfdom, so there each is a warning naming
libsdformat (``model/loader.py``), which ``check --strict`` turns into libsdformat's verdict.

The classes, each checked against ``conformance/sdf_ref`` (libsdformat 12.3):

* ``SDF_INVALID_INERTIA``: a link whose mass matrix is invalid (:func:`valid_mass_matrix`);
* ``SDF_DUPLICATE_SENSOR``: ``<gazebo reference="R">`` extensions adding two ``<sensor>``s of one
  name to R ("sensor with name[s] already exists");
* ``SDF_URDF_NO_LINK``: every link dropped. The conversion drops a link without mass (no
  ``<inertial>`` or mass 0, after the masses of the links lumped into it by fixed joints are added)
  together with everything below it; when that leaves no link, libsdformat refuses the model
  ("A model must have at least one link").
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from lxml import etree

from robot_state_format.model.types import WORLD, JointType, Model, Source
from robot_state_format.model.xml import safe_parser

_MASS_EPS = 1e-6  # ignition::math::equal's default tolerance, libsdformat's "has no mass" test
_TRUE = ("true", "1")


@dataclass(frozen=True)
class Refusal:
    code: str
    message: str
    source: Source


def valid_mass_matrix(mass: float, six: tuple[float, float, float, float, float, float],
                      tolerance: float = 10.0) -> bool:
    """libsdformat's (ignition-math ``MassMatrix3::IsValid``) test: mass >= 0, the leading minors of
    the inertia matrix and its principal moments non-negative, the moments obeying the triangle
    inequality, each within ``tolerance * DBL_EPSILON * trace / 2``."""
    ixx, ixy, ixz, iyy, iyz, izz = six
    moi = np.array([[ixx, ixy, ixz], [ixy, iyy, iyz], [ixz, iyz, izz]])
    eps = tolerance * np.finfo(float).eps * 0.5 * abs(ixx + iyy + izz)
    if not (mass >= 0 and ixx + eps >= 0 and ixx * iyy - ixy * ixy + eps >= 0 and np.linalg.det(moi) + eps >= 0):
        return False
    m = np.linalg.eigvalsh(moi)
    eps = tolerance * np.finfo(float).eps * 0.5 * abs(float(m.sum()))
    return bool(m.min() + eps >= 0 and m[0] + m[1] + eps >= m[2] and m[1] + m[2] + eps >= m[0]
                and m[2] + m[0] + eps >= m[1])


def _gazebo_children(model: Model) -> list[tuple[str, etree._Element, Source]]:
    """(reference, child element, its source) of every ``<gazebo>`` extension's children."""
    out: list[tuple[str, etree._Element, Source]] = []
    for ext in model.extensions:
        if ext.tag != "gazebo":
            continue
        try:
            root = etree.fromstring(ext.xml.encode("utf-8"), safe_parser())
        except etree.XMLSyntaxError:  # kept verbatim from a document that parsed: not expected
            continue
        for c in root:
            if isinstance(c.tag, str):
                line = ext.source.line + c.sourceline - 1 if ext.source.line and c.sourceline else ext.source.line
                name = c.get("name")
                elem = f"{etree.QName(c).localname}[name={name}]" if name is not None else etree.QName(c).localname
                out.append(((ext.owner or "").strip(), c, Source(ext.source.file, line, elem)))
    return out


def _duplicate_sensors(model: Model) -> list[Refusal]:
    out: list[Refusal] = []
    seen: dict[str, set[str]] = {}
    for ref, c, src in _gazebo_children(model):
        if etree.QName(c).localname != "sensor":
            continue
        name = c.get("name") or ""
        names = seen.setdefault(ref, set())
        if name in names:
            out.append(Refusal("SDF_DUPLICATE_SENSOR", f"the <gazebo reference={ref!r}> extensions add two sensors "
                               f"named {name!r}", src))
        names.add(name)
    return out


def _unlumped_joints(model: Model) -> set[str]:
    """Fixed joints a ``<gazebo reference>`` extension keeps (``disableFixedJointLumping``,
    ``preserveFixedJoint``)."""
    return {ref for ref, c, _ in _gazebo_children(model)
            if etree.QName(c).localname in ("disableFixedJointLumping", "preserveFixedJoint")
            and (c.text or "").strip().lower() in _TRUE}


def _no_link_left(model: Model) -> list[Refusal]:
    kids: dict[str, list[tuple[str, bool]]] = {}
    has_parent = set()
    keep = _unlumped_joints(model) if any(e.tag == "gazebo" for e in model.extensions) else set()
    for j in model.joints.values():
        lumped = j.type is JointType.FIXED and j.parent != WORLD and j.name not in keep
        kids.setdefault(j.parent, []).append((j.child, lumped))
        has_parent.add(j.child)

    def own(name: str) -> float:
        inertial = model.links[name].inertial if name in model.links else None
        return inertial.mass if inertial is not None else 0.0

    def mass(name: str, depth: int = 0) -> float:  # own mass plus what fixed joints lump into it
        if depth > len(model.links):  # a cycle: urdfdom refuses it before this runs
            return 0.0
        return own(name) + sum(mass(c, depth + 1) for c, lumped in kids.get(name, []) if lumped)

    roots = [n for n in model.links if n not in has_parent]
    tops = [c for r in roots for c, _ in kids.get(r, [])] if roots == [WORLD] else roots
    if not roots or any(abs(mass(t)) > _MASS_EPS for t in tops):
        return []
    root = model.links[roots[0]]
    return [Refusal("SDF_URDF_NO_LINK", "no link has a mass: the URDF conversion drops every link without one "
                    "(no <inertial> or mass 0, after fixed joints lump their child links into it) with the links "
                    "below it, and a model without links is invalid", root.source)]


def refusals(model: Model) -> list[Refusal]:
    """Everything libsdformat's URDF conversion refuses in ``model`` (a URDF urdfdom loaded)."""
    out = [Refusal("SDF_INVALID_INERTIA", f"link {link.name!r} has an invalid inertia (mass "
                   f"{link.inertial.mass:g}, ixx ixy ixz iyy iyz izz "
                   f"{' '.join(f'{v:g}' for v in link.inertial.inertia)})", link.source)
           for link in model.links.values()
           if link.inertial is not None and not valid_mass_matrix(link.inertial.mass, link.inertial.inertia)]
    if any(e.tag == "gazebo" and "sensor" in e.xml for e in model.extensions):
        out += _duplicate_sensors(model)
    return out + _no_link_left(model)


__all__ = ["Refusal", "refusals", "valid_mass_matrix"]
