"""A joint-state source for trying things (like joint_state_publisher): fixed values, a sweep, or a file.

``joint_state_source --model FILE [--positions JSON | --file PATH | --sweep] [--rate HZ] [--duration S]``
(also ``robot-state-format joint-states ...``, ``python -m robot_state_format.ros.trajectory_source``,
``ros2 run robot_state_format joint_state_source``) publishes ``sensor_msgs/JointState`` on
``joint_states`` (reliable, depth 10) for every moving, non-mimic joint of the model:

* ``--sweep`` (the default): joint ``k`` follows ``centre + amplitude * sin(2 pi f t + k)``,
  ``f = 0.25 Hz``, inside its limits (half the range about the middle) or +/-0.5 (rad or m) when
  unlimited; quaternion joints (ball, floating) turn slowly about z; velocities are the exact
  derivatives. ``t`` is the message stamp modulo the 4 s period, so the values of any message
  follow from its stamp alone (:func:`~robot_state_format.playback.trajectory.sample_at_stamp`; the demo
  checks its restart file with it).
* ``--positions '{"joint1": 0.5, "ball": [0, 0, 0, 1]}'`` (JSON text or a JSON file): fixed values;
  joints not named are published at 0 (the middle of their limits when 0 is outside them; the
  identity for quaternion joints), as joint_state_publisher does, and listed at start.
* values outside a joint's limits are published as given, each named in a warning line on stderr;
* ``--file PATH``: a USDF restart file (its joint positions), or a JSON/YAML file holding one mapping
  (fixed values, as ``--positions``) or a list of mappings played one after the other, each for
  ``--step`` seconds, looping.

Multi-DOF joints use MoveIt's sub-joint names (``<joint>/<dof>``), which state_publisher reads.
Exit codes: 0 stopped (Ctrl-C, SIGTERM or ``--duration``), 1 an invalid model or values that do not fit
it, 2 usage or I/O error (a missing or unreadable file).

The values are computed without ROS in :mod:`robot_state_format.playback.trajectory`; this module
holds the options, the node and its timer.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Sequence
from pathlib import Path

from rclpy.node import Node
from sensor_msgs.msg import JointState

from robot_state_format import options
from robot_state_format.errors import ModelIOError, RobotStateFormatError
from robot_state_format.limits import input_problem, shown_path
from robot_state_format.model.joint_limits import limit_warnings
from robot_state_format.model.loader import load_model_file
from robot_state_format.model.types import Model
from robot_state_format.playback.trajectory import (
    SourceIOError,
    States,
    channels,
    fixed_positions,
    positions_mapping,
    read_values_file,
    sample_at_stamp,
)
from robot_state_format.ros import spin
from robot_state_format.ros.messages import ns_to_stamp
from robot_state_format.ros.qos import JOINT_SOURCE_QOS

PROG = "joint_state_source"


def add_arguments(p: argparse.ArgumentParser) -> None:
    """The source's options (``joint_state_source`` and ``robot-state-format joint-states``)."""
    p.add_argument("--model", required=True, help="URDF, SDFormat or xacro file")
    mode = p.add_mutually_exclusive_group()
    mode.add_argument("--sweep", action="store_true", help="every joint sweeps inside its limits (default)")
    mode.add_argument("--positions", metavar="JSON", help="fixed values: JSON text or file, {joint: value}")
    mode.add_argument("--file", metavar="PATH", help="a restart file (.usdf) or JSON/YAML values (one or a list)")
    p.add_argument("--step", type=options.positive_seconds, default=1.0, help="--file with a list: seconds per entry (default 1)")
    p.add_argument("--rate", type=options.rate_hz(10000.0), default=50.0, help="messages per second (default 50)")
    p.add_argument("--duration", type=options.seconds, default=0.0, help="stop after this many seconds (0 = never)")
    p.add_argument("--topic", default="joint_states", help="topic (default joint_states, relative)")


def _parser() -> argparse.ArgumentParser:
    p = options.Parser(prog=PROG, description=(__doc__ or "").split("\n\n")[0])
    add_arguments(p)
    return p


def run(args: argparse.Namespace, ros_args: Sequence[str] = ()) -> int:
    """Publish until Ctrl-C or ``--duration``; the exit code."""
    if not 0 < args.rate <= 10000 or not args.step > 0 or not args.duration >= 0:  # main() parses with options.*
        print(f"{PROG}: error: --rate must be in (0, 10000], --step > 0, --duration >= 0", file=sys.stderr)
        return 2
    for option, given in (("--model", args.model), ("--file", args.file)):
        problem = input_problem(given) if given is not None else None
        if problem is not None:  # missing, a FIFO, a device, a directory, a name too long: never opened
            print(f"{PROG}: error: {option} {shown_path(given)}: "
                  f"{'no such file' if problem == 'no such file or directory' else problem}", file=sys.stderr)
            return 2
    try:
        model = load_model_file(args.model)
        states: States = []
        if args.positions is not None:
            names, pos, defaulted = fixed_positions(model, positions_mapping(args.positions))
            states = [(names, pos)]
            if defaulted:
                print(f"{PROG}: not given, published at 0 (or the middle of their limits): "
                      f"{', '.join(defaulted)}", file=sys.stderr)
        elif args.file is not None:
            states = read_values_file(Path(args.file), model)
        warned: list[str] = []
        for names, pos in states:  # published as given (as robot_state_publisher takes them), named here
            warned += [w for w in limit_warnings(model, dict(zip(names, pos))) if w not in warned]
        for w in warned:
            print(f"{PROG}: warning: {w}", file=sys.stderr)
    except ValueError as exc:  # --positions that is not a JSON object
        print(f"{PROG}: error: {exc}", file=sys.stderr)
        return 2
    except RobotStateFormatError as exc:  # an unreadable file is an I/O error (2), an invalid one 1
        print(f"{PROG}: error: {exc}", file=sys.stderr)
        return 2 if isinstance(exc, (ModelIOError, SourceIOError)) or getattr(exc, "code", None) == "USDF_IO" else 1
    return _publish(args, model, states, list(ros_args))


class JointStateSource(Node):
    """Publishes ``states`` in turn (``step`` s each), or the sweep when there are none, ``rate`` times a
    second until ``duration`` s (0: until stopped)."""

    def __init__(self, model: Model, states: States, *, topic: str = "joint_states", rate: float = 50.0,
                 step: float = 1.0, duration: float = 0.0) -> None:
        super().__init__(PROG)
        self._chans, self._quats = channels(model)
        self._states, self._step, self._duration = states, step, duration
        self._pub = self.create_publisher(JointState, topic, JOINT_SOURCE_QOS)
        self.t0 = time.monotonic()
        self.deadline = self.t0 + duration if duration else None
        self.create_timer(1.0 / rate, self._tick)
        what = "a sweep" if not states else f"{len(states)} state(s)" if len(states) > 1 else "fixed values"
        print(f"{PROG}: publishing {what} of {model.name!r} on {self.resolve_topic_name(topic)} at "
              f"{rate:g} Hz (Ctrl-C to stop)", file=sys.stderr)

    def _tick(self) -> None:
        t = time.monotonic() - self.t0
        if self._duration and t > self._duration:
            return
        now = self.get_clock().now().nanoseconds
        msg = JointState()
        msg.header.stamp = ns_to_stamp(now)
        if self._states:
            msg.name, msg.position = self._states[int(t / self._step) % len(self._states)]
        else:
            msg.name, msg.position, msg.velocity = sample_at_stamp(self._chans, self._quats, now)
        self._pub.publish(msg)


def _publish(args: argparse.Namespace, model: Model, states: States, ros_args: list[str]) -> int:
    def make() -> JointStateSource:
        return JointStateSource(model, states, topic=args.topic, rate=args.rate, step=args.step,
                                duration=args.duration)

    return spin.run_main(PROG, make, [sys.argv[0], "--ros-args", *ros_args] if ros_args else None, [],
                         until=lambda node: node.deadline)


def main(argv: list[str] | None = None) -> int:
    """``joint_state_source`` / ``python -m robot_state_format.ros.trajectory_source``; ROS arguments after
    ``--ros-args``."""
    argv = list(argv if argv is not None else sys.argv[1:])
    ros_args: list[str] = []
    if "--ros-args" in argv:
        i = argv.index("--ros-args")
        argv, ros_args = argv[:i], argv[i + 1:]
    args = _parser().parse_args(argv)
    return run(args, ros_args)


def entry_point() -> None:
    sys.exit(main())


if __name__ == "__main__":
    sys.exit(main())
