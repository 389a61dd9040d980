"""The ``state_publisher`` node: joint states in; /tf, /tf_static, robot_description and USDF out.

A drop-in for robot_state_publisher (see docs/state_publisher.md for the differences).  The hot
path (:meth:`StatePublisher._on_joint_state`) merges the JointState into a
:class:`~robot_state_format.playback.state_cache.JointStateCache`, computes every joint transform with one
array call and writes the TFMessage bytes directly (:class:`~robot_state_format.ros.messages.TfEncoder`).
Snapshots (``world_state``) are built on a timer, or after every JointState (``snapshot_frequency`` -1).
"""

from __future__ import annotations

import math
import shlex
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import rclpy
import rclpy.exceptions
from numpy.typing import NDArray
from rcl_interfaces.msg import FloatingPointRange, ParameterDescriptor, ParameterType, SetParametersResult
from rclpy.node import Node
from rclpy.parameter import Parameter
from rclpy.qos import (
    DurabilityPolicy,
    HistoryPolicy,
    QoSProfile,
    ReliabilityPolicy,
    qos_profile_sensor_data,
    qos_profile_system_default,
)
from rclpy.qos_overriding_options import QoSOverridingOptions
from sensor_msgs.msg import JointState
from std_msgs.msg import String

from robot_state_format.errors import ModelIOError, RobotStateFormatError, error_text
from robot_state_format import spatial as tfm
from robot_state_format.log_throttle import LogThrottle, throttled
from robot_state_format.limits import read_input_file
from robot_state_format.model.types import WORLD, JointType, Model
from robot_state_format.model.xacro import parse_xacro_args as xacro_args_from_words
from robot_state_format.ros.messages import (
    TfEncoder,
    joint_state_arrays,
    transform_msg_to_matrix,
    transforms_to_msgs,
)
from robot_state_format.playback.state_cache import JointStateCache, Problem
from robot_state_format.ros import spin

WARN_PERIOD_S = 5.0
JOINT_STATE_DRAIN = 100  # JointStates handled per executor callback when a backlog is waiting
TF_LISTEN_DEPTH = 200  # /tf messages kept between two drains of the model-pose listener
LATCHED = QoSProfile(depth=1, history=HistoryPolicy.KEEP_LAST, reliability=ReliabilityPolicy.RELIABLE,
                     durability=DurabilityPolicy.TRANSIENT_LOCAL)
TF_QOS = QoSProfile(depth=100, history=HistoryPolicy.KEEP_LAST, reliability=ReliabilityPolicy.RELIABLE,
                    durability=DurabilityPolicy.VOLATILE)
TF_STATIC_QOS = QoSProfile(depth=100, history=HistoryPolicy.KEEP_LAST, reliability=ReliabilityPolicy.RELIABLE,
                           durability=DurabilityPolicy.TRANSIENT_LOCAL)
TF_LISTEN_QOS = QoSProfile(depth=TF_LISTEN_DEPTH, history=HistoryPolicy.KEEP_LAST,
                           reliability=ReliabilityPolicy.RELIABLE, durability=DurabilityPolicy.VOLATILE)
JOINT_STATES_QOS = {
    "sensor_data": qos_profile_sensor_data,
    "reliable": QoSProfile(depth=100, history=HistoryPolicy.KEEP_LAST, reliability=ReliabilityPolicy.RELIABLE),
    "system_default": qos_profile_system_default,
}


FREQUENCY_PARAMS = ("publish_frequency", "snapshot_frequency")
EVERY_JOINT_STATE = -1.0  # snapshot_frequency: a world_state after every JointState that changed the state


def _check_frequency(key: str, value: Any) -> str | None:
    """Why ``value`` is not a valid rate for ``key`` (a number in 0..1000 Hz; snapshot_frequency
    also -1: every JointState), or None."""
    if key == "snapshot_frequency" and not isinstance(value, bool) and value == EVERY_JOINT_STATE:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value) \
            or not 0.0 <= value <= 1000.0:
        extra = ", or -1 (every JointState)" if key == "snapshot_frequency" else ""
        return f"{key} must be a number in 0..1000 Hz{extra}, got {value!r}"
    return None


class StatePublisherConfigError(RobotStateFormatError):
    """The node was started without a usable configuration (no description, both given...)."""


@dataclass
class LoadedDescription:
    """A robot description read and expanded: the text published on ``robot_description``."""

    text: str
    model: Model
    source: str


def parse_xacro_args(text: str) -> dict[str, str]:
    """``"a:=1 b:=two"`` → ``{"a": "1", "b": "two"}`` (shell quoting allowed)."""
    try:
        return xacro_args_from_words(shlex.split(text))
    except ValueError as exc:
        raise StatePublisherConfigError(f"xacro_args: {exc}") from None


def load_description(description: str, model_file: str, xacro_args: str) -> LoadedDescription:
    """Read exactly one of a description text or a model file (xacro expanded)."""
    from robot_state_format.model.loader import detect_format, load_model, load_xacro

    if bool(description.strip()) == bool(model_file.strip()):
        raise StatePublisherConfigError(
            "give exactly one of the parameters robot_description (URDF, SDFormat or xacro text) or "
            "model_file (path to a .urdf, .sdf, .world or .xacro file)"
            + ("; both are set" if description.strip() else "; neither is set"))
    args = parse_xacro_args(xacro_args)
    if model_file.strip():
        path = Path(model_file).expanduser()
        try:
            data = read_input_file(path)
        except OSError as exc:
            what = "is a directory, expected a model file" if path.is_dir() else f"cannot read: {exc.strerror or exc}"
            raise ModelIOError(f"model_file {str(path)!r}: {what}") from None
        if detect_format(data, str(path)) == "xacro":
            text, model = load_xacro(data, file=str(path), xacro_args=args)
            return LoadedDescription(text, model, str(path))
        text = data.decode("utf-8", "replace")
        return LoadedDescription(text, load_model(text, file=str(path)), str(path))
    text = description
    if detect_format(text) == "xacro":
        text, model = load_xacro(text, file="<robot_description>", xacro_args=args)
        return LoadedDescription(text, model, "robot_description")
    return LoadedDescription(text, load_model(text, file="<robot_description>"), "robot_description")


class Runtime:
    """One compiled model with everything the hot path needs; replaced as a whole on a model change."""

    def __init__(self, loaded: LoadedDescription, frame_prefix: str, publish_period_ns: int,
                 ignore_timestamp: bool) -> None:
        from robot_state_format.kinematics.tree import compile_model

        self.loaded = loaded
        self.model = model = loaded.model
        self.tree = tree = compile_model(model)
        self.cache = JointStateCache(model, tree, publish_period_ns=publish_period_ns,
                                     ignore_timestamp=ignore_timestamp)
        self.prefix = frame_prefix
        frames: list[tuple[str, str]] = []
        world_parent: list[int] = []
        fixed: list[int] = []
        for i, name in enumerate(tree.joint_names):
            joint = model.joints[name]
            if joint.parent == WORLD:
                world_parent.append(i)
                parent = WORLD
            else:
                parent = frame_prefix + joint.parent
            frames.append((parent, frame_prefix + joint.child))
            if joint.type is JointType.FIXED:
                fixed.append(i)
        self.frames = frames
        self.world_parent = np.array(world_parent, dtype=np.intp)
        self.world_pose = np.asarray(model.pose, dtype=np.float64)
        self.fixed = np.array(fixed, dtype=np.intp)
        self.encoder = TfEncoder(frames)
        self.root_link = tree.link_names[0] if tree.link_names else ""
        root = model.links.get(self.root_link)
        self.X_root_rootlink = np.asarray(root.pose, dtype=np.float64) if root is not None else np.eye(4)
        self.tree_joint_index = {n: i for i, n in enumerate(tree.joint_names)}
        self._snapshots: Any = None

    def joint_transforms(self) -> NDArray[np.float64]:
        from robot_state_format.kinematics.fk import joint_transforms

        x = joint_transforms(self.tree, self.cache.q)
        if len(self.world_parent):
            x = x.copy()
            x[self.world_parent] = self.world_pose @ x[self.world_parent]
        return x

    def snapshots(self) -> Any:
        """The USDF SnapshotBuilder of this model (made on first use, off the joint-state path)."""
        if self._snapshots is None:
            from robot_state_format.usdf.build import SnapshotBuilder

            self._snapshots = SnapshotBuilder(self.model, self.tree)
            from robot_state_format.kinematics import compiled

            compiled.set_default(True)  # a long-running process (ROBOT_STATE_FORMAT_KERNEL=numpy still wins)
            compiled.warm()  # load the compiled kinematics now (1-3 s once), not in a snapshot
        return self._snapshots

    def static_transforms(self) -> tuple[list[tuple[str, str]], NDArray[np.float64]]:
        x = self.joint_transforms()
        return [self.frames[i] for i in self.fixed.tolist()], x[self.fixed]


class _TfTree:
    """Latest transform per child frame from /tf and /tf_static (other publishers only).

    Enough to find the model's pose in ``model_parent_frame`` without tf2_ros (not on PyPI): the
    chain from the root link up to that frame, using the newest transform of each edge.
    """

    def __init__(self) -> None:
        self.edges: dict[str, tuple[str, NDArray[np.float64]]] = {}
        self.version = 0

    def add(self, msg: Any) -> None:
        for t in msg.transforms:
            child = t.child_frame_id.lstrip("/")
            self.edges[child] = (t.header.frame_id.lstrip("/"), transform_msg_to_matrix(t.transform))
        self.version += 1

    def lookup(self, target: str, source: str) -> NDArray[np.float64] | None:
        """X_target_source by walking parents from ``source`` up to ``target``."""
        x = np.eye(4)
        frame = source
        for _ in range(256):
            if frame == target:
                return x
            edge = self.edges.get(frame)
            if edge is None:
                return None
            frame, x_pf = edge[0], edge[1]
            x = x_pf @ x
        return None


class StatePublisher(Node):
    """Publishes TF and USDF snapshots of one robot from its joint states (composable Node)."""

    def __init__(self, node_name: str = "state_publisher", **kwargs: Any) -> None:
        super().__init__(node_name, **kwargs)
        self._log_throttle = LogThrottle(WARN_PERIOD_S)
        self._declare_parameters()
        p = self._params()
        self._rt: Runtime | None = None
        self._pending: Runtime | None = None
        self._dirty = False
        self._snapshot_timer: Any = None
        self._snapshot_every = False  # snapshot_frequency -1: a snapshot per JointState
        self._last_model_pose: tuple[float, ...] | None = None
        self._own_tf_gids: set[bytes] = set()
        self._foreign_tf_gids: set[bytes] = set()
        self._tf_tree = _TfTree()
        self._tf_tree_seen = -1

        from robot_state_format.ros.tf_publisher import TfPublisher

        self._tf = TfPublisher(self)
        self._send_tf = self._tf.send_serialized
        self._world_pub = self.create_publisher(String, "world_state", LATCHED)
        self._description_pub = None
        if not p["use_robot_description_topic"]:
            self._description_pub = self.create_publisher(String, "robot_description", LATCHED)
        qos_name = p["joint_states_qos"]
        self._js_sub = self.create_subscription(
            JointState, "joint_states", self._on_joint_state, JOINT_STATES_QOS[qos_name],
            qos_overriding_options=QoSOverridingOptions.with_default_policies())
        # TF listener for the model pose: subscriptions on a helper node that no executor spins; the
        # snapshot timer drains them. Our own 1 kHz /tf never goes through the executor that way.
        # use_global_arguments=False: `ros2 launch` passes `-r __node:=NAME`, a process-wide remap that
        # would rename the helper to this node's name (two nodes of one name in `ros2 node list`). The
        # helper subscribes to the names as this node resolves them, so the user's remaps still apply.
        self._tf_listener = Node(f"{self.get_name()}_tf_listener", namespace=self.get_namespace(),
                                 context=self.context, start_parameter_services=False, enable_rosout=False,
                                 use_global_arguments=False)
        self._tf_subs = [
            self._tf_listener.create_subscription(_tf_message_type(), self.resolve_topic_name("/tf"), self._on_tf,
                                                  TF_LISTEN_QOS, raw=True),
            self._tf_listener.create_subscription(_tf_message_type(), self.resolve_topic_name("/tf_static"),
                                                  self._on_tf, TF_STATIC_QOS, raw=True),
        ]
        if p["use_robot_description_topic"]:
            self._description_sub = self.create_subscription(String, "robot_description",
                                                             self._on_description_topic, LATCHED)

        if p["robot_description"].strip() or p["model_file"].strip():
            loaded = load_description(p["robot_description"], p["model_file"], p["xacro_args"])
            self._swap(self._build_runtime(loaded, p))
        elif not p["use_robot_description_topic"]:
            load_description("", "", "")  # raises the clear "give exactly one" error
        else:
            self.get_logger().info("waiting for a robot description on the robot_description topic")
        self._restart_snapshot_timer(float(p["snapshot_frequency"]))
        self.add_on_set_parameters_callback(self._on_set_parameters)
        if hasattr(self, "add_post_set_parameters_callback"):
            self.add_post_set_parameters_callback(self._after_set_parameters)

    # -- parameters --------------------------------------------------------------------------
    def _declare_parameters(self) -> None:
        def desc(text: str, kind: int, *, read_only: bool = False, lo: float | None = None,
                 hi: float | None = None) -> ParameterDescriptor:
            d = ParameterDescriptor(description=text, type=kind, read_only=read_only)
            if lo is not None and hi is not None:
                # integers too ("publish_frequency: 50" in a params file), checked in _check_frequency
                d.dynamic_typing = True
                d.floating_point_range = [FloatingPointRange(from_value=lo, to_value=hi, step=0.0)]
            return d

        s, d, b = ParameterType.PARAMETER_STRING, ParameterType.PARAMETER_DOUBLE, ParameterType.PARAMETER_BOOL
        self.declare_parameters("", [
            ("robot_description", "", desc("robot description text: URDF, SDFormat or xacro", s)),
            ("model_file", "", desc("path to a .urdf, .sdf, .world or .xacro file (instead of robot_description)", s)),
            ("xacro_args", "", desc("xacro arguments for a xacro description: 'name:=value ...'", s)),
            ("publish_frequency", 20.0, desc("max rate (Hz) of /tf per joint; 0 = every message", d, lo=0.0,
                                             hi=1000.0)),
            ("ignore_timestamp", False, desc("publish every joint state (no publish_frequency throttle); stamps stay the messages'", b)),
            ("frame_prefix", "", desc("prefix of every published frame id", s)),
            ("snapshot_frequency", 10.0, desc("rate (Hz) of world_state snapshots; 0 = off; -1 = after every "
                                              "JointState", d, lo=EVERY_JOINT_STATE, hi=1000.0)),
            ("model_parent_frame", "world", desc("frame the world_state model pose is given in", s)),
            ("use_robot_description_topic", False,
             desc("read the description from the robot_description topic instead of publishing it", b,
                  read_only=True)),
            ("joint_states_qos", "sensor_data",
             desc("QoS of the joint_states subscription: sensor_data, reliable or system_default", s,
                  read_only=True)),
        ])
        for key in FREQUENCY_PARAMS:
            problem = _check_frequency(key, self.get_parameter(key).value)
            if problem:
                raise StatePublisherConfigError(problem)
        qos = self.get_parameter("joint_states_qos").value
        if qos not in JOINT_STATES_QOS:
            raise StatePublisherConfigError(f"joint_states_qos {qos!r}: expected one of {', '.join(JOINT_STATES_QOS)}")

    def _params(self, overrides: dict[str, Any] | None = None) -> dict[str, Any]:
        names = ("robot_description", "model_file", "xacro_args", "publish_frequency", "ignore_timestamp",
                 "frame_prefix", "snapshot_frequency", "model_parent_frame", "use_robot_description_topic",
                 "joint_states_qos")
        out = {n: self.get_parameter(n).value for n in names}
        out.update(overrides or {})
        for key in FREQUENCY_PARAMS:
            if isinstance(out[key], (int, float)) and not isinstance(out[key], bool):
                out[key] = float(out[key])
        return out

    @staticmethod
    def _period_ns(freq: float) -> int:
        return int(round(1e9 / freq)) if freq > 0 else 0

    def _build_runtime(self, loaded: LoadedDescription, p: dict[str, Any]) -> Runtime:
        return Runtime(loaded, p["frame_prefix"], self._period_ns(p["publish_frequency"]), p["ignore_timestamp"])

    def _on_set_parameters(self, params: list[Parameter]) -> SetParametersResult:
        changes = {prm.name: prm.value for prm in params}
        p = self._params(changes)
        for key in FREQUENCY_PARAMS:
            if key in changes:
                problem = _check_frequency(key, changes[key])
                if problem:
                    return SetParametersResult(successful=False, reason=problem)
        frame = p["model_parent_frame"]
        if "model_parent_frame" in changes and (not isinstance(frame, str) or not frame.strip()):
            return SetParametersResult(successful=False, reason="model_parent_frame must be a non-empty frame id")
        if "frame_prefix" in changes and (not isinstance(p["frame_prefix"], str) or p["frame_prefix"] != p[
                "frame_prefix"].strip()):
            return SetParametersResult(successful=False, reason="frame_prefix must not have surrounding white space")
        self._pending = None
        if changes.keys() & {"robot_description", "model_file", "xacro_args", "frame_prefix"}:
            try:
                if changes.keys() & {"robot_description", "model_file", "xacro_args"} or self._rt is None:
                    if not (p["robot_description"].strip() or p["model_file"].strip()) and \
                            p["use_robot_description_topic"] and self._rt is None:
                        return SetParametersResult(successful=True)
                    loaded = load_description(p["robot_description"], p["model_file"], p["xacro_args"])
                else:
                    loaded = self._rt.loaded
                self._pending = self._build_runtime(loaded, p)
            except Exception as exc:  # a bad description never stops the node
                reason = f"description refused, the current model keeps publishing: {error_text(exc)}"
                self.get_logger().warning(reason)
                return SetParametersResult(successful=False, reason=reason)
        if not hasattr(self, "add_post_set_parameters_callback"):
            self._after_set_parameters(params)
        return SetParametersResult(successful=True)

    def _after_set_parameters(self, params: list[Parameter]) -> None:
        changes = {prm.name: prm.value for prm in params}
        if self._pending is not None:
            pending, self._pending = self._pending, None
            self._swap(pending)
        rt = self._rt
        if rt is not None:
            if "publish_frequency" in changes:
                rt.cache.publish_period_ns = self._period_ns(float(changes["publish_frequency"]))
            if "ignore_timestamp" in changes:
                rt.cache.ignore_timestamp = bool(changes["ignore_timestamp"])
        if "snapshot_frequency" in changes:
            self._restart_snapshot_timer(float(changes["snapshot_frequency"]))
        if "model_parent_frame" in changes:
            self._last_model_pose = None
            self._dirty = True

    def _on_description_topic(self, msg: String) -> None:
        p = self._params()
        try:
            loaded = load_description(msg.data, "", p["xacro_args"])
            rt = self._build_runtime(loaded, p)
        except Exception as exc:
            self.get_logger().warning(f"robot_description from the topic refused, the current model keeps "
                                      f"publishing: {error_text(exc)}")
            return
        self._swap(rt)

    # -- model swap ---------------------------------------------------------------------------
    def _swap(self, rt: Runtime) -> None:
        """Install a new runtime (one reference assignment) and republish what depends on the model."""
        old = self._rt
        if old is not None:  # keep values and sent stamps of the joints the new model still has
            rt.cache.adopt(old.cache)
        if self._snapshot_timer is not None or self._snapshot_every:
            rt.snapshots()
        self._rt = rt
        frames, x = rt.static_transforms()
        stamp = self.get_clock().now().nanoseconds
        self._tf.replace_static(transforms_to_msgs(frames, x, stamp))
        if self._description_pub is not None:
            self._description_pub.publish(String(data=rt.loaded.text))
        self._last_model_pose = None
        self._dirty = True
        self.get_logger().info(f"model {rt.model.name!r} from {rt.loaded.source}: {len(rt.tree.link_names)} links, "
                               f"{len(rt.cache.moving_names)} moving joints, {len(rt.fixed)} fixed")

    # -- hot path -------------------------------------------------------------------------------
    def _on_joint_state(self, msg: JointState) -> None:
        """Handle one JointState, then any already waiting (a backlog skips the executor's overhead)."""
        self._handle_joint_state(msg)
        sub = self._js_sub
        for _ in range(JOINT_STATE_DRAIN):
            try:
                with sub.handle:
                    taken = sub.handle.take_message(sub.msg_type, False)
            except Exception:  # noqa: BLE001 - fall back to the executor
                return
            if taken is None:
                return
            self._handle_joint_state(taken[0])

    def _handle_joint_state(self, msg: JointState) -> None:
        rt = self._rt
        if rt is None:
            return
        try:
            names, pos, vel, eff, stamp = joint_state_arrays(msg)
        except (TypeError, ValueError) as exc:
            self._warn(Problem("decode", f"JointState unreadable: {exc}"))
            return
        try:
            up = rt.cache.update(names, pos, vel, eff, stamp, self.get_clock().now().nanoseconds)
            if len(up.send):
                x = rt.joint_transforms()
                self._send_tf(rt.encoder.encode(up.send, x[up.send], up.stamp_ns))
        except Exception as exc:  # noqa: BLE001 - no input may stop the node
            self._warn(Problem("internal", f"JointState dropped: {type(exc).__name__}: {exc}"))
            return
        if up.reset is not None:  # one line, then at most one per WARN_PERIOD_S (a looping bag resets often)
            self._log("info", Problem("reset", up.reset))
        if up.problems:
            for problem in up.problems:
                self._warn(problem)
        if up.changed:
            self._dirty = True
            if self._snapshot_every:
                self._on_snapshot_timer()

    def _warn(self, problem: Problem) -> None:
        self._log("warning", problem)

    def _log(self, severity: str, problem: Problem) -> None:
        """At most one line per WARN_PERIOD_S per problem key (log_throttle: never rclpy's per-call-site
        severity check, which raised when one line logged at two severities)."""
        throttled(self._log_throttle, self.get_logger(), severity, f"{severity}:{problem.key}", problem.text)

    # -- model pose from TF ----------------------------------------------------------------------
    def _on_tf(self, raw: bytes, info: Any) -> None:
        gid = _gid_key(info)
        if gid is not None:
            if gid in self._own_tf_gids:
                return
            if gid not in self._foreign_tf_gids:
                self._classify_tf_gids()
                if gid in self._own_tf_gids:
                    return
                self._foreign_tf_gids.add(gid)
        from rclpy.serialization import deserialize_message

        try:
            msg = deserialize_message(raw, _tf_message_type())
        except Exception as exc:  # noqa: BLE001 - foreign bytes never stop the node
            self._warn(Problem("tf-decode", f"TF message unreadable: {exc}"))
            return
        rt = self._rt
        # Drop our own frames should the gid check be unavailable.
        if rt is not None:
            own = {c for _, c in rt.frames}
            if any(t.child_frame_id in own for t in msg.transforms):
                msg.transforms = [t for t in msg.transforms if t.child_frame_id not in own]
        self._tf_tree.add(msg)

    def _drain_tf(self) -> None:
        """Take every /tf and /tf_static message waiting in the listener's queues."""
        for sub in self._tf_subs:
            for _ in range(4 * TF_LISTEN_DEPTH):
                try:
                    with sub.handle:
                        taken = sub.handle.take_message(sub.msg_type, True)
                except Exception as exc:  # noqa: BLE001 - the listener never stops the node
                    self._warn(Problem("tf-take", f"TF listener: {exc}"))
                    break
                if taken is None:
                    break
                self._on_tf(taken[0], taken[1])

    def destroy_node(self) -> None:
        self._tf_listener.destroy_node()
        super().destroy_node()

    def _classify_tf_gids(self) -> None:
        me, ns = self.get_name(), self.get_namespace()
        for topic in ("/tf", "/tf_static"):
            for info in self.get_publishers_info_by_topic(topic):
                key = bytes(info.endpoint_gid)
                if info.node_name == me and info.node_namespace == ns:
                    self._own_tf_gids.add(key)

    def model_pose(self) -> NDArray[np.float64] | None:
        """X_parent_model from TF, or None when TF does not know it."""
        rt = self._rt
        if rt is None:
            return None
        parent = self.get_parameter("model_parent_frame").value.lstrip("/")
        if len(rt.world_parent) and parent == WORLD:
            return rt.world_pose  # the model is attached to the world by its own joint
        root = rt.prefix + rt.root_link
        x = self._tf_tree.lookup(parent, root)
        if x is None:
            return None
        return x @ tfm.inverse(rt.X_root_rootlink)

    # -- snapshots -------------------------------------------------------------------------------
    def _restart_snapshot_timer(self, freq: float) -> None:
        if self._snapshot_timer is not None:
            self.destroy_timer(self._snapshot_timer)
            self._snapshot_timer = None
        self._snapshot_every = freq == EVERY_JOINT_STATE
        if freq > 0:
            self._snapshot_timer = self.create_timer(1.0 / freq, self._on_snapshot_timer)
        if (freq > 0 or self._snapshot_every) and self._rt is not None:
            self._rt.snapshots()  # built (and the compiled kinematics loaded) now, not in the first snapshot

    def _on_snapshot_timer(self) -> None:
        rt = self._rt
        if rt is None:
            return
        self._drain_tf()
        if self._tf_tree.version != self._tf_tree_seen:
            self._tf_tree_seen = self._tf_tree.version
            pose = self.model_pose()
            key = tuple(np.round(pose, 12).ravel()) if pose is not None else None
            if key != self._last_model_pose:
                self._last_model_pose = key
                self._dirty = True
        if not self._dirty:
            return
        missing = rt.cache.missing_joints()
        if missing:  # only measured state is shared: no world_state until every moving joint was heard
            # (said at once, then every WARN_PERIOD_S while still waiting: _dirty stays set)
            self._log("info", Problem("missing", waiting_text(missing, len(rt.cache.moving_names))))
            return
        self._dirty = False
        try:
            text = self.snapshot_text()
        except RobotStateFormatError as exc:
            self._warn(Problem("snapshot", f"world_state snapshot not published: {exc}"))
            return
        self._world_pub.publish(String(data=text))

    def snapshot_text(self) -> str:
        """The USDF ``<world_state>`` of the current state (the USDF SnapshotBuilder's fast text).

        Link poses and twists are in the model frame; the top-level model_state is posed in
        ``model_parent_frame`` (declared as a ``<frame>``) when TF knows that transform, posed in the
        world when the model is attached to the world by its own joint, and has no pose otherwise.
        """
        rt = self._rt
        assert rt is not None
        cache = rt.cache
        # the stamp of the newest JointState applied; a model without moving joints is complete without
        # any JointState, and its (constant) state is stamped with the time it is published
        stamp_ns = int(cache.stamp_ns) if cache.stamp_ns > 0 else self.get_clock().now().nanoseconds
        stamp = divmod(stamp_ns, 1_000_000_000)
        text: str = rt.snapshots().build(cache.q, cache.velocities(),
                                         cache.efforts(), stamp=stamp)
        if rt.model.is_world:
            return text
        pose = self.model_pose()
        parent = self.get_parameter("model_parent_frame").value.lstrip("/")
        frame_pose = None
        if pose is not None and parent != WORLD:
            x = self._tf_tree.lookup(WORLD, parent)
            frame_pose = tfm.transform_to_pose6(x) if x is not None else None
        return patch_model_pose(text, None if pose is None else tfm.transform_to_pose6(pose),
                                parent if pose is not None and parent != WORLD else None, frame_pose)


def waiting_text(missing: list[str], total: int) -> str:
    """The line logged while some moving joints have not been reported yet."""
    shown = ", ".join(missing[:20]) + (f" and {len(missing) - 20} more" if len(missing) > 20 else "")
    return (f"world_state not published yet: no JointState has reported {len(missing)} of {total} moving "
            f"joint(s): {shown}")


def patch_model_pose(text: str, pose: tuple[float, ...] | None, parent: str | None,
                     parent_pose: tuple[float, ...] | None) -> str:
    """Set the first (top-level) model_state's parent and pose in a pretty-printed world_state.

    ``pose`` None removes the model_state's pose and twist (unknown); with ``parent`` the pose is
    relative to it, the twist is removed (TF does not give it) and ``parent`` is declared as a
    ``<frame>`` (posed in the world by ``parent_pose`` when known).
    """
    from robot_state_format.usdf.writer import escape_name, format_floats

    start = text.find("<model_state ")
    if start < 0:
        return text
    head_end = text.index(">", start) + 1
    line_end = text.index("\n", head_end) + 1
    indent = text[text.rfind("\n", 0, start) + 1:start]
    inner = indent + "  "
    pos = line_end
    for tag in ("pose", "twist"):  # the model_state's own pose/twist lines, if present
        if text.startswith(f"{inner}<{tag}>", pos):
            pos = text.index("\n", pos) + 1
    lines = []
    if parent is not None:
        lines.append(f"{inner}<parent>{escape_name(parent)}</parent>\n")
    if pose is not None:
        lines.append(f"{inner}<pose>{format_floats(pose)}</pose>\n")
        if parent is None:
            twist_start = text.find(f"{inner}<twist>", line_end, pos)
            if twist_start >= 0:
                lines.append(text[twist_start:pos])
    out = text[:line_end] + "".join(lines) + text[pos:]
    if parent is not None:
        frame = [f'{indent}<frame name="{escape_name(parent)}">\n']
        if parent_pose is not None:
            frame.append(f"{inner}<pose>{format_floats(parent_pose)}</pose>\n")
        frame.append(f"{indent}</frame>\n")
        out = out[:start - len(indent)] + "".join(frame) + out[start - len(indent):]
    return out


def _tf_message_type() -> Any:
    from tf2_msgs.msg import TFMessage

    return TFMessage


def _gid_key(info: Any) -> bytes | None:
    if not info:
        return None
    gid = info.get("publisher_gid") if isinstance(info, dict) else None
    if not gid:
        return None
    data: Any = gid.get("data") if isinstance(gid, dict) else gid
    if data is None:
        return None
    try:
        return bytes(data)
    except (TypeError, ValueError):
        return None


def main(args: list[str] | None = None) -> int:
    """Console script ``state_publisher``: spin the node until SIGINT/SIGTERM."""
    return spin.run_main("state_publisher", StatePublisher, args, [
        ((StatePublisherConfigError, rclpy.exceptions.ParameterException), "", 2),
        (RobotStateFormatError, "cannot load the robot description:\n", 1)])


if __name__ == "__main__":
    sys.exit(main())
