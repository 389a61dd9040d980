"""The ``state_store`` node: USDF restart files written, recorded and replayed (docs/state_store.md).

* ``~/save`` (std_srvs/Trigger) writes the latest ``world_state`` snapshot to ``output_dir``
  (atomic write; the response message is the path, or the reason on failure) when every moving joint
  of it was measured (or ``allow_partial``), it is stamped and, once its publisher is gone, not older
  than ``max_snapshot_age``
  (:mod:`robot_state_format.playback.snapshot_checks`);
  ``checkpoint_period`` writes checkpoints, keeping the newest ``keep_last``.  Where no snapshot
  is published, and a model is given, snapshots are built from ``joint_states``.
* ``record`` / ``~/start_recording`` / ``~/stop_recording``: the session (``record_topics``: /tf,
  /tf_static, robot_description, joint_states, world_state) into a rosbag2 MCAP directory
  (:mod:`robot_state_format.recording`, :mod:`robot_state_format.ros.recorder`).
* ``~/replay``: the restart file ``replay_file``, checked against the model, published on
  ``joint_states``, TF (model pose, frames) and ``world_state``, all transient_local, and sent
  again to every subscriber that appears later.
* ``~/play`` / ``~/pause`` / ``~/resume`` / ``~/stop_playback``: timed playback of
  ``playback_path`` (an MCAP recording or a directory of restart files), TF per ``tf_source``;
  real-time scheduling only with ``realtime_playback`` (undone when playback ends).

Collaborators: :mod:`.store_params` (parameters and their checks), :mod:`.store_saving` (saves and
checkpoints), :mod:`.store_recording` (recordings), :mod:`robot_state_format.playback` (the replay of
a restart file, timelines, the player, real-time scheduling); requests answer a typed
:class:`~robot_state_format.playback.outcome.Outcome` (``ok``, ``message``).

No request ever stops the node: failures answer ``success: false`` with the reason.
"""

from __future__ import annotations

import importlib
import sys
import time
from pathlib import Path
from typing import Any

from rcl_interfaces.msg import SetParametersResult
from rclpy.duration import Duration
from rclpy.event_handler import PublisherEventCallbacks
from rclpy.node import Node
from rclpy.parameter import Parameter
from rclpy.serialization import deserialize_message
from sensor_msgs.msg import JointState
from std_msgs.msg import String
from std_srvs.srv import Trigger
from tf2_msgs.msg import TFMessage

from robot_state_format.errors import DiagnosticError, ModelIOError, RobotStateFormatError, error_text
from robot_state_format.kinematics.tree import CompiledTree, compile_model
from robot_state_format.limits import directory_problem, input_problem, shown_path
from robot_state_format.live.joint_cache import JointStateCache
from robot_state_format.log_throttle import LogThrottle, emit, throttled
from robot_state_format.model.types import Model
from robot_state_format.playback.outcome import Outcome
from robot_state_format.playback.player import Player
from robot_state_format.playback.realtime import ProcessScheduling
from robot_state_format.playback.restart_replay import replay_restart
from robot_state_format.playback.source import is_restart_directory, open_source
from robot_state_format.playback.tf_source import TfPlan, plan_tf, recording_topic_kinds
from robot_state_format.playback.timeline import STATE_TOPICS
from robot_state_format.recording.cdr import cdr_string_text
from robot_state_format.ros import description as desc
from robot_state_format.ros import kernel_param, spin, store_params, world_sources
from robot_state_format.ros import session_playback as sp
from robot_state_format.ros.description import InBackground, XacroPolicy, load_description, refusal_kind
from robot_state_format.ros.messages import joint_state_arrays, ns_to_stamp
from robot_state_format.ros.qos import (
    LATCHED,
    STATE_OUT,
    STORE_JOINT_STATES_QOS,
    TF_PLAYBACK_QOS,
    TF_STATIC_QOS,
)
from robot_state_format.ros.replay import Replayed, encode_joint_state, joint_state_msg
from robot_state_format.ros.store_params import PARAMS, StateStoreConfigError
from robot_state_format.ros.store_recording import StoreRecording
from robot_state_format.ros.store_saving import SnapshotSaving
from robot_state_format.ros.tf_publisher import TfPublisher
from robot_state_format.usdf.build import SnapshotBuilder
from robot_state_format.usdf.reader import read_world_state_file
from robot_state_format.usdf.types import WorldState

__all__ = ["PARAMS", "StateStore", "StateStoreConfigError", "StateStoreModelError", "clock_type", "main"]

MAX_NOTES = 20  # playback notes logged one by one (restart files skipped); the rest counted


class StateStoreModelError(RobotStateFormatError):
    """The model given at start (``robot_description`` / ``model_file``) cannot be loaded."""


class StateStoreModelIOError(StateStoreModelError):
    """The ``model_file`` given at start cannot be read (exit 2, an I/O error, as on the command line)."""


def clock_type() -> Any | None:
    """``rosgraph_msgs/Clock`` when installed (not in every PyPI set-up), else None; looked up on each
    call (an optional message package, probed by name: parameter checks and playback say when it is
    missing)."""
    try:
        return importlib.import_module("rosgraph_msgs.msg").Clock
    except ImportError:
        return None


def _has_clock() -> bool:
    return clock_type() is not None


class StateStore(SnapshotSaving, StoreRecording, Node):
    """Save, checkpoint, record and replay USDF world states (composable Node)."""

    def __init__(self, node_name: str = "state_store", **kwargs: Any) -> None:
        super().__init__(node_name, **kwargs)
        store_params.declare(self, self._parameter_overrides, _has_clock)
        kernel_param.declare(self)
        self._model: Model | None = None
        self._tree: CompiledTree | None = None
        self._cache: JointStateCache | None = None
        self._builder: SnapshotBuilder | None = None
        self._model_error: str | None = None
        self._log_throttle = LogThrottle()
        self._own_model_file = str(self._p("model_file"))  # the user's; one set later is a peer's (read as data)
        # the user's replay and playback paths; a path set later may be a stranger's: its errors quote nothing of it
        self._own_paths = {name: str(self._p(name)).strip() for name in ("replay_file", "playback_path")}
        self._load_model()
        self._snapshot_rx = 0.0  # time.monotonic() when the newest world_state / joint_states arrived
        self._js_rx = 0.0
        self._snapshot_text: str | None = None  # newest world_state received
        self._snapshot_seq = 0
        self._checkpoint_seq = -1
        self._js_seq = 0
        self._js_built_seq = -1
        self._built: WorldState | None = None  # built from joint_states
        self._recorder = None
        self._record_error = None
        self._topic_names = {}  # "/world_state" → the name recorded (namespace applied)
        self._player: Player | None = None
        self._replayed: Replayed | None = None
        self._pubs: dict[str, Any] = {}
        self._tf: TfPublisher | None = None
        self._clock_pub: Any = None
        self._checkpoint_timer: Any = None
        self.last_save: Outcome | None = None
        self._resend_until = 0.0
        self._scheduling = ProcessScheduling()  # real-time settings, only with realtime_playback

        self._js_qos = str(self._p("joint_states_qos"))
        if self._js_qos not in STORE_JOINT_STATES_QOS:
            raise StateStoreConfigError(f"joint_states_qos {self._js_qos!r}: expected one of "
                                        f"{', '.join(STORE_JOINT_STATES_QOS)}")
        self._inputs: list[Any] = []
        self._inputs_held = False  # hold_inputs(): a replay-only node reads nothing
        self._subscribe_inputs()
        # no model given: the robot's own (state_publisher's latched robot_description) is the model
        # saves are checked against (which joints must be measured)
        self._description_text: str | None = None
        self._description_sub = None
        if self._model is None:
            self._description_sub = self.create_subscription(String, "robot_description",
                                                             self._on_robot_description, LATCHED)
        # allowed xacro from the topic is expanded off the executor (saves and services go on meanwhile)
        self._expanded: list[tuple[str, Model | None, BaseException | None]] = []
        self._expanded_gc = self.create_guard_condition(self._on_expanded)
        self._background = InBackground(lambda text: self._read_model(text, "", str(self._p("xacro_args"))),
                                        self._deliver_expanded)
        # with `sources`: one world of several robots (ros/world_sources.py); None: this namespace only
        self._world = world_sources.attach(self, self._record, self._model)
        srv = [("save", self._srv_save), ("start_recording", self._srv_start_recording),
               ("stop_recording", self._srv_stop_recording), ("replay", self._srv_replay),
               ("play", self._srv_play), ("pause", self._srv_pause), ("resume", self._srv_resume),
               ("stop_playback", self._srv_stop_playback)]
        self._trigger_services = [self.create_service(Trigger, f"~/{name}", cb) for name, cb in srv]
        self._flush_timer = self.create_timer(0.2, self._on_flush_timer)
        for topic in ("world_state", "joint_states"):  # created early: discovery is done when replay starts
            self._publisher(topic)
        self._clean_stray_temporaries()
        self._restart_checkpoint_timer(self._p("checkpoint_period"))
        self.add_on_set_parameters_callback(self._on_set_parameters)
        if self._p("record"):
            started = self.start_recording()
            if not started.ok:
                self.get_logger().error(f"record: {started.message}")
        self._start_timer = self.create_timer(0.05, self._on_start)

    # -- parameters ----------------------------------------------------------------------------
    def _p(self, name: str) -> Any:
        return self.get_parameter(name).value

    def _on_set_parameters(self, params: list[Parameter[Any]]) -> SetParametersResult:
        changes = {p.name: p.value for p in params}

        def bad(reason: str) -> SetParametersResult:
            return SetParametersResult(successful=False, reason=reason)

        problem = store_params.check_values(changes, _has_clock)
        if problem is not None:
            return bad(problem)
        if changes.keys() & {"robot_description", "model_file", "xacro_args"}:
            p = {n: changes.get(n, self._p(n)) for n in ("robot_description", "model_file", "xacro_args")}
            try:
                loaded = self._read_model(p["robot_description"], p["model_file"], p["xacro_args"],
                                          own_model_file=self._own_model_file)
            except Exception as exc:  # noqa: BLE001 a bad model parameter never stops the node: warned
                reason = f"model refused, the current one stays: {error_text(exc)}"
                throttled(self._log_throttle, self.get_logger(), "warning", f"model-parameter-{refusal_kind(exc)}",
                          reason)
                return bad(reason)
            self._install_model(loaded)
        if "checkpoint_period" in changes:
            self._restart_checkpoint_timer(changes["checkpoint_period"])
        if "record" in changes and bool(changes["record"]) != (self._recorder is not None):
            done = self.start_recording() if changes["record"] else self.stop_recording()
            if not done.ok:
                return bad(f"record: {done.message}")
        return SetParametersResult(successful=True)
    # -- model --------------------------------------------------------------------------------
    def _read_model(self, description: str, model_file: str, xacro_args: str,
                    own_model_file: str | None = None) -> Model | None:
        """``own_model_file``: the start-up ``model_file`` (the user's; None: ``model_file`` is), see
        :func:`~robot_state_format.ros.description.load_description`."""
        if not description.strip() and not model_file.strip():
            return None
        policy = XacroPolicy.from_params(bool(self._p("allow_xacro_descriptions")),
                                         str(self._p("xacro_include_paths")), str(self._p("description_files")))
        return load_description(description, model_file, xacro_args, policy, own_model_file=own_model_file).model

    def _load_model(self) -> None:
        """The model given at start; one that cannot be loaded ends the node (StateStoreModelError: exit 1)."""
        try:
            model = self._read_model(self._p("robot_description"), self._p("model_file"), self._p("xacro_args"))
        except ModelIOError as exc:  # an unreadable file
            raise StateStoreModelIOError(str(exc)) from None
        except DiagnosticError as exc:  # the reader's FILE:LINE lines
            raise StateStoreModelError(str(exc)) from None
        except RobotStateFormatError as exc:  # e.g. robot_description and model_file both set
            raise StateStoreConfigError(str(exc) or type(exc).__name__) from None
        self._install_model(model)

    def _install_model(self, model: Model | None) -> None:
        self._model = model
        self._tree = self._cache = None
        self._builder = None
        self._model_error = None
        if model is None:
            return
        self._tree = compile_model(model)
        self._cache = JointStateCache(model, self._tree)
        self._js_built_seq = -1
        self.get_logger().info(f"model {model.name!r}: {len(model.joints)} joints")

    def _on_robot_description(self, msg: String) -> None:
        """The robot_description topic as the model, while no model parameter is set."""
        if msg.data == self._description_text or str(self._p("robot_description")).strip() \
                or str(self._p("model_file")).strip():
            return
        if self._p("allow_xacro_descriptions"):
            self._background.submit(msg.data)
            return
        try:
            model = self._read_model(msg.data, "", str(self._p("xacro_args")))
        except Exception as exc:  # noqa: BLE001 a bad model on the topic never stops the node: warned
            self._topic_model(msg.data, None, exc)
            return
        self._topic_model(msg.data, model, None)

    def _topic_model(self, text: str, model: Model | None, error: BaseException | None) -> None:
        if error is not None:
            throttled(self._log_throttle, self.get_logger(), "warning", f"robot_description-{refusal_kind(error)}",
                      f"robot_description topic not used as the model: {error_text(error)}")
            return
        if str(self._p("robot_description")).strip() or str(self._p("model_file")).strip():
            return  # a model parameter was set meanwhile: it wins
        self._description_text = text
        if model is not None:
            self.get_logger().info("model from the robot_description topic")
            self._install_model(model)

    def _deliver_expanded(self, text: str, model: Model | None, error: BaseException | None) -> None:
        self._expanded.append((text, model, error))  # worker thread: handed to the executor
        self._expanded_gc.trigger()

    def _on_expanded(self) -> None:
        while self._expanded:
            self._topic_model(*self._expanded.pop(0))

    # -- inputs -------------------------------------------------------------------------------
    def hold_inputs(self) -> None:
        """Stop reading ``world_state`` and ``joint_states`` for the rest of this node's life (a replay-only node,
        as ``robot-state-format replay`` runs: its own readers would count as subscribers of what it plays, so
        ``--wait-for-subscribers`` would wait for nobody, and each message it sends would wake it)."""
        self._inputs_held = True
        self._unsubscribe_inputs()

    def _subscribe_inputs(self) -> None:
        if not self._inputs and not self._inputs_held:
            self._inputs = [
                self.create_subscription(String, "world_state", self._on_world_state, LATCHED, raw=True),
                self.create_subscription(JointState, "joint_states", self._on_joint_state,
                                         STORE_JOINT_STATES_QOS[self._js_qos], raw=True),
            ]

    def _unsubscribe_inputs(self) -> None:
        """While playing (and not recording) the node would receive its own messages: every one wakes the
        executor, whose Python work competes for the GIL with the player and spoils its timing."""
        for sub in self._inputs:
            self.destroy_subscription(sub)
        self._inputs = []

    def _on_world_state(self, raw: bytes) -> None:
        try:
            text = cdr_string_text(raw)
        except (ValueError, UnicodeDecodeError, IndexError) as exc:
            throttled(self._log_throttle, self.get_logger(), "warning", "world_state-unreadable",
                      f"world_state message unreadable: {exc}")
            return
        self._snapshot_text = text
        self._snapshot_seq += 1
        self._snapshot_rx = time.monotonic()
        if self._recorder is not None:
            self._record("/world_state", raw)

    def _on_joint_state(self, raw: bytes) -> None:
        if self._recorder is not None:
            self._record("/joint_states", raw)
        if self._cache is None or self._snapshot_text is not None:
            return
        try:
            names, pos, vel, eff, stamp = joint_state_arrays(deserialize_message(raw, JointState))
            up = self._cache.update(names, pos, vel, eff, stamp, self.get_clock().now().nanoseconds)
        except Exception as exc:  # noqa: BLE001 the node must survive any error of one message: warned
            throttled(self._log_throttle, self.get_logger(), "warning", "joint_states-unreadable",
                      f"joint_states message dropped: {type(exc).__name__}: {exc}")
            return
        if up.changed:
            self._js_seq += 1
            self._js_rx = time.monotonic()

    def _on_flush_timer(self) -> None:
        if self._resend_until and time.monotonic() < self._resend_until:
            self._resend_replayed()
        if self._scheduling.applied and (self._player is None or not self._player.running):
            self._scheduling.restore()  # playback ended: the process as it was
        if not self._inputs and (self._player is None or not self._player.running):
            self._subscribe_inputs()
        if self._recorder is not None:
            try:
                self._recorder.maybe_flush()
            except Exception as exc:  # noqa: BLE001 a failing recording stops, never the node
                self._recording_failed(exc)

    def _on_start(self) -> None:
        self.destroy_timer(self._start_timer)
        if self._p("replay_on_start"):
            done = self.replay(self._p("replay_file"))
            emit(self.get_logger(), "info" if done.ok else "error", f"replay: {done.message}")
        if self._p("play_on_start"):
            done = self.play()
            emit(self.get_logger(), "info" if done.ok else "error", f"play: {done.message}")

    def _clean_stray_temporaries(self) -> None:
        """Remove temporaries of atomic writes cut off by a crash (``.NAME.usdf.XXXX.tmp``)."""
        out = Path(str(self._p("output_dir"))).expanduser()
        try:
            for p in out.glob(".*.usdf.*.tmp"):
                p.unlink()
        except OSError:
            pass

    # -- publishing ---------------------------------------------------------------------------
    def _publisher(self, topic: str) -> Any:
        pub = self._pubs.get(topic)
        if pub is None:
            msg_type = String if topic == "world_state" else JointState

            def on_matched(info: Any, t: str = topic) -> None:
                self._on_matched(t, info)

            cbs = PublisherEventCallbacks(matched=on_matched)
            pub = self._pubs[topic] = self.create_publisher(msg_type, topic, STATE_OUT, event_callbacks=cbs)
        return pub

    def _session_publisher(self, kind: str) -> Any:
        """Playback publisher of a recorded session topic: ``tf``, ``tf_static`` or ``robot_description``."""
        pub = self._pubs.get(kind)
        if pub is None:
            pub = self._pubs[kind] = (
                self.create_publisher(String, "robot_description", LATCHED) if kind == "robot_description" else
                self.create_publisher(TFMessage, f"/{kind}", TF_PLAYBACK_QOS if kind == "tf" else TF_STATIC_QOS))
        return pub

    def subscriber_count(self, topic: str) -> int:
        """How many subscriptions match this node's publisher on ``topic`` (world_state, joint_states, tf, ...),
        this node's own ``world_state`` and ``joint_states`` readers included unless :meth:`hold_inputs` was called."""
        pub = self._publisher(topic) if topic in STATE_TOPICS else self._session_publisher(topic)
        return int(pub.get_subscription_count())

    def wait_for_all_acked(self, timeout_s: float) -> bool:
        """Wait up to ``timeout_s`` until every reliable subscriber has acknowledged what this node
        published on world_state and joint_states (call before exiting, or the last samples can be lost)."""
        deadline = time.monotonic() + timeout_s
        return all(pub.wait_for_all_acked(Duration(nanoseconds=int(max(0.0, deadline - time.monotonic()) * 1e9)))
                   for pub in list(self._pubs.values()))

    def _on_matched(self, topic: str, info: Any) -> None:
        # A late subscriber with volatile durability (state_publisher's SensorDataQoS) gets no history:
        # send the replayed state again when a subscriber appears, and a few times during the next
        # three seconds (the new reader may not know this writer yet when the match is reported here).
        if getattr(info, "current_count_change", 0) > 0 and self._replayed is not None:
            self._resend_replayed(topic)
            self._resend_until = time.monotonic() + 3.0

    def _resend_replayed(self, topic: str | None = None) -> None:
        if self._replayed is None or (self._player is not None and self._player.running):
            return
        replayed = self._replayed
        if topic in (None, "world_state"):
            self._pubs["world_state"].publish(String(data=replayed.text))
        if topic in (None, "joint_states") and replayed.fields is not None:
            self._pubs["joint_states"].publish(joint_state_msg(replayed.fields, self.get_clock().now().nanoseconds))

    def _tf_publisher(self) -> TfPublisher:
        if self._tf is None:
            self._tf = TfPublisher(self)
        return self._tf

    # -- replay of one restart file ---------------------------------------------------------------
    def replay(self, path: str, *, peer: bool = False) -> Outcome:
        """Check ``path`` against the model and publish it (ok, or why not); ``peer``: the path was set on the
        running node (anyone may have chosen it), so no answer quotes what the file holds."""
        if not str(path).strip():
            return Outcome(False, "replay_file is not set")
        try:  # the size-checked gate: a FIFO, a device or a directory is refused before any read
            state = read_world_state_file(path).state
        except Exception as exc:  # noqa: BLE001 any reader error is the service's answer, never fatal
            return Outcome(False, f"cannot read {shown_path(path)}: {desc.file_error_text(exc, peer=peer)}")
        link_tf = bool(self._p("publish_link_tf"))
        world = self._world.replay(state, str(path), link_tf) if self._world else None
        if world is not None:  # a world of the sources: each robot under its own namespace
            if world.ok:
                self._replayed = Replayed(world.text, None, world.transforms)
                self._publisher("world_state").publish(String(data=world.text))
                self._tf_publisher().replace_static(world.transforms)
            return Outcome(world.ok, world.message if world.ok or not peer else desc.withheld(path, "replay_file"))
        model = self._model
        if model is None:
            return Outcome(False, "no model loaded: set robot_description or model_file, the restart file is "
                           "checked against it" + (f" ({self._model_error})" if self._model_error else ""))
        replay = replay_restart(state, model, file=str(path), link_tf=link_tf)
        if not replay.ok:
            return Outcome(False, desc.withheld(path, "replay_file") if peer else replay.message)
        if self._player is not None and self._player.running:
            self._player.stop()
        stamp = self.get_clock().now().nanoseconds
        self._replayed = replayed = Replayed.of(replay, model.name, stamp)
        self._publisher("world_state").publish(String(data=replay.text))
        self._publisher("joint_states").publish(joint_state_msg(replay.joint_states[model.name], stamp))
        if replayed.transforms:
            self._tf_publisher().replace_static(replayed.transforms)
        return Outcome(True, replay.message)

    def _srv_replay(self, request: Trigger.Request, response: Trigger.Response) -> Trigger.Response:
        path = str(self._p("replay_file"))
        self.replay(path, peer=path.strip() != self._own_paths["replay_file"]).answer(response)
        if not response.success:
            self.get_logger().warning(f"replay: {response.message}")
        return response

    # -- timed playback -------------------------------------------------------------------------
    def play(self, path: str | None = None, *, first_acked_timeout: float = 0.0) -> Outcome:  # noqa: C901 (complexity 21): to be split, issue 38
        """Start timed playback of ``path`` (default: the ``playback_path`` parameter).

        With ``first_acked_timeout`` > 0 the player publishes the first message, then waits up to that
        long until every matched reliable subscriber acknowledged it (so each has matched this writer
        too and misses nothing after) before the timeline runs on.
        """
        peer = path is None and str(self._p("playback_path")).strip() != self._own_paths["playback_path"]
        path = str(path if path is not None else self._p("playback_path")).strip()
        if not path:
            return Outcome(False, "playback_path is not set")
        if self._player is not None and self._player.running:
            return Outcome(False, "already playing (call ~/stop_playback first)")
        p = Path(path).expanduser()
        problem = directory_problem(p) and input_problem(p)
        if problem is not None:  # a FIFO or a device is never opened (it would block the executor)
            return Outcome(False, f"cannot read {shown_path(path)}: {problem}")
        try:
            plan = self.playback_plan(p)
        except ValueError as exc:
            return Outcome(False, desc.withheld(path, "playback_path") if peer else str(exc))
        except Exception as exc:  # noqa: BLE001 any reader error is the service's answer, never fatal
            return Outcome(False, f"cannot read {shown_path(path)}: {desc.file_error_text(exc, peer=peer)}")
        try:
            source = open_source(p, plan.kinds, self._model, encode_joint_state, full_names=self._world is not None)
        except Exception as exc:  # noqa: BLE001 any reader error is the service answer, never fatal
            return Outcome(False, f"cannot read {shown_path(path)}: {desc.file_error_text(exc, peer=peer)}")
        if peer and source.notes:
            self.get_logger().warning(f"play: {len(source.notes)} file(s) or message(s) skipped "
                                      f"({desc.withheld(path, 'playback_path')})")
        for note in [] if peer else source.notes[:MAX_NOTES]:
            self.get_logger().warning(f"play: {note}")
        if not peer and len(source.notes) > MAX_NOTES:
            self.get_logger().warning(f"play: ... and {len(source.notes) - MAX_NOTES} more files like these")
        if source.empty:
            return Outcome(False, f"{path} holds no world_state or joint_states messages")
        clock = None
        if self._p("publish_clock"):
            ctype = clock_type()
            if ctype is None:
                return Outcome(False, "publish_clock needs rosgraph_msgs, which is not installed")
            if self._clock_pub is None:
                self._clock_pub = self.create_publisher(ctype, "/clock", 10)
            clock = self._publish_clock
        pubs = {t: self._publisher(t) if t in STATE_TOPICS else self._session_publisher(t)
                for t in plan.kinds | ({"tf", "tf_static"} if plan.tf == "computed" else set())}
        computed = sp.ComputedTf(self._model) if plan.tf == "computed" and self._model is not None else None
        if computed is not None:
            pubs["tf_static"].publish(computed.static(self.get_clock().now().nanoseconds))
        self._replayed = None

        def wait_first_acked() -> None:
            self.wait_for_all_acked(first_acked_timeout)

        after_first = wait_first_acked if first_acked_timeout > 0 else None
        route = self._world.router(pubs, {self.resolve_topic_name(t): t for t in pubs}) if self._world else None
        realtime = bool(self._p("realtime_playback"))
        self._player = Player(source.events, route or sp.session_publish(pubs, computed, time.time_ns),
                              rate=self._p("rate"), loop=self._p("loop"), start_offset=self._p("start_offset"),
                              publish_clock=clock, after_first=after_first, realtime=realtime)
        if realtime:
            self._scheduling.apply()
            if self._scheduling.note:
                self.get_logger().info(self._scheduling.note)
        if self._recorder is None:
            self._unsubscribe_inputs()
        self._player.start()
        if realtime:
            time.sleep(0.01)  # the player thread has asked for its priority: say when it was refused
            if self._player.realtime_note:
                self.get_logger().info(self._player.realtime_note)
        rate = f"at rate {self._p('rate'):g}"
        extent = source.extent
        if extent is None:
            return Outcome(True, f"playing {path}: a recording without summary (cut off?), length unknown, {rate}")
        span = (extent.end_ns - extent.start_ns) / 1e9
        return Outcome(True, f"playing {path}: {extent.count} messages over {span:.3f} s {rate}, TF {plan.tf}")

    def playback_plan(self, path: str | Path) -> TfPlan:
        """The TF source in effect and the topic kinds played for ``path`` (ValueError: refused, with why)."""
        p = Path(path).expanduser()
        return plan_tf(str(self._p("tf_source")), None if is_restart_directory(p) else recording_topic_kinds(p),
                       self._model is not None)

    def _publish_clock(self, t_ns: int) -> None:
        ctype = clock_type()
        assert ctype is not None
        self._clock_pub.publish(ctype(clock=ns_to_stamp(t_ns)))

    def _srv_play(self, request: Trigger.Request, response: Trigger.Response) -> Trigger.Response:
        return self.play().answer(response)

    def _srv_pause(self, request: Trigger.Request, response: Trigger.Response) -> Trigger.Response:
        ok = self._player is not None and self._player.pause()
        response.success, response.message = ok, "paused" if ok else "nothing is playing"
        return response

    def _srv_resume(self, request: Trigger.Request, response: Trigger.Response) -> Trigger.Response:
        ok = self._player is not None and self._player.resume()
        response.success, response.message = ok, "resumed" if ok else "playback is not paused"
        return response

    def _srv_stop_playback(self, request: Trigger.Request, response: Trigger.Response) -> Trigger.Response:
        player = self._player
        if player is None or not player.running:
            response.success, response.message = False, "nothing is playing"
            return response
        player.stop()
        self._subscribe_inputs()
        response.success, response.message = True, f"stopped after {player.published} messages"
        return response

    def shutdown(self) -> None:
        """Stop playback, close the recording cleanly and undo real-time settings (called on SIGINT)."""
        if self._player is not None:
            self._player.stop()
        self._scheduling.restore()
        if self._recorder is not None:
            done = self.stop_recording()
            print(f"state_store: recording {'closed' if done.ok else 'failed'}: {done.message}", file=sys.stderr)


def main(args: list[str] | None = None) -> int:
    """Console script ``state_store``: spin the node until SIGINT/SIGTERM."""
    return spin.run_main("state_store", StateStore, args, [
        (StateStoreModelIOError, "cannot load the model: ", 2), (StateStoreModelError, "cannot load the model:\n", 1),
        (RobotStateFormatError, "", 2)],
        on_exit=lambda node: node.shutdown())


if __name__ == "__main__":
    sys.exit(main())
