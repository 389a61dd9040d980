"""``robot-state-format view --live``: the robots of a running ROS 2 graph in a browser.

A node ``view`` subscribes, per namespace (as ``state_store``'s ``sources`` takes them: ``r1``, ``/r1``,
``/`` for the root), to ``<ns>/world_state``, ``<ns>/joint_states`` and ``<ns>/robot_description``, and to
``/tf`` and ``/tf_static``; :class:`~robot_state_format.world.aggregate.WorldAggregator` makes one world of
them (each robot named after its namespace, posed by TF when TF reaches its root, else by its own
snapshot), and ten times a second the browser view is moved to it. A description holding xacro is never
evaluated (received data): that robot is shown without visuals. Its meshes are opened only as
``package://`` files inside their package (as any file a description from the network names); any other
mesh is a placeholder, never looked up.
"""

from __future__ import annotations

import sys
import time
from collections import deque
from typing import Any

from rclpy.node import Node
from rclpy.serialization import deserialize_message
from sensor_msgs.msg import JointState
from std_msgs.msg import String
from tf2_msgs.msg import TFMessage

from robot_state_format.errors import RobotStateFormatError
from robot_state_format.model.types import Model
from robot_state_format.recording.cdr import cdr_string_text
from robot_state_format.ros.description import XacroPolicy, read_description_text
from robot_state_format.ros.messages import joint_state_arrays, transform_msg_to_matrix
from robot_state_format.ros.qos import LATCHED, SENSOR_IN, TF_QOS, TF_STATIC_LISTEN_QOS
from robot_state_format.ros.spin import finish, init, spin
from robot_state_format.view.scene import scene_from_state
from robot_state_format.view.server import SceneView, start_server, stop_server
from robot_state_format.world.aggregate import WorldAggregator, WorldSourceError, topic
from robot_state_format.world.tf_tree import TfTree

PERIOD_S = 0.1
TF_BACKLOG = 500

__all__ = ["LiveView", "serve"]


class LiveView(Node):
    """The subscriptions and the timer that moves the view (see the module doc)."""

    def __init__(self, view: SceneView, namespaces: list[str]) -> None:
        super().__init__("view")
        self.view = view
        self.agg = WorldAggregator(namespaces)
        self.tf = TfTree()
        self.models: dict[str, Model] = {}
        self._tf_raw: deque[bytes] = deque(maxlen=TF_BACKLOG)
        self._shown = -1
        self.subs: list[Any] = []
        for ns in self.agg.sources:
            self.subs += [
                self.create_subscription(String, topic(ns, "world_state"),
                                         lambda raw, n=ns: self._on_world_state(n, raw), LATCHED, raw=True),
                self.create_subscription(JointState, topic(ns, "joint_states"),
                                         lambda raw, n=ns: self._on_joint_state(n, raw), SENSOR_IN, raw=True),
                self.create_subscription(String, topic(ns, "robot_description"),
                                         lambda msg, n=ns: self._on_description(n, msg), LATCHED),
            ]
        self.subs += [self.create_subscription(TFMessage, "/tf", lambda raw: self._tf_raw.append(raw), TF_QOS,  # noqa: PLW0108 - rclpy needs a signature
                                               raw=True),
                      self.create_subscription(TFMessage, "/tf_static", self._on_tf, TF_STATIC_LISTEN_QOS)]
        self.timer = self.create_timer(PERIOD_S, self._on_timer)

    def _on_world_state(self, ns: str, raw: bytes) -> None:
        try:
            self.agg.on_world_state(ns, cdr_string_text(raw), time.monotonic())
        except (ValueError, UnicodeDecodeError, IndexError) as exc:
            self.get_logger().warning(f"{topic(ns, 'world_state')}: unreadable: {exc}", throttle_duration_sec=5.0)

    def _on_joint_state(self, ns: str, raw: bytes) -> None:
        try:
            names, pos, vel, eff, stamp = joint_state_arrays(deserialize_message(raw, JointState))
        except Exception:  # noqa: BLE001 the viewer node survives any unreadable message
            return
        for text in self.agg.on_joint_state(ns, names, pos, vel, eff, stamp, self.get_clock().now().nanoseconds,
                                            time.monotonic()):
            self.get_logger().warning(f"{topic(ns, 'joint_states')}: {text}", throttle_duration_sec=5.0)

    def _on_description(self, ns: str, msg: String) -> None:
        name = topic(ns, "robot_description")
        try:  # received data: xacro is never evaluated here
            model = read_description_text(msg.data, "", XacroPolicy(), source=name.lstrip("/")).model
        except (RobotStateFormatError, ValueError) as exc:
            self.get_logger().error(f"{name}: model refused: {exc}", throttle_duration_sec=5.0)
            return
        self.agg.set_model(ns, model)
        self.models[self.agg.sources[ns].name or model.name] = model

    def _on_tf(self, msg: TFMessage) -> None:
        for t in msg.transforms:
            self.tf.set(t.header.frame_id, t.child_frame_id, transform_msg_to_matrix(t.transform))

    def _on_timer(self) -> None:
        while self._tf_raw:
            try:
                self._on_tf(deserialize_message(self._tf_raw.popleft(), TFMessage))
            except Exception:  # noqa: BLE001 the viewer node survives any unreadable message
                continue
        self.agg.update_poses(self.tf)
        if self.agg.version == self._shown:
            return
        self._shown = self.agg.version
        world = self.agg.world()
        if world is None:
            return
        try:
            scene = scene_from_state(world, {ms.name: self.models[ms.name] for ms in world.model_states
                                             if ms.name in self.models})
        except RobotStateFormatError as exc:
            self.get_logger().warning(f"world not shown: {exc}", throttle_duration_sec=5.0)
            return
        for w in scene.warnings:
            self.get_logger().warning(w, throttle_duration_sec=30.0)
        self.view.show(scene)


def serve(host: str, port: int, namespaces: list[str], duration: float | None, prog: str) -> int:
    """Serve the live view until Ctrl-C, SIGTERM or ``duration`` seconds; the exit code."""
    server = start_server(host, port)
    stop = init([])
    node: LiveView | None = None
    try:
        view = SceneView(server, network=True)  # the models are descriptions received over the network
        node = LiveView(view, namespaces)
        shown = f"[{host}]" if ":" in host else host
        print(f"{prog}: serving the live state of {', '.join(node.agg.sources)} on "
              f"http://{shown}:{server.get_port()}/ (Ctrl-C stops)", flush=True)
        spin(node, stop, until=None if duration is None else time.monotonic() + duration)
        for w in view.warnings:
            print(f"{prog}: warning: {w}", file=sys.stderr)
    except WorldSourceError as exc:
        print(f"{prog}: error: --namespace: {exc}", file=sys.stderr)
        return 2
    finally:
        finish(stop, node)
        stop_server(server)
    return 0
