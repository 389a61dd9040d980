"""The ``state_publisher`` node: joint states in; /tf, /tf_static, robot_description and USDF out.

A drop-in for robot_state_publisher (see docs/state_publisher.md for the differences). The node is a
thin adapter over small collaborators:

* :mod:`~robot_state_format.ros.publisher_params`: the parameters, read as one typed value, and the
  plan of a parameter change (refused, or what it asks of the model);
* :mod:`~robot_state_format.ros.description`: reading the description (text or file, xacro expanded);
* :mod:`~robot_state_format.ros.publisher_runtime`: the compiled model and the hot path
  (:meth:`Runtime.apply <robot_state_format.ros.publisher_runtime.Runtime.apply>`: a JointState merged
  into the joint-state cache, every due transform computed with one array call and written straight to
  TFMessage bytes);
* :mod:`~robot_state_format.ros.model_pose`: the model's pose from other publishers' TF, given to the
  USDF SnapshotBuilder as a :class:`~robot_state_format.usdf.build.Placement` (through the types).

Snapshots (``world_state``) are built on a timer, or after every JointState (``snapshot_frequency`` -1).
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import Any

import numpy as np
import rclpy.exceptions
from numpy.typing import NDArray
from rcl_interfaces.msg import SetParametersResult
from rclpy.node import Node
from rclpy.parameter import Parameter
from rclpy.qos_overriding_options import QoSOverridingOptions
from rclpy.serialization import deserialize_message
from rclpy.subscription import Subscription
from rclpy.timer import Timer
from sensor_msgs.msg import JointState
from std_msgs.msg import String

from robot_state_format import spatial as tfm
from robot_state_format.errors import ModelIOError, RobotStateFormatError, error_text
from robot_state_format.live.cache_parts import Problem
from robot_state_format.log_throttle import LogThrottle, throttled
from robot_state_format.model.types import WORLD
from robot_state_format.ros import kernel_param, spin, wait_loop
from robot_state_format.ros import publisher_params as params
from robot_state_format.ros.description import (
    DescriptionConfigError,
    InBackground,
    LoadedDescription,
    load_description,
    read_description_text,
    refusal_kind,
)
from robot_state_format.ros.messages import joint_state_arrays, transforms_to_msgs
from robot_state_format.ros.model_pose import TfListener
from robot_state_format.ros.node_now import NodeNow
from robot_state_format.ros.publisher_hot import MISS
from robot_state_format.ros.publisher_params import (
    EVERY_JOINT_STATE,
    Load,
    PublisherParams,
    StatePublisherConfigError,
)
from robot_state_format.ros.publisher_runtime import Runtime, waiting_text
from robot_state_format.ros.publisher_wire import JointStateReader
from robot_state_format.ros.qos import JOINT_STATES_QOS, LATCHED
from robot_state_format.ros.tf_publisher import TfPublisher
from robot_state_format.ros.type_support import light_rosidl_generator_py
from robot_state_format.usdf.build import Placement
from robot_state_format.usdf.snapshot_text import formatter_note

WARN_PERIOD_S = 5.0
JOINT_STATE_DRAIN = 100  # JointStates handled per executor callback when a backlog is waiting

__all__ = ["JOINT_STATE_DRAIN", "WARN_PERIOD_S", "StatePublisher", "main"]


class StatePublisher(Node):
    """Publishes TF and USDF snapshots of one robot from its joint states (composable Node)."""

    def __init__(self, node_name: str = "state_publisher", **kwargs: Any) -> None:
        super().__init__(node_name, **kwargs)
        self._log_throttle = LogThrottle(WARN_PERIOD_S)
        self._p: PublisherParams = params.declare(self)
        kernel_param.declare(self)
        p = self._p
        self._rt: Runtime | None = None
        self._pending: Runtime | None = None
        self._dirty = False
        self._snapshot_timer: Timer | None = None
        self._told_formatter = False  # the one line about orjson (formatter_note), once per process
        self._snapshot_every = False  # snapshot_frequency -1: a snapshot per JointState
        self._last_model_pose: tuple[float, ...] | None = None
        self._placed: tuple[tuple[object, ...], Placement] | None = None  # see _placement
        self._tf_seen = -1

        self._tf = TfPublisher(self, backend="native")  # the same wire semantics as tf2_ros's, without its import
        self._send_tf = self._tf.send_serialized
        self._send_tf_raw = self._tf.raw_sender()  # the hot path's buffer, copied by publish_raw
        self._reader = JointStateReader()  # JointState CDR -> arrays, name lists cached
        self._now = NodeNow(self.get_clock())  # now() without a Time object (system time: time.time_ns)
        self._world_pub = self.create_publisher(String, "world_state", LATCHED)
        self._description_pub = None
        if not p.use_robot_description_topic:
            self._description_pub = self.create_publisher(String, "robot_description", LATCHED)
        self._js_sub = self.create_subscription(
            JointState, "joint_states", self._on_joint_state, JOINT_STATES_QOS[p.joint_states_qos],
            qos_overriding_options=QoSOverridingOptions.with_default_policies(), raw=True)
        self._tf_listener_: TfListener | None = None  # made while snapshots are on (see _tf_listener)
        if p.use_robot_description_topic:
            self._description_sub = self.create_subscription(String, "robot_description",
                                                             self._on_description_topic, LATCHED)
        # allowed xacro from the topic is expanded off the executor (TF keeps flowing meanwhile)
        self._expanded: list[tuple[Runtime | None, BaseException | None]] = []
        self._expanded_gc = self.create_guard_condition(self._on_expanded)
        self._background = InBackground(self._runtime_from_text, self._deliver_expanded)

        self._own_model_file = p.model_file  # the user's; one set later is a peer's (read as data)
        if p.has_description:
            self._swap(self._build_runtime(load_description(p.robot_description, p.model_file, p.xacro_args,
                                                            p.xacro_policy), p))
        elif not p.use_robot_description_topic:
            load_description("", "", "")  # raises the clear "give exactly one" error
        else:
            self.get_logger().info("waiting for a robot description on the robot_description topic")
        self._restart_snapshot_timer(p.snapshot_frequency)
        self.add_on_set_parameters_callback(self._on_set_parameters)
        self._post_set = hasattr(self, "add_post_set_parameters_callback")  # rclpy before Jazzy has none
        if self._post_set:
            self.add_post_set_parameters_callback(self._after_set_parameters)

    # -- parameters --------------------------------------------------------------------------
    @staticmethod
    def _build_runtime(loaded: LoadedDescription, p: PublisherParams) -> Runtime:
        return Runtime(loaded, p.frame_prefix, p.publish_period_ns, p.ignore_timestamp)

    def _on_set_parameters(self, changed: list[Parameter[Any]]) -> SetParametersResult:
        plan, after = params.plan_change({prm.name: prm.value for prm in changed}, self._p, self._rt is not None)
        self._pending = None
        if plan.refused is not None or after is None:
            return SetParametersResult(successful=False, reason=plan.refused)
        try:
            if plan.load is Load.RELOAD:
                loaded = load_description(after.robot_description, after.model_file, after.xacro_args,
                                          after.xacro_policy, own_model_file=self._own_model_file)
                self._pending = self._build_runtime(loaded, after)
            elif plan.load is Load.REBUILD and self._rt is not None:
                self._pending = self._build_runtime(self._rt.loaded, after)
        except Exception as exc:  # noqa: BLE001 a bad description never stops the node
            reason = f"description refused, the current model keeps publishing: {error_text(exc)}"
            throttled(self._log_throttle, self.get_logger(), "warning", f"description-parameter-{refusal_kind(exc)}",
                      reason)
            return SetParametersResult(successful=False, reason=reason)
        if not self._post_set:
            self._apply_parameters({prm.name for prm in changed}, after)
        return SetParametersResult(successful=True)

    def _after_set_parameters(self, changed: list[Parameter[Any]]) -> None:
        self._apply_parameters({prm.name for prm in changed}, params.read(self))

    def _apply_parameters(self, names: set[str], p: PublisherParams) -> None:
        """Put parameter values that were accepted into effect."""
        self._p = p
        if self._pending is not None:
            pending, self._pending = self._pending, None
            self._swap(pending)
        rt = self._rt
        if rt is not None:
            if "publish_frequency" in names:
                rt.cache.publish_period_ns = p.publish_period_ns
            if "ignore_timestamp" in names:
                rt.cache.ignore_timestamp = p.ignore_timestamp
        if "snapshot_frequency" in names:
            self._restart_snapshot_timer(p.snapshot_frequency)
        if "model_parent_frame" in names:
            self._last_model_pose = None
            self._dirty = True

    def _runtime_from_text(self, text: str) -> Runtime:
        return self._build_runtime(read_description_text(text, self._p.xacro_args, self._p.xacro_policy), self._p)

    def _on_description_topic(self, msg: String) -> None:
        if self._p.allow_xacro_descriptions:
            self._background.submit(msg.data)
            return
        try:
            rt = self._runtime_from_text(msg.data)
        except Exception as exc:  # noqa: BLE001 refused (xacro not allowed, too large) or unreadable: data, never fatal
            self._refused_from_topic(exc)
            return
        self._swap(rt)

    def _refused_from_topic(self, exc: BaseException) -> None:
        throttled(self._log_throttle, self.get_logger(), "warning", f"description-topic-{refusal_kind(exc)}",
                  f"robot_description from the topic refused, the current model keeps publishing: {error_text(exc)}")

    def _deliver_expanded(self, text: str, rt: Runtime | None, error: BaseException | None) -> None:
        self._expanded.append((rt, error))  # worker thread: handed to the executor
        self._expanded_gc.trigger()

    def _on_expanded(self) -> None:
        while self._expanded:
            rt, error = self._expanded.pop(0)
            if rt is not None:
                self._swap(rt)
            elif error is not None:
                self._refused_from_topic(error)

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
        self._tf.replace_static(transforms_to_msgs(frames, x, stamp, rt.fix_static))
        if self._description_pub is not None:
            self._description_pub.publish(String(data=rt.loaded.text))
        self._last_model_pose = None
        self._dirty = True
        line = (f"model {rt.model.name!r} from {rt.loaded.source}: {len(rt.tree.link_names)} links, "
                f"{len(rt.cache.moving_names)} moving joints, {len(rt.fixed)} fixed")
        if old is None:  # at start: once spinning (rclpy's first log line costs 50-70 ms: not before /tf)
            self._log_soon(line)
        else:
            self.get_logger().info(line)

    def _log_soon(self, line: str) -> None:
        timer: list[Timer] = []

        def say() -> None:
            timer[0].cancel()
            self.destroy_timer(timer[0])
            self.get_logger().info(line)

        timer.append(self.create_timer(0.0, say))

    # -- hot path -------------------------------------------------------------------------------
    def hot_subscription(self) -> tuple[Subscription[Any], Callable[[bytes], None]]:
        """The joint_states subscription (raw) and what takes its bytes (for :mod:`~.wait_loop`)."""
        return self._js_sub, self.on_joint_state_bytes

    def _on_joint_state(self, data: bytes) -> None:
        """Handle one JointState (CDR bytes), then any already waiting (a backlog skips the executor)."""
        self.on_joint_state_bytes(data)
        sub = self._js_sub
        for _ in range(JOINT_STATE_DRAIN):
            try:
                with sub.handle:
                    taken = sub.handle.take_message(sub.msg_type, True)
            except Exception:  # noqa: BLE001 rclpy's take errors: the message is dropped, the node keeps running
                return
            if taken is None:
                return
            self.on_joint_state_bytes(taken[0])

    def on_joint_state_bytes(self, data: bytes) -> None:
        """One JointState as CDR bytes: the common message through the runtime's HotPath, the others
        through the general path (decoded by rclpy when the reader does not know the layout)."""
        rt = self._rt
        if rt is None:
            return
        try:
            d = self._reader.read(data)
        except Exception:  # noqa: BLE001 bytes the reader cannot follow: rclpy's deserialiser says what is wrong
            d = None
        if d is None:
            try:
                msg = deserialize_message(data, JointState)
            except Exception as exc:  # noqa: BLE001 bytes rclpy cannot decode: warned, the node keeps running
                self._warn(Problem("decode", f"JointState unreadable: {exc}"))
                return
            self._handle_joint_state(msg)
            return
        now = self._now.now_ns()
        try:
            tf = rt.hot.apply(d, now)
            if isinstance(tf, bytearray):
                self._send_tf_raw(tf)
            elif tf is MISS:
                self._apply(rt, list(d.names), d.position, d.velocity, d.effort, d.stamp_ns, now)
                return
        except Exception as exc:  # noqa: BLE001 the node must survive any error of one message: warned
            self._warn(Problem("internal", f"JointState dropped: {type(exc).__name__}: {exc}"))
            return
        for problem in rt.hot.problems:
            self._warn(problem)
        self._dirty = True
        if self._snapshot_every:
            self._on_snapshot_timer()

    def _handle_joint_state(self, msg: JointState) -> None:
        rt = self._rt
        if rt is None:
            return
        try:
            names, pos, vel, eff, stamp = joint_state_arrays(msg)
        except (TypeError, ValueError) as exc:
            self._warn(Problem("decode", f"JointState unreadable: {exc}"))
            return
        self._apply(rt, names, pos, vel, eff, stamp, self._now.now_ns())

    def _apply(self, rt: Runtime, names: list[str], pos: NDArray[np.float64], vel: NDArray[np.float64],
               eff: NDArray[np.float64], stamp: int, now: int) -> None:
        """The general path: JointStateCache.update (every rule, every warning)."""
        try:
            applied = rt.apply(names, pos, vel, eff, stamp, now)
            if applied.tf is not None:
                self._send_tf(applied.tf)
        except Exception as exc:  # noqa: BLE001 the node must survive any error of one message: warned
            self._warn(Problem("internal", f"JointState dropped: {type(exc).__name__}: {exc}"))
            return
        up = applied.update
        if up.reset is not None:  # one line, then at most one per WARN_PERIOD_S (a looping bag resets often)
            self._log("info", Problem("reset", up.reset))
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
        throttled(self._log_throttle, self.get_logger(), severity, f"{severity}:{problem.key}",
                  lambda: problem.text)

    def destroy_node(self) -> None:
        self._drop_tf_listener()
        self._now.destroy()
        super().destroy_node()

    @property
    def _tf_listener(self) -> TfListener:
        """The model pose's TF listener, made on first use: only snapshots need it, and with them off the
        node does not read its own 1 kHz /tf back (nor start the helper node)."""
        if self._tf_listener_ is None:
            self._tf_listener_ = TfListener(self, lambda key, text: self._warn(Problem(key, text)))
        return self._tf_listener_

    def _drop_tf_listener(self) -> None:
        if self._tf_listener_ is not None:
            self._tf_listener_.destroy()
            self._tf_listener_ = None
            self._placed = None
            self._tf_seen = -1

    # -- model pose from TF ----------------------------------------------------------------------
    def model_pose(self) -> NDArray[np.float64] | None:
        """X_parent_model from TF, or None when TF does not know it."""
        rt = self._rt
        if rt is None:
            return None
        parent = self._p.parent_frame
        if len(rt.world_parent) and parent == WORLD:
            return rt.world_pose  # the model is attached to the world by its own joint
        x = self._tf_listener.tree.lookup(parent, rt.root_frame)
        return None if x is None else rt.pose_in(x)

    # -- snapshots -------------------------------------------------------------------------------
    def _restart_snapshot_timer(self, freq: float) -> None:
        if self._snapshot_timer is not None:
            self.destroy_timer(self._snapshot_timer)
            self._snapshot_timer = None
        self._snapshot_every = freq == EVERY_JOINT_STATE
        if freq > 0:
            self._snapshot_timer = self.create_timer(1.0 / freq, self._on_snapshot_timer)
        if freq > 0 or self._snapshot_every:
            _ = self._tf_listener  # listening from now on: the model pose is known by the first snapshot
        else:
            self._drop_tf_listener()
        if (freq > 0 or self._snapshot_every) and self._rt is not None:
            self._rt.snapshots()  # built (and the compiled kinematics loaded) now, not in the first snapshot
        note = formatter_note() if freq > 0 or self._snapshot_every else None
        if note is not None and not self._told_formatter:
            self._told_formatter = True
            self.get_logger().info(note)

    def _on_snapshot_timer(self) -> None:
        rt = self._rt
        if rt is None:
            return
        self._tf_listener.drain(rt.child_frames)
        tree = self._tf_listener.tree
        if tree.version != self._tf_seen:
            self._tf_seen = tree.version
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
        if rt is None:
            raise RobotStateFormatError("no robot description yet")
        cache = rt.cache
        # the stamp of the newest JointState applied; a model without moving joints is complete without
        # any JointState, and its (constant) state is stamped with the time it is published
        stamp_ns = int(cache.stamp_ns) if cache.stamp_ns > 0 else self.get_clock().now().nanoseconds
        return rt.snapshots().build(cache.q, cache.velocities(), cache.efforts(),
                                    stamp=divmod(stamp_ns, 1_000_000_000), placement=self._placement(rt))

    def _placement(self, rt: Runtime) -> Placement | None:
        """Where the model is (None for worlds): TF's pose in ``model_parent_frame`` (declared with its
        world pose when TF knows it), or in the world; unknown (absent) when TF does not know it."""
        if rt.model.is_world:
            return None
        # the same while the runtime, model_parent_frame and the TF seen stay (a snapshot per JointState)
        tree = self._tf_listener.tree
        key = (rt, self._p.parent_frame, tree, tree.version)
        if self._placed is not None and self._placed[0] == key:
            return self._placed[1]
        placement = self._place(rt)
        self._placed = (key, placement)
        return placement

    def _place(self, rt: Runtime) -> Placement:
        pose = self.model_pose()
        if pose is None:
            return Placement(None)
        parent = self._p.parent_frame
        if parent == WORLD:
            return Placement(tfm.transform_to_pose6(pose))
        x = self._tf_listener.tree.lookup(WORLD, parent)
        return Placement(tfm.transform_to_pose6(pose), parent, tfm.transform_to_pose6(x) if x is not None else None)


def _spin(node: StatePublisher, stop: spin.Stop, until: float | None) -> bool:
    """The node's own process: JointStates taken raw in a lean wait loop, the rest by rclpy's executor."""
    sub, on_raw = node.hot_subscription()
    return wait_loop.spin_hot(node, stop, sub, on_raw, until=until)


def main(args: list[str] | None = None) -> int:
    """Console script ``state_publisher``: spin the node until SIGINT/SIGTERM."""
    light_rosidl_generator_py()  # a sooner start: type support without the message code generator
    return spin.run_main("state_publisher", StatePublisher, args, [
        ((StatePublisherConfigError, DescriptionConfigError, rclpy.exceptions.ParameterException), "", 2),
        (ModelIOError, "cannot load the robot description: ", 2),  # a model_file that cannot be read: I/O
        (RobotStateFormatError, "cannot load the robot description:\n", 1)], spin_node=_spin)


if __name__ == "__main__":
    sys.exit(main())
