"""``robot-state-format joint-states``: publish joint states to try things (see ros/trajectory_source.py).

  joint-states --model FILE [--sweep | --positions JSON | --file PATH] [--rate HZ] [--duration S]
      [--ros-args ...]

Fixed values, a sweep inside the joint limits, or a file (a restart file, or JSON/YAML values, one
mapping or a list played in turn), published on ``joint_states`` like joint_state_publisher.
"""

from __future__ import annotations

import argparse


def add_arguments(p: argparse.ArgumentParser) -> None:
    """The source's options (also ``joint_state_source``'s, ros/trajectory_source.py)."""
    p.add_argument("--model", required=True, help="URDF, SDFormat or xacro file")
    mode = p.add_mutually_exclusive_group()
    mode.add_argument("--sweep", action="store_true", help="every joint sweeps inside its limits (default)")
    mode.add_argument("--positions", metavar="JSON", help="fixed values: JSON text or file, {joint: value}")
    mode.add_argument("--file", metavar="PATH", help="a restart file (.usdf) or JSON/YAML values (one or a list)")
    p.add_argument("--step", type=float, default=1.0, help="--file with a list: seconds per entry (default 1)")
    p.add_argument("--rate", type=float, default=50.0, help="messages per second (default 50)")
    p.add_argument("--duration", type=float, default=0.0, help="stop after this many seconds (0 = never)")
    p.add_argument("--topic", default="joint_states", help="topic (default joint_states, relative)")


def _run(args: argparse.Namespace) -> int:
    """The body lives in ros/ (the only place that starts rclpy); imported when run."""
    from robot_state_format.ros import trajectory_source

    return trajectory_source.run(args, args.ros_args)


def register(subparsers: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    p = subparsers.add_parser("joint-states", help="publish joint states: fixed values, a sweep, or a file",
                              description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    add_arguments(p)
    p.add_argument("--ros-args", dest="ros_args", nargs=argparse.REMAINDER, default=[],
                   help="ROS arguments for the node (e.g. -r __ns:=/robot)")
    p.set_defaults(func=_run)
