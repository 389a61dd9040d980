"""Test-only node: one robot's joint values on ``<ns>/joint_states`` every 50 ms, and optionally its mount.

Arguments (JSON in argv[1]): ``{"names": [...], "positions": [...], "mount": {"parent": "world",
"child": "r1/base", "xyz": [...], "quat": [x, y, z, w]}}``. The mount goes on ``/tf_static`` once.
Spins through robot_state_format.ros.spin (SIGINT/SIGTERM stop it cleanly).
"""

from __future__ import annotations

import json
import sys

from geometry_msgs.msg import TransformStamped
from rclpy.node import Node
from rclpy.qos import qos_profile_sensor_data
from sensor_msgs.msg import JointState

from robot_state_format.ros import spin
from robot_state_format.ros.tf_publisher import TfPublisher


def main() -> int:
    spec = json.loads(sys.argv[1])
    stop = spin.init(sys.argv)
    node = Node("joint_source")
    pub = node.create_publisher(JointState, "joint_states", qos_profile_sensor_data)
    mount = spec.get("mount")
    if mount:
        t = TransformStamped()
        t.header.stamp = node.get_clock().now().to_msg()
        t.header.frame_id, t.child_frame_id = mount["parent"], mount["child"]
        tr, rot = t.transform.translation, t.transform.rotation
        tr.x, tr.y, tr.z = (float(v) for v in mount["xyz"])
        rot.x, rot.y, rot.z, rot.w = (float(v) for v in mount["quat"])
        node.tf_publisher = TfPublisher(node)  # type: ignore[attr-defined]  # kept for the life of the node
        node.tf_publisher.send_static([t])  # type: ignore[attr-defined]
        # and again every second (the same latched set), as a robot's restarted static_transform_publisher
        # would. (It was added when the network-namespace lab lost this mount 1 run in 3; the cause was the
        # lab's probe reading /tf_static keep-last-1, which keeps one latched set across all broadcasters.
        # Readers here use TF_STATIC_LISTEN_QOS now; test_harness_tf_publisher checks that it keeps both.)
        node.create_timer(1.0, lambda: node.tf_publisher.send_static([t]))  # type: ignore[attr-defined]

    def tick() -> None:
        msg = JointState(name=list(spec["names"]), position=[float(v) for v in spec["positions"]])
        msg.header.stamp = node.get_clock().now().to_msg()
        pub.publish(msg)

    node.create_timer(0.05, tick)
    try:
        spin.spin(node, stop)
    finally:
        spin.finish(stop, node)
    return 0


if __name__ == "__main__":
    sys.exit(main())
