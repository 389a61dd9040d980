"""What libsdformat's URDF conversion refuses in a URDF included by an SDFormat document.

A plain URDF file is judged by urdfdom (the project's rule for URDF, docs/models.md), with what
libsdformat would refuse as warnings; a URDF an SDFormat ``<include>`` pulls in is read by
libsdformat, through its URDF-to-SDFormat conversion, so there the same refusals
(:mod:`robot_state_format.model.urdf.gazebo`: invalid inertia, duplicate sensor names from
``<gazebo>`` extensions, no link with a mass) are errors (checked with ``conformance/sdf_ref``).
"""

from __future__ import annotations

import numpy as np

from robot_state_format.model.sdf.elements import Report
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
from robot_state_format.model.urdf import gazebo
from robot_state_format.spatial import inverse

SCOPE_VERSION = (1, 11)  # an included URDF's scope follows the newest conventions (axes in the joint frame)


def refusals(model: Model, path: str, report: Report) -> None:
    """Report, as errors, what libsdformat's URDF conversion refuses in the included URDF ``model``."""
    for r in gazebo.refusals(model):
        report.error_at(r.code, f"included URDF {path}: {r.message} (libsdformat refuses it)", r.source)


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


__all__ = ["refusals", "scope_from_model"]
