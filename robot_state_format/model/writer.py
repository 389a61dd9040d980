"""Write a :class:`Model` as SDFormat or URDF where the two formats are equivalent.

* :func:`to_sdf` (URDF → SDFormat, as libsdformat's URDF parser does, without lumping fixed
  joints): each joint posed ``relative_to`` its parent link, each child link ``relative_to``
  its parent joint, axes in the joint frame; a URDF root link named ``world`` becomes the
  world; ``planar`` becomes ``drake:joint``; floating joints leave their child free.
  Version 1.9, 1.10 when a screw joint needs ``screw_thread_pitch``, 1.11 for ``<mimic>``.
* :func:`to_urdf` (SDFormat → URDF) for models that are trees of URDF joint types.  It refuses
  with :class:`~robot_state_format.errors.ConversionError` and the reason for worlds, model
  poses, static models, kinematic loops and gearboxes, ball/universal/revolute2/screw joints,
  multi-axis mimic, shapes URDF lacks and frames it cannot flatten.  A joint whose child link
  frame is not on the joint axis cannot keep that link frame in URDF: the link frame moves to
  the joint frame and its inertial, visuals, collisions and frames are re-posed so the body is
  unchanged (a warning says so; ``strict=True`` refuses instead).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

import numpy as np
from lxml import etree

from robot_state_format.errors import ConversionError
from robot_state_format.model.types import (
    SCOPE,
    WORLD,
    Geometry,
    Inertial,
    Joint,
    JointType,
    Limits,
    Material,
    Model,
    Shape,
)
from robot_state_format.model.xml import DRAKE_NS
from robot_state_format.spatial import Transform, inverse, transform_to_pose6

UNBOUNDED = 1e16


@dataclass
class Conversion:
    """The written document and what the reader of it should know."""

    text: str
    warnings: list[str] = field(default_factory=list)


def _num(v: float) -> str:
    f = float(v)
    if abs(f) < 1e-15:
        return "0"
    if f.is_integer() and abs(f) < 1e15:
        return str(int(f))
    return repr(f)


def _nums(values: Iterable[float]) -> str:
    return " ".join(_num(v) for v in values)


def _pose_text(x: Transform) -> str:
    return _nums(transform_to_pose6(x))


def _sub(parent: etree._Element, tag: str, text: str | None = None, **attrs: str) -> etree._Element:
    el = etree.SubElement(parent, tag, dict(attrs.items()))
    if text is not None:
        el.text = text
    return el


def _is_identity(x: Transform, tol: float = 1e-12) -> bool:
    return bool(np.allclose(x, np.eye(4), atol=tol))


# =========================================================================== SDFormat
def to_sdf(model: Model, *, version: str | None = None) -> Conversion:  # noqa: C901, PLR0915 (complexity 30, 82 statements): to be split, issue 38
    """Write ``model`` (read from URDF or SDFormat) as an SDFormat model file."""
    if model.is_world:
        raise ConversionError(f"{model.name!r} is a world; only single models are written as SDFormat here")
    warnings: list[str] = []
    joints_all = [*model.joints.values(), *model.constraints.values()]
    has_mimic = any(j.mimic for j in joints_all)
    has_screw = any(j.type is JointType.SCREW for j in joints_all)
    has_planar = any(j.type is JointType.PLANAR for j in joints_all)
    ver = version or ("1.11" if has_mimic else "1.10" if has_screw else "1.9")
    nsmap = {"drake": DRAKE_NS} if has_planar else None
    root = etree.Element("sdf", nsmap=nsmap)
    root.set("version", ver)
    world_link = model.links.get(WORLD)
    drop_world = world_link is not None and world_link.inertial is None and not world_link.visuals \
        and not world_link.collisions and model.format == "urdf"
    if world_link is not None and not drop_world:
        raise ConversionError("a link named 'world' with inertia or geometry cannot be written: "
                              "'world' is reserved in SDFormat 1.7+")
    nested = sorted((n for n in model.models if n), key=lambda n: n.count(SCOPE))
    for name in [*model.links, *model.frames, *[j.name for j in joints_all]]:
        scope = name.rsplit(SCOPE, 1)[0] if SCOPE in name else ""
        if scope and scope not in model.models:
            raise ConversionError(f"name {name!r} contains '::' but {scope!r} is no nested model; "
                                  "SDFormat 1.8+ names cannot contain '::'")
    poses = _root_poses(model)
    top = _sub(root, "model", name=model.name)
    mf = model.models.get("")
    if mf is not None and mf.canonical_link and model.links and next(iter(model.links)) != mf.canonical_link \
            and SCOPE not in mf.canonical_link:
        top.set("canonical_link", mf.canonical_link)
    if not _is_identity(model.pose):
        _sub(top, "pose", _pose_text(model.pose))
    if mf is not None and mf.static:
        _sub(top, "static", "true")
    scopes: dict[str, etree._Element] = {"": top}
    for n in nested:
        parent_name = n.rsplit(SCOPE, 1)[0] if SCOPE in n else ""
        el = _sub(scopes[parent_name], "model", name=n.rsplit(SCOPE, 1)[-1])
        rel = inverse(poses[parent_name]) @ poses[n] if parent_name else poses[n]
        _sub(el, "pose", _pose_text(rel))
        if model.models[n].static:
            _sub(el, "static", "true")
        scopes[n] = el
    parent_joint = {j.child: j for j in model.joints.values() if j.type is not JointType.FLOATING}
    for j in model.joints.values():
        if j.type is JointType.FLOATING:
            warnings.append(f"joint {j.name!r} is floating: SDFormat has no floating joint, {j.child!r} is left free")

    def scope_of(name: str) -> str:
        return name.rsplit(SCOPE, 1)[0] if SCOPE in name else ""

    def local(scope: str, name: str) -> str | None:
        if not scope:
            return name
        return name[len(scope) + 2:] if name.startswith(scope + SCOPE) else None

    for name, link in model.links.items():
        if drop_world and name == WORLD:
            continue
        s = scope_of(name)
        el = _sub(scopes[s], "link", name=local(s, name) or name)
        pj = parent_joint.get(name)
        jref = local(s, pj.name) if pj is not None and scope_of(pj.name) == s else None
        if pj is not None and jref is not None:
            _sub(el, "pose", _pose_text(pj.child_offset), relative_to=jref)
        else:
            _sub(el, "pose", _pose_text(inverse(poses[s]) @ link.pose) if s else _pose_text(link.pose))
        if link.inertial is not None:
            _sdf_inertial(el, link.inertial)
        for kind, shapes in (("visual", link.visuals), ("collision", link.collisions)):
            used: set[str] = set()
            for i, shape in enumerate(shapes):
                sname = shape.name or f"{local(s, name) or name}_{kind}" + (f"_{i}" if i else "")
                while sname in used:
                    sname += "_"
                used.add(sname)
                _sdf_shape(el, kind, sname, shape)
    for j in joints_all:
        if j.type is JointType.FLOATING:
            continue
        s = scope_of(j.name)
        _sdf_joint(scopes[s], j, local(s, j.name) or j.name, s, local, poses, model)
    for name, frame in model.frames.items():
        s = scope_of(name)
        el = _sub(scopes[s], "frame", name=local(s, name) or name)
        if frame.attached_to == WORLD:
            if not (mf is not None and mf.static) and not s:
                raise ConversionError(f"frame {name!r} is attached to the world, which a non-static SDFormat "
                                      "model cannot name")
            el.set("attached_to", "__model__")
            _sub(el, "pose", _pose_text(inverse(poses[s]) @ frame.pose if s else frame.pose))
            continue
        ref = local(s, frame.attached_to)
        if ref is None:
            raise ConversionError(f"frame {name!r} is attached to {frame.attached_to!r} outside its model")
        el.set("attached_to", ref)
        _sub(el, "pose", _pose_text(frame.pose), relative_to=ref)
    for e in model.extensions:
        if model.format == "sdf":
            warnings.append(f"extension <{e.tag}> not written")
    etree.indent(root, space="  ")
    text = etree.tostring(root, encoding="unicode", xml_declaration=False)
    return Conversion('<?xml version="1.0"?>\n' + text + "\n", warnings)


def _root_poses(model: Model) -> dict[str, Transform]:
    """X_root_M of every nested model frame ("" for the top-level model: identity)."""
    out: dict[str, Transform] = {"": np.eye(4)}
    for name, mf in model.models.items():
        if not name:
            continue
        base = np.eye(4) if mf.attached_to == WORLD else model.links[mf.attached_to].pose
        out[name] = base @ mf.pose
    return out


def _sdf_inertial(el: etree._Element, inertial: Inertial) -> None:
    i = _sub(el, "inertial")
    _sub(i, "pose", _pose_text(inertial.origin))
    _sub(i, "mass", _num(inertial.mass))
    t = _sub(i, "inertia")
    for n, v in zip(("ixx", "ixy", "ixz", "iyy", "iyz", "izz"), inertial.inertia):
        _sub(t, n, _num(v))


def _sdf_geometry(parent: etree._Element, g: Geometry) -> None:
    geo = _sub(parent, "geometry")
    if g.kind == "box":
        _sub(_sub(geo, "box"), "size", _nums(g.size or (1, 1, 1)))
    elif g.kind == "sphere":
        _sub(_sub(geo, "sphere"), "radius", _num(g.radius or 0))
    elif g.kind in ("cylinder", "capsule"):
        c = _sub(geo, g.kind)
        _sub(c, "radius", _num(g.radius or 0))
        _sub(c, "length", _num(g.length or 0))
    elif g.kind == "ellipsoid":
        _sub(_sub(geo, "ellipsoid"), "radii", _nums(g.radii or (1, 1, 1)))
    elif g.kind == "mesh":
        m = _sub(geo, "mesh")
        _sub(m, "uri", g.filename or "")
        if g.scale is not None:
            _sub(m, "scale", _nums(g.scale))
    elif g.kind == "plane":
        p = _sub(geo, "plane")
        _sub(p, "normal", "0 0 1")
        _sub(p, "size", _nums(g.size or (1, 1)))
    else:
        _sub(geo, "empty")


def _sdf_shape(link_el: etree._Element, kind: str, name: str, shape: Shape) -> None:
    el = _sub(link_el, kind, name=name)
    _sub(el, "pose", _pose_text(shape.origin))
    _sdf_geometry(el, shape.geometry)
    if kind == "visual" and shape.material is not None and shape.material.rgba is not None:
        m = _sub(el, "material")
        _sub(m, "ambient", _nums(shape.material.rgba))
        _sub(m, "diffuse", _nums(shape.material.rgba))


Local = Callable[[str, str], "str | None"]


def _sdf_axis(jel: etree._Element, tag: str, axis: tuple[float, float, float], limits: Limits | None,
              joint: Joint, dof: int, leader: Callable[[str], str]) -> None:
    ax = _sub(jel, tag)
    _sub(ax, "xyz", _nums(axis))
    if limits is not None:
        lim = _sub(ax, "limit")
        if limits.lower is not None:
            _sub(lim, "lower", _num(limits.lower))
        if limits.upper is not None:
            _sub(lim, "upper", _num(limits.upper))
        if limits.effort is not None:
            _sub(lim, "effort", _num(limits.effort))
        if limits.velocity is not None:
            _sub(lim, "velocity", _num(limits.velocity))
    dyn = joint.dynamics if dof == 0 else joint.dynamics2
    if dyn is not None:
        d = _sub(ax, "dynamics")
        _sub(d, "damping", _num(dyn.damping))
        _sub(d, "friction", _num(dyn.friction))
    for m in joint.mimic:
        if m.dof != dof:
            continue
        mim = _sub(ax, "mimic", joint=leader(m.joint), axis="axis2" if m.leader_dof else "axis")
        _sub(mim, "multiplier", _num(m.multiplier))
        _sub(mim, "offset", _num(m.offset))
        _sub(mim, "reference", "0")


def _sdf_joint(parent_el: etree._Element, j: Joint, name: str, scope: str, loc: Local,
               poses: dict[str, Transform], model: Model) -> None:
    if j.child == WORLD:
        raise ConversionError(f"joint {j.name!r} has the world as its child, which SDFormat 1.7+ forbids")
    parent_ref = WORLD if j.parent == WORLD else loc(scope, j.parent)
    child_ref = loc(scope, j.child)
    if parent_ref is None or child_ref is None:
        raise ConversionError(f"joint {j.name!r} connects links outside its model scope")
    if j.type is JointType.PLANAR:
        el = _sub(parent_el, f"{{{DRAKE_NS}}}joint", name=name, type="planar")
        _sub(el, f"{{{DRAKE_NS}}}parent", parent_ref)
        _sub(el, f"{{{DRAKE_NS}}}child", child_ref)
        _sub(el, f"{{{DRAKE_NS}}}damping", "0 0 0")
        if j.axis is not None and not np.allclose(j.axis, (0, 0, 1)):
            raise ConversionError(f"planar joint {j.name!r}: drake:joint moves in the joint's x-y plane; "
                                  f"its normal {j.axis} is not z")
    else:
        el = _sub(parent_el, "joint", name=name, type=j.type.value)
        _sub(el, "parent", parent_ref)
        _sub(el, "child", child_ref)
    x_rp = np.eye(4) if j.parent == WORLD else model.links[j.parent].pose
    if j.parent != WORLD:
        pose = _sub(el, "pose", _pose_text(j.origin), relative_to=parent_ref)
    else:
        x_rj = x_rp @ j.origin
        pose = _sub(el, "pose", _pose_text(inverse(poses[scope]) @ x_rj if scope else x_rj),
                    relative_to="__model__")
    el.remove(pose)
    el.insert(0, pose)
    if j.type is JointType.PLANAR:
        return
    def mimic_leader(name: str) -> str:
        ref = loc(scope, name)
        if ref is None:
            raise ConversionError(f"joint {j.name!r} mimics {name!r} outside its model scope")
        return ref

    if j.axis is not None:
        _sdf_axis(el, "axis", j.axis, j.limits, j, 0, mimic_leader)
    if j.axis2 is not None:
        _sdf_axis(el, "axis2", j.axis2, j.limits2, j, 1, mimic_leader)
    if j.type is JointType.SCREW:
        _sub(el, "screw_thread_pitch", _num(j.screw_pitch))
    if j.type is JointType.GEARBOX:
        _sub(el, "gearbox_ratio", _num(j.gearbox_ratio or 1.0))
        if j.gearbox_reference_body:
            ref = WORLD if j.gearbox_reference_body == WORLD else loc(scope, j.gearbox_reference_body)
            _sub(el, "gearbox_reference_body", ref or j.gearbox_reference_body)


# =========================================================================== URDF
_URDF_TYPES = {JointType.FIXED, JointType.REVOLUTE, JointType.CONTINUOUS, JointType.PRISMATIC,
               JointType.PLANAR, JointType.FLOATING}
_URDF_SHAPES = {"box", "sphere", "cylinder", "mesh"}


def to_urdf(model: Model, *, strict: bool = False) -> Conversion:  # noqa: C901, PLR0915 (complexity 38, 87 statements): to be split, issue 38
    """Write ``model`` as URDF, or raise :class:`ConversionError` with the reason it cannot be."""
    if model.is_world:
        raise ConversionError(f"{model.name!r} is a world of {len(model.models)} model(s); URDF describes one robot")
    if not _is_identity(model.pose, 1e-12):
        raise ConversionError("the model has a <pose> in the world; URDF has no model pose")
    mf = model.models.get("")
    if mf is not None and mf.static:
        raise ConversionError("the model is static; URDF has no static models")
    if model.constraints:
        names = ", ".join(sorted(model.constraints))
        raise ConversionError(f"joints {names} are not tree edges (kinematic loops, gearboxes or world children); "
                              "URDF kinematics must be a tree")
    for j in model.joints.values():
        if j.type not in _URDF_TYPES:
            raise ConversionError(f"joint {j.name!r} is {j.type.value}; URDF has no such joint type")
        for m in j.mimic:
            if m.dof or m.leader_dof:
                raise ConversionError(f"joint {j.name!r}: URDF mimic couples single-axis joints only")
    for name, s in model.models.items():
        if name and s.static:
            raise ConversionError(f"nested model {name!r} is static; URDF has no static models")
    for link in model.links.values():
        for shape in [*link.visuals, *link.collisions]:
            if shape.geometry.kind not in _URDF_SHAPES:
                raise ConversionError(f"link {link.name!r} uses a {shape.geometry.kind} geometry; URDF has only "
                                      "box, sphere, cylinder and mesh")
    warnings: list[str] = []
    links = {n: _MovedLink(lk.pose) for n, lk in model.links.items()}
    origins: dict[str, tuple[Transform, tuple[float, float, float] | None]] = {}
    for j in model.joints.values():
        origin, axis, moved = _urdf_joint_frame(j)
        if moved is not None:
            if strict:
                raise ConversionError(f"joint {j.name!r}: the child link frame is off the joint axis; URDF puts "
                                      "the child link frame at the joint frame")
            links[j.child].offset = moved  # X_newframe_oldframe
            warnings.append(f"link {j.child!r}: its frame moved to the frame of joint {j.name!r} (URDF puts a "
                            "child link frame at its joint); inertial, visuals, collisions and frames re-posed")
        origins[j.name] = (origin, axis)
    # a joint's origin is expressed in the parent link's (possibly moved) frame
    for j in model.joints.values():
        if j.parent != WORLD and j.parent in links:
            o, a = origins[j.name]
            origins[j.name] = (links[j.parent].offset @ o, a)
    world_needed = any(j.parent == WORLD for j in model.joints.values()) or any(
        f.attached_to == WORLD for f in model.frames.values())
    if world_needed and WORLD in model.links:
        raise ConversionError("the model has a link named 'world' and joints to the world; URDF cannot tell them apart")
    roots = list(model.root_links())
    if world_needed:
        roots = [WORLD, *roots]
    if len(roots) > 1:
        raise ConversionError(f"URDF needs one root link; this model has {len(roots)}: {', '.join(roots)}")
    frame_links = set(model.frames)
    clash = frame_links & set(model.links)
    if clash:
        raise ConversionError(f"frame(s) {', '.join(sorted(clash))} share a name with a link; URDF would "
                              "need links of the same name to flatten them")
    robot = etree.Element("robot", name=model.name)
    if world_needed:
        _sub(robot, "link", name=WORLD)
    for name, link in model.links.items():
        el = _sub(robot, "link", name=name)
        off = links[name].offset
        if link.inertial is not None:
            ie = _sub(el, "inertial")
            _urdf_origin(ie, off @ link.inertial.origin)
            _sub(ie, "mass", value=_num(link.inertial.mass))
            _sub(ie, "inertia", **dict(zip(("ixx", "ixy", "ixz", "iyy", "iyz", "izz"),
                                           (_num(v) for v in link.inertial.inertia))))
        for kind, shapes in (("visual", link.visuals), ("collision", link.collisions)):
            for shape in shapes:
                se = _sub(el, kind, **({"name": shape.name} if shape.name else {}))
                _urdf_origin(se, off @ shape.origin)
                _urdf_geometry(se, shape.geometry)
                if kind == "visual" and shape.material is not None:
                    _urdf_material(se, shape.material)
    for j in model.joints.values():
        origin, axis = origins[j.name]
        je = _sub(robot, "joint", name=j.name, type=j.type.value)
        _urdf_origin(je, origin)
        _sub(je, "parent", link=j.parent)
        _sub(je, "child", link=j.child)
        if axis is not None and j.type is not JointType.FIXED and j.type is not JointType.FLOATING:
            _sub(je, "axis", xyz=_nums(axis))
        if j.type in (JointType.REVOLUTE, JointType.PRISMATIC, JointType.CONTINUOUS) or j.limits is not None:
            lim = j.limits or Limits()
            attrs = {"effort": _num(lim.effort or 0.0), "velocity": _num(lim.velocity or 0.0)}
            if j.type is not JointType.CONTINUOUS:
                attrs["lower"] = _num(lim.lower if lim.lower is not None else -UNBOUNDED)
                attrs["upper"] = _num(lim.upper if lim.upper is not None else UNBOUNDED)
            _sub(je, "limit", **attrs)
        if j.dynamics is not None:
            _sub(je, "dynamics", damping=_num(j.dynamics.damping), friction=_num(j.dynamics.friction))
        for m in j.mimic:
            _sub(je, "mimic", joint=m.joint, multiplier=_num(m.multiplier), offset=_num(m.offset))
    for name, frame in model.frames.items():
        _sub(robot, "link", name=name)
        je = _sub(robot, "joint", name=f"{name}_frame_joint", type="fixed")
        base = links[frame.attached_to].offset if frame.attached_to in links else np.eye(4)
        _urdf_origin(je, base @ frame.pose)
        _sub(je, "parent", link=frame.attached_to)
        _sub(je, "child", link=name)
        if f"{name}_frame_joint" in model.joints:
            raise ConversionError(f"frame {name!r}: joint name {name}_frame_joint is already taken")
    if len(model.models) > 1:
        warnings.append("nested model frames have no URDF equivalent; their links keep their scoped names")
    etree.indent(robot, space="  ")
    return Conversion('<?xml version="1.0"?>\n' + etree.tostring(robot, encoding="unicode") + "\n", warnings)


@dataclass
class _MovedLink:
    pose: Transform
    offset: Transform = field(default_factory=lambda: np.eye(4))  # X_urdfframe_originalframe


def _urdf_joint_frame(j: Joint) -> tuple[Transform, tuple[float, float, float] | None, Transform | None]:
    """(URDF origin in the original parent frame, axis in the URDF child frame, link-frame move or None)."""
    c = j.child_offset
    if _is_identity(c, 1e-12) or j.type in (JointType.FIXED, JointType.FLOATING):
        return j.origin @ c, _rot_axis(c, j.axis), None
    p = c[:3, 3]
    a = np.asarray(j.axis if j.axis is not None else (0.0, 0.0, 1.0), dtype=float)
    if j.type is JointType.PRISMATIC or float(np.linalg.norm(p - (p @ a) * a)) < 1e-12:
        return j.origin @ c, _rot_axis(c, j.axis), None
    return j.origin, j.axis, c


def _rot_axis(c: Transform, axis: tuple[float, float, float] | None) -> tuple[float, float, float] | None:
    if axis is None:
        return None
    v = c[:3, :3].T @ np.asarray(axis, dtype=float)
    return (float(v[0]), float(v[1]), float(v[2]))


def _urdf_origin(parent: etree._Element, x: Transform) -> None:
    if _is_identity(x, 1e-15):
        return
    p = transform_to_pose6(x)
    _sub(parent, "origin", xyz=_nums(p[:3]), rpy=_nums(p[3:]))


def _urdf_geometry(parent: etree._Element, g: Geometry) -> None:
    geo = _sub(parent, "geometry")
    if g.kind == "box":
        _sub(geo, "box", size=_nums(g.size or (1, 1, 1)))
    elif g.kind == "sphere":
        _sub(geo, "sphere", radius=_num(g.radius or 0))
    elif g.kind == "cylinder":
        _sub(geo, "cylinder", radius=_num(g.radius or 0), length=_num(g.length or 0))
    else:
        attrs = {"filename": g.filename or ""}
        if g.scale is not None:
            attrs["scale"] = _nums(g.scale)
        _sub(geo, "mesh", **attrs)


def _urdf_material(parent: etree._Element, m: Material) -> None:
    el = _sub(parent, "material", name=m.name or "")
    if m.rgba is not None:
        _sub(el, "color", rgba=_nums(m.rgba))
    if m.texture:
        _sub(el, "texture", filename=m.texture)


def convert_model(model: Model, to: str, *, strict: bool = False) -> Conversion:
    """Write ``model`` as ``"urdf"`` or ``"sdf"``."""
    if to == "urdf":
        return to_urdf(model, strict=strict)
    if to == "sdf":
        return to_sdf(model)
    raise ConversionError(f"unknown target format {to!r} (urdf or sdf)")


_ = math
