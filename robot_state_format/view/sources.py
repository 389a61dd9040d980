"""What ``view PATH`` shows: a model, a world_state (restart file) or a recording, as timed scenes.

* a model (URDF, xacro, SDFormat, MJCF, Drake Model Directives): one scene at its zero configuration
  (a directives scene: its default positions), or at ``positions``: the numbers of ``frames --json``
  (``fk --json``);
* a world_state file: one scene, every frame, model_state and link_state at the world pose the file
  gives (:func:`~robot_state_format.usdf.resolve.world_poses`: robots at their saved configuration, free
  bodies where they were); robots whose model is given get their visuals;
* a recording (an MCAP file or its rosbag2 directory): one scene per ``world_state`` / ``joint_states``
  message (at most :data:`MAX_FRAMES`, evenly spread), built as ``state_store`` builds its world
  (:class:`~robot_state_format.world.aggregate.WorldAggregator`, each namespace one robot), with the
  models of the recorded ``robot_description`` (data from the network: xacro in it is never evaluated, and
  it opens files, meshes included, only as ``package://`` files inside their package).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from robot_state_format.errors import RobotStateFormatError
from robot_state_format.kinematics import fk
from robot_state_format.kinematics.tree import compile_model
from robot_state_format.limits import read_input_file
from robot_state_format.model import access
from robot_state_format.model.detect import TAG_RE, prolog_end
from robot_state_format.model.loader import detect_format, load_model, looks_like_xacro
from robot_state_format.model.types import Model
from robot_state_format.recording.cdr import cdr_string_text
from robot_state_format.recording.reader import decoder_for, read_recording
from robot_state_format.spatial import Transform, quaternion_to_matrix
from robot_state_format.usdf.reader import read_world_state
from robot_state_format.usdf.types import WorldState
from robot_state_format.view.scene import Scene, scene_from_model, scene_from_state
from robot_state_format.world.aggregate import WorldAggregator, source_name
from robot_state_format.world.tf_tree import TfTree

__all__ = ["MAX_FRAMES", "Frames", "input_kind", "model_scene", "models_for_state", "recording_frames",
           "state_scene"]

MAX_FRAMES = 3000
NS = 1_000_000_000


@dataclass
class Frames:
    """Scenes at times (seconds from the first), and what was not shown, one line each."""

    frames: list[tuple[float, Scene]]
    warnings: list[str] = field(default_factory=list)


def input_kind(path: Path) -> str:
    """``recording`` (an ``.mcap`` file or a directory holding one), ``world_state`` (an XML document whose
    root is ``<world_state>``) or ``model``."""
    if path.is_dir() or path.suffix.lower() == ".mcap":
        return "recording"
    try:
        head = read_input_file(path)[:65536].decode("utf-8", "replace")
    except OSError:
        return "model"  # the model reader reports the I/O error
    m = TAG_RE.match(head, prolog_end(head))
    return "world_state" if m is not None and m.group(1) == "world_state" else "model"


def model_scene(model: Model, positions: Mapping[str, Any] | None = None) -> Scene:
    """The model at ``positions`` (joint name -> value(s); unnamed joints at zero, a directives scene's
    default positions first), as ``fk --json`` (``frames --json`` without positions) poses it."""
    tree = compile_model(model)
    q, _ = tree.resolve_mapping(dict(model.default_positions))
    if positions:
        q = tree.q_from_mapping(dict(positions), base=q)
    poses = fk.forward(tree, q)
    return scene_from_model(model, {name: poses[i] for i, name in enumerate(tree.link_names)})


def models_for_state(state: WorldState, models: Sequence[Model]) -> tuple[dict[str, Model], list[str]]:
    """Which model draws which top-level model_state: the one of its name, else the only model for the only
    model_state, else the models of a world (``Model.is_world``) for the model_states of its models."""
    out: dict[str, Model] = {}
    names = [ms.name for ms in state.model_states]
    warnings: list[str] = []
    for model in models:
        if model.is_world:
            tops = {n.split("::", 1)[0] for n in model.links}
            for name in names:
                if name in tops:
                    out[name] = model
        elif model.name in names:
            out[model.name] = model
        elif len(models) == 1 and len(names) == 1:
            out[names[0]] = model
        else:
            warnings.append(f"model {model.name!r} ({model.source_file}) draws no model_state of "
                            f"{state.name!r} (model_states: {', '.join(names) or 'none'})")
    return out, warnings


def state_scene(state: WorldState, models: Sequence[Model]) -> Frames:
    chosen, warnings = models_for_state(state, models)
    scene = scene_from_state(state, chosen)
    return Frames([(0.0, scene)], warnings + scene.warnings)


RECORDED_HINT = "the viewer opens nothing else for a recorded description: view the robot's own file instead"


def description_model(text: str, topic: str) -> Model:
    """A recorded robot description: it came over the network, so xacro in it is refused (data is never
    evaluated) and the files it names open only as from a live topic (``model.access``: ``package://`` files
    inside their package; errors about them quote nothing of them)."""
    file = f"<{topic}>"
    if detect_format(text, file) == "xacro" and looks_like_xacro(text):  # as state_publisher decides
        raise RobotStateFormatError(f"{topic}: the recorded description holds xacro, which is never evaluated: "
                                    "its robot is shown without visuals")
    with access.network_description(text, file, widen=RECORDED_HINT):
        model = load_model(text, file=file)  # a declared xacro namespace alone is dropped, nothing runs
        model.warnings[:] = access.withhold(model.warnings)
        return model


def _namespace(topic: str) -> tuple[str, str]:
    ns, _, last = topic.rpartition("/")
    return ns or "/", last


def recording_frames(path: Path, max_frames: int = MAX_FRAMES) -> Frames:
    """The recording as scenes (see the module doc)."""
    messages = [m for m in read_recording(path)
                if _namespace(m.topic)[1] in ("world_state", "joint_states", "robot_description")
                or m.topic in ("/tf", "/tf_static")]
    messages.sort(key=lambda m: m.log_time_ns)
    namespaces = sorted({_namespace(m.topic)[0] for m in messages if m.topic not in ("/tf", "/tf_static")})
    warnings: list[str] = []
    if not messages:
        return Frames([], [f"{path}: no world_state, joint_states or robot_description message"])
    if not namespaces:
        return Frames([], [f"{path}: no world_state, joint_states or robot_description message"])
    world = WorldAggregator(namespaces)
    tf = TfTree()
    models: dict[str, Model] = {}
    decoders: dict[int, Any] = {}
    t0 = messages[0].log_time_ns
    min_dt = (messages[-1].log_time_ns - t0) / NS / max_frames  # at most max_frames worlds are built
    last_built = -float("inf")
    states: list[tuple[float, WorldState]] = []
    for m in messages:
        ns, kind = _namespace(m.topic)
        now = (m.log_time_ns - t0) / NS
        try:
            if kind == "robot_description":
                model = description_model(cdr_string_text(m.data), m.topic)
                world.set_model(ns, model)
                models[source_name(ns) or model.name] = model
                continue
            if kind == "world_state":
                world.on_world_state(ns, cdr_string_text(m.data), now)
            else:
                if m.schema is None:
                    continue
                dec = decoders.get(m.schema.id)
                if dec is None:
                    dec = decoders[m.schema.id] = decoder_for(m.schema)
                if m.topic in ("/tf", "/tf_static"):  # places the robots in the world, as state_store does
                    for t in dec(m.data).transforms:
                        tf.set(t.header.frame_id, t.child_frame_id, _tf_matrix(t.transform))
                    world.update_poses(tf)
                    continue
                js = dec(m.data)
                stamp = int(js.header.stamp.sec) * NS + int(js.header.stamp.nanosec)
                for problem in world.on_joint_state(ns, list(js.name), list(js.position), list(js.velocity),
                                                    list(js.effort), stamp, m.log_time_ns, now):
                    if problem not in warnings:
                        warnings.append(f"{m.topic}: {problem}")
        except (RobotStateFormatError, UnicodeDecodeError, ValueError, AttributeError) as exc:
            text = f"{m.topic}: {exc}"
            if text not in warnings:
                warnings.append(text)
            continue
        if now - last_built < min_dt and m is not messages[-1]:
            continue
        built = world.world()
        if built is not None:
            states.append((now, built))
            last_built = now
    if len(states) > max_frames:
        step = len(states) / max_frames
        states = [states[int(i * step)] for i in range(max_frames - 1)] + [states[-1]]
    frames: list[tuple[float, Scene]] = []
    for now, state in states:
        try:
            scene = scene_from_state(state, _models_by_state(state, models))
            warnings.extend(w for w in scene.warnings if w not in warnings)
            frames.append((now, scene))
        except RobotStateFormatError as exc:
            warnings.append(f"{path} at {now:.3f} s: {exc}")
    return Frames(frames, warnings)


def _tf_matrix(transform: Any) -> Transform:
    r, p = transform.rotation, transform.translation
    x = np.eye(4)
    x[:3, :3] = quaternion_to_matrix((float(r.x), float(r.y), float(r.z), float(r.w)))
    x[:3, 3] = (float(p.x), float(p.y), float(p.z))
    return x


def _models_by_state(state: WorldState, models: Mapping[str, Model]) -> dict[str, Model]:
    out: dict[str, Model] = {}
    for ms in state.model_states:
        if ms.name in models:
            out[ms.name] = models[ms.name]
    return out


def read_state_file(path: Path) -> WorldState:
    return read_world_state(read_input_file(path), file=str(path)).state
