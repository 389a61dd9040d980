"""What the browser view shows, without the viewer: named frames at world poses and the visuals of links.

A :class:`Scene` is flat: one node per frame, named as ``frames --json`` names it (``robot``,
``robot::link1``, ``robot::joint1``, a world's ``robot_a::link1``; for a world_state the names of
:func:`~robot_state_format.usdf.resolve.world_poses`: frames, ``model``, ``model::nested``,
``model::link``), each at its pose in the world (position, quaternion ``x y z w``). A link node carries
the link's visuals (geometry placed at ``origin`` in the link frame). The scene of a model is built
from :func:`~robot_state_format.model.frames.frames_document` itself, so it holds exactly the numbers
``frames --json`` (or ``fk --json`` at a configuration) prints.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from robot_state_format.errors import RobotStateFormatError
from robot_state_format.kinematics import fk
from robot_state_format.kinematics.tree import compile_model
from robot_state_format.model.frames import frames_document
from robot_state_format.model.types import Material, Model, Shape
from robot_state_format.playback.joint_arrays import flatten_joints
from robot_state_format.spatial import Transform, inverse, matrix_to_quaternion, quaternion_to_matrix
from robot_state_format.usdf.resolve import world_poses
from robot_state_format.usdf.types import ModelState, WorldState

__all__ = ["Node", "Scene", "Visual", "scene_from_model", "scene_from_state", "visuals_of"]

DEFAULT_RGBA = (0.7, 0.7, 0.72, 1.0)


@dataclass(frozen=True)
class Node:
    """A frame in the world: ``kind`` is model, link, joint or frame."""

    kind: str
    position: tuple[float, float, float]
    quaternion: tuple[float, float, float, float]  # x y z w



@dataclass
class Visual:
    """One visual of a link: its shape (geometry, ``origin`` = X_link_shape), colour and the file a
    mesh names, resolved (None: not found, or not a mesh)."""

    shape: Shape
    rgba: tuple[float, float, float, float]
    mesh_path: Path | None = None


@dataclass
class Scene:
    nodes: dict[str, Node] = field(default_factory=dict)
    visuals: dict[str, list[Visual]] = field(default_factory=dict)  # link node name -> its visuals
    warnings: list[str] = field(default_factory=list)


def node_from_matrix(kind: str, x: Transform) -> Node:
    q = matrix_to_quaternion(x[:3, :3])
    return Node(kind, (float(x[0, 3]), float(x[1, 3]), float(x[2, 3])), q)


def _rgba(shape: Shape, materials: Mapping[str, Material]) -> tuple[float, float, float, float]:
    mat = shape.material
    if mat is not None and mat.rgba is None and mat.name is not None:
        mat = materials.get(mat.name, mat)
    if mat is not None and mat.rgba is not None:
        return (float(mat.rgba[0]), float(mat.rgba[1]), float(mat.rgba[2]), float(mat.rgba[3]))
    return DEFAULT_RGBA


def visuals_of(model: Model, prefix: str | None = None) -> dict[str, list[Visual]]:
    """Link node name -> visuals. ``prefix`` names the model in the scene (default: ``model.scoped``;
    a world_state names a robot's model_state, e.g. after its namespace ``r1``)."""
    out: dict[str, list[Visual]] = {}
    for name, link in model.links.items():
        if not link.visuals:
            continue
        key = model.scoped(name) if prefix is None or model.is_world else f"{prefix}::{name}"
        out[key] = [Visual(s, _rgba(s, model.materials)) for s in link.visuals]
    return out


def scene_from_model(model: Model, link_poses: Mapping[str, Transform] | None = None) -> Scene:
    """The model at ``link_poses`` (model-relative X_root_link; default its zero configuration): every
    entry of :func:`frames_document` as a node, and the links' visuals."""
    doc = frames_document(model, link_poses)
    scene = Scene()
    for name, entry in doc["frames"].items():
        p, q = entry["position"], entry["quaternion"]
        scene.nodes[name] = Node(entry["kind"], (p[0], p[1], p[2]), (q[0], q[1], q[2], q[3]))
    scene.visuals = visuals_of(model)
    return scene


def _kinds(state: WorldState) -> dict[str, str]:
    kinds = {f.name: "frame" for f in state.frames}

    def walk(ms: ModelState, scoped: str) -> None:
        kinds[scoped] = "model"
        for ls in ms.link_states:
            kinds[f"{scoped}::{ls.name}"] = "link"
        for n in ms.model_states:
            walk(n, f"{scoped}::{n.name}")

    for ms in state.model_states:
        walk(ms, ms.name)
    return kinds


def _placed(state: WorldState, warnings: list[str]) -> WorldState:
    """``state`` with each top-level model_state whose world pose is unknown (no pose: a robot that
    nothing placed, as ``state_publisher`` without TF to ``world`` writes it) drawn with its frame at the
    world origin, as RViz draws a robot in its own fixed frame; a warning names each."""
    known = world_poses(state)
    unplaced = [ms.name for ms in state.model_states if ms.name not in known]
    if not unplaced:
        return state
    out = copy.copy(state)
    out.model_states = []
    for ms in state.model_states:
        if ms.name in unplaced:
            warnings.append(f"model_state {ms.name!r} has no pose in the world: drawn with its frame at the origin")
            ms = copy.copy(ms)
            ms.parent, ms.pose = None, (0.0, 0.0, 0.0, 0.0, 0.0, 0.0)
        out.model_states.append(ms)
    return out


def scene_from_state(state: WorldState, models: Mapping[str, Model] | None = None) -> Scene:
    """The world of a world_state: every frame, model_state and link_state at the world pose it gives
    (a link whose pose is absent is not shown; a top-level model_state without a world pose is drawn at
    the origin, with a warning), and the visuals of the robots whose model is known (``models``: top-level
    model_state name -> Model)."""
    scene = Scene()
    kinds = _kinds(state)
    for name, x in world_poses(_placed(state, scene.warnings)).items():
        scene.nodes[name] = node_from_matrix(kinds.get(name, "frame"), x)
    for ms_name, model in (models or {}).items():
        for key, visuals in visuals_of(model, ms_name).items():
            if key in scene.nodes:
                scene.visuals[key] = visuals
        ms = state.model(ms_name)
        if ms is not None and ms_name in scene.nodes and not model.is_world:
            _joint_frames(scene, ms_name, ms, model)
    return scene


def _joint_frames(scene: Scene, ms_name: str, ms: ModelState, model: Model) -> None:
    """The joint and explicit frames of a robot drawn by its model (a world_state holds neither): from the
    state's joint positions by forward kinematics, placed at the model_state's world pose, named as
    ``fk --json`` names them (the model's name replaced by the model_state's). Only when every moving joint
    has a position (a frame that depends on an absent value is absent too)."""
    tree = compile_model(model)
    positions = {name: list(js.positions) for name, js in flatten_joints(ms).items() if js.positions}
    if not all(name in positions for name in tree.moving_joint_names):
        return
    try:
        q, _ = tree.resolve_mapping({**model.default_positions, **positions}, strict=False)
    except RobotStateFormatError:
        return
    poses = fk.forward(tree, q)
    doc = frames_document(model, {name: poses[i] for i, name in enumerate(tree.link_names)})
    base = _matrix(scene.nodes[ms_name]) @ inverse(model.pose)
    for name, entry in doc["frames"].items():
        if entry["kind"] not in ("joint", "frame"):
            continue  # the model and its links: where the state puts them
        key = ms_name + name[len(model.name):] if name.startswith(model.name + "::") else f"{ms_name}::{name}"
        if key not in scene.nodes:
            x = np.eye(4)
            x[:3, :3] = quaternion_to_matrix(entry["quaternion"])
            x[:3, 3] = entry["position"]
            scene.nodes[key] = node_from_matrix(entry["kind"], base @ x)


def _matrix(node: Node) -> Transform:
    x = np.eye(4)
    x[:3, :3] = quaternion_to_matrix(node.quaternion)
    x[:3, 3] = node.position
    return x
