"""Test-only node for test_harness_dds.py: JointState in, TF out, through TfPublisher.

For each ``joint_states`` message it publishes one ``/tf`` message: per joint a transform
``parent_frame`` -> joint name with translation x = position and a rotation of ``position`` rad about z.
At start it sends ``static_frames`` on ``/tf_static`` (frame i at x = i + 1) and latches the
``description`` parameter on ``description_echo``. Services: ``~/keep_first_static``
(replace_static with the first frame only), ``~/move_first_static`` (send_static of the first frame
again at x = 10).
"""

from __future__ import annotations

import math
import sys

import rclpy
from geometry_msgs.msg import TransformStamped
from rclpy.executors import ExternalShutdownException, SingleThreadedExecutor
from rclpy.node import Node
from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy, qos_profile_sensor_data
from sensor_msgs.msg import JointState
from std_msgs.msg import String
from std_srvs.srv import Trigger

from robot_state_format.ros.tf_publisher import TfPublisher

LATCHED = QoSProfile(depth=1, reliability=ReliabilityPolicy.RELIABLE,
                     durability=DurabilityPolicy.TRANSIENT_LOCAL)


def make_transform(parent: str, child: str, x: float, yaw: float = 0.0) -> TransformStamped:
    t = TransformStamped()
    t.header.frame_id = parent
    t.child_frame_id = child
    t.transform.translation.x = float(x)
    t.transform.rotation.z = math.sin(yaw / 2.0)
    t.transform.rotation.w = math.cos(yaw / 2.0)
    return t


class TfEcho(Node):
    def __init__(self) -> None:
        super().__init__("tf_echo")
        self.parent = str(self.declare_parameter("parent_frame", "base").value)
        self.static_frames = list(self.declare_parameter("static_frames", ["fixed_a"]).value)
        description = str(self.declare_parameter("description", "").value)
        self.tf = TfPublisher(self)
        self.tf.send_static([make_transform(self.parent, name, i + 1.0)
                             for i, name in enumerate(self.static_frames)])
        self.echo = self.create_publisher(String, "description_echo", LATCHED)
        self.echo.publish(String(data=description))
        self.create_subscription(JointState, "joint_states", self.on_joints, qos_profile_sensor_data)
        self.create_service(Trigger, "~/keep_first_static", self.on_keep_first)
        self.create_service(Trigger, "~/move_first_static", self.on_move_first)

    def on_joints(self, msg: JointState) -> None:
        transforms = []
        for name, position in zip(msg.name, msg.position):
            t = make_transform(self.parent, name, position, yaw=position)
            t.header.stamp = msg.header.stamp
            transforms.append(t)
        self.tf.send(transforms)

    def on_keep_first(self, request: Trigger.Request, response: Trigger.Response) -> Trigger.Response:
        self.tf.replace_static([make_transform(self.parent, self.static_frames[0], 1.0)])
        response.success = True
        return response

    def on_move_first(self, request: Trigger.Request, response: Trigger.Response) -> Trigger.Response:
        self.tf.send_static([make_transform(self.parent, self.static_frames[0], 10.0)])
        response.success = True
        return response


def main() -> int:
    rclpy.init(args=sys.argv)  # rclpy's handlers turn SIGINT/SIGTERM into a context shutdown
    node = None
    try:
        node = TfEcho()
        executor = SingleThreadedExecutor()
        executor.add_node(node)
        # Bounded waits: the signal's wake-up can be consumed by a wait that returns before the context
        # is shut down, and a blocking spin() then sleeps until the next message. Looping on ok() with
        # a timeout notices the shutdown within 0.25 s whatever the interleaving.
        while rclpy.ok():
            executor.spin_once(timeout_sec=0.25)
    except (KeyboardInterrupt, ExternalShutdownException):
        pass
    except Exception:
        # The shutdown can also race the executor and surface as RCLError ("context is not valid"):
        # only an error raised while the context is still up is a real one.
        if rclpy.ok():
            raise
    finally:
        if node is not None:
            node.destroy_node()
        rclpy.try_shutdown()
    return 0


if __name__ == "__main__":
    sys.exit(main())
