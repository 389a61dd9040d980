"""``robot-state-format save | record | replay``: the state_store node without a launch file.

* ``save -o DIR [--model FILE] [--timeout S] [--allow-partial]``: wait for a snapshot (world_state,
  or joint_states with a model) in which every moving joint was measured, write one restart file, print
  its path; refused (exit 1, naming the joints never reported, or the snapshot's age) otherwise.
* ``record -o DIR [--duration S] [--topics T ...]``: record the session (default ``/tf``,
  ``/tf_static``, ``robot_description``, ``joint_states``, ``world_state``) into an MCAP directory
  until the duration ends or Ctrl-C; print the directory.
* ``replay PATH --model FILE``: a restart file is checked against the model and published
  (transient_local) until ``--hold`` seconds pass or Ctrl-C; an MCAP recording or a directory of
  restart files is played at its recorded pace times ``--speed`` (with ``--loop``, ``--start-offset``,
  ``--clock``); ``--wait-for-subscribers N`` holds playback until N subscriptions match ``joint_states``
  (``/tf`` when the replay publishes TF) for up to ``--timeout`` seconds;
  ``--tf-source`` says where TF comes from (recorded, computed with ``--model``, none; default auto:
  recorded when the recording holds it).

``-o/--output`` folders are created with their parents when missing. The spellings of the previous
release (``--out``; replay's ``--rate`` and ``--wait-timeout``) still work, hidden from ``--help``.

Exit codes (the table of ``robot-state-format --help``): 0 success (also stopped by Ctrl-C or SIGTERM), 1
refused input (mismatched restart file, no snapshot, joints never reported, a stale snapshot, a model that
cannot be loaded, a recording file that is not MCAP, no subscribers in time), 2 usage or I/O error (also a
``--model`` file that does not exist).
ROS arguments go after ``--ros-args`` (e.g. ``-r __ns:=/robot``).
"""

from __future__ import annotations

import argparse
from collections.abc import Callable

from robot_state_format import options
from robot_state_format.cli._kernel import numpy_kinematics
from robot_state_format.lazy_modules import optional_module

# the nodes' side needs ROS 2 (rclpy): without it these commands say so in one line (cli.main)
store_commands = optional_module("robot_state_format.ros.store_commands")


def _run(name: str) -> Callable[[argparse.Namespace], int]:
    """The command's body, in ros/ (the only place that starts rclpy; this module is loaded only when
    one of its commands runs)."""
    def run(args: argparse.Namespace) -> int:
        return int(getattr(store_commands, name)(args))
    return numpy_kinematics(run)


def register(subparsers: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    def common(p: argparse.ArgumentParser) -> None:
        p.add_argument("--model", default="", help="model file (URDF, SDFormat, xacro)")
        p.add_argument("--node-name", default="state_store", help="node name (default state_store)")
        p.add_argument("--ros-args", dest="ros_args", nargs=argparse.REMAINDER, default=[],
                       help="ROS arguments for the node")

    p = subparsers.add_parser("save", help="write one restart file from the live state",
                              description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    out = p.add_argument("-o", "--output", dest="out", default=".", metavar="DIR",
                         help="output directory, created with its parents when missing (default .)")
    options.old_spelling(p, out, "--out")
    p.add_argument("--timeout", type=options.seconds, default=10.0, help="seconds to wait for a snapshot (default 10)")
    p.add_argument("--allow-partial", action="store_true",
                   help="also save when some moving joints were never reported: only the measured ones are "
                        "written (default: refuse, exit 1, naming them)")
    common(p)
    p.set_defaults(func=_run("run_save"))

    p = subparsers.add_parser("record", help="record a session (TF, model, joint states, snapshots) into MCAP",
                              description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    out = p.add_argument("-o", "--output", dest="out", default=".", metavar="DIR",
                         help="directory the recording directory goes in, created when missing (default .)")
    options.old_spelling(p, out, "--out")
    p.add_argument("--duration", type=options.seconds, default=0.0, help="seconds to record (0 = until Ctrl-C)")
    p.add_argument("--topics", nargs="+", metavar="TOPIC", default=None,
                   help="topics to record (default: /tf /tf_static robot_description joint_states world_state)")
    common(p)
    p.set_defaults(func=_run("run_record"))

    p = subparsers.add_parser("replay", help="publish a restart file, or play a recording",
                              description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("path", metavar="PATH", help="restart file (.usdf), MCAP recording, or directory")
    p.add_argument("--hold", type=options.seconds, default=None,
                   help="restart file: seconds to keep serving late subscribers (default: until Ctrl-C)")
    speed = p.add_argument("--speed", type=options.ranged(0.001, 1000.0), default=1.0, metavar="FACTOR",
                           help="recording: playback speed factor, 0.001..1000 (default 1)")
    options.old_spelling(p, speed, "--rate")
    p.add_argument("--loop", action="store_true", help="play again and again")
    p.add_argument("--start-offset", type=options.seconds, default=0.0, help="seconds into the recording to start at")
    p.add_argument("--clock", action="store_true", help="publish /clock (needs rosgraph_msgs)")
    p.add_argument("--link-tf", action="store_true", help="also publish the joints' transforms from the file")
    p.add_argument("--tf-source", choices=("auto", "recorded", "computed", "none"), default="auto",
                   help="recording: TF as recorded, computed from joint_states with --model, or none "
                        "(default auto: recorded when the recording holds /tf)")
    p.add_argument("--wait-for-subscribers", type=options.count(0, 10000), default=0, metavar="N",
                   help="recording: start playing once N subscriptions match joint_states, or /tf when TF is "
                        "played (default 0: at once)")
    timeout = p.add_argument("--timeout", type=options.seconds, default=10.0, metavar="S",
                             help="seconds --wait-for-subscribers waits before giving up with exit 1 (default 10)")
    options.old_spelling(p, timeout, "--wait-timeout")
    common(p)
    p.set_defaults(func=_run("run_replay"))
