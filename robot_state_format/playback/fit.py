"""Whether a restart file can be replayed onto a model: the state checked against the model by
:func:`robot_state_format.usdf.validate.validate_against_model` (names, DOF counts, quaternions),
plus what a replay needs beyond a valid state: the model's model_state, and a position for every
moving joint (mimic followers excepted: they follow their leader).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from robot_state_format.errors import Diagnostic, Severity
from robot_state_format.model.types import Model
from robot_state_format.playback.joint_arrays import JointStateFields, joints_fields, state_joints
from robot_state_format.usdf.types import WorldState
from robot_state_format.usdf.validate import validate_against_model

MAX_NAMED = 10  # missing joints named in one sentence


@dataclass
class Fit:
    """The outcome of :func:`check_fit`: ``problems`` are sentences for the user (none: it fits), and
    ``fields`` the state's JointState arrays when it fits (empty otherwise)."""

    problems: list[str] = field(default_factory=list)
    fields: JointStateFields = field(default_factory=lambda: JointStateFields([], [], [], []))

    @property
    def ok(self) -> bool:
        return not self.problems


def _sentence(d: Diagnostic) -> str:
    return f"{d.message} ({d.element})" if d.element else d.message


def check_fit(state: WorldState, model: Model, *, file: str = "<string>") -> Fit:
    """Why ``state`` cannot be replayed onto ``model`` (an ok :class:`Fit`: it can, with its JointState
    arrays, those of :func:`~robot_state_format.playback.joint_arrays.joint_state_fields`)."""
    if not model.is_world and state.model(model.name) is None:
        have = ", ".join(repr(m.name) for m in state.model_states) or "none"
        return Fit([f"no model_state named {model.name!r} (the file has {have})"])
    problems = [_sentence(d) for d in validate_against_model(state, model, file=file)
                if d.severity is Severity.ERROR]
    joints = state_joints(state, model)
    missing = [n for n, j in model.joints.items() if j.is_moving and not j.mimic
               and (n not in joints or joints[n].positions is None)]
    if missing:
        problems.append(f"no positions for moving joint(s) {', '.join(map(repr, missing[:MAX_NAMED]))}"
                        + (f" and {len(missing) - MAX_NAMED} more" if len(missing) > MAX_NAMED else ""))
    if problems:
        return Fit(problems)
    return Fit([], joints_fields(joints, model))
