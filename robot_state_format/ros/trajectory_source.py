"""A joint-state source for trying things (like joint_state_publisher): fixed values, a sweep, or a file.

``joint_state_source --model FILE [--positions JSON | --file PATH | --sweep] [--rate HZ] [--duration S]``
(also ``robot-state-format joint-states ...``, ``python -m robot_state_format.ros.trajectory_source``,
``ros2 run robot_state_format joint_state_source``) publishes ``sensor_msgs/JointState`` on
``joint_states`` (reliable, depth 10) for every moving, non-mimic joint of the model:

* ``--sweep`` (the default): joint ``k`` follows ``centre + amplitude * sin(2 pi f t + k)``,
  ``f = 0.25 Hz``, inside its limits (half the range about the middle) or +/-0.5 (rad or m) when
  unlimited; quaternion joints (ball, floating) turn slowly about z; velocities are the exact
  derivatives. ``t`` is the message stamp modulo the 4 s period, so the values of any message
  follow from its stamp alone (:func:`sample_at_stamp`; the demo checks its restart file with it).
* ``--positions '{"joint1": 0.5, "ball": [0, 0, 0, 1]}'`` (JSON text or a JSON file): fixed values;
  joints not named are published at 0 (the middle of their limits when 0 is outside them; the
  identity for quaternion joints), as joint_state_publisher does, and listed at start.
* ``--file PATH``: a USDF restart file (its joint positions), or a JSON/YAML file holding one mapping
  (fixed values, as ``--positions``) or a list of mappings played one after the other, each for
  ``--step`` seconds, looping.

Multi-DOF joints use MoveIt's sub-joint names (``<joint>/<dof>``), which state_publisher reads.
Exit codes: 0 stopped (Ctrl-C or ``--duration``), 1 a model or file that cannot be read, 2 usage.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from robot_state_format.cli.joint_states import add_arguments
from robot_state_format.errors import RobotStateFormatError
from robot_state_format.model.types import JointType, Limits, Model
from robot_state_format.ros.replay import MULTI_DOF_SUFFIXES

FREQ_HZ = 0.25
PERIOD_NS = 4_000_000_000  # 1 / FREQ_HZ: the sweep is periodic, so t = stamp mod period is exact
_IDENTITY = {JointType.BALL: [0.0, 0.0, 0.0, 1.0], JointType.FLOATING: [0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 1.0]}


class SourceError(RobotStateFormatError):
    """The values given to the joint-state source do not fit the model."""


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
        if kind == "floating":
            for s in MULTI_DOF_SUFFIXES[JointType.FLOATING][:3]:
                names.append(f"{name}/{s}")
                pos.append(0.0)
                vel.append(0.0)
        for s, p, v in zip(("rot_x", "rot_y", "rot_z", "rot_w"), q, (0.0, 0.0, yaw_rate, 0.0)):
            names.append(f"{name}/{s}")
            pos.append(p)
            vel.append(v)
    return names, pos, vel


def sample_at_stamp(chans: list[_Channel], quats: list[tuple[str, str]], stamp_ns: int
                    ) -> tuple[list[str], list[float], list[float]]:
    """The sweep's message stamped ``stamp_ns`` (what ``--sweep`` sends at that stamp)."""
    return sample(chans, quats, (int(stamp_ns) % PERIOD_NS) / 1e9)


def _default(joint: Any) -> list[float]:
    if joint.type in _IDENTITY:
        return list(_IDENTITY[joint.type])
    out = []
    for lim in (joint.limits, joint.limits2)[:joint.nq]:
        lo = lim.lower if lim is not None and lim.lower is not None else -math.inf
        hi = lim.upper if lim is not None and lim.upper is not None else math.inf
        out.append(0.0 if lo <= 0.0 <= hi else (lo + hi) / 2.0)
    return out


def fixed_positions(model: Model, given: dict[str, Any]) -> tuple[list[str], list[float], list[str]]:
    """JointState names and positions for ``given`` values (a number, or a list for multi-DOF joints);
    every other moving, non-mimic joint at its default. Also the joints defaulted."""
    moving = {j.name: j for j in model.joints.values() if j.is_moving and not j.mimic}
    unknown = [n for n in given if n not in moving]
    if unknown:
        raise SourceError(f"not a moving, non-mimic joint of model {model.name!r}: {', '.join(map(str, unknown))}")
    names: list[str] = []
    pos: list[float] = []
    defaulted: list[str] = []
    for name, joint in moving.items():
        value = given.get(name)
        if value is None:
            values = _default(joint)
            defaulted.append(name)
        else:
            values = [value] if isinstance(value, (int, float)) and not isinstance(value, bool) else value
            if not isinstance(values, list) or len(values) != joint.nq or not all(
                    isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v) for v in values):
                raise SourceError(f"joint {name!r} ({joint.type.value}) needs {joint.nq} finite number(s), "
                                  f"got {value!r}")
        suffixes = MULTI_DOF_SUFFIXES.get(joint.type)
        if suffixes is None:
            names.append(name)
        else:
            names += [f"{name}/{s}" for s in suffixes]
        pos += [float(v) for v in values]
    return names, pos, defaulted


def read_values_file(path: Path, model: Model) -> list[tuple[list[str], list[float]]]:
    """The states of ``--file``: a USDF restart file, or JSON/YAML holding a mapping or a list of them."""
    if path.is_dir():
        raise SourceError(f"{path}: is a directory, expected a .usdf, .json or .yaml file")
    if path.suffix == ".usdf":
        from robot_state_format.ros.replay import check_state, joint_state_fields
        from robot_state_format.usdf.reader import read_world_state_file

        state = read_world_state_file(path)
        problems = check_state(state, model)
        if problems:
            raise SourceError(f"{path}: does not fit model {model.name!r}: " + "; ".join(problems))
        fields = joint_state_fields(state, model)
        return [(list(fields.name), list(fields.position))]
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise SourceError(f"{path}: cannot read: {exc.strerror or exc}") from None
    try:
        if path.suffix in (".yaml", ".yml"):
            import yaml

            data = yaml.safe_load(text)
        else:
            data = json.loads(text)
    except Exception as exc:  # noqa: BLE001 - yaml and json errors alike
        raise SourceError(f"{path}: not valid {'YAML' if path.suffix in ('.yaml', '.yml') else 'JSON'}: {exc}") \
            from None
    items = data if isinstance(data, list) else [data]
    if not items or not all(isinstance(d, dict) for d in items):
        raise SourceError(f"{path}: expected a mapping {{joint: value}} or a list of such mappings")
    return [fixed_positions(model, d)[:2] for d in items]


def _mapping(text: str) -> dict[str, Any]:
    """``--positions``: JSON text, or the path of a JSON file; ValueError (usage) otherwise."""
    source = text
    if not text.lstrip().startswith("{") and Path(text).is_file():
        source = Path(text).read_text(encoding="utf-8")
    try:
        value = json.loads(source)
    except json.JSONDecodeError as exc:
        raise ValueError(f"--positions: not valid JSON ({exc.msg} at column {exc.colno})") from None
    if not isinstance(value, dict):
        raise ValueError("--positions: expected a JSON object mapping joint names to values")
    return value


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="joint_state_source", description=__doc__.split("\n\n")[0])
    add_arguments(p)
    return p


def run(args: argparse.Namespace, ros_args: Sequence[str] = ()) -> int:
    """Publish until Ctrl-C or ``--duration``; the exit code."""
    from robot_state_format.model.loader import load_model_file

    prog = "joint_state_source"
    if not 0 < args.rate <= 10000 or not args.step > 0 or not args.duration >= 0:
        print(f"{prog}: error: --rate must be in (0, 10000], --step > 0, --duration >= 0", file=sys.stderr)
        return 2
    try:
        model = load_model_file(args.model)
        states: list[tuple[list[str], list[float]]] = []
        if args.positions is not None:
            names, pos, defaulted = fixed_positions(model, _mapping(args.positions))
            states = [(names, pos)]
            if defaulted:
                print(f"{prog}: not given, published at 0 (or the middle of their limits): "
                      f"{', '.join(defaulted)}", file=sys.stderr)
        elif args.file is not None:
            states = read_values_file(Path(args.file), model)
    except ValueError as exc:  # --positions that is not a JSON object
        print(f"{prog}: error: {exc}", file=sys.stderr)
        return 2
    except RobotStateFormatError as exc:
        print(f"{prog}: error: {exc}", file=sys.stderr)
        return 1
    return _publish(args, model, states, list(ros_args))


def _publish(args: argparse.Namespace, model: Model, states: list[tuple[list[str], list[float]]],
             ros_args: list[str]) -> int:
    import rclpy
    from rclpy.qos import QoSProfile, ReliabilityPolicy
    from sensor_msgs.msg import JointState

    from robot_state_format.ros import spin
    from robot_state_format.ros.messages import ns_to_stamp

    chans, quats = channels(model)
    stop = spin.init([sys.argv[0], "--ros-args", *ros_args] if ros_args else None)
    node = rclpy.create_node("joint_state_source")
    pub = node.create_publisher(JointState, args.topic, QoSProfile(depth=10, reliability=ReliabilityPolicy.RELIABLE))
    t0 = time.monotonic()

    def tick() -> None:
        t = time.monotonic() - t0
        if args.duration and t > args.duration:
            return
        now = node.get_clock().now().nanoseconds
        msg = JointState()
        msg.header.stamp = ns_to_stamp(now)
        if states:
            msg.name, msg.position = states[int(t / args.step) % len(states)]
        else:
            msg.name, msg.position, msg.velocity = sample_at_stamp(chans, quats, now)
        pub.publish(msg)

    node.create_timer(1.0 / args.rate, tick)
    what = "a sweep" if not states else f"{len(states)} state(s)" if len(states) > 1 else "fixed values"
    print(f"joint_state_source: publishing {what} of {model.name!r} on {node.resolve_topic_name(args.topic)} at "
          f"{args.rate:g} Hz (Ctrl-C to stop)", file=sys.stderr)
    try:
        spin.spin(node, stop, until=t0 + args.duration if args.duration else None)
    finally:
        spin.finish(stop, node)
    return 0


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
