"""Saving of the ``state_store`` node: ``~/save``, checkpoints and the checks before a write.

A mixin of :class:`robot_state_format.ros.state_store.StateStore` (it uses the node's parameters and
the snapshot state the node keeps). A restart file is written only from a snapshot in which every
moving joint was measured (or, with ``allow_partial``, only the measured joints), that carries a
``<stamp>``, and that is still the current state (:mod:`robot_state_format.playback.snapshot_checks`;
docs/state_store.md "Only measured, recent state is saved").
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from std_srvs.srv import Trigger

from robot_state_format.errors import error_text
from robot_state_format.kinematics.tree import CompiledTree
from robot_state_format.live.joint_cache import JointStateCache
from robot_state_format.log_throttle import throttled
from robot_state_format.model.types import Model
from robot_state_format.output_dirs import ensure_directory
from robot_state_format.playback import snapshot_checks as sc
from robot_state_format.playback.outcome import FailureKind, Outcome, SaveOutcome
from robot_state_format.playback.restart_files import restart_file_path, rotate
from robot_state_format.ros.world_sources import WorldSources
from robot_state_format.usdf.build import SnapshotBuilder
from robot_state_format.usdf.reader import read_world_state
from robot_state_format.usdf.types import Stamp, WorldState
from robot_state_format.usdf.writer import write_world_state, write_world_state_file


@dataclass
class SaveCheck:
    """Whether the newest snapshot may be saved as the current state: ``state`` when it may, else
    ``why`` (``wait``, ``refused`` or ``error``, as :class:`SaveOutcome`) and the ``reason``."""

    state: WorldState | None
    why: FailureKind = ""
    reason: str = ""


class SnapshotSaving:
    """``current_snapshot``, ``save``, the ``~/save`` service and checkpoints."""

    # provided by StateStore (and rclpy's Node)
    _snapshot_text: str | None
    _snapshot_rx: float
    _js_rx: float
    _snapshot_seq: int
    _js_seq: int
    _js_built_seq: int
    _checkpoint_seq: int
    _checkpoint_timer: Any
    _built: WorldState | None
    _builder: SnapshotBuilder | None
    _cache: JointStateCache | None
    _tree: CompiledTree | None
    _model: Model | None
    _world: WorldSources | None
    _log_throttle: Any
    last_save: Outcome | None
    _p: Any
    get_logger: Any
    get_name: Any
    get_namespace: Any
    get_publishers_info_by_topic: Any
    resolve_topic_name: Any
    create_timer: Any
    destroy_timer: Any

    # -- snapshots and saving -----------------------------------------------------------------
    def current_snapshot(self) -> str | None:
        """The newest world_state text, or one built from joint_states and the model (every moving
        joint measured, or, with ``allow_partial``, only the measured ones); with ``sources``, the world."""
        if self._world is not None:
            return self._world.snapshot_text()
        if self._snapshot_text is not None:
            return self._snapshot_text
        state = self._built_state()
        if state is None:
            return None
        return write_world_state(state)

    def _built_state(self) -> WorldState | None:
        """The snapshot built from the joint_states received (None before any); unmeasured joints left out."""
        if self._cache is None or self._model is None or self._js_seq == 0:
            return None
        if self._js_built_seq != self._js_seq:
            if self._builder is None:
                self._builder = SnapshotBuilder(self._model, self._tree)
            cache = self._cache
            state = self._builder.state(cache.q, cache.velocities(),
                                        cache.efforts(),
                                        stamp=Stamp(*divmod(int(cache.stamp_ns), 1_000_000_000)))
            missing = cache.missing_joints()
            self._built = sc.drop_unmeasured(state, self._model, missing) if missing else state
            self._js_built_seq = self._js_seq
        return self._built

    def _snapshot_version(self) -> int:
        if self._world is not None:
            return int(self._world.version)
        return self._snapshot_seq if self._snapshot_text is not None else -1 - self._js_seq

    def _save_state(self) -> SaveCheck:
        """The state to save, or why not: ``wait`` (nothing measured yet: no snapshot, or joints never
        reported), ``refused`` (too old, no stamp) or ``error`` (not valid USDF)."""
        model = self._model
        state: WorldState | None
        if self._world is not None:  # one world of the sources: each robot holds only what it reported
            text = self._world.snapshot_text()
            if text is None:
                return SaveCheck(None, "wait", "no snapshot yet: no source has reported; nothing written")
            try:
                state = read_world_state(text, file="<world_state>").state
            except Exception as exc:  # noqa: BLE001 any USDF error is the save's answer, never fatal
                return SaveCheck(None, "error", f"the world snapshot is not valid USDF: {error_text(exc)}")
            if state.stamp is None:
                return SaveCheck(None, "refused", "refused: the world snapshot has no <stamp>; nothing written")
            return SaveCheck(state)
        if self._snapshot_text is not None:
            received = self._snapshot_rx
            try:
                state = read_world_state(self._snapshot_text, file="<world_state>").state
            except Exception as exc:  # noqa: BLE001 any USDF error is the save's answer, never fatal
                return SaveCheck(None, "error", f"the latest snapshot is not valid USDF: {error_text(exc)}")
            missing = sc.unmeasured_joints(state, model) if model is not None else []
        else:
            received = self._js_rx
            try:
                state = self._built_state()
            except Exception as exc:  # noqa: BLE001 any build error is the save's answer, never fatal
                return SaveCheck(None, "error", f"cannot build a snapshot from joint_states: {error_text(exc)}")
            if state is None:
                why = "no snapshot yet: nothing received on world_state nor joint_states"
                if model is None:
                    return SaveCheck(None, "wait", why + " (and no model to build one from joint_states)")
                leaders = sc.moving_leaders(model)
                if leaders:
                    why += f"; never reported: {len(leaders)} moving joint(s): {sc.names_text(leaders)}"
                return SaveCheck(None, "wait", why + "; nothing written")
            missing = self._cache.missing_joints() if self._cache is not None else []  # built: it is set
        if missing and not self._p("allow_partial"):
            return SaveCheck(None, "wait", sc.missing_refusal(missing, len(sc.moving_leaders(model)) if model else 0))
        if missing and model is not None:  # (missing joints are those of a model)
            state = sc.drop_unmeasured(state, model, missing)
        old = sc.age_refusal(time.monotonic() - received, float(self._p("max_snapshot_age")))
        source = "world_state" if self._snapshot_text is not None else "joint_states"
        if old is not None and not self._publisher_alive(source):  # publisher gone: not the current state
            return SaveCheck(None, "refused", old)
        if state.stamp is None:
            return SaveCheck(None, "refused", "refused: the snapshot has no <stamp> (when it was measured is "
                             "unknown); nothing written")
        return SaveCheck(state)

    def _publisher_alive(self, topic: str) -> bool:
        """Whether another node still publishes on ``topic`` (this node publishes there too, for replay)."""
        try:
            infos = self.get_publishers_info_by_topic(self.resolve_topic_name(topic))
        except Exception:  # noqa: BLE001 a graph query failing (shutdown) means no other publisher
            return False
        me = (self.get_name(), self.get_namespace())
        return any((i.node_name, i.node_namespace) != me for i in infos)

    def save(self, kind: str = "restart") -> SaveOutcome:
        """Write the latest snapshot: ok and the path, or why not and the kind of failure (``why``:
        ``wait``, nothing measured yet; ``refused``, stale or unstamped; ``error``, I/O or invalid)."""
        check = self._save_state()
        state = check.state
        if state is None or state.stamp is None:
            return SaveOutcome(False, check.reason, check.why)
        out = Path(str(self._p("output_dir"))).expanduser()
        created, why_not = ensure_directory(out, "output_dir")
        if why_not is not None:
            return SaveOutcome(False, why_not, "error")
        if created:
            self.get_logger().info(f"created output_dir {str(out)!r}")
        name = state.model_states[0].name if state.model_states and self._world is None else state.name
        try:
            path = restart_file_path(out, name, state.stamp.sec, state.stamp.nanosec, kind=kind)
            write_world_state_file(state, path)
        except Exception as exc:  # noqa: BLE001 any write error is the save's answer, never fatal
            return SaveOutcome(False, f"cannot write to {str(out)!r}: {error_text(exc)}", "error")
        if kind == "checkpoint":
            try:
                rotate(out, int(self._p("keep_last")), kind="checkpoint", model=name)
            except OSError as exc:
                self.get_logger().warning(f"checkpoint rotation: {exc}")
        note = self._world.stale_note() if self._world is not None else ""
        return SaveOutcome(True, str(path) + (f"\n{note}" if note else ""), "")

    def _srv_save(self, request: Trigger.Request, response: Trigger.Response) -> Trigger.Response:
        try:
            saved: Outcome = self.save("restart")
        except Exception as exc:  # noqa: BLE001 the service answers any error, the node keeps running
            saved = Outcome(False, f"save failed: {type(exc).__name__}: {exc}")
        self.last_save = saved
        saved.answer(response)
        if not saved.ok:
            throttled(self._log_throttle, self.get_logger(), "warning", "save", f"save: {saved.message}")
        return response

    def _restart_checkpoint_timer(self, period: float) -> None:
        if self._checkpoint_timer is not None:
            self.destroy_timer(self._checkpoint_timer)
            self._checkpoint_timer = None
        if period > 0:
            self._checkpoint_timer = self.create_timer(period, self._on_checkpoint)

    def _on_checkpoint(self) -> None:
        version = self._snapshot_version()
        if version == self._checkpoint_seq or (self._snapshot_text is None and self._js_seq == 0
                                               and (self._world is None or not self._world.has_data())):
            return
        try:
            saved: Outcome = self.save("checkpoint")
        except Exception as exc:  # noqa: BLE001 the checkpoint timer survives any error: warned
            saved = Outcome(False, f"{type(exc).__name__}: {exc}")
        if saved.ok:
            self._checkpoint_seq = version
        else:
            throttled(self._log_throttle, self.get_logger(), "warning", "checkpoint", f"checkpoint: {saved.message}")
