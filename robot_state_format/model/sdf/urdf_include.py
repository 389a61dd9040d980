"""What libsdformat's URDF conversion refuses in a URDF included by an SDFormat document.

A plain URDF file is judged by urdfdom (the project's rule for URDF, docs/models.md); a URDF an
SDFormat ``<include>`` pulls in is read by libsdformat, through its URDF-to-SDFormat conversion, and
refused where that conversion's result is invalid SDFormat (checked with ``conformance/sdf_ref``):

* ``<gazebo reference="L">`` extensions adding two ``<sensor>``s of one name to a link or joint
  (``SDF_DUPLICATE_SENSOR``: "sensor with name[s] already exists");
* an invalid inertia (``SDF_INVALID_INERTIA``, :func:`scope_from_model`).
"""

from __future__ import annotations

import numpy as np

from robot_state_format.errors import RobotStateFormatError
from robot_state_format.model.sdf.elements import Report, children, tag, valid_mass_matrix
from robot_state_format.model.sdf.ir import (
    MODEL_FRAME,
    AxisIR,
    FrameIR,
    JointIR,
    LinkIR,
    MimicIR,
    Scope,
    ShapeIR,
)
from robot_state_format.model.types import WORLD, Extension, JointType, Model, Source
from robot_state_format.model.xml import parse_xml
from robot_state_format.spatial import inverse

SCOPE_VERSION = (1, 11)  # an included URDF's scope follows the newest conventions (axes in the joint frame)


def gazebo_refusals(data: bytes, path: str, report: Report) -> None:
    """Report the duplicate names the ``<gazebo>`` extensions of the URDF ``data`` create."""
    try:
        root, _ = parse_xml(data, path)
    except RobotStateFormatError:
        return  # the URDF reader has reported it
    seen: dict[tuple[str, str], set[str]] = {}
    for ext in children(root, "gazebo"):
        ref = (ext.get("reference") or "").strip()
        for c in children(ext):
            kind = tag(c)
            if kind != "sensor":
                continue
            name = c.get("name") or ""
            names = seen.setdefault((ref, kind), set())
            if name in names:
                report.error("SDF_DUPLICATE_SENSOR", f"the <gazebo reference={ref!r}> extensions of included URDF "
                             f"{path} add two sensors named {name!r} (libsdformat's URDF conversion refuses it)",
                             path, c)
            names.add(name)


def scope_from_model(model: Model, file: str, report: Report | None = None) -> Scope:
    """An included URDF (already read into a Model) as a scope: links posed in the model frame,
    joints posed relative to their child link by ``inv(child_offset)``, axes in the joint frame."""
    src = Source(file, None, f"robot[name={model.name}]")
    scope = Scope(name=model.name, version=SCOPE_VERSION, file=file, source=src, pose=np.array(model.pose))
    world_link = model.links.get(WORLD)
    drop_world = world_link is not None and not world_link.visuals and not world_link.collisions and (
        world_link.inertial is None)
    for link in model.links.values():
        if drop_world and link.name == WORLD:
            continue
        inertial = link.inertial
        if report is not None and inertial is not None and not valid_mass_matrix(inertial.mass, inertial.inertia):
            # urdfdom loads it; libsdformat, which reads the URDF as part of this document, refuses it
            report.error_at("SDF_INVALID_INERTIA", f"included URDF link {link.name!r} has an invalid inertia (mass "
                            f"{inertial.mass:g}; libsdformat refuses it)", link.source)
        scope.items.append(LinkIR(name=link.name, source=link.source, pose=np.array(link.pose),
                                  rel=MODEL_FRAME, inertial=link.inertial,
                                  visuals=[ShapeIR(s) for s in link.visuals],
                                  collisions=[ShapeIR(s) for s in link.collisions]))
    for j in [*model.joints.values(), *model.constraints.values()]:
        parent = j.parent
        jir = JointIR(name=j.name, type=j.type, parent=parent, child=j.child, source=j.source,
                      pose=inverse(j.child_offset), rel=None,
                      axis=AxisIR(j.axis, None, j.limits, j.dynamics) if j.axis is not None else None,
                      axis2=AxisIR(j.axis2, None, j.limits2, j.dynamics2) if j.axis2 is not None else None,
                      mimic=[MimicIR(m.joint, m.multiplier, m.offset, m.dof, m.leader_dof, j.source)
                             for m in j.mimic],
                      screw_pitch=j.screw_pitch, gearbox_ratio=j.gearbox_ratio,
                      gearbox_reference_body=j.gearbox_reference_body)
        if j.type is JointType.FLOATING:
            if report is not None:  # SDFormat has no floating joint: the child is left free
                report.warn_at("SDF_URDF_FLOATING_JOINT",
                               f"included URDF joint {j.name!r} is floating; its child link is left free", j.source)
            continue
        if j.child == WORLD:
            jir.rel = MODEL_FRAME
            jir.pose = np.array(j.origin) if j.parent == WORLD else np.array(model.links[j.parent].pose) @ j.origin
        scope.items.append(jir)
    for f in model.frames.values():
        rel = f.attached_to if f.attached_to != WORLD else None
        scope.items.append(FrameIR(name=f.name, source=f.source, pose=np.array(f.pose),
                                   rel=rel, attached_to=f.attached_to if rel else MODEL_FRAME))
    scope.extensions.extend(Extension(e.tag, e.xml, e.owner, e.source) for e in model.extensions)
    return scope


__all__ = ["gazebo_refusals", "scope_from_model"]
