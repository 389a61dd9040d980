"""``robot-state-format joint-states``: publish joint states to try things (see ros/trajectory_source.py).

  joint-states --model FILE [--sweep | --positions JSON | --file PATH] [--rate HZ] [--duration S]
      [--ros-args ...]

Fixed values, a sweep inside the joint limits, or a file (a restart file, or JSON/YAML values, one
mapping or a list played in turn), published on ``joint_states`` like joint_state_publisher.
"""

from __future__ import annotations

import argparse

from robot_state_format.lazy_modules import optional_module

# needs ROS 2 (rclpy): without it the command says so in one line (cli.main)
trajectory_source = optional_module("robot_state_format.ros.trajectory_source")


def _run(args: argparse.Namespace) -> int:
    return int(trajectory_source.run(args, args.ros_args))


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = subparsers.add_parser("joint-states", help="publish joint states: fixed values, a sweep, or a file",
                              description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    trajectory_source.add_arguments(p)
    p.add_argument("--ros-args", dest="ros_args", nargs=argparse.REMAINDER, default=[],
                   help="ROS arguments for the node (e.g. -r __ns:=/robot)")
    p.set_defaults(func=_run)
