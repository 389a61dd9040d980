"""The bare rclpy nodes bench_footprint.py measures the package's nodes against (same run, same machine).

    python bench/anchor_node.py relay   # JointState in -> one TFMessage out per message (state_publisher's anchor)
    python bench/anchor_node.py store   # one JointState subscription and one Trigger service (state_store's anchor)

``relay`` turns every JointState into a /tf message with one identity-rotation transform per joint name
(child frame = the joint's name, translation z = its position, the JointState's stamp): the least a
Python state publisher does.  ``store`` keeps the newest JointState and answers ``~/save``
(success once one arrived).  Only rclpy and the message packages are imported.
"""

from __future__ import annotations

import sys

import rclpy
from geometry_msgs.msg import TransformStamped
from rclpy.node import Node
from rclpy.qos import qos_profile_sensor_data
from sensor_msgs.msg import JointState
from std_srvs.srv import Trigger
from tf2_msgs.msg import TFMessage


class Relay(Node):
    def __init__(self) -> None:
        super().__init__("anchor_relay")
        self.pub = self.create_publisher(TFMessage, "/tf", 100)
        self.create_subscription(JointState, "joint_states", self.on_joint_state, qos_profile_sensor_data)

    def on_joint_state(self, msg: JointState) -> None:
        out = TFMessage()
        for name, pos in zip(msg.name, msg.position):
            t = TransformStamped()
            t.header.stamp = msg.header.stamp
            t.header.frame_id = "base"
            t.child_frame_id = name
            t.transform.translation.z = pos
            t.transform.rotation.w = 1.0
            out.transforms.append(t)
        self.pub.publish(out)


class Store(Node):
    def __init__(self) -> None:
        super().__init__("anchor_store")
        self.last: JointState | None = None
        self.create_subscription(JointState, "joint_states", self.on_joint_state, qos_profile_sensor_data)
        self.create_service(Trigger, "~/save", self.on_save)

    def on_joint_state(self, msg: JointState) -> None:
        self.last = msg

    def on_save(self, request: Trigger.Request, response: Trigger.Response) -> Trigger.Response:
        response.success = self.last is not None
        response.message = "saved" if self.last is not None else "no joint state yet"
        return response


def main() -> None:
    kind = sys.argv[1] if len(sys.argv) > 1 else "relay"
    rclpy.init(args=sys.argv)
    node = Relay() if kind == "relay" else Store()
    try:
        rclpy.spin(node)
    except (KeyboardInterrupt, rclpy.executors.ExternalShutdownException):
        pass
    finally:
        node.destroy_node()
        rclpy.try_shutdown()


if __name__ == "__main__":
    main()
