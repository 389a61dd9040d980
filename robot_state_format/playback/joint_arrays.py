"""A :class:`WorldState` as the arrays of a ``sensor_msgs/JointState`` (no rclpy).

Multi-DOF joints become MoveIt's named sub-joints ``<joint>/<dof>`` (:mod:`.sub_joints`), the names
the state_publisher reads; mimic followers are left out (every consumer computes them).
"""

from __future__ import annotations

from dataclasses import dataclass

from robot_state_format.model.types import SCOPE, Model
from robot_state_format.playback.sub_joints import MULTI_DOF_NAMES
from robot_state_format.usdf.types import JointState, ModelState, WorldState


def flatten_joints(ms: ModelState, prefix: str = "") -> dict[str, JointState]:
    """Joint states of a model_state and its nested ones, keyed by model-relative name."""
    out = {f"{prefix}{js.name}": js for js in ms.joint_states}
    for sub in ms.model_states:
        out.update(flatten_joints(sub, f"{prefix}{sub.name}{SCOPE}"))
    return out


def state_joints(state: WorldState, model: Model) -> dict[str, JointState]:
    """Every joint state of ``state`` keyed by ``model``'s model-relative names."""
    if model.is_world:
        out: dict[str, JointState] = {}
        for ms in state.model_states:
            out.update(flatten_joints(ms, f"{ms.name}{SCOPE}"))
        return out
    top = state.model(model.name)
    return flatten_joints(top) if top is not None else {}


@dataclass
class JointStateFields:
    """The arrays of one JointState message (``velocity`` / ``effort`` empty when not all are known)."""

    name: list[str]
    position: list[float]
    velocity: list[float]
    effort: list[float]


def joint_state_fields(state: WorldState, model: Model) -> JointStateFields:
    """JointState arrays for the moving joints of ``state`` (velocities/efforts only if all have them)."""
    return joints_fields(state_joints(state, model), model)


def joints_fields(joints: dict[str, JointState], model: Model) -> JointStateFields:
    """:func:`joint_state_fields` of the joint states :func:`state_joints` gave."""
    names: list[str] = []
    pos: list[float] = []
    vel: list[float | None] = []
    eff: list[float | None] = []
    for name, js in joints.items():
        joint = model.joints.get(name)
        if joint is None or not joint.is_moving or joint.mimic or js.positions is None:
            continue  # mimic followers follow their leader in every consumer
        dofs = MULTI_DOF_NAMES.get(joint.type)
        if dofs is None:
            names.append(name)
            pos.append(float(js.positions[0]))
            vel.append(float(js.velocities[0]) if js.velocities else None)
            eff.append(float(js.torques[0]) if js.torques else None)
            continue
        for suffix, qi, vi in dofs:
            names.append(f"{name}/{suffix}")
            pos.append(float(js.positions[qi]))
            # a quaternion's w has no rate of its own: 0 there
            vel.append((float(js.velocities[vi]) if vi is not None else 0.0) if js.velocities else None)
            eff.append((float(js.torques[vi]) if vi is not None else 0.0) if js.torques else None)
    return JointStateFields(names, pos, _complete(vel), _complete(eff))


def _complete(values: list[float | None]) -> list[float]:
    """``values`` when every one is known, else empty (a JointState array is all or nothing)."""
    known = [v for v in values if v is not None]
    return known if values and len(known) == len(values) else []
