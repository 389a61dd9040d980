"""What libsdformat 12's URDF conversion (the one Gazebo uses) refuses in a URDF urdfdom loads.

One rule, two uses (docs/sdformat.md "URDF read as part of SDFormat"): a URDF an SDFormat
``<include>`` pulls in is read by libsdformat, so there each refusal is an error
(``model/sdf/urdf_include.py``); a plain URDF is judged by urdfdom, so there each is a warning naming
libsdformat (``model/loader.py``), which ``check --gazebo`` turns into libsdformat's verdict.

The classes, each checked against ``conformance/sdf_ref`` (libsdformat 12.3):

* ``SDF_INVALID_INERTIA``: a link whose mass matrix is invalid (:func:`~robot_state_format.model.inertia.valid_mass_matrix`);
* ``SDF_DUPLICATE_SENSOR``: ``<gazebo reference="R">`` extensions adding two ``<sensor>``s of one
  name to R ("sensor with name[s] already exists");
* ``SDF_NAME_CLASH``: a joint named like a link (SDFormat links and joints share one namespace);
* ``SDF_URDF_NO_LINK``: every link dropped. The conversion drops a link without mass (no
  ``<inertial>`` or mass 0, after the masses of the links lumped into it by fixed joints are added)
  together with everything below it; when that leaves no link, libsdformat refuses the model
  ("A model must have at least one link");
* ``SDF_URDF_VERSION``: a ``<robot version>`` other than 1.0: the urdfdom libsdformat 12.3 is built
  with reads 1.0 only ("only version 1.0 is currently supported"), the one here 1.0 to 1.2;
* ``SDF_DUPLICATE_NAME``: a link that is the child of two joints (a loop urdfdom loads). urdfdom keeps,
  as the link's parent joint, the last of them by name, and lists the link under every parent; the
  conversion creates the link once per parent, each time with that joint ("link with name[L] already
  exists", "joint with name[J] already exists"), unless that joint is fixed and lumped away;
* ``SDF_JOINT_FRAME_NOT_FOUND``: an SDFormat ``<joint>`` added by a ``<gazebo>`` extension whose
  ``<parent>`` or ``<child>`` names a URDF link the conversion lumped into its parent by a fixed joint
  (or dropped): that link no longer exists ("parent frame with name[L] ... not found").
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from lxml import etree

from robot_state_format.model.inertia import valid_mass_matrix
from robot_state_format.model.types import WORLD, JointType, Model, Source
from robot_state_format.model.xml import safe_parser

_MASS_EPS = 1e-6  # ignition::math::equal's default tolerance, libsdformat's "has no mass" test
_TRUE = ("true", "1")


@dataclass(frozen=True)
class Refusal:
    code: str
    message: str
    source: Source


def _gazebo_children(model: Model, word: str) -> list[tuple[str, etree._Element, Source]]:
    """(reference, child element, its source) of the children of the ``<gazebo>`` extensions whose text
    holds ``word`` (the others are not parsed)."""
    out: list[tuple[str, etree._Element, Source]] = []
    for ext in model.extensions:
        if ext.tag != "gazebo" or word not in ext.xml:
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
    count: dict[str, int] = {}
    for e in model.extensions:  # parse only the references with two sensors or more
        if e.tag == "gazebo":
            count[(e.owner or "").strip()] = count.get((e.owner or "").strip(), 0) + e.xml.count("<sensor")
    if all(n < 2 for n in count.values()):
        return []
    out: list[Refusal] = []
    seen: dict[str, set[str]] = {}
    for ref, c, src in _gazebo_children(model, "<sensor"):
        if etree.QName(c).localname != "sensor":
            continue
        name = c.get("name") or ""
        names = seen.setdefault(ref, set())
        if name in names:
            out.append(Refusal("SDF_DUPLICATE_SENSOR", f"the <gazebo reference={ref!r}> extensions add two sensors "
                               f"named {name!r}", src))
        names.add(name)
    return out


def _joints_to_lost_links(model: Model, created: set[str]) -> list[Refusal]:
    lost = set(model.links) - created - {WORLD}
    if not lost:
        return []
    out: list[Refusal] = []
    for _, c, src in _gazebo_children(model, "<joint"):
        if etree.QName(c).localname != "joint":
            continue
        for end in ("parent", "child"):
            e = c.find(end)
            name = (e.text or "").strip() if e is not None else ""
            if name in lost:
                out.append(Refusal("SDF_JOINT_FRAME_NOT_FOUND", f"the <gazebo> joint {c.get('name')!r} has {end} "
                                   f"{name!r}, a link the URDF conversion lumps into its parent by a fixed joint (or "
                                   "drops): no such frame is left", src))
    return out


def _created_twice(model: Model, created: set[str]) -> list[Refusal]:
    """Links (and their joint) the conversion creates once per parent: see the module text."""
    parents: dict[str, list[str]] = {}
    for j in [*model.joints.values(), *model.constraints.values()]:
        parents.setdefault(j.child, []).append(j.name)
    kept = _unlumped_joints(model)
    out = []
    for link, names in parents.items():
        if len(names) < 2 or (link not in created and _own_mass(model, link) <= _MASS_EPS):
            continue  # a link without mass is dropped, not created twice
        last = max(names)  # urdfdom's joints are a std::map: the last by name sets the parent joint
        joint = model.joints.get(last) or model.constraints[last]
        if joint.type is JointType.FIXED and last not in kept:
            continue
        out.append(Refusal("SDF_DUPLICATE_NAME", f"link {link!r} is the child of joints {', '.join(sorted(names))}: "
                           f"the URDF conversion creates it once per parent (link with name[{link}] already exists)",
                           model.links[link].source))
        out.append(Refusal("SDF_DUPLICATE_NAME", f"joint {last!r} is created once per parent of link {link!r} "
                           f"(joint with name[{last}] already exists)", joint.source))
    return out


def _unlumped_joints(model: Model) -> set[str]:
    """Fixed joints a ``<gazebo reference>`` extension keeps (``disableFixedJointLumping``,
    ``preserveFixedJoint``)."""
    return {ref for ref, c, _ in _gazebo_children(model, "FixedJoint")
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
    """The parallel-axis term: m (|c|^2 E - c c^T)."""
    x, y, z = float(c[0]), float(c[1]), float(c[2])
    return np.array([[m * (y * y + z * z), -m * x * y, -m * x * z],
                     [-m * x * y, m * (x * x + z * z), -m * y * z],
                     [-m * x * z, -m * y * z, m * (x * x + y * y)]])


def _massive_without_inertial(model: Model) -> set[str]:
    """Links whose ``<inertial>`` without ``<inertia>`` urdfdom 6 ignored (``URDF_MISSING_INERTIA``):
    libsdformat 12's urdfdom keeps its mass, so the link is not dropped (found by the warning's line)."""
    lines = [d.line for d in model.warnings if d.code == "URDF_MISSING_INERTIA" and d.line is not None]
    if not lines:
        return set()
    starts = sorted((link.source.line, name) for name, link in model.links.items() if link.source.line is not None)
    out = set()
    for line in lines:
        before = [name for start, name in starts if start <= line]
        if before:
            out.add(before[-1])
    return out


def _own(model: Model, name: str, massive: set[str] | frozenset[str] = frozenset()) -> _Mass:
    link = model.links.get(name)
    if name in massive:  # a mass of unknown value: just above "no mass", a point
        return _Mass(2 * _MASS_EPS, np.zeros(3), np.zeros((3, 3)))
    if link is None or link.inertial is None:
        return _Mass(0.0, np.zeros(3), np.zeros((3, 3)))
    ine = link.inertial
    ixx, ixy, ixz, iyy, iyz, izz = ine.inertia
    moi = np.array([[ixx, ixy, ixz], [ixy, iyy, iyz], [ixz, iyz, izz]])
    return _Mass(ine.mass, np.zeros(3), moi).moved(ine.origin)


def _own_mass(model: Model, name: str, massive: set[str] | frozenset[str] = frozenset()) -> float:
    """``_own(model, name, massive).mass`` without building the mass matrix."""
    if name in massive:
        return 2 * _MASS_EPS
    link = model.links.get(name)
    return 0.0 if link is None or link.inertial is None else float(link.inertial.mass)


def _converted_links(model: Model) -> list[tuple[str, _Mass | None]]:
    """The links libsdformat's URDF conversion creates, each with the mass matrix it checks: a fixed
    joint (not to the world, not kept by an extension) lumps its child into the parent, bottom-up; a
    link whose lumped mass is 0 (within 1e-6) is dropped with everything below it."""
    kids: dict[str, list[tuple[str, bool, np.ndarray]]] = {}
    has_parent = set()
    keep = _unlumped_joints(model)
    for j in model.joints.values():
        lumped = j.type is JointType.FIXED and j.parent != WORLD and j.name not in keep
        kids.setdefault(j.parent, []).append((j.child, lumped, j.origin @ j.child_offset))
        has_parent.add(j.child)
    cache: dict[str, _Mass | None] = {}
    massive = _massive_without_inertial(model)

    def lumped_mass(name: str) -> _Mass | None:
        """Own plus what fixed joints lump into it; None: the link's own inertial alone. Children first,
        with a stack of its own (a chain of thousands of fixed joints is a valid URDF)."""
        stack, open_ = [(name, False)], set()
        while stack:
            n, ready = stack.pop()
            if n in cache:
                continue
            if not ready:
                open_.add(n)  # a cycle: urdfdom refuses it before this runs; never walked twice
                stack.append((n, True))
                stack.extend((c, False) for c, lumped, _ in kids.get(n, []) if lumped and c not in cache
                             and c not in open_)
                continue
            total: _Mass | None = None
            for c, lumped, x in kids.get(n, []):
                if lumped:
                    sub = cache.get(c)
                    sub = _own(model, c, massive) if sub is None else sub
                    if sub.mass != 0.0:
                        total = (_own(model, n, massive) if total is None else total) + sub.moved(x)
            cache[n] = total
        return cache[name]

    out: list[tuple[str, _Mass | None]] = []
    todo = [(n, False) for n in model.links if n not in has_parent]
    seen: set[str] = set()
    while todo:
        name, merged = todo.pop()
        if name in seen:
            continue
        seen.add(name)
        if name != WORLD:
            mass = lumped_mass(name)
            m = mass.mass if mass is not None else _own_mass(model, name, massive)
            if abs(m) <= _MASS_EPS:
                continue  # dropped, with its subtree
            if not merged:
                out.append((name, mass))
        todo.extend((c, lumped) for c, lumped, _ in reversed(kids.get(name, [])))
    return out


def _no_link_left(model: Model, links: list[tuple[str, _Mass | None]]) -> list[Refusal]:
    children = {j.child for j in model.joints.values()}
    roots = [n for n in model.links if n not in children]
    if links or not roots:
        return []
    return [Refusal("SDF_URDF_NO_LINK", "no link has a mass: the URDF conversion drops every link without one "
                    "(no <inertial> or mass 0, after fixed joints lump their child links into it) with the links "
                    "below it, and a model without links is invalid", model.links[roots[0]].source)]


def refusals(model: Model) -> list[Refusal]:
    """Everything libsdformat's URDF conversion refuses in ``model`` (a URDF urdfdom loaded)."""
    if model.urdf_version not in (None, (1, 0)):
        assert model.urdf_version is not None
        major, minor = model.urdf_version
        src = model.root_source or Source(model.source_file)
        return [Refusal("SDF_URDF_VERSION", f"URDF version {major}.{minor}: the URDF parser libsdformat 12 is built "
                        "with reads version 1.0 only", src)]
    links = _converted_links(model)
    out = []
    for name, mass in links:
        link = model.links[name]
        if mass is None:  # its own inertial, as written (libsdformat checks it in the inertial frame)
            if link.inertial is None or valid_mass_matrix(link.inertial.mass, link.inertial.inertia):
                continue
            what, m, six = "", link.inertial.mass, link.inertial.inertia
        else:
            m, six = mass.mass, mass.six()
            if valid_mass_matrix(m, six):
                continue
            what = ", with the links fixed joints lump into it"
        out.append(Refusal("SDF_INVALID_INERTIA", f"link {name!r} has an invalid inertia{what} (mass {m:g}, "
                           f"ixx ixy ixz iyy iyz izz {' '.join(f'{v:g}' for v in six)})", link.source))
    created = {name for name, _ in links}
    out += [Refusal("SDF_NAME_CLASH", f"joint {j.name!r} has the name of a link: SDFormat links and joints share "
                    "one namespace", j.source)
            for j in model.joints.values() if j.child in created and j.name in created]
    out += _duplicate_sensors(model)
    out += _created_twice(model, created)
    out += _joints_to_lost_links(model, created)
    return out + _no_link_left(model, links)


__all__ = ["Refusal", "refusals"]
