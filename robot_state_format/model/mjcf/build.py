"""MJCF ``<worldbody>`` → the Model: bodies, joints, sites and frames (docs/models.md, "MJCF").

How MuJoCo's tree maps onto links and joints (a joint value is MuJoCo's ``qpos`` of that joint):

* every ``<body>`` is a link of its name (an unnamed one ``body<ID>``, ID being MuJoCo's body id);
  the world body is the root frame (:data:`~robot_state_format.model.types.WORLD`);
* a body without joints is welded to its parent by a fixed joint ``<body>_fixed``;
* a body with joints ``j1 .. jn`` (applied in order, each in the body frame as the ones before left
  it, as ``mj_kinematics`` does) becomes a chain: ``j1`` moves a virtual link ``<body>/<j1>``, ...,
  ``jn`` moves the body's own link. Each joint frame sits at the joint's ``pos`` with the body's
  axes; a hinge or ball rotates about it, so ``X_PC(q) = X0 @ T(pos) @ motion(q - ref) @ T(-pos)``;
* hinge → revolute (limited) or continuous, slide → prismatic, ball → ball (quaternion in the body
  frame), free / ``<freejoint>`` → floating from the world, its value the body's world pose;
* ``ref``: MuJoCo's ``qpos0``: the file's pose holds at ``q = ref`` (folded into the joint origin);
* ``<site>`` and named ``<frame>`` elements → explicit frames of their body (unnamed sites
  ``site<ID>``); ``<frame>`` applies its pose (and ``childclass``) to everything inside it.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
from lxml import etree

from robot_state_format.model.mjcf.align import aligned, inertial_frame
from robot_state_format.model.mjcf.attach import Attacher
from robot_state_format.model.mjcf.document import MAIN, Document
from robot_state_format.model.mjcf.flexcomp import flex_bodies
from robot_state_format.model.mjcf.orient import pose, vector
from robot_state_format.model.mjcf.replicate import ATTACH_SUFFIX
from robot_state_format.model.mjcf.schema import BODY_ATTRS, BODY_CHILDREN, FRAME_ATTRS
from robot_state_format.model.mjcf.shapes import element_pose, fromto_frame, inertial, mesh_files, shape
from robot_state_format.model.types import WORLD, Frame, Joint, JointType, Limits, Link, Model, Source
from robot_state_format.model.xml import describe
from robot_state_format.spatial import Transform, axis_angle_to_matrix

__all__ = ["JointInfo", "build_model"]

_IGNORED = frozenset({"camera", "light", "plugin"})  # no frames of the kinematic tree
_TYPES = {"hinge": JointType.REVOLUTE, "slide": JointType.PRISMATIC, "ball": JointType.BALL,
          "free": JointType.FLOATING}


@dataclass
class JointInfo:
    """A MuJoCo joint as read: its Model name, MuJoCo type and ``qpos0`` (``ref``)."""

    name: str
    mj_type: str
    ref: float
    element: etree._Element


@dataclass
class _Site:
    body_id: int
    element: etree._Element
    attached_to: str
    pose: Transform


@dataclass
class _Walk:
    doc: Document
    model: Model
    taken: set[str]  # every name given in the file (bodies, joints), so generated names do not clash
    meshes: dict[str, tuple[str, tuple[float, float, float] | None]]
    bodies: int = 0
    njoints: int = 0
    joint_info: dict[str, JointInfo] = field(default_factory=dict)
    sites: list[_Site] = field(default_factory=list)
    body_names: set[str] = field(default_factory=set)
    attacher: Attacher | None = None

    def fresh(self, base: str) -> str:
        name = base
        while name in self.taken or name in self.model.links or name in self.model.joints:
            name += "_"
        self.taken.add(name)
        return name

    def source(self, el: etree._Element) -> Source:
        return Source(self.doc.file_of(el), el.sourceline, describe(el))

    def klass(self, el: etree._Element, inherited: str) -> str:
        cls = el.get("class") or inherited
        if cls not in self.doc.defaults:
            self.doc.report(el, "MJCF_UNKNOWN_CLASS", f"unknown default class name {cls!r}")
            return MAIN
        return cls


def _check_attrs(doc: Document, el: etree._Element, allowed: frozenset[str]) -> None:
    for attr in el.attrib:
        if attr not in allowed and attr != ATTACH_SUFFIX:
            doc.report(el, "MJCF_UNKNOWN_ATTRIBUTE", f"unrecognized attribute {attr!r} (MuJoCo's schema)")


def _translation(v: np.ndarray) -> Transform:
    x = np.eye(4)
    x[:3, 3] = v
    return x


def _joint(w: _Walk, el: etree._Element, cls: str, x_body_frame: Transform, body: str, index: int,
           parent: str, child: str, origin0: Transform, is_top: bool) -> Joint | None:
    doc = w.doc
    free = el.tag == "freejoint"

    def get(a: str) -> str | None:
        return el.get(a) if free else doc.lookup(el, cls, a)

    def fail(code: str, msg: str) -> None:
        doc.report(el, code, msg)

    mj_type = "free" if free else (get("type") or "hinge")
    if mj_type not in _TYPES:
        fail("MJCF_JOINT_TYPE", f"unknown joint type {mj_type!r} (hinge, slide, ball, free)")
        return None
    name = el.get("name") or w.fresh(f"joint{w.njoints}")
    w.njoints += 1
    if name in w.joint_info:
        fail("MJCF_DUPLICATE_NAME", f"repeated name {name!r} in joint")
        return None
    jtype = _TYPES[mj_type]
    if jtype is JointType.FLOATING:
        if not is_top:
            fail("MJCF_FREE_JOINT", "free joint can only be used on top level")
            return None
        w.joint_info[name] = JointInfo(name, mj_type, 0.0, el)
        return Joint(name, jtype, WORLD, child, np.eye(4), np.eye(4), source=w.source(el))
    pos = np.zeros(3)
    if get("pos") is not None:
        pos = np.array(vector(get("pos") or "", 3, "pos", fail) or (0.0, 0.0, 0.0))
    pos = x_body_frame[:3, :3] @ pos + x_body_frame[:3, 3]
    axis_v = np.array(vector(get("axis") or "0 0 1", 3, "axis", fail) or (0.0, 0.0, 1.0))
    norm = float(np.linalg.norm(axis_v))
    if norm < 1e-15:
        fail("MJCF_ZERO_AXIS", "axis too small")
        return None
    axis = x_body_frame[:3, :3] @ (axis_v / norm)
    scale = doc.angle_scale if mj_type == "hinge" else 1.0
    ref = 0.0
    if get("ref") is not None and mj_type in ("hinge", "slide"):
        r = vector(get("ref") or "", 1, "ref", fail)
        ref = r[0] * scale if r else 0.0
    limits = _limits(w, el, get, scale if mj_type in ("hinge", "ball") else 1.0)
    if jtype is JointType.REVOLUTE and limits is None:
        jtype = JointType.CONTINUOUS
    if jtype is JointType.BALL:
        limits = None  # a cone about the reference orientation: not a coordinate range
    origin = origin0 @ _translation(pos)
    if ref != 0.0:
        undo = np.eye(4)
        if mj_type == "hinge":
            undo[:3, :3] = axis_angle_to_matrix(tuple(axis), -ref)
        else:
            undo[:3, 3] = -ref * axis
        origin = origin @ undo
    w.joint_info[name] = JointInfo(name, mj_type, ref, el)
    return Joint(name, jtype, parent, child, origin, _translation(-pos),
                 None if jtype is JointType.BALL else (float(axis[0]), float(axis[1]), float(axis[2])),
                 limits=limits, source=w.source(el))


def _limits(w: _Walk, el: etree._Element, get: Callable[[str], str | None], scale: float) -> Limits | None:
    doc = w.doc
    text = get("range")
    limited = get("limited") or "auto"
    if limited not in ("true", "false", "auto"):
        doc.report(el, "MJCF_BAD_VALUE", f"limited={limited!r}: expected true, false or auto")
        return None
    if limited == "auto":
        if text is not None and not doc.autolimits:
            doc.report(el, "MJCF_LIMITED", "joint has `range` but not `limited`. set the autolimits=\"true\" "
                       "compiler option, specify `limited` explicitly, or remove the `range` attribute")
            return None
        limited = "true" if text is not None else "false"
    if limited == "false":
        return None
    r = vector(text or "0 0", 2, "range", lambda c, m: doc.report(el, c, m))
    if r is None:
        return None
    if get("limited") in (None, "auto") and not r[0] < r[1]:
        return None  # MuJoCo: an automatic limit holds only when range[0] < range[1] (measured)
    if (get("type") or "hinge") == "ball":
        if r[0] != 0.0:
            doc.report(el, "MJCF_BAD_RANGE", "range[0] should be 0 in ball joint")
        return None
    if r[0] >= r[1]:
        doc.report(el, "MJCF_BAD_RANGE", f"range {text!r}: the lower bound must be below the upper one")
        return None
    return Limits(r[0] * scale, r[1] * scale)


def _collect_joints(w: _Walk, el: etree._Element, cls: str, x: Transform,
                    out: list[tuple[etree._Element, str, Transform]]) -> None:
    """The joints of a body, in document order, also inside its ``<frame>`` elements."""
    for child in el:
        if not isinstance(child.tag, str):
            continue
        if child.tag in ("joint", "freejoint"):
            out.append((child, w.klass(child, cls) if child.tag == "joint" else MAIN, x))
        elif child.tag == "frame":
            fx = x @ element_pose(w.doc, child)
            _collect_joints(w, child, child.get("childclass") or cls, fx, out)


def _body(w: _Walk, el: etree._Element, parent: str, x_parent_frame: Transform, x_root_parent: Transform,
          cls: str) -> None:
    doc = w.doc
    _check_attrs(doc, el, BODY_ATTRS)
    w.bodies += 1
    body_id = w.bodies
    name = el.get("name") or w.fresh(f"body{body_id}")
    if name in w.body_names:
        doc.report(el, "MJCF_DUPLICATE_NAME", f"repeated name {name!r} in body")
        return
    w.body_names.add(name)
    child_cls = el.get("childclass") or cls
    if child_cls not in doc.defaults:
        doc.report(el, "MJCF_UNKNOWN_CLASS", f"unknown default class name {child_cls!r}")
        child_cls = cls
    x0 = x_parent_frame @ element_pose(doc, el)
    joints: list[tuple[etree._Element, str, Transform]] = []
    _collect_joints(w, el, child_cls, np.eye(4), joints)
    dofs = sum({"free": 6, "ball": 3}.get(
        "free" if j.tag == "freejoint" else (doc.lookup(j, c, "type") or "hinge"), 1) for j, c, _ in joints)
    kinds = ["free" if j.tag == "freejoint" else (doc.lookup(j, c, "type") or "hinge") for j, c, _ in joints]
    if "ball" in kinds and any(k in ("hinge", "ball") for k in kinds[kinds.index("ball") + 1:]):
        doc.report(el, "MJCF_BALL_ORDER", f"ball followed by rotation in body {name!r}")
    if dofs > 6:
        doc.report(el, "MJCF_TOO_MANY_DOFS", f"more than 6 dofs in body {name!r}")
        joints = []
    if el.get("mocap") == "true" and (parent != WORLD or joints):
        doc.report(el, "MJCF_MOCAP", f"mocap body {name!r} is not a fixed child of world")
    src = Source(doc.file_of(el), el.sourceline, describe(el))
    link_parent, origin, x_root = parent, x0, x_root_parent
    if not joints:
        j = Joint(w.fresh(f"{name}_fixed"), JointType.FIXED, parent, name, x0, source=src)
        w.model.joints[j.name] = j
        x_root = x_root_parent @ x0
    for k, (jel, jcls, xf) in enumerate(joints):
        last = k == len(joints) - 1
        jname = jel.get("name") or f"joint{w.njoints}"
        link = name if last else w.fresh(f"{name}/{jname}")
        joint = _joint(w, jel, jcls, xf, name, k, link_parent, link, origin, parent == WORLD and k == 0)
        if joint is None:
            continue
        if joint.type is JointType.FLOATING and len(joints) > 1:
            doc.report(jel, "MJCF_FREE_JOINT", "a free joint must be the only joint of its body")
        w.model.joints[joint.name] = joint
        x_root = (np.eye(4) if joint.parent == WORLD else x_root) @ joint.origin @ joint.child_offset
        if not last:
            w.model.links[link] = Link(link, x_root.copy(), source=src)
        link_parent, origin = link, np.eye(4)
    w.model.links[name] = Link(name, x_root.copy(), source=src)
    x_inner = np.eye(4)  # X_link_bodyframe: the identity unless MuJoCo aligns the body with its inertia
    if joints and aligned(doc, el, joints):
        found = inertial_frame(doc, el, child_cls)
        if found is not None:
            x_inner = np.asarray(np.linalg.inv(found), dtype=np.float64)
    _children(w, el, name, x_inner, x_root, child_cls, body_id)
    link_inertial = w.model.links[name].inertial
    if link_inertial is not None:
        link_inertial.origin = x_inner @ link_inertial.origin


def _children(w: _Walk, el: etree._Element, link: str, x_link_frame: Transform, x_root_link: Transform,
              cls: str, body_id: int) -> None:
    doc = w.doc
    for child in el:
        tag = child.tag
        if not isinstance(tag, str) or tag in ("joint", "freejoint"):
            continue
        if tag == "body":
            _body(w, child, link, x_link_frame, x_root_link, cls)
        elif tag == "frame":
            _check_attrs(doc, child, FRAME_ATTRS)
            fx = x_link_frame @ element_pose(doc, child)
            fname = child.get("name")
            if fname is not None:
                if fname in w.model.frames or fname in w.model.links:
                    doc.report(child, "MJCF_DUPLICATE_NAME", f"repeated name {fname!r} in frame")
                else:
                    w.model.frames[fname] = Frame(fname, link, fx, source=w.source(child))
            _children(w, child, link, fx, x_root_link, child.get("childclass") or cls, body_id)
        elif tag == "site":
            _check_attrs(doc, child, BODY_CHILDREN["site"])
            scls = w.klass(child, cls)

            def get(a: str, c: etree._Element = child, k: str = scls) -> str | None:
                return doc.lookup(c, k, a)

            sx = x_link_frame @ _site_pose(w, child, get)
            w.sites.append(_Site(body_id, child, link, sx))
        elif tag == "geom":
            _check_attrs(doc, child, BODY_CHILDREN["geom"])
            s, collides = shape(doc, child, w.klass(child, cls), x_link_frame, w.meshes)
            if link == WORLD:
                continue  # the world's geoms (a floor) belong to no link
            w.model.links[link].visuals.append(s)
            if collides:
                w.model.links[link].collisions.append(s)
        elif tag == "inertial":
            _check_attrs(doc, child, BODY_CHILDREN["inertial"])
            if link != WORLD:
                w.model.links[link].inertial = inertial(doc, child)
        elif tag == "attach":
            _check_attrs(doc, child, BODY_CHILDREN["attach"])
            _attach(w, child, link, x_link_frame, x_root_link, body_id)
        elif tag == "flexcomp":
            _check_attrs(doc, child, BODY_CHILDREN["flexcomp"])
            parent = w.model.parent_joint(link) if link != WORLD else None
            moves = parent is not None and parent.type is not JointType.FIXED
            for made in flex_bodies(doc, child, x_link_frame, link, moves) or []:
                _body(w, made, link, np.eye(4), x_root_link, cls)
        elif tag in BODY_CHILDREN or tag in _IGNORED:
            _check_attrs(doc, child, BODY_CHILDREN.get(tag, frozenset(child.attrib)))
        else:  # <composite>, <skin> and <flex> too: MuJoCo 4.0 no longer knows them in a body
            doc.report(child, "MJCF_UNKNOWN_ELEMENT", f"unrecognized element <{tag}> (MuJoCo 4.0's schema)")


def _attach(w: _Walk, el: etree._Element, link: str, x_link_frame: Transform, x_root_link: Transform,
            body_id: int) -> None:
    """The body an ``<attach>`` places here (or, without ``body``, a frame holding the model's world body's
    content), walked with its own model's document (mjcf/attach.py)."""
    assert w.attacher is not None
    got = w.attacher.resolve(w.doc, el)
    if got is None:
        return
    saved = w.doc, w.meshes
    w.doc, w.meshes = got.doc, mesh_files(got.doc)
    try:
        if got.body.tag == "frame":
            _children(w, got.body, link, x_link_frame, x_root_link, MAIN, body_id)
        else:
            _body(w, got.body, link, x_link_frame, x_root_link, MAIN)
    finally:
        w.doc, w.meshes = saved
        w.attacher.done()


def _site_pose(w: _Walk, el: etree._Element, get: Callable[[str], str | None]) -> Transform:
    doc = w.doc

    def fail(code: str, msg: str) -> None:
        doc.report(el, code, msg)

    ft = get("fromto")
    if ft is not None and (get("type") or "sphere") in ("capsule", "cylinder", "box", "ellipsoid"):
        found = fromto_frame(ft, fail)
        if found is not None:
            return found[0]
    return pose(get, lambda a: el.get(a) is not None, doc.angle_scale, doc.eulerseq, fail)


def _name_sites(w: _Walk) -> None:
    """Sites as frames, numbered as MuJoCo numbers them (by body, then in order): unnamed ``site<ID>``; a
    site named like a body or frame is ``NAME_site`` (``NAME_site_`` when that is taken too), with a warning."""
    order = sorted(range(len(w.sites)), key=lambda i: (w.sites[i].body_id, i))
    named = {s.element.get("name") for s in w.sites} - {None}
    seen: set[str] = set()
    for sid, i in enumerate(order):
        s = w.sites[i]
        name = s.element.get("name")
        if name is None:
            name = f"site{sid}"
            while name in named or name in w.model.frames or name in w.model.links:
                name += "_"
        elif name in seen:
            w.doc.report(s.element, "MJCF_DUPLICATE_NAME", f"repeated name {name!r} in site")
            continue
        seen.add(name)
        key = name
        if key in w.model.frames or key in w.model.links:
            key = f"{name}_site"
            while key in w.model.frames or key in w.model.links or key in named:
                key += "_"  # NAME_site taken too (by a body, a frame or another site): NAME_site_
            w.doc.report(s.element, "MJCF_NAME_CLASH", f"site {name!r} shares its name with a body or frame: "
                         f"its frame is named {key!r}", warning=True)
        w.model.frames[key] = Frame(key, s.attached_to, s.pose, source=w.source(s.element))


def build_model(doc: Document, name: str) -> tuple[Model, dict[str, JointInfo]]:
    """The Model of the document's ``<worldbody>`` elements, and MuJoCo's joints by Model name."""
    model = Model(name, "mjcf", source_file=doc.file)
    taken = {str(e.get("name")) for e in doc.root.iter("body", "joint", "freejoint") if e.get("name")}
    w = _Walk(doc, model, taken, mesh_files(doc), attacher=Attacher(Path(doc.file).parent))
    for wb in doc.root.iterchildren("worldbody"):
        for attr in wb.attrib:
            doc.report(wb, "MJCF_UNKNOWN_ATTRIBUTE", f"unrecognized attribute {attr!r} (MuJoCo's schema)")
        _children(w, wb, WORLD, np.eye(4), np.eye(4), MAIN, 0)
    _name_sites(w)
    return model, w.joint_info
