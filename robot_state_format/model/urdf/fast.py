"""The URDF reader's fast path: a ``<link>`` or ``<joint>`` written as most robots write it, read in one
lean pass (:meth:`FastReader.fast_link`, :meth:`FastReader.fast_joint`).

The fast path never reports.  Whatever it does not read itself (an extension child, a Drake element, a
number outside its plain form) or whatever would give a diagnostic makes it return False with nothing
changed, and the checked reader (:mod:`robot_state_format.model.urdf.reader`) reads that element from scratch,
so every diagnostic is the checked reader's.  What it reads is what the checked reader reads: the same
values, objects and order (the same value helpers of :class:`~.urdf_values.ValueReader` where a number
may need explaining).

The transforms of the elements it reads are made at the end of the document (:meth:`FastReader.place`)
in one numpy operation: each ``<origin>`` text is turned into a transform once, and every element
still gets its own writable array (a view of one block; no two overlap).  Also here: the ``<material>``
and ``<limit>`` readers both paths share.
"""

from __future__ import annotations

import math

import numpy as np
from lxml import etree

from robot_state_format import numbers
from robot_state_format.model.types import (
    Calibration,
    Dynamics,
    Geometry,
    Inertial,
    Joint,
    JointType,
    Limits,
    Link,
    Material,
    Mimic,
    Model,
    SafetyController,
    Shape,
)
from robot_state_format.model.urdf.parts import _AXIS_TYPES, _BOUNDED_TYPES, JOINT_TYPES, inertial_children
from robot_state_format.model.urdf.values import ValueReader
from robot_state_format.spatial import _rpy_rows

_IDENTITY = np.eye(4)
_IDENTITY.flags.writeable = False  # a placeholder until place(): never written
_W = (0.0, 0.0, 0.0, 1.0)  # the last row of a transform
_EYE16 = (1.0, 0.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 0.0, 1.0, 0.0, *_W)
_ZERO3 = (0.0, 0.0, 0.0)
_ONE3 = (1.0, 1.0, 1.0)
_X = (1.0, 0.0, 0.0)
_plain_float = numbers.plain_float
_may_underflow = numbers.may_underflow
_isfinite = math.isfinite
_REVOLUTE, _PRISMATIC, _CONTINUOUS = JointType.REVOLUTE, JointType.PRISMATIC, JointType.CONTINUOUS

__all__ = ["FastReader"]


class _Refused(Exception):
    """The element is left to the checked reader."""


def _plain(el: etree._Element, attr: str) -> float:
    """The checked reader's number() of a required attribute when it reads it at once, else _Refused."""
    text = el.get(attr)
    value = _plain_float(text) if text is not None and text.strip() == text else None
    if value is None:
        raise _Refused
    return value


class FastReader(ValueReader):
    """:class:`ValueReader` with the fast path of links and joints (see the module docstring)."""

    def __init__(self, file: str, drake: bool = True) -> None:
        super().__init__(file, drake)
        self.material_refs: dict[str, list[tuple[Shape, etree._Element]]] = {}
        # distinct transforms of <origin> texts read silently, row by row (16 floats: spatial's
        # xyz_rpy_to_transform, made into arrays at the end)
        self._tfs: list[tuple[float, ...]] = [_EYE16]
        self._tf_at: dict[tuple[str | None, str | None], int] = {(None, None): 0}
        self._origin_of: list[Shape | Inertial | Joint] = []  # given transform self._tfs[at] by place()
        self._origin_at: list[int] = []
        self._offset_of: list[Joint] = []  # given the identity by place()
        self._pose_of: list[Link] = []

    # -- shared with the checked reader --------------------------------------------------------
    def material(self, el: etree._Element, top_level: bool) -> Material:
        mat = Material(name=el.get("name") or None)
        for c in el:
            tag = c.tag
            if tag == "color":
                rgba = self.vector(c, "rgba", 4, required=True)
                if rgba is not None:
                    mat.rgba = (rgba[0], rgba[1], rgba[2], rgba[3])
                    if any(v < 0.0 or v > 1.0 for v in rgba):
                        self.warn("URDF_COLOR_RANGE", "color rgba values should be within [0, 1]", c)
            elif tag == "texture":
                filename = c.get("filename")
                if filename is None:
                    self.warn("URDF_EMPTY_TEXTURE", "<texture> without a 'filename' is ignored", c)
                else:
                    mat.texture = filename
        if top_level:
            if mat.name is None:
                self.error("URDF_MISSING_NAME", "<material> at robot level needs a name", el)
            # a <texture/> without filename is tolerated (warned above), as urdfdom accepts it
            if mat.rgba is None and mat.texture is None and el.find("texture") is None:
                self.error("URDF_EMPTY_MATERIAL",
                           f"material {mat.name!r} has neither a color nor a texture", el)
        return mat

    def limits(self, el: etree._Element, jtype: JointType) -> tuple[Limits, bool]:
        """The ``<limit>`` of a ``jtype`` joint, and whether lower and upper were both valid numbers."""
        get = el.get
        try:  # fast path: all four present and finite
            texts = (get("lower", "0"), get("upper", "0"), get("effort"), get("velocity"))
            joined = "".join(texts)  # a missing one: TypeError
            lo, up, eff, vel = map(float, texts)
            if (joined.isascii() and "_" not in joined and " " not in joined and joined.isprintable()
                    and math.isfinite(lo + up + eff + vel)
                    and lo <= up and not (0.0 in (lo, up, eff, vel) and numbers.may_underflow(joined))
                    and (self.version < (1, 2) or (get("lower") is not None and get("upper") is not None))):
                return Limits(lo, up, eff, vel), True
        except (TypeError, ValueError):
            pass
        before = len(self.diags)
        lower, upper = self.number(el, "lower", 0.0), self.number(el, "upper", 0.0)
        range_ok = len(self.diags) == before
        lim = Limits(lower=lower, upper=upper, effort=self.number(el, "effort", required=True),
                     velocity=self.number(el, "velocity", required=True))
        if self.version >= (1, 2) and jtype in _BOUNDED_TYPES and (get("lower") is None or get("upper") is None):
            self.error("URDF_MISSING_ATTRIBUTE", "revolute and prismatic joints need both lower and upper "
                       "limits in URDF version 1.2 or later", el)
        if range_ok and lim.lower is not None and lim.upper is not None and lim.lower > lim.upper:
            if jtype in _BOUNDED_TYPES and self.version >= (1, 2):
                self.error("URDF_LIMIT_ORDER", f"limit lower {lim.lower} is greater than upper {lim.upper}", el)
            elif jtype in _BOUNDED_TYPES:  # urdfdom checks the order from version 1.2 only
                self.warn("URDF_LIMIT_ORDER", f"limit lower {lim.lower} is greater than upper {lim.upper} "
                          "(an error from URDF version 1.2)", el)
            else:  # lower/upper bound no motion of this joint type (urdfdom ignores them)
                self.warn("URDF_LIMIT_IGNORED", f"limit lower {lim.lower} is greater than upper {lim.upper}; "
                          f"lower and upper are ignored for a {jtype.value} joint", el)
        return lim, range_ok

    # -- transforms ----------------------------------------------------------------------------
    def _origin_index(self, o: etree._Element) -> int:
        """Index in ``_tfs`` of the transform of ``<origin>`` ``o`` (what the checked origin() reads)."""
        get = o.get
        key = (get("xyz"), get("rpy"))
        at = self._tf_at.get(key)
        if at is None:
            before = len(self.diags)
            xyz = self.vec3_text(o, "xyz", key[0], _ZERO3)
            rpy = self.vec3_text(o, "rpy", key[1], _ZERO3)
            if len(self.diags) != before or xyz is None or rpy is None:
                raise _Refused
            at = self._tf_at[key] = len(self._tfs)
            roll, pitch, yaw = rpy
            if roll == 0.0 and pitch == 0.0 and yaw == 0.0:
                self._tfs.append((1.0, 0.0, 0.0, xyz[0], 0.0, 1.0, 0.0, xyz[1], 0.0, 0.0, 1.0, xyz[2], *_W))
            else:
                r0, r1, r2 = _rpy_rows(roll, pitch, yaw)
                self._tfs.append((*r0, xyz[0], *r1, xyz[1], *r2, xyz[2], *_W))
        if get("quat_xyzw") is not None:
            raise _Refused
        return at

    def place(self) -> None:
        """Give the elements read on the fast path their transforms: one block, a view of it each."""
        at = self._origin_at
        n, m = len(at), len(self._offset_of)
        if n + m + len(self._pose_of) == 0:
            return
        views = list(np.array(self._tfs).reshape(-1, 4, 4)[at + [0] * (m + len(self._pose_of))])
        for obj, v in zip(self._origin_of, views):
            obj.origin = v
        for joint, v in zip(self._offset_of, views[n:]):
            joint.child_offset = v
        for link, v in zip(self._pose_of, views[n + m:]):
            link.pose = v

    def _undo(self, placed: int, before: int) -> bool:
        """Forget what the element read since ``placed``/``before`` left (its transforms and diagnostics)."""
        del self.diags[before:]
        del self._origin_of[placed:], self._origin_at[placed:]
        return False

    # -- links ---------------------------------------------------------------------------------
    def fast_link(self, model: Model, el: etree._Element) -> bool:
        """Read ``<link>`` ``el`` into ``model``; False (nothing read) if it needs the checked reader."""
        name = el.get("name")
        if not name or name in model.links:
            return False
        placed, before = len(self._origin_at), len(self.diags)
        link = Link(name, _IDENTITY, source=self.source_as(el, f"link[name={name}]"))
        refs: list[tuple[str, Shape, etree._Element]] = []
        try:
            for c in el[:]:
                tag = c.tag
                if tag == "visual":
                    link.visuals.append(self._shape(c, tag, True, refs))
                elif tag == "collision":
                    link.collisions.append(self._shape(c, tag, False, refs))
                elif tag == "inertial":
                    if link.inertial is not None:
                        raise _Refused  # a second one: warned
                    link.inertial = self._inertial(c)
                elif tag.__class__ is str:
                    raise _Refused  # an extension
        except _Refused:
            return self._undo(placed, before)
        if len(self.diags) != before:
            return self._undo(placed, before)
        self._pose_of.append(link)
        for mname, shape, mel in refs:
            self.material_refs.setdefault(mname, []).append((shape, mel))
        model.links[name] = link
        return True

    def _inertial(self, el: etree._Element) -> Inertial:
        origin_el, mass_el, inertia_el = inertial_children(el)
        if mass_el is None or inertia_el is None:
            raise _Refused
        mass = _plain(mass_el, "value")
        get = inertia_el.get
        try:  # the checked inertial()'s fast path
            texts = (get("ixx"), get("ixy"), get("ixz"), get("iyy"), get("iyz"), get("izz"))
            joined = "".join(texts)  # a missing one: TypeError
            ixx, ixy, ixz, iyy, iyz, izz = map(float, texts)
        except (TypeError, ValueError):
            raise _Refused from None
        vals = (ixx, ixy, ixz, iyy, iyz, izz)
        if (mass < 0.0 or not joined.isascii() or "_" in joined or " " in joined or not joined.isprintable()
                or not _isfinite(sum(vals))
                or (0.0 in vals and _may_underflow(joined))):
            raise _Refused
        inertial = Inertial(mass, _IDENTITY, vals)
        self._origin_of.append(inertial)
        self._origin_at.append(0 if origin_el is None else self._origin_index(origin_el))
        return inertial

    def _shape(self, el: etree._Element, tag: str, visual: bool,
               refs: list[tuple[str, Shape, etree._Element]]) -> Shape:
        geometry_el = origin_el = material_el = None
        for c in el[:]:
            ctag = c.tag
            if ctag == "geometry":
                if geometry_el is not None:
                    raise _Refused  # a second <geometry> (the checked reader ignores it)
                geometry_el = c
            elif ctag == "origin":
                origin_el = c
            elif ctag == "material" and visual:
                material_el = c
            elif ctag.__class__ is str and ctag != "verbose":
                raise _Refused  # an extension
        if geometry_el is None:
            raise _Refused
        geometry = self._geometry(geometry_el)
        sname = el.get("name")
        shape = Shape(geometry, _IDENTITY, sname, None, self.source_as(el, tag if sname is None else
                                                                       f"{tag}[name={sname}]"))
        self._origin_of.append(shape)
        self._origin_at.append(0 if origin_el is None else self._origin_index(origin_el))
        if material_el is not None:
            mat = self.material(material_el, top_level=False)
            shape.material = mat
            if mat.name is not None:
                refs.append((mat.name, shape, material_el))
            elif mat.rgba is None and mat.texture is None:
                raise _Refused
        return shape

    def _geometry(self, el: etree._Element) -> Geometry:
        g = None
        for c in el[:]:
            if c.tag.__class__ is str:
                if g is not None:
                    raise _Refused  # more than one shape: warned
                g = c
        if g is None:
            raise _Refused
        tag = g.tag
        if tag == "mesh":
            filename = g.get("filename")
            scale_text = g.get("scale")
            if not filename or (scale_text is not None and scale_text.count(" ") < 2):
                raise _Refused
            scale = _ONE3 if scale_text is None else self.vec3_text(g, "scale", scale_text, _ONE3)
            assert scale is not None
            return Geometry("mesh", filename=filename, scale=(scale[0], scale[1], scale[2]))
        if tag == "box":
            text = g.get("size")
            size = self.vec3_text(g, "size", text, None) if text is not None else None
            if size is None or min(size) < 0.0:
                raise _Refused
            return Geometry("box", size=size)
        if tag == "cylinder":
            radius, length = _plain(g, "radius"), _plain(g, "length")
            if radius < 0.0 or length < 0.0:
                raise _Refused
            return Geometry("cylinder", radius=radius, length=length)
        if tag == "sphere":
            radius = _plain(g, "radius")
            if radius < 0.0:
                raise _Refused
            return Geometry("sphere", radius=radius)
        raise _Refused

    # -- joints --------------------------------------------------------------------------------
    def fast_joint(self, model: Model, el: etree._Element) -> bool:  # noqa: C901 (complexity 25): to be split, issue 38
        """Read ``<joint>`` ``el`` into ``model``; False (nothing read) if it needs the checked reader."""
        name = el.get("name")
        type_text = el.get("type")
        jtype = JOINT_TYPES.get(type_text) if type_text is not None else None
        if not name or jtype is None or name in model.joints:
            return False
        placed, before = len(self._origin_at), len(self.diags)
        joint = Joint(name, jtype, "", "", _IDENTITY, _IDENTITY, source=self.source_as(el, f"joint[name={name}]"))
        axis_el = limit_el = None
        at = 0
        range_ok = True
        try:
            for c in el[:]:
                tag = c.tag
                if tag == "parent" or tag == "child":
                    link = c.get("link")
                    if not link:
                        raise _Refused
                    if tag == "parent":
                        joint.parent = link
                    else:
                        joint.child = link
                elif tag == "origin":
                    at = self._origin_index(c)
                elif tag == "axis":
                    axis_el = c
                elif tag == "limit":
                    limit_el = c
                    joint.limits, range_ok = self.limits(c, jtype)
                elif tag == "mimic":
                    leader = c.get("joint")
                    if not leader:
                        raise _Refused
                    joint.mimic.append(Mimic(leader, self.number(c, "multiplier", 1.0) or 0.0,
                                             self.number(c, "offset", 0.0) or 0.0))
                elif tag == "dynamics":
                    if c.get("damping") is None and c.get("friction") is None:
                        raise _Refused  # refused by urdfdom
                    joint.dynamics = Dynamics(self.number(c, "damping") or 0.0, self.number(c, "friction") or 0.0)
                elif tag == "calibration":
                    joint.calibration = Calibration(self.number(c, "rising"), self.number(c, "falling"))
                elif tag == "safety_controller":
                    joint.safety_controller = SafetyController(
                        self.number(c, "soft_lower_limit", 0.0) or 0.0,
                        self.number(c, "soft_upper_limit", 0.0) or 0.0,
                        self.number(c, "k_position", 0.0) or 0.0, self.number(c, "k_velocity", required=True) or 0.0)
                elif tag.__class__ is str:
                    raise _Refused  # an extension
            if not joint.parent or not joint.child:
                raise _Refused
            if jtype in _AXIS_TYPES:
                joint.axis = _X
                if axis_el is not None:
                    v = self.vec3(axis_el, "xyz", _X)
                    assert v is not None
                    n = math.sqrt(v[0] * v[0] + v[1] * v[1] + v[2] * v[2])
                    if n < 1e-12:
                        raise _Refused  # a zero axis: warned
                    joint.axis = (v[0] / n, v[1] / n, v[2] / n)
            limits = joint.limits
            if jtype is _REVOLUTE or jtype is _PRISMATIC:
                if limit_el is None or (range_ok and limits is not None and limits.lower == limits.upper):
                    raise _Refused  # no <limit>, or a range that cannot move: reported
            elif jtype is _CONTINUOUS and limits is not None:
                limits.lower = limits.upper = None
        except _Refused:
            return self._undo(placed, before)
        if len(self.diags) != before:
            return self._undo(placed, before)
        self._origin_of.append(joint)
        self._origin_at.append(at)
        self._offset_of.append(joint)
        model.joints[name] = joint
        return True
