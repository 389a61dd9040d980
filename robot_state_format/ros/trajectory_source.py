"""A joint-state source for demos and tests: a smooth trajectory of every moving joint of a model.

``python -m robot_state_format.ros.trajectory_source --model FILE [--rate HZ] [--duration S]``

Joint ``k`` follows ``centre + amplitude * sin(2 pi f t + k)`` with ``f = 0.25 Hz``, inside its limits
(half the range about the middle) or +/-0.5 (rad or m) when unlimited; quaternion joints (ball,
floating) turn slowly about z.  Multi-DOF joints use MoveIt's sub-joint names (``<joint>/<dof>``).
Velocities are the exact derivatives.
"""

from __future__ import annotations

import argparse
import math
import sys
import time
from dataclasses import dataclass

from robot_state_format.model.types import JointType, Limits, Model
from robot_state_format.ros.replay import MULTI_DOF_SUFFIXES

FREQ_HZ = 0.25


@dataclass
class _Channel:
    name: str
    centre: float
    amplitude: float
    phase: float


def _range(limits: Limits | None, default: float = 0.5) -> tuple[float, float]:
    if limits is not None and limits.lower is not None and limits.upper is not None and limits.upper > limits.lower:
        return (limits.lower + limits.upper) / 2.0, (limits.upper - limits.lower) / 4.0
    return 0.0, default


def channels(model: Model) -> tuple[list[_Channel], list[tuple[str, str]]]:
    """Sinusoid channels of the model's moving joints, and quaternion joints (name, type)."""
    chans: list[_Channel] = []
    quats: list[tuple[str, str]] = []
    k = 0
    for joint in model.joints.values():
        if not joint.is_moving or joint.mimic:
            continue
        suffixes = MULTI_DOF_SUFFIXES.get(joint.type)
        if suffixes is None:
            c, a = _range(joint.limits)
            chans.append(_Channel(joint.name, c, a, float(k)))
        elif joint.type in (JointType.BALL, JointType.FLOATING):
            quats.append((joint.name, joint.type.value))
        else:
            for i, s in enumerate(suffixes):
                c, a = _range(joint.limits if i == 0 else joint.limits2)
                chans.append(_Channel(f"{joint.name}/{s}", c, a, float(k + i)))
        k += 1
    return chans, quats


def sample(chans: list[_Channel], quats: list[tuple[str, str]], t: float
           ) -> tuple[list[str], list[float], list[float]]:
    """Names, positions and velocities at time ``t`` (s)."""
    w = 2.0 * math.pi * FREQ_HZ
    names, pos, vel = [], [], []
    for c in chans:
        names.append(c.name)
        pos.append(c.centre + c.amplitude * math.sin(w * t + c.phase))
        vel.append(c.amplitude * w * math.cos(w * t + c.phase))
    for name, kind in quats:
        yaw = 0.3 * math.sin(w * t)
        yaw_rate = 0.3 * w * math.cos(w * t)
        q = (0.0, 0.0, math.sin(yaw / 2), math.cos(yaw / 2))
        dq = (0.0, 0.0, 0.5 * math.cos(yaw / 2) * yaw_rate, 0.0)
        if kind == "floating":
            for s, p, v in zip(MULTI_DOF_SUFFIXES[JointType.FLOATING][:3], (0.0, 0.0, 0.0), (0.0, 0.0, 0.0)):
                names.append(f"{name}/{s}")
                pos.append(p)
                vel.append(v)
        for s, p, v in zip(("rot_x", "rot_y", "rot_z", "rot_w"), q, (0.0, 0.0, yaw_rate, 0.0)):
            names.append(f"{name}/{s}")
            pos.append(p)
            vel.append(v)
        del dq
    return names, pos, vel


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="trajectory_source", description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", required=True, help="URDF, SDFormat or xacro file")
    parser.add_argument("--rate", type=float, default=50.0, help="messages per second (default 50)")
    parser.add_argument("--duration", type=float, default=0.0, help="stop after this many seconds (0 = never)")
    parser.add_argument("--topic", default="joint_states")
    args, ros_args = parser.parse_known_args(argv if argv is not None else sys.argv[1:])
    if not (0 < args.rate <= 10000):
        parser.error("--rate must be in (0, 10000]")

    import rclpy
    from rclpy.qos import QoSProfile, ReliabilityPolicy
    from sensor_msgs.msg import JointState

    from robot_state_format.model.loader import load_model_file
    from robot_state_format.ros import spin
    from robot_state_format.ros.messages import ns_to_stamp

    model = load_model_file(args.model)
    chans, quats = channels(model)
    stop = spin.init([sys.argv[0], *ros_args])
    node = rclpy.create_node("trajectory_source")
    pub = node.create_publisher(JointState, args.topic,
                                QoSProfile(depth=10, reliability=ReliabilityPolicy.RELIABLE))
    t0 = time.monotonic()

    def tick() -> None:
        t = time.monotonic() - t0
        if args.duration and t > args.duration:
            return
        names, pos, vel = sample(chans, quats, t)
        msg = JointState()
        msg.header.stamp = ns_to_stamp(node.get_clock().now().nanoseconds)
        msg.name, msg.position, msg.velocity = names, pos, vel
        pub.publish(msg)

    node.create_timer(1.0 / args.rate, tick)
    try:
        spin.spin(node, stop, until=t0 + args.duration if args.duration else None)
    finally:
        spin.finish(stop, node)
    return 0


if __name__ == "__main__":
    sys.exit(main())
