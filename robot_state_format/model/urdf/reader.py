"""URDF reader: ``<robot>`` XML → :class:`~robot_state_format.model.types.Model` (format ``"urdf"``).

Reads every element of the URDF XML reference (links with inertial/visual/collision, named
materials, joints of every type with origin, axis, limit, dynamics, mimic, calibration and
safety_controller) plus Drake's URDF extensions that change the robot (``drake:joint`` of type
ball/planar/screw/universal, ``capsule``/``drake:capsule``/``drake:ellipsoid`` geometry).
Anything else (``gazebo``, ``transmission``, ``ros2_control``, other ``drake:`` elements) is kept
in ``Model.extensions``.  All problems are collected; errors raise one ``ModelError`` (codes in
:mod:`robot_state_format.model.urdf.validate`), warnings go to ``Model.warnings``.
"""

from __future__ import annotations

import math
import re
from typing import TypeVar

import numpy as np
from lxml import etree

from robot_state_format import numbers
from robot_state_format.errors import Diagnostic, ModelError, Severity
from robot_state_format.model.types import (
    Calibration,
    Dynamics,
    Extension,
    Geometry,
    Inertial,
    Joint,
    JointType,
    Link,
    Mimic,
    Model,
    SafetyController,
    Shape,
    Source,
)
from robot_state_format.model.urdf.fast import FastReader
from robot_state_format.model.urdf.parts import (
    _AXIS_TYPES,
    _D,
    DRAKE_JOINT_TYPES,
    JOINT_TYPES,
    _tag_name,
    describe,
    inertial_children,
    link_materials,
    prepare_urdf_bytes,
    strip_default_namespace,
)
from robot_state_format.model.urdf.validate import validate_urdf_model
from robot_state_format.model.xml import parse_xml

_IDENTITY = np.eye(4)
_IDENTITY.flags.writeable = False  # shared: only ever copied
_ZERO3 = (0.0, 0.0, 0.0)
_ONE3 = (1.0, 1.0, 1.0)
_new = object.__new__
_T = TypeVar("_T")
_VERSION_RE = re.compile(r"^(\d+)\.(\d+)$")

class _Reader(FastReader):
    """One pass over a URDF document; collects diagnostics instead of stopping at the first."""

    # -- extensions --------------------------------------------------------------------------
    def extension(self, model: Model, el: etree._Element, owner: str | None) -> None:
        model.extensions.append(Extension(_tag_name(el.tag), etree.tostring(el, encoding="unicode", with_tail=False),
                                          owner, self.source(el)))

    # -- geometry ------------------------------------------------------------------------------
    def _nonneg(self, el: etree._Element, attr: str) -> float | None:
        v = self.number(el, attr, required=True)
        if v is not None and v < 0.0:
            self.error("URDF_BAD_GEOMETRY", f"{attr} must not be negative", el)
        return v

    def geometry(self, el: etree._Element) -> Geometry | None:
        g = None
        for c in el:
            if c.tag.__class__ is str:
                if g is not None:
                    self.warn("URDF_EXTRA_GEOMETRY", "<geometry> holds more than one shape; only the first is used",
                              el)
                    break
                g = c
        if g is None:
            self.error("URDF_MISSING_GEOMETRY", "<geometry> holds no shape", el)
            return None
        tag = g.tag
        if tag == "box":
            size = self.vec3(g, "size", None) if g.get("size") is not None else self.vector(g, "size", 3, required=True)
            if size is not None and min(size) < 0.0:
                self.error("URDF_BAD_GEOMETRY", "box size must not be negative", g)
            return Geometry("box", size=size)
        if tag == "cylinder":
            return Geometry("cylinder", radius=self._nonneg(g, "radius"), length=self._nonneg(g, "length"))
        if tag == "sphere":
            return Geometry("sphere", radius=self._nonneg(g, "radius"))
        if tag == "mesh":
            filename = g.get("filename")
            if not filename:
                self.error("URDF_MISSING_ATTRIBUTE", "<mesh> needs attribute 'filename'", g)
            scale_text = g.get("scale")
            scale = _ONE3 if scale_text is None else self.vec3(g, "scale", _ONE3) if scale_text.count(" ") >= 2 \
                else self.vector(g, "scale", 3, _ONE3, allow_one=True)
            assert scale is not None
            return Geometry("mesh", filename=filename, scale=(scale[0], scale[1], scale[2]))
        if tag == "capsule" or tag == _D + "capsule":
            return Geometry("capsule", radius=self._nonneg(g, "radius"), length=self._nonneg(g, "length"))
        if tag == _D + "ellipsoid":
            a, b, c = (self.number(g, k, required=True) for k in ("a", "b", "c"))
            if a is None or b is None or c is None:
                return Geometry("ellipsoid")
            if min(a, b, c) <= 0.0:
                self.error("URDF_BAD_GEOMETRY", "ellipsoid half-axes a, b, c must be positive", g)
            return Geometry("ellipsoid", radii=(a, b, c))
        self.error("URDF_UNKNOWN_GEOMETRY", f"unknown geometry <{_tag_name(str(tag))}>", g)
        return None

    def shape(self, model: Model, el: etree._Element, link: str, visual: bool) -> Shape | None:
        geometry: Geometry | None = None
        material_el = origin_el = None
        found_geometry = False
        for c in el:
            tag = c.tag
            if tag == "geometry":
                if not found_geometry:
                    geometry = self.geometry(c)
                found_geometry = True
            elif tag == "origin":
                origin_el = c
            elif tag == "material" and visual:
                material_el = c
            elif tag == "verbose" or not isinstance(tag, str):
                continue
            else:
                self.extension(model, c, link)
        if not found_geometry:
            self.error("URDF_MISSING_GEOMETRY", f"<{el.tag}> of link {link!r} has no <geometry>", el)
        if geometry is None:
            return None
        sname = el.get("name")
        shape = Shape(geometry, self.origin(origin_el), sname, None,
                      self.source_as(el, el.tag if sname is None else f"{el.tag}[name={sname}]"))
        if material_el is not None:
            mat = self.material(material_el, top_level=False)
            shape.material = mat
            if mat.name is not None:
                self.material_refs.setdefault(mat.name, []).append((shape, material_el))
            elif mat.rgba is None and mat.texture is None:
                self.error("URDF_MISSING_NAME", "visual <material> needs a name, a color or a texture",
                           material_el)
        return shape

    # -- links ---------------------------------------------------------------------------------
    def inertial(self, el: etree._Element) -> Inertial:
        origin_el, mass_el, inertia_el = inertial_children(el)
        inertial = Inertial(0.0, self.origin(origin_el) if origin_el is not None else _IDENTITY.copy())
        if mass_el is None:
            self.error("URDF_MISSING_MASS", "<inertial> needs a <mass>", el)
        else:
            text = mass_el.get("value")  # self.number's fast path, inlined
            mass = numbers.plain_float(text) if text is not None and text.strip() == text else None
            if mass is None:
                mass = self.number(mass_el, "value", required=True)
            if mass is not None:
                if mass < 0.0:
                    self.error("URDF_NEGATIVE_MASS", f"mass {mass} is negative", mass_el)
                inertial.mass = mass
        if inertia_el is None:
            self.error("URDF_MISSING_INERTIA", "<inertial> needs an <inertia>", el)
        else:
            get = inertia_el.get
            vals: tuple[float, float, float, float, float, float]
            try:
                texts = (get("ixx"), get("ixy"), get("ixz"), get("iyy"), get("iyz"), get("izz"))
                joined = "".join(texts)  # a missing one: TypeError
                if not joined.isascii() or "_" in joined or " " in joined or not joined.isprintable():
                    raise ValueError  # outside the number grammar (or spaced, a tab from &#9;): the slow path tells which
                ixx, ixy, ixz, iyy, iyz, izz = map(float, texts)
                vals = (ixx, ixy, ixz, iyy, iyz, izz)
                if not math.isfinite(sum(vals)) or (0.0 in vals and numbers.may_underflow(joined)):
                    raise ValueError  # non-finite or underflowing: the slow path tells which
            except (TypeError, ValueError):
                slow = [self.number(inertia_el, k, required=True)
                        for k in ("ixx", "ixy", "ixz", "iyy", "iyz", "izz")]
                got = [v for v in slow if v is not None]
                if len(got) == 6:
                    vals = (got[0], got[1], got[2], got[3], got[4], got[5])
                else:
                    return inertial
            inertial.inertia = vals
        return inertial

    def link(self, model: Model, el: etree._Element) -> None:
        name = el.get("name")
        src = self.source_as(el, "link" if name is None else f"link[name={name}]")  # describe(el)
        if not name:  # urdfdom logs it and reads the link under the empty name
            self.warn("URDF_MISSING_NAME", "<link> has no name; read as the link named ''", el)
            name = ""
        link = Link(name, _IDENTITY.copy(), source=src)
        seen_inertial = False
        for c in el:
            tag = c.tag
            # self.lenient(c, ...) inlined (a link is read outside any lenient element)
            if tag == "visual" or tag == "collision":
                self._lenient, self._dropped = c, False
                try:
                    s = self.shape(model, c, name, tag == "visual")
                finally:
                    self._lenient = None
                if self._dropped:
                    self._dropped = False
                elif s is not None:
                    (link.visuals if tag == "visual" else link.collisions).append(s)
            elif tag == "inertial":
                if seen_inertial:
                    self.warn("URDF_DUPLICATE_INERTIAL", f"link {name!r} has more than one <inertial>; "
                              "the first is used", c)
                else:
                    seen_inertial = True
                    self._lenient, self._dropped = c, False
                    try:
                        inertial = self.inertial(c)
                    finally:
                        self._lenient = None
                    if self._dropped:
                        self._dropped = False
                    else:
                        link.inertial = inertial
            elif isinstance(tag, str):
                self.extension(model, c, name)
        if name in model.links:
            prev = model.links[name].source.line
            self.error("URDF_DUPLICATE_LINK", f"link name {name!r} is already used (line {prev})", el)
            return
        model.links[name] = link

    # -- joints --------------------------------------------------------------------------------
    def joint(self, model: Model, el: etree._Element, drake: bool) -> None:  # noqa: C901, PLR0915 (complexity 41, 108 statements): to be split, issue 38
        name = el.get("name")
        tag = "drake:joint" if drake else "joint"
        src = self.source_as(el, tag if name is None else f"{tag}[name={name}]")  # describe(el)
        if not name:
            self.error("URDF_MISSING_NAME", f"<{tag}> needs a name", el)
            name = f"<unnamed joint, line {el.sourceline}>"  # keeps the graph checks meaningful
        type_text = el.get("type")
        table = DRAKE_JOINT_TYPES if drake else JOINT_TYPES
        jtype = table.get(type_text) if type_text is not None else None
        if type_text is None:
            self.error("URDF_MISSING_JOINT_TYPE", f"joint {name!r} has no type", el)
        elif jtype is None:
            self.error("URDF_BAD_JOINT_TYPE", f"joint {name!r} has unknown type {type_text!r} "
                       f"(expected one of {', '.join(table)})", el)
        if jtype is None:  # reported above; read on as a fixed joint for the graph checks
            jtype, type_text = JointType.FIXED, "fixed"
        parent = child = None
        axis_el = limit_el = None
        joint = Joint(name, jtype, "", "", _IDENTITY, _IDENTITY.copy(), source=src)
        pitch_el = None
        range_ok = True
        for c in el:
            ctag = c.tag
            if not isinstance(ctag, str):
                continue
            if self.drake and ctag.startswith(_D):  # drake:joint may prefix its children too
                local = ctag[len(_D):]
                if local == "screw_thread_pitch":
                    pitch_el = c
                    continue
                if drake and local in ("parent", "child", "origin", "axis", "limit", "dynamics"):
                    ctag = local
            if ctag == "parent":
                parent = c.get("link")
                if not parent:
                    self.error("URDF_MISSING_ATTRIBUTE", f"<parent> of joint {name!r} needs attribute 'link'", c)
            elif ctag == "child":
                child = c.get("link")
                if not child:
                    self.error("URDF_MISSING_ATTRIBUTE", f"<child> of joint {name!r} needs attribute 'link'", c)
            elif ctag == "origin":
                joint.origin = self.origin(c)
            elif ctag == "axis":
                axis_el = c
            elif ctag == "limit":
                limit_el = c
                joint.limits, range_ok = self.limits(c, jtype)
                if self.drake and any(attr.startswith(_D) for attr in c.attrib):
                    self.extension(model, c, name)  # e.g. drake:acceleration
            elif ctag == "dynamics":
                damping = self.number(c, "damping")
                friction = self.number(c, "friction")
                if c.get("damping") is None and c.get("friction") is None:  # urdfdom refuses it
                    self.error("URDF_EMPTY_DYNAMICS", f"<dynamics> of joint {name!r} sets neither damping "
                               "nor friction", c)
                joint.dynamics = Dynamics(damping or 0.0, friction or 0.0)
            elif ctag == "mimic":
                leader = c.get("joint")
                if not leader:
                    self.error("URDF_MISSING_ATTRIBUTE", f"<mimic> of joint {name!r} needs attribute 'joint'", c)
                else:
                    joint.mimic.append(Mimic(leader, self.number(c, "multiplier", 1.0) or 0.0,
                                             self.number(c, "offset", 0.0) or 0.0))
            elif ctag == "calibration":
                joint.calibration = Calibration(self.number(c, "rising"), self.number(c, "falling"))
            elif ctag == "safety_controller":
                joint.safety_controller = SafetyController(
                    self.number(c, "soft_lower_limit", 0.0) or 0.0, self.number(c, "soft_upper_limit", 0.0) or 0.0,
                    self.number(c, "k_position", 0.0) or 0.0, self.number(c, "k_velocity", required=True) or 0.0)
            else:
                if ctag == "actuator":
                    for a in c:
                        if a.tag == _D + "screw_thread_pitch":
                            pitch_el = a
                self.extension(model, c, name)
        if parent is None and el.find("parent") is None and el.find(_D + "parent") is None:
            self.error("URDF_MISSING_PARENT", f"joint {name!r} has no <parent>", el)
        if child is None and el.find("child") is None and el.find(_D + "child") is None:
            self.error("URDF_MISSING_CHILD", f"joint {name!r} has no <child>", el)
        joint.parent = parent or ""
        joint.child = child or ""
        if joint.origin is _IDENTITY:  # no <origin>: a joint owns its arrays
            joint.origin = _IDENTITY.copy()

        # axis per type
        if jtype in _AXIS_TYPES:
            default = (0.0, 0.0, 1.0) if (drake and jtype is JointType.PLANAR) else (1.0, 0.0, 0.0)
            joint.axis = default
            if axis_el is not None:
                v = self.vec3(axis_el, "xyz", default)
                assert v is not None
                n = math.sqrt(v[0] * v[0] + v[1] * v[1] + v[2] * v[2])
                if n < 1e-12:  # urdfdom loads it: a rotation or translation along nothing never moves
                    self.warn("URDF_ZERO_AXIS", f"joint {name!r} has a zero axis: it cannot move and is read "
                              "as a fixed joint", axis_el)
                    joint.type = JointType.FIXED
                    joint.axis = None
                else:
                    joint.axis = (v[0] / n, v[1] / n, v[2] / n)
        elif jtype is JointType.UNIVERSAL:
            joint.axis, joint.axis2 = (1.0, 0.0, 0.0), (0.0, 1.0, 0.0)

        # limits per type
        if jtype in (JointType.REVOLUTE, JointType.PRISMATIC):
            if limit_el is None:
                self.error("URDF_MISSING_LIMIT", f"{type_text} joint {name!r} needs a <limit>", el)
            elif range_ok and joint.limits is not None and joint.limits.lower == joint.limits.upper:
                self.warn("URDF_ZERO_RANGE_LIMIT", f"joint {name!r} has lower == upper limit; it cannot move",
                          limit_el)
        elif jtype is JointType.CONTINUOUS and joint.limits is not None:
            joint.limits.lower = joint.limits.upper = None

        if jtype is JointType.SCREW:
            if pitch_el is None:
                self.error("URDF_MISSING_SCREW_PITCH", f"screw joint {name!r} needs <drake:screw_thread_pitch>", el)
            else:
                joint.screw_pitch = self.number(pitch_el, "value", 0.0, required=True) or 0.0

        if name in model.joints:
            prev = model.joints[name].source.line
            self.error("URDF_DUPLICATE_JOINT", f"joint name {name!r} is already used (line {prev})", el)
            name = joint.name = f"{name} <duplicate, line {el.sourceline}>"  # still checked as an edge
        model.joints[name] = joint

    # -- robot ---------------------------------------------------------------------------------
    def robot(self, root: etree._Element) -> Model:
        name = root.get("name")
        if not name:
            self.error("URDF_MISSING_NAME", "<robot> needs a name", root)
        model = Model(name=name or "robot", format="urdf", source_file=self.file)
        version = root.get("version")
        if version is not None:  # urdfdom: "x.y", 1.0 up to 1.2
            m = _VERSION_RE.match(version)
            if m is None:
                self.error("URDF_VERSION", f"URDF version {version!r} is not of the form 'x.y'", root)
            elif (int(m.group(1)), int(m.group(2))) not in ((1, 0), (1, 1), (1, 2)):
                self.error("URDF_VERSION", f"URDF version {version!r} is not supported (1.0 up to 1.2)", root)
            else:
                self.version = model.urdf_version = (int(m.group(1)), int(m.group(2)))
        model.root_source = Source(self.file, root.sourceline, "robot")
        material_els: list[etree._Element] = []
        fast = not self.drake  # the fast path reads no Drake extension
        for el in root[:]:
            tag = el.tag
            if tag == "link":
                if not (fast and self.fast_link(model, el)):
                    self.link(model, el)
            elif tag == "joint":
                if not (fast and self.fast_joint(model, el)):
                    self.joint(model, el, False)
            elif tag == "material":
                material_els.append(el)
            elif tag == _D + "joint":
                self.joint(model, el, True)
            elif isinstance(tag, str):
                owner = el.get("reference") if tag == "gazebo" else None
                self.extension(model, el, owner)
        for el in material_els:
            mat = self.lenient(el, self.material, el, True)
            if mat is None or mat.name is None:
                continue
            if mat.name in model.materials:
                self.error("URDF_DUPLICATE_MATERIAL", f"material name {mat.name!r} is already used", el)
                continue
            model.materials[mat.name] = mat
        self.place()
        link_materials(model, self.material_refs, material_els, self.warn)
        return model


def read_urdf(text: str | bytes, *, file: str = "<string>") -> Model:
    """Read a URDF document; raise ``ModelError`` listing every error found."""
    raw, pre, drake = prepare_urdf_bytes(text, file)
    root, xml_warnings = parse_xml(raw, file)
    reader = _Reader(file, drake)
    reader.diags.extend(xml_warnings)
    reader.diags.extend(pre)
    if not isinstance(root.tag, str):
        raise ModelError(Diagnostic("URDF_NOT_ROBOT", "the root element is not <robot>", file,
                                    root.sourceline))
    if root.tag.startswith("{") and not root.tag.startswith(_D):
        strip_default_namespace(root)
    if root.tag != "robot":
        raise ModelError(Diagnostic("URDF_NOT_ROBOT", f"the root element is <{_tag_name(root.tag)}>, not <robot>",
                                    file, root.sourceline, describe(root)))
    model = reader.robot(root)
    validate_urdf_model(model, reader.diags, root, drake=drake)
    errors = [d for d in reader.diags if d.severity is Severity.ERROR]
    warnings = [d for d in reader.diags if d.severity is not Severity.ERROR]
    if errors:
        raise ModelError(errors + warnings)
    model.warnings.extend(warnings)
    return model
