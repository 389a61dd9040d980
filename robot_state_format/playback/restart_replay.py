"""A restart file replayed onto its model(s) (no rclpy): the one path of state_store's ``~/replay``,
of its world of sources and of ``robot-state-format replay PATH.usdf``.

:func:`replay_restart` checks the state against the model (:func:`~robot_state_format.playback.fit.check_fit`),
and when it fits gives everything a replay publishes, once: the JointState arrays of each robot,
the static TF edges (:func:`~robot_state_format.playback.edges.replay_edges`) and the ``world_state``
text. Given one :class:`Model` the file is replayed as that robot; given :class:`Robot` entries by
model_state name (a world of several robots, each with its own model and TF ``frame_prefix``) each
top-level model_state is replayed onto its robot. Nothing of a refused file is computed.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from robot_state_format.model.types import Model
from robot_state_format.playback.edges import Edge, replay_edges
from robot_state_format.playback.fit import check_fit
from robot_state_format.playback.joint_arrays import JointStateFields
from robot_state_format.spatial import pose6_to_transform
from robot_state_format.usdf.types import WORLD_FRAME, ModelState, WorldState
from robot_state_format.usdf.writer import write_world_state


@dataclass(frozen=True)
class Robot:
    """A robot of a world restart file: its model (None: not known yet, ``absent`` says why) and
    the ``frame_prefix`` of its TF frames."""

    model: Model | None
    frame_prefix: str = ""
    absent: str = "no model yet"


@dataclass(frozen=True)
class RestartReplay:
    """What replaying a restart file publishes, or why it is refused.

    ``ok``: it fits; ``problems``: sentences for the user (none: it fits); ``message``: the one line a caller shows
    (``replayed ...`` or ``refused ...``); ``joint_states``: the JointState arrays by robot (the
    model_state's name; one entry, keyed by the model's name, for a single model); ``edges``: the
    static TF ``(parent, child, X_parent_child)``; ``text``: the state as ``world_state`` text.
    A refused replay has problems and nothing else.
    """

    ok: bool
    message: str
    problems: list[str] = field(default_factory=list)
    joint_states: dict[str, JointStateFields] = field(default_factory=dict)
    edges: list[Edge] = field(default_factory=list)
    text: str = ""

    @property
    def joint_values(self) -> int:
        return sum(len(f.name) for f in self.joint_states.values())


def replay_restart(state: WorldState, target: Model | Mapping[str, Robot], *, file: str = "<string>",
                   link_tf: bool = False, common_frame: str = WORLD_FRAME) -> RestartReplay:
    """``state`` (read from ``file``) replayed onto ``target``: one model, or robots by model_state
    name (every top-level model_state must name one; ``common_frame`` is the frame they are posed in,
    kept without prefix as are the file's frames and model_states)."""
    if isinstance(target, Model):
        return _replay_model(state, target, file, link_tf)
    return _replay_world(state, target, file, link_tf, common_frame)


def _replay_model(state: WorldState, model: Model, file: str, link_tf: bool) -> RestartReplay:
    fit = check_fit(state, model, file=file)
    if not fit.ok:
        return RestartReplay(False, f"refused {file} for model {model.name!r}: " + "; ".join(fit.problems), fit.problems)
    edges = replay_edges(state, model, link_tf=link_tf)
    return RestartReplay(True, f"replayed {file}: {len(fit.fields.name)} joint values, {len(edges)} transforms, world_state",
                         [], {model.name: fit.fields}, edges, write_world_state(state))


def _replay_world(state: WorldState, robots: Mapping[str, Robot], file: str, link_tf: bool,
                  common_frame: str) -> RestartReplay:
    problems: list[str] = []
    plan: list[tuple[str, Robot, Model, WorldState, JointStateFields]] = []
    for ms in state.model_states:
        robot = robots[ms.name]
        if robot.model is None:
            problems.append(f"{ms.name}: {robot.absent}")
            continue
        single = WorldState(state.name, state.version, state.stamp, [],
                            [ModelState(robot.model.name, ms.parent, ms.pose, ms.twist, ms.link_states,
                                        ms.joint_states, ms.model_states)])
        fit = check_fit(single, robot.model, file=file)
        problems += [f"{ms.name}: {p}" for p in fit.problems]
        plan.append((ms.name, robot, robot.model, single, fit.fields))
    if problems:
        return RestartReplay(False, f"refused {file}: " + "; ".join(problems), problems)
    edges: list[Edge] = [(f.parent or WORLD_FRAME, f.name, pose6_to_transform(f.pose))
                         for f in state.frames if f.pose is not None]
    joint_states: dict[str, JointStateFields] = {}
    for name, robot, model, single, fields in plan:
        joint_states[name] = fields
        prefix = robot.frame_prefix
        for parent, child, x in replay_edges(single, model, link_tf=link_tf):
            outer = parent in (WORLD_FRAME, common_frame) or state.frame(parent) is not None \
                or state.model(parent) is not None
            edges.append((parent if outer else prefix + parent, prefix + child, x))
    joints = sum(len(f.name) for f in joint_states.values())
    return RestartReplay(True, f"replayed {file}: {len(plan)} robots, {joints} joint values, {len(edges)} transforms, "
                         "world_state", [], joint_states, edges, write_world_state(state))
