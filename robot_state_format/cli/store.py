"""``robot-state-format save | record | replay``: the state_store node without a launch file.

* ``save --out DIR [--model FILE] [--timeout S]``: wait for a snapshot (world_state, or joint_states
  with a model), write one restart file, print its path.
* ``record --out DIR [--duration S]``: record world_state and joint_states into an MCAP directory
  until the duration ends or Ctrl-C; print the directory.
* ``replay PATH --model FILE``: a restart file is checked against the model and published
  (transient_local) until ``--hold`` seconds pass or Ctrl-C; an MCAP recording or a directory of
  restart files is played at its recorded pace (``--rate``, ``--loop``, ``--start-offset``, ``--clock``).

Exit codes: 0 success, 1 refused input (mismatched restart file, no snapshot), 2 usage or I/O error.
ROS arguments go after ``--ros-args`` (e.g. ``-r __ns:=/robot``).
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path
from typing import Any


def register(subparsers: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    def common(p: argparse.ArgumentParser) -> None:
        p.add_argument("--model", default="", help="model file (URDF, SDFormat, xacro)")
        p.add_argument("--node-name", default="state_store", help="node name (default state_store)")
        p.add_argument("--ros-args", dest="ros_args", nargs=argparse.REMAINDER, default=[],
                       help="ROS arguments for the node")

    p = subparsers.add_parser("save", help="write one restart file from the live state",
                              description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--out", default=".", help="output directory (must exist; default .)")
    p.add_argument("--timeout", type=float, default=10.0, help="seconds to wait for a snapshot (default 10)")
    common(p)
    p.set_defaults(func=run_save)

    p = subparsers.add_parser("record", help="record world_state and joint_states into MCAP",
                              description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--out", default=".", help="directory the recording directory goes in (default .)")
    p.add_argument("--duration", type=float, default=0.0, help="seconds to record (0 = until Ctrl-C)")
    common(p)
    p.set_defaults(func=run_record)

    p = subparsers.add_parser("replay", help="publish a restart file, or play a recording",
                              description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("path", metavar="PATH", help="restart file (.usdf), MCAP recording, or directory")
    p.add_argument("--hold", type=float, default=-1.0,
                   help="restart file: seconds to keep serving late subscribers (default: until Ctrl-C)")
    p.add_argument("--rate", type=float, default=1.0, help="playback speed factor (default 1)")
    p.add_argument("--loop", action="store_true", help="play again and again")
    p.add_argument("--start-offset", type=float, default=0.0, help="seconds into the recording to start at")
    p.add_argument("--clock", action="store_true", help="publish /clock (needs rosgraph_msgs)")
    p.add_argument("--link-tf", action="store_true", help="also publish the joints' transforms from the file")
    common(p)
    p.set_defaults(func=run_replay)


def _err(cmd: str, msg: str) -> None:
    print(f"robot-state-format {cmd}: error: {msg}", file=sys.stderr)


def _start(args: argparse.Namespace, params: dict[str, Any]) -> tuple[Any, Any]:
    """rclpy up (SIGINT/SIGTERM end the command cleanly, exit 0), one StateStore with ``params``;
    returns the node and its :class:`robot_state_format.ros.spin.Stop`."""
    try:
        from rclpy.parameter import Parameter

        from robot_state_format.ros import spin
    except ImportError:
        raise SystemExit("rclpy is not installed: run through the project's .venv (./run setup)") from None
    from robot_state_format.ros.state_store import StateStore

    stop = spin.init([sys.argv[0], "--ros-args", *args.ros_args] if args.ros_args else None)
    if args.model:
        params = {"model_file": str(Path(args.model).resolve()), **params}
    overrides = [Parameter(k, value=v) for k, v in params.items()]
    try:
        return StateStore(args.node_name, parameter_overrides=overrides), stop
    except BaseException:
        spin.finish(stop)
        raise


def _stop(node: Any, stop: Any) -> None:
    from robot_state_format.ros import spin

    try:
        node.shutdown()
    finally:
        spin.finish(stop, node)


def _spin(node: Any, stop: Any, until: float | None, done: Any = None) -> bool:
    """Spin until the deadline, ``done()``, or SIGINT/SIGTERM; True when interrupted."""
    from robot_state_format.ros import spin

    return spin.spin(node, stop, until=until, done=done, timeout_sec=0.05)


def run_save(args: argparse.Namespace) -> int:
    out = Path(args.out)
    if not out.is_dir():
        _err("save", f"{out}: not a directory")
        return 2
    node, stop = _start(args, {"output_dir": str(out.resolve())})
    try:
        result: dict[str, Any] = {}

        def attempt() -> bool:
            ok, msg = node.save("restart")
            result["r"] = (ok, msg)
            return ok or "no snapshot" not in msg

        _spin(node, stop, time.monotonic() + args.timeout, attempt)
        ok, msg = result.get("r") or node.save("restart")
    finally:
        _stop(node, stop)
    if ok:
        print(msg)
        return 0
    _err("save", msg)
    return 1 if "no snapshot" in msg else 2


def run_record(args: argparse.Namespace) -> int:
    out = Path(args.out)
    if not out.is_dir():
        _err("record", f"{out}: not a directory")
        return 2
    node, stop = _start(args, {"output_dir": str(out.resolve())})
    try:
        ok, msg = node.start_recording()
        if not ok:
            _err("record", msg)
            return 2
        print(f"recording to {msg} (Ctrl-C to stop)", file=sys.stderr)
        _spin(node, stop, time.monotonic() + args.duration if args.duration > 0 else None)
        ok, msg = node.stop_recording()
    finally:
        _stop(node, stop)
    if not ok:
        _err("record", msg)
        return 2
    print(msg)
    return 0


def run_replay(args: argparse.Namespace) -> int:
    path = Path(args.path)
    if not path.exists():
        _err("replay", f"{path}: no such file or directory")
        return 2
    if args.rate <= 0:
        _err("replay", "--rate must be > 0")
        return 2
    is_file = path.is_file() and path.suffix != ".mcap"
    params: dict[str, Any] = {"publish_link_tf": bool(args.link_tf)} if is_file else {
        "rate": float(args.rate), "loop": bool(args.loop), "start_offset": float(args.start_offset),
        "publish_clock": bool(args.clock)}
    node, stop = _start(args, params)
    try:
        if is_file:
            ok, msg = node.replay(str(path.resolve()))
            if not ok:
                _err("replay", msg)
                return 1
            print(msg, file=sys.stderr)
            _spin(node, stop, time.monotonic() + args.hold if args.hold >= 0 else None)
            return 0
        ok, msg = node.play(str(path.resolve()))
        if not ok:
            _err("replay", msg)
            return 2
        print(msg, file=sys.stderr)
        player = node._player
        _spin(node, stop, None, lambda: not player.running)
        if player.error:
            _err("replay", player.error)
            return 2
        print(f"published {player.published} messages", file=sys.stderr)
        return 0
    finally:
        _stop(node, stop)
