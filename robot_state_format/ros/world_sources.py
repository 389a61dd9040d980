"""``state_store`` with ``sources``: one world from the robots of several namespaces (docs/state_store.md).

The ROS side of :mod:`robot_state_format.world.aggregate`: per source namespace it subscribes
``<ns>/world_state``, ``<ns>/joint_states`` and ``<ns>/robot_description`` (the source's model,
transient_local, as every state_publisher publishes it), plus ``/tf`` and ``/tf_static`` for the
robots' poses in the common frame. It answers ``~/sources`` (std_srvs/Trigger: one line per robot,
live or stale), logs when a robot goes stale or comes back, records the sources' topics into the
store's recordings and replays a world restart file robot by robot, each under its own namespace
and ``frame_prefix``.
"""

from __future__ import annotations

import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from rcl_interfaces.msg import FloatingPointRange, ParameterDescriptor, ParameterType
from rclpy.event_handler import PublisherEventCallbacks
from rclpy.exceptions import ParameterUninitializedException
from rclpy.node import Node
from rclpy.parameter import Parameter
from rclpy.serialization import deserialize_message
from sensor_msgs.msg import JointState
from std_msgs.msg import String
from std_srvs.srv import Trigger
from tf2_msgs.msg import TFMessage

from robot_state_format.errors import RobotStateFormatError
from robot_state_format.log_throttle import LogThrottle, throttled
from robot_state_format.model.types import Model
from robot_state_format.playback.restart_replay import Robot, replay_restart
from robot_state_format.recording.cdr import cdr_string_text
from robot_state_format.ros.description import XacroPolicy, read_description_text
from robot_state_format.ros.messages import joint_state_arrays, transform_msg_to_matrix
from robot_state_format.ros.qos import LATCHED, SENSOR_IN, STATE_OUT, TF_QOS, TF_STATIC_LISTEN_QOS
from robot_state_format.ros.replay import edge_msgs, joint_state_msg
from robot_state_format.usdf.types import WORLD_FRAME, WorldState
from robot_state_format.usdf.writer import write_world_state
from robot_state_format.world.aggregate import SourceStatus, WorldAggregator, normalise_namespace, topic
from robot_state_format.world.tf_tree import TfTree

STATUS_PERIOD_S = 0.25
TF_BACKLOG = 500  # /tf messages kept between two decodes (older ones are superseded by newer transforms)


def declare_parameters(node: Node) -> None:
    """``sources``, ``frame_prefixes``, ``stale_after``, ``world_frame``, ``world_name`` (read-only but
    ``stale_after``)."""
    def desc(text: str, kind: int, read_only: bool = True) -> ParameterDescriptor:
        return ParameterDescriptor(description=text, type=kind, read_only=read_only)

    arr, s, d = ParameterType.PARAMETER_STRING_ARRAY, ParameterType.PARAMETER_STRING, ParameterType.PARAMETER_DOUBLE
    stale = desc("seconds of silence after which a source's robot is reported stale (0 = never)", d, False)
    stale.floating_point_range = [FloatingPointRange(from_value=0.0, to_value=86400.0, step=0.0)]
    given = node._parameter_overrides.get("stale_after")  # `-p stale_after:=5` is an integer: take it
    if given is not None and given.type_ is Parameter.Type.INTEGER:
        node._parameter_overrides["stale_after"] = Parameter("stale_after", Parameter.Type.DOUBLE, float(given.value))
    node.declare_parameter("sources", Parameter.Type.STRING_ARRAY,
                           desc("namespaces of the robots whose states make one world (default: this node's own)", arr))
    node.declare_parameter("frame_prefixes", Parameter.Type.STRING_ARRAY,
                           desc("TF frame_prefix of each source (default: 'r1/' for /r1, '' for /)", arr))
    node.declare_parameter("stale_after", 5.0, stale)
    node.declare_parameter("world_frame", WORLD_FRAME, desc("the common TF frame the robots are posed in", s))
    node.declare_parameter("world_name", "world", desc("name of the world_state written for several sources", s))


def _value(node: Node, name: str) -> Any:
    """A parameter's value; None for a typed parameter declared without a value and not given."""
    try:
        return node.get_parameter(name).value
    except ParameterUninitializedException:
        return None


def attach(node: Node, record: Callable[[str, bytes], None], own_model: Model | None) -> WorldSources | None:
    """The world of ``sources`` when that names anything but the node's own namespace, else None
    (the store then works on its own topics, as without the parameter)."""
    declare_parameters(node)
    sources = _value(node, "sources")
    own = node.get_namespace()
    if not sources or [normalise_namespace(s, own) for s in sources] == [normalise_namespace(own)]:
        return None
    return WorldSources(node, list(sources), record, own_model)


@dataclass(frozen=True)
class WorldReplay:
    """A world restart file replayed robot by robot: ``ok``, the user's ``message``, and for the store
    to publish itself the ``world_state`` text and the static transforms (empty when refused)."""

    ok: bool
    message: str
    text: str = ""
    transforms: list[Any] = field(default_factory=list)


class WorldSources:
    """Subscriptions, status and replay of the world of several robots (see the module doc)."""

    def __init__(self, node: Node, sources: list[str], record: Callable[[str, bytes], None],
                 own_model: Model | None) -> None:
        self.node = node
        p = node.get_parameter
        self.own = normalise_namespace(node.get_namespace())
        self.agg = WorldAggregator(sources, own_namespace=node.get_namespace(),
                                   frame_prefixes=_value(node, "frame_prefixes") or None,
                                   world_name=str(p("world_name").value), common_frame=str(p("world_frame").value))
        self.tf = TfTree()
        self._record = record
        self._text: tuple[int, str] | None = None
        self._stale: set[str] = set()
        self._log_throttle = LogThrottle()  # per topic (rclpy throttles per call site)
        self.dropped: dict[str, int] = {}  # unreadable messages by topic (each one warned about, throttled)
        self._replayed: dict[str, JointState] = {}
        self._pubs: dict[str, Any] = {}
        self._subs: list[Any] = []
        self._resend_until = 0.0
        if own_model is not None and self.own in self.agg.sources:
            self.agg.set_model(self.own, own_model)
        for ns in self.agg.sources:
            self._subs += [
                node.create_subscription(String, topic(ns, "world_state"),
                                         lambda raw, n=ns: self._on_world_state(n, raw), LATCHED, raw=True),
                node.create_subscription(JointState, topic(ns, "joint_states"),
                                         lambda raw, n=ns: self._on_joint_state(n, raw), SENSOR_IN, raw=True),
                node.create_subscription(String, topic(ns, "robot_description"),
                                         lambda msg, n=ns: self._on_description(n, msg), LATCHED),
            ]
        # /tf can carry thousands of messages a second: kept raw (the newest TF_BACKLOG), decoded on the timer
        self._tf_raw: deque[bytes] = deque(maxlen=TF_BACKLOG)
        self._subs += [node.create_subscription(TFMessage, "/tf", lambda raw: self._tf_raw.append(raw), TF_QOS,  # noqa: PLW0108 - rclpy needs a signature
                                                 raw=True),
                       node.create_subscription(TFMessage, "/tf_static", self._on_tf, TF_STATIC_LISTEN_QOS)]
        self._played: dict[str, Any] = {}
        for ns in self.agg.sources:  # made now: discovery is done when a replay or playback publishes
            self._publisher(ns)
            self._played[topic(ns, "joint_states")] = self._pubs[ns]
            self._played[topic(ns, "world_state")] = node.create_publisher(String, topic(ns, "world_state"), STATE_OUT)
        self._service = node.create_service(Trigger, "~/sources", self._srv_sources)
        self._timer = node.create_timer(STATUS_PERIOD_S, self._on_timer)
        node.get_logger().info("world of " + ", ".join(f"{s.namespace} (frame_prefix {s.frame_prefix!r})"
                                                       for s in self.agg.sources.values()))

    # -- inputs ----------------------------------------------------------------------------------
    def _on_world_state(self, ns: str, raw: bytes) -> None:
        try:
            text = cdr_string_text(raw)
        except (ValueError, UnicodeDecodeError, IndexError) as exc:
            self._drop(topic(ns, "world_state"), exc)
            return
        self.agg.on_world_state(ns, text, time.monotonic())
        if ns != self.own:
            self._record(topic(ns, "world_state"), raw)

    def _on_joint_state(self, ns: str, raw: bytes) -> None:
        if ns != self.own:
            self._record(topic(ns, "joint_states"), raw)
        try:
            names, pos, vel, eff, stamp = joint_state_arrays(deserialize_message(raw, JointState))
        except Exception as exc:  # noqa: BLE001 data from the network: warned about and counted, never fatal
            self._drop(topic(ns, "joint_states"), exc)
            return
        problems = self.agg.on_joint_state(ns, names, pos, vel, eff, stamp, self.node.get_clock().now().nanoseconds,
                                           time.monotonic())
        for text in problems:
            self.node.get_logger().warning(f"{topic(ns, 'joint_states')}: {text}", throttle_duration_sec=5.0)

    def _drop(self, name: str, exc: BaseException) -> None:
        """Count a message of topic ``name`` that could not be read and warn (throttled)."""
        n = self.dropped[name] = self.dropped.get(name, 0) + 1
        throttled(self._log_throttle, self.node.get_logger(), "warning", f"drop {name}",
                  lambda: f"{name}: unreadable message dropped ({n} so far): {type(exc).__name__}: {exc}")

    def _xacro_policy(self) -> XacroPolicy:
        node = self.node
        if not node.has_parameter("allow_xacro_descriptions"):
            return XacroPolicy()
        files = str(node.get_parameter("description_files").value) if node.has_parameter("description_files") \
            else "package"
        return XacroPolicy.from_params(bool(node.get_parameter("allow_xacro_descriptions").value),
                                       str(node.get_parameter("xacro_include_paths").value), files)

    def _on_description(self, ns: str, msg: String) -> None:
        name = topic(ns, "robot_description")
        try:  # data from the network: xacro only when the node allows it (ros/description.py)
            model = read_description_text(msg.data, "", self._xacro_policy(), source=name.lstrip("/")).model
        except (RobotStateFormatError, ValueError) as exc:
            self.node.get_logger().error(f"{name}: model refused: {exc}", throttle_duration_sec=5.0)
            return
        self.agg.set_model(ns, model)
        self.node.get_logger().info(f"{ns}: model {model.name!r} ({len(model.joints)} joints)")

    def _on_tf(self, msg: TFMessage) -> None:
        for t in msg.transforms:
            self.tf.set(t.header.frame_id, t.child_frame_id, transform_msg_to_matrix(t.transform))

    def _drain_tf(self) -> None:
        while self._tf_raw:
            try:
                self._on_tf(deserialize_message(self._tf_raw.popleft(), TFMessage))
            except Exception as exc:  # noqa: BLE001 data from the network: warned about and counted, never fatal
                self._drop("/tf", exc)

    def _on_timer(self) -> None:
        if self._replayed and time.monotonic() < self._resend_until:
            # a volatile subscriber (a state_publisher's SensorDataQoS) matched a moment ago may have
            # missed the replayed joint states: send them again for a few seconds
            for ns, msg in self._replayed.items():
                self._pubs[ns].publish(msg)
        self._drain_tf()
        self.agg.update_poses(self.tf)
        log = self.node.get_logger()
        for st in self.status():
            if st.stale and st.namespace not in self._stale:
                self._stale.add(st.namespace)
                log.warning(f"robot {st.name} is stale: nothing from {st.namespace} for {st.silent_s:.1f} s "
                            "(kept with its last state)")
            elif not st.stale and st.namespace in self._stale:
                self._stale.discard(st.namespace)
                log.info(f"robot {st.name} is back ({st.namespace})")

    # -- outputs ---------------------------------------------------------------------------------
    def status(self) -> list[SourceStatus]:
        return self.agg.status(time.monotonic(), float(self.node.get_parameter("stale_after").value))

    def status_text(self) -> str:
        return "\n".join(s.describe() for s in self.status())

    def stale_note(self) -> str:
        """``""``, or a line naming the stale robots and the sources not heard from (for ``~/save``)."""
        st = self.status()
        parts = [f"{s.name} (silent {s.silent_s:.1f} s)" for s in st if s.stale]
        missing = [s.namespace for s in st if not s.seen]
        out = f"stale: {', '.join(parts)}" if parts else ""
        if missing:
            out += ("; " if out else "") + f"not heard from: {', '.join(missing)}"
        return out

    def _srv_sources(self, request: Trigger.Request, response: Trigger.Response) -> Trigger.Response:
        st = self.status()
        response.success = all(s.seen and not s.stale for s in st)
        response.message = self.status_text()
        return response

    @property
    def version(self) -> int:
        return self.agg.version

    def has_data(self) -> bool:
        return any(s.seen for s in self.status())

    def snapshot_text(self) -> str | None:
        """The world as USDF text (None until a robot was heard from)."""
        self._drain_tf()
        self.agg.update_poses(self.tf)
        version = self.agg.version
        if self._text is None or self._text[0] != version:
            state = self.agg.world()
            if state is None:
                return None
            self._text = (version, write_world_state(state))
        return self._text[1]

    def recording_topics(self) -> list[tuple[str, str]]:
        """``(topic, kind)`` of the sources' topics to record besides the node's own."""
        return [(topic(ns, name), name) for ns in self.agg.sources if ns != self.own
                for name in ("world_state", "joint_states")]

    # -- replay of a world restart file ---------------------------------------------------------
    def replay(self, state: WorldState, path: str, link_tf: bool) -> WorldReplay | None:
        """Publish each robot's joint states under its namespace and its TF with its frame_prefix
        (:func:`~robot_state_format.playback.restart_replay.replay_restart`); None when the file is not
        a world of these sources (the store replays it as one robot). Nothing is published when a
        robot does not fit."""
        by_name = {s.name: s for s in self.agg.sources.values()}
        if not state.model_states or not all(ms.name in by_name for ms in state.model_states):
            return None
        robots = {ms.name: Robot(by_name[ms.name].model, by_name[ms.name].frame_prefix,
                                 f"no model yet (nothing on {topic(by_name[ms.name].namespace, 'robot_description')})")
                  for ms in state.model_states}
        replay = replay_restart(state, robots, file=path, link_tf=link_tf, common_frame=self.agg.common_frame)
        if not replay.ok:
            return WorldReplay(False, replay.message)
        stamp = self.node.get_clock().now().nanoseconds
        for name, fields in replay.joint_states.items():
            ns = by_name[name].namespace
            msg = joint_state_msg(fields, stamp)
            self._replayed[ns] = msg
            self._publisher(ns).publish(msg)
            self._resend_until = time.monotonic() + 3.0
        return WorldReplay(True, replay.message, replay.text, edge_msgs(replay.edges, stamp))

    def router(self, own: dict[str, Any], own_names: dict[str, str]) -> Callable[[str, bytes], None]:
        """Where timed playback of a world recording sends each message: the node's own topics (short
        names, or the names it recorded them under), each source's ``world_state`` / ``joint_states``
        under its namespace; messages of any other topic are not played."""
        def publish(name: str, data: bytes) -> None:
            pub = own.get(name) or own.get(own_names.get(name, "")) or self._played.get(name)
            if pub is not None:
                pub.publish(data)

        return publish

    def _publisher(self, ns: str) -> Any:
        pub = self._pubs.get(ns)
        if pub is None:
            def on_matched(info: Any, n: str = ns) -> None:
                if getattr(info, "current_count_change", 0) > 0 and n in self._replayed:
                    self._pubs[n].publish(self._replayed[n])  # a volatile late subscriber gets it too
                    self._resend_until = time.monotonic() + 3.0

            pub = self._pubs[ns] = self.node.create_publisher(
                JointState, topic(ns, "joint_states"), STATE_OUT,
                event_callbacks=PublisherEventCallbacks(matched=on_matched))
        return pub
