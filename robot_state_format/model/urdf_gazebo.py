"""What libsdformat 12's URDF conversion (the one Gazebo uses) refuses in a URDF urdfdom loads.

One rule, two uses (docs/sdformat.md "URDF read as part of SDFormat"): a URDF an SDFormat
``<include>`` pulls in is read by libsdformat, so there each refusal is an error
(``model/sdf/urdf_include.py``); a plain URDF is judged by urdfdom, so there each is a warning naming
libsdformat (``model/loader.py``), which ``check --strict`` turns into libsdformat's verdict.

The classes, each checked against ``conformance/sdf_ref`` (libsdformat 12.3):

* ``SDF_INVALID_INERTIA``: a link whose mass matrix is invalid (:func:`valid_mass_matrix`);
* ``SDF_DUPLICATE_SENSOR``: ``<gazebo reference="R">`` extensions adding two ``<sensor>``s of one
  name to R ("sensor with name[s] already exists");
* ``SDF_NAME_CLASH``: a joint named like a link (SDFormat links and joints share one namespace);
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


@dataclass
class _Mass:
    """A lumped mass in one link's frame: mass, centre of mass, inertia about the origin."""

    mass: float
    com: np.ndarray
    about_origin: np.ndarray

    def moved(self, x: np.ndarray) -> _Mass:  # the same body seen from the parent frame (x = X_parent_link)
        r, p = x[:3, :3], x[:3, 3]
        c = r @ self.com + p
        about_com = r @ (self.about_origin - _steiner(self.mass, self.com)) @ r.T
        return _Mass(self.mass, c, about_com + _steiner(self.mass, c))

    def __add__(self, other: _Mass) -> _Mass:
        m = self.mass + other.mass
        c = (self.mass * self.com + other.mass * other.com) / m if m else self.com
        return _Mass(m, c, self.about_origin + other.about_origin)

    def six(self) -> tuple[float, float, float, float, float, float]:
        i = self.about_origin - _steiner(self.mass, self.com)  # about the centre of mass
        return (float(i[0, 0]), float(i[0, 1]), float(i[0, 2]), float(i[1, 1]), float(i[1, 2]), float(i[2, 2]))


def _steiner(m: float, c: np.ndarray) -> np.ndarray:
    return np.asarray(m * (float(c @ c) * np.eye(3) - np.outer(c, c)))


def _own(model: Model, name: str) -> _Mass:
    link = model.links.get(name)
    if link is None or link.inertial is None:
        return _Mass(0.0, np.zeros(3), np.zeros((3, 3)))
    ine = link.inertial
    ixx, ixy, ixz, iyy, iyz, izz = ine.inertia
    moi = np.array([[ixx, ixy, ixz], [ixy, iyy, iyz], [ixz, iyz, izz]])
    return _Mass(ine.mass, np.zeros(3), moi).moved(ine.origin)


def _converted_links(model: Model) -> list[tuple[str, _Mass]]:
    """The links libsdformat's URDF conversion creates, each with the mass matrix it checks: a fixed
    joint (not to the world, not kept by an extension) lumps its child into the parent, bottom-up; a
    link whose lumped mass is 0 (within 1e-6) is dropped with everything below it."""
    kids: dict[str, list[tuple[str, bool, np.ndarray]]] = {}
    has_parent = set()
    keep = _unlumped_joints(model) if any(e.tag == "gazebo" for e in model.extensions) else set()
    for j in model.joints.values():
        lumped = j.type is JointType.FIXED and j.parent != WORLD and j.name not in keep
        kids.setdefault(j.parent, []).append((j.child, lumped, j.origin @ j.child_offset))
        has_parent.add(j.child)
    limit = len(model.links)

    def lumped_mass(name: str, depth: int = 0) -> _Mass:  # own plus what fixed joints lump into it
        total = _own(model, name)
        if depth <= limit:  # a cycle: urdfdom refuses it before this runs
            for c, lumped, x in kids.get(name, []):
                if lumped:
                    total = total + lumped_mass(c, depth + 1).moved(x)
        return total

    out: list[tuple[str, _Mass]] = []
    todo = [(n, False) for n in model.links if n not in has_parent]
    seen: set[str] = set()
    while todo:
        name, merged = todo.pop()
        if name in seen:
            continue
        seen.add(name)
        if name != WORLD:
            mass = lumped_mass(name)
            if abs(mass.mass) <= _MASS_EPS:
                continue  # dropped, with its subtree
            if not merged:
                out.append((name, mass))
        todo.extend((c, lumped) for c, lumped, _ in reversed(kids.get(name, [])))
    return out


def _no_link_left(model: Model, links: list[tuple[str, _Mass]]) -> list[Refusal]:
    roots = [n for n in model.links if n not in {j.child for j in model.joints.values()}]
    if links or not roots:
        return []
    return [Refusal("SDF_URDF_NO_LINK", "no link has a mass: the URDF conversion drops every link without one "
                    "(no <inertial> or mass 0, after fixed joints lump their child links into it) with the links "
                    "below it, and a model without links is invalid", model.links[roots[0]].source)]


def refusals(model: Model) -> list[Refusal]:
    """Everything libsdformat's URDF conversion refuses in ``model`` (a URDF urdfdom loaded)."""
    links = _converted_links(model)
    out = []
    for name, mass in links:
        six = mass.six()
        if not valid_mass_matrix(mass.mass, six):
            link = model.links[name]
            own = link.inertial is not None and mass.mass == link.inertial.mass  # nothing lumped into it
            what, shown = ("", link.inertial.inertia) if own and link.inertial is not None else (
                ", with the links fixed joints lump into it", six)
            out.append(Refusal("SDF_INVALID_INERTIA", f"link {name!r} has an invalid inertia{what} (mass "
                               f"{mass.mass:g}, ixx ixy ixz iyy iyz izz {' '.join(f'{v:g}' for v in shown)})",
                               link.source))
    created = {name for name, _ in links}
    out += [Refusal("SDF_NAME_CLASH", f"joint {j.name!r} has the name of a link: SDFormat links and joints share "
                    "one namespace", j.source)
            for j in model.joints.values() if j.child in created and j.name in created]
    if any(e.tag == "gazebo" and "sensor" in e.xml for e in model.extensions):
        out += _duplicate_sensors(model)
    return out + _no_link_left(model, links)


__all__ = ["Refusal", "refusals", "valid_mass_matrix"]
