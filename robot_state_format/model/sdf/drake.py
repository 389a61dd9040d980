"""Drake's SDFormat extensions: ``drake:joint`` (planar), ``//joint/drake:mimic``; the rest kept verbatim.

``drake:capsule`` and ``drake:ellipsoid`` geometries are read with the standard shapes
(:meth:`ValueParser.geometry`).  Every other ``drake:*`` element becomes an
:class:`~robot_state_format.model.types.Extension` owned by its link, joint or model.
"""

from __future__ import annotations

from lxml import etree

from robot_state_format.model.sdf.elements import Report, ValueParser, child, source, tag, text_of
from robot_state_format.model.sdf.ir import AxisIR, JointIR, MimicIR
from robot_state_format.model.types import Extension, JointType
from robot_state_format.spatial import Transform


def extension(el: etree._Element, owner: str | None, file: str) -> Extension:
    xml = etree.tostring(el, encoding="unicode", with_tail=False)
    return Extension(tag=tag(el), xml=xml, owner=owner, source=source(el, file))


def drake_mimic(el: etree._Element, vp: ValueParser) -> MimicIR | None:
    """``<drake:mimic joint= multiplier= offset=/>``: follower = multiplier * leader + offset."""
    leader = el.get("joint")
    if not leader:
        vp.report.error("SDF_MISSING_ATTRIBUTE", "<drake:mimic> needs a joint attribute", vp.file, el)
        return None
    mult = vp.floats(el, el.get("multiplier", "1"), 1, "multiplier")
    off = vp.floats(el, el.get("offset", "0"), 1, "offset")
    return MimicIR(joint=leader, multiplier=mult[0] if mult else 1.0, offset=off[0] if off else 0.0,
                   source=source(el, vp.file))


def drake_joint(el: etree._Element, vp: ValueParser, report: Report,
                pose_rel: tuple[Transform, str | None]) -> JointIR | None:
    """``<drake:joint type="planar">`` with ``drake:parent``, ``drake:child``, ``drake:damping``.

    The joint moves in the x-y plane of its frame and turns about its z axis, as Drake's
    PlanarJoint does; the pose follows the standard joint rules.
    """
    file = vp.file
    name = el.get("name")
    jtype = (el.get("type") or "").strip()
    if name is None:
        report.error("SDF_MISSING_ATTRIBUTE", "<drake:joint> needs a name", file, el)
        return None
    if jtype != "planar":
        report.error("SDF_UNKNOWN_JOINT_TYPE", f"drake:joint type {jtype!r} is not supported (only planar)",
                     file, el)
        return None
    parent = text_of(child(el, "drake:parent"))
    child_name = text_of(child(el, "drake:child"))
    if not parent or not child_name:
        report.error("SDF_MISSING_ELEMENT", "<drake:joint> needs <drake:parent> and <drake:child>", file, el)
        return None
    pose, rel = pose_rel
    return JointIR(name=name, type=JointType.PLANAR, parent=parent, child=child_name, source=source(el, file),
                   pose=pose, rel=rel, axis=AxisIR((0.0, 0.0, 1.0), None))
