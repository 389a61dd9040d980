"""Test-only node: a real tf2_ros ``Buffer`` + ``TransformListener`` answering lookups (test_tf2_listener.py).

Requests on ``lookup_request`` (std_msgs/String, JSON ``{"id", "target", "sources": [...], "stamp_ns"}``)
are retried every 20 ms until tf2 can give every ``target <- source`` transform at that time; then one
reply goes out on ``lookup_reply`` (JSON ``{"id", "transforms": {source: [x, y, z, qx, qy, qz, qw]}}``).
A request still unanswered after ``timeout_s`` gets ``{"id", "error": <tf2's last message>}``.
"""

from __future__ import annotations

import json
import sys
import time
from typing import Any

import tf2_ros
from rclpy.node import Node
from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy
from rclpy.time import Duration, Time
from std_msgs.msg import String

from robot_state_format.ros.spin import finish, init, spin

QOS = QoSProfile(depth=50, reliability=ReliabilityPolicy.RELIABLE, durability=DurabilityPolicy.VOLATILE)


class Tf2Lookup(Node):
    def __init__(self) -> None:
        super().__init__("tf2_lookup")
        self.timeout_s = float(self.declare_parameter("timeout_s", 20.0).value)
        self.buffer = tf2_ros.Buffer(cache_time=Duration(seconds=120))
        self.listener = tf2_ros.TransformListener(self.buffer, self, spin_thread=False)
        self.pending: dict[Any, tuple[dict[str, Any], float]] = {}
        self.replies = self.create_publisher(String, "lookup_reply", QOS)
        self.create_subscription(String, "lookup_request", self.on_request, QOS)
        self.create_timer(0.02, self.retry)

    def on_request(self, msg: String) -> None:
        req = json.loads(msg.data)
        if req["id"] not in self.pending:
            self.pending[req["id"]] = (req, time.monotonic())

    def retry(self) -> None:
        for key, (req, since) in list(self.pending.items()):
            stamp = Time(nanoseconds=int(req["stamp_ns"]))
            out: dict[str, list[float]] = {}
            error = ""
            for source in req["sources"]:
                try:
                    t = self.buffer.lookup_transform(req["target"], source, stamp).transform
                except tf2_ros.TransformException as exc:
                    error = f"{source}: {exc}"
                    break
                out[source] = [t.translation.x, t.translation.y, t.translation.z,
                               t.rotation.x, t.rotation.y, t.rotation.z, t.rotation.w]
            if not error:
                reply: dict[str, Any] = {"id": key, "transforms": out}
            elif time.monotonic() - since > self.timeout_s:
                reply = {"id": key, "error": error}
            else:
                continue
            del self.pending[key]
            self.replies.publish(String(data=json.dumps(reply)))


def main() -> int:
    stop = init(sys.argv)
    node = None
    try:
        node = Tf2Lookup()
        spin(node, stop)
    finally:
        finish(stop, node)
    return 0


if __name__ == "__main__":
    sys.exit(main())
