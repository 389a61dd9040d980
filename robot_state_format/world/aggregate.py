"""One world from many robots: the ROS-free core of ``state_store``'s ``sources`` (docs/state_store.md).

Each source is a robot under its own ROS namespace. What it sends is kept per source:

* its newest ``world_state`` snapshot (text, parsed only when the world is built);
* when its model is known (its ``robot_description``), its ``joint_states`` merged in a
  :class:`~robot_state_format.live.joint_cache.JointStateCache`, turned into a state by forward
  kinematics (joints never received are left out, and then so are the link poses: absent, not zero)
  when no snapshot came, or when every joint has a value stamped after the newest snapshot (which
  lags its joint states by up to a snapshot period): the newest values win;
* the pose of its model frame in the common frame, from TF (``X_common_root ∘ X_M_root⁻¹``, the
  root frame being ``frame_prefix + root link``) when TF connects the two.

:meth:`WorldAggregator.world` builds one :class:`WorldState`: one top-level model_state per robot
heard from, named after its namespace (``/r1`` → ``r1``; the root namespace keeps the model's own
name). The world's stamp is the newest of the robots' stamps. A robot silent for longer than
``stale_after`` seconds stays in the world with its last values; :meth:`status` says which.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from numpy.typing import NDArray

from robot_state_format.errors import RobotStateFormatError
from robot_state_format.kinematics.tree import CompiledTree, compile_model
from robot_state_format.live.joint_cache import JointStateCache
from robot_state_format.model.types import SCOPE, Model
from robot_state_format.spatial import inverse, transform_to_pose6
from robot_state_format.usdf.build import SnapshotBuilder
from robot_state_format.usdf.reader import read_world_state
from robot_state_format.usdf.resolve import world_poses
from robot_state_format.usdf.types import WORLD_FRAME, FrameState, ModelState, Stamp, Vec6, WorldState
from robot_state_format.world.tf_tree import TfTree

NS = 1_000_000_000


class WorldSourceError(RobotStateFormatError):
    """A ``sources`` / ``frame_prefixes`` setting the store cannot work with."""


def normalise_namespace(namespace: str, own: str = "/") -> str:
    """``r1`` (relative to ``own``), ``/r1``, ``/r1/`` → an absolute namespace without a trailing ``/``."""
    text = str(namespace).strip()
    if not text.startswith("/"):
        text = own.rstrip("/") + "/" + text
    parts = [p for p in text.split("/") if p]
    for p in parts:
        if not all(c.isalnum() or c == "_" for c in p) or p[0].isdigit():
            raise WorldSourceError(f"source {namespace!r}: {p!r} is not a valid ROS namespace token "
                                   "(letters, digits, '_'; not starting with a digit)")
    return "/" + "/".join(parts)


def source_name(namespace: str) -> str:
    """The model_state name of a source: its namespace without the leading ``/`` (``""`` for root)."""
    return namespace.strip("/")


def default_frame_prefix(namespace: str) -> str:
    """The convention of docs/state_publisher.md: ``__ns:=/r1 frame_prefix:=r1/``."""
    name = source_name(namespace)
    return f"{name}/" if name else ""


def topic(namespace: str, name: str) -> str:
    return f"{namespace.rstrip('/')}/{name}"


@dataclass
class SourceStatus:
    """What the store knows of one robot, for the service answers and logs."""

    name: str
    namespace: str
    seen: bool
    stale: bool
    silent_s: float | None
    stamp: Stamp | None
    via: str  # "world_state", "joint_states" or "" (nothing yet)
    posed_by_tf: bool

    def describe(self) -> str:
        if not self.seen:
            return f"{self.namespace}: nothing received"
        stamp = f"{self.stamp.sec}.{self.stamp.nanosec:09d}" if self.stamp is not None else "none"
        state = "stale" if self.stale else "live"
        return (f"{self.name} ({self.namespace}): {state}, last message {self.silent_s:.1f} s ago, "
                f"stamp {stamp}, from {self.via}")


@dataclass
class RobotSource:
    namespace: str
    name: str
    frame_prefix: str
    model: Model | None = None
    tree: CompiledTree | None = None
    cache: JointStateCache | None = None
    builder: SnapshotBuilder | None = None
    text: str | None = None  # newest world_state
    parsed: tuple[int, WorldState] | None = None  # (version, state) of ``text``
    js_count: int = 0
    last_seen: float | None = None
    x_common_model: NDArray[np.float64] | None = None
    version: int = 0
    problems: list[str] = field(default_factory=list)

    @property
    def via(self) -> str:
        if self.text is not None:
            return "world_state" + (" and joint_states" if self.js_count and self.cache is not None else "")
        return "joint_states" if self.js_count and self.cache is not None else ""


class WorldAggregator:
    """The world of several robots (see the module doc). Times are seconds of a monotonic clock."""

    def __init__(self, namespaces: Sequence[str], *, own_namespace: str = "/",
                 frame_prefixes: Sequence[str] | None = None, world_name: str = "world",
                 common_frame: str = WORLD_FRAME) -> None:
        nss = [normalise_namespace(n, own_namespace) for n in namespaces]
        if not nss:
            raise WorldSourceError("sources is empty: name at least one namespace")
        dup = sorted({n for n in nss if nss.count(n) > 1})
        if dup:
            raise WorldSourceError(f"sources names {', '.join(dup)} more than once")
        if frame_prefixes and len(frame_prefixes) != len(nss):
            raise WorldSourceError(f"frame_prefixes has {len(frame_prefixes)} entries for {len(nss)} sources "
                                   "(give one per source, or none for the 'r1/' convention)")
        prefixes = list(frame_prefixes) if frame_prefixes else [default_frame_prefix(n) for n in nss]
        self.world_name = world_name
        self.common_frame = common_frame.lstrip("/") or WORLD_FRAME
        self.sources: dict[str, RobotSource] = {
            ns: RobotSource(ns, source_name(ns), prefix.lstrip("/")) for ns, prefix in zip(nss, prefixes, strict=True)}

    @property
    def version(self) -> int:
        """Changes whenever anything a saved world would hold changed."""
        return sum(s.version for s in self.sources.values())

    # -- inputs ----------------------------------------------------------------------------------
    def set_model(self, namespace: str, model: Model | None) -> None:
        """The source's model (from its ``robot_description``); joint values of joints it keeps stay."""
        src = self.sources[namespace]
        old = src.cache
        src.model, src.tree, src.cache, src.builder = model, None, None, None
        if model is not None:
            src.tree = compile_model(model)
            src.cache = JointStateCache(model, src.tree)
            if old is not None:
                src.cache.adopt(old)
        src.version += 1

    def on_world_state(self, namespace: str, text: str, now_s: float) -> None:
        src = self.sources[namespace]
        src.text = text
        src.last_seen = now_s
        src.version += 1

    def on_joint_state(self, namespace: str, names: Sequence[str], position: Any, velocity: Any, effort: Any,
                       stamp_ns: int, clock_ns: int, now_s: float) -> list[str]:
        """Merge one JointState of a source; the problems found (the message is never fatal)."""
        src = self.sources[namespace]
        src.last_seen = now_s
        if src.cache is None:
            return []
        update = src.cache.update(names, position, velocity, effort, stamp_ns, clock_ns)
        src.js_count += 1
        src.version += 1
        return [p.text for p in update.problems]

    def root_frame(self, namespace: str) -> str | None:
        """The TF frame of the source's root link (its ``frame_prefix`` applied), when its model is known."""
        src = self.sources[namespace]
        if src.model is None or src.model.is_world:
            return None
        roots = src.model.root_links()
        if len(roots) != 1 or roots[0] == WORLD_FRAME:  # a URDF rooted at `world` is placed by its own joints
            return None
        return src.frame_prefix + roots[0]

    def update_poses(self, tf: TfTree) -> None:
        """Each source's model frame in the common frame, from the newest TF."""
        for ns, src in self.sources.items():
            root = self.root_frame(ns)
            x = tf.lookup(self.common_frame, root) if root is not None else None
            if src.model is not None and src.model.root_links() == [WORLD_FRAME] and self.common_frame == WORLD_FRAME:
                x = np.asarray(src.model.pose, dtype=np.float64)  # attached to the world by its own joint
            elif x is not None and src.model is not None:
                x = x @ inverse(np.asarray(src.model.links[src.model.root_links()[0]].pose, dtype=np.float64))
            changed = (x is None) != (src.x_common_model is None) or (
                x is not None and src.x_common_model is not None and not np.array_equal(x, src.x_common_model))
            src.x_common_model = x
            if changed:
                src.version += 1

    # -- outputs ---------------------------------------------------------------------------------
    def status(self, now_s: float, stale_after: float) -> list[SourceStatus]:
        out = []
        for ns, src in self.sources.items():
            seen = src.last_seen is not None and src.via != ""
            silent = (now_s - src.last_seen) if src.last_seen is not None else None
            stale = bool(seen and stale_after > 0 and silent is not None and silent > stale_after)
            state = self._robot(src) if seen else None
            stamp = state[1] if state is not None else None
            out.append(SourceStatus(src.name or ns, ns, seen, stale, silent, stamp, src.via,
                                    src.x_common_model is not None))
        return out

    def world(self) -> WorldState | None:
        """The world of every robot heard from (None when none was)."""
        models: list[ModelState] = []
        frames: list[FrameState] = []
        stamps: list[Stamp] = []
        for src in self.sources.values():
            robot = self._robot(src)
            if robot is None:
                continue
            ms, stamp, robot_frames = robot
            models.append(ms)
            frames.extend(f for f in robot_frames if all(f.name != g.name for g in frames))
            if stamp is not None:
                stamps.append(stamp)
        if not models:
            return None
        if any(m.parent == self.common_frame for m in models) and self.common_frame != WORLD_FRAME \
                and all(f.name != self.common_frame for f in frames):
            frames.insert(0, FrameState(self.common_frame))
        return WorldState(self.world_name, "1.0", max(stamps) if stamps else None, frames, models)

    def _robot(self, src: RobotSource) -> tuple[ModelState, Stamp | None, list[FrameState]] | None:
        """The source's model_state (renamed, posed in the common frame), its stamp, frames it needs."""
        state = self._parsed(src) if src.text is not None else None
        if state is not None and state.model_states and not self._joint_states_newer(src, state):
            return self._from_snapshot(src, state)
        if src.cache is None or not src.js_count:
            return None
        return self._from_joint_states(src)

    @staticmethod
    def _joint_states_newer(src: RobotSource, state: WorldState) -> bool:
        """Joint states of every moving joint stamped after the snapshot (a snapshot lags its joint states
        by up to one snapshot period): the newest values win."""
        cache = src.cache
        if cache is None or not src.js_count or not bool(cache.has_value.all()):
            return False
        snap = state.stamp.sec * NS + state.stamp.nanosec if state.stamp is not None else -1
        return bool(int(cache.value_stamp.min()) > snap)

    def _parsed(self, src: RobotSource) -> WorldState | None:
        if src.parsed is None or src.parsed[0] != src.version:
            try:
                src.parsed = (src.version, read_world_state(src.text or "", file=f"<{topic(src.namespace, 'world_state')}>").state)
            except RobotStateFormatError as exc:
                src.problems = [str(exc)]
                return None
        return src.parsed[1]

    def _name(self, src: RobotSource, fallback: str) -> str:
        return src.name or fallback

    def _posed(self, src: RobotSource, ms: ModelState, pose: Vec6 | None, twist: Vec6 | None) -> ModelState:
        """``ms`` renamed for the world, posed by TF when known, else by ``pose`` in the world."""
        out = ModelState(self._name(src, ms.name), None, pose, twist, list(ms.link_states), list(ms.joint_states),
                         list(ms.model_states))
        if src.x_common_model is not None:
            out.pose = transform_to_pose6(src.x_common_model)
            if self.common_frame != WORLD_FRAME:
                out.parent = self.common_frame
                out.twist = None  # the snapshot's twist is relative to the world, not to this frame
        return out

    def _from_snapshot(self, src: RobotSource, state: WorldState) -> tuple[ModelState, Stamp | None, list[FrameState]]:
        wp = world_poses(state)
        if len(state.model_states) == 1:
            ms = state.model_states[0]
            in_world = ms.name in wp
            pose = transform_to_pose6(wp[ms.name]) if in_world else None
            twist = ms.twist if ms.parent in (None, WORLD_FRAME) and ms.pose is not None else None
            return self._posed(src, ms, pose, twist), state.stamp, []
        # a world file's snapshot: its models nested in one model_state at the world origin
        nested = []
        for ms in state.model_states:
            pose = transform_to_pose6(wp[ms.name]) if ms.name in wp else None
            twist = ms.twist if ms.parent in (None, WORLD_FRAME) and ms.pose is not None else None
            nested.append(ModelState(ms.name, None, pose, twist, ms.link_states, ms.joint_states, ms.model_states))
        holder = ModelState(self._name(src, state.name), None, (0.0,) * 6, None, [], [], nested)
        return holder, state.stamp, []

    def _from_joint_states(self, src: RobotSource) -> tuple[ModelState, Stamp | None, list[FrameState]]:
        cache, model = src.cache, src.model
        assert cache is not None and model is not None
        if src.builder is None:
            src.builder = SnapshotBuilder(model, src.tree)
        stamp = Stamp(*divmod(int(cache.stamp_ns), NS)) if cache.stamp_ns > 0 else None
        state = src.builder.state(cache.q, cache.velocities(),
                                  cache.efforts(), stamp=stamp)
        if not bool(cache.has_value.all()):  # unmeasured joints: absent, and so are the poses they move
            for top in state.model_states:
                _keep_measured(top, cache, f"{top.name}{SCOPE}" if model.is_world else "")
        if len(state.model_states) > 1:  # a world file: its models nested, placed as the file places them
            return ModelState(self._name(src, state.name), None, (0.0,) * 6, None, [], [], state.model_states), stamp, []
        # the model file's placement is not a measurement: the pose comes from TF, else from the robot's
        # own newest snapshot (when it placed itself in the world), else stays absent
        pose = twist = None
        snap = self._parsed(src) if src.text is not None else None
        if snap is not None and len(snap.model_states) == 1:
            wp = world_poses(snap)
            top = snap.model_states[0]
            pose = transform_to_pose6(wp[top.name]) if top.name in wp else None
        return self._posed(src, state.model_states[0], pose, twist), stamp, []


def _keep_measured(ms: ModelState, cache: JointStateCache, prefix: str) -> None:
    ms.link_states = []
    ms.twist = None
    ms.joint_states = [js for js in ms.joint_states
                       if js.positions == () or cache.joint_has_value(f"{prefix}{js.name}")]
    for sub in ms.model_states:
        sub.pose = None
        _keep_measured(sub, cache, f"{prefix}{sub.name}{SCOPE}")
