"""The node-running side of ``robot-state-format save | record | replay`` (see cli/store.py)."""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from rclpy.exceptions import NameValidationException
from rclpy.parameter import Parameter
from rclpy.validate_node_name import validate_node_name

from robot_state_format.lazy_modules import first_missing
from robot_state_format.limits import (
    directory_problem,
    input_problem,
    open_input_file,
    os_error_text,
    shown_path,
)
from robot_state_format.output_dirs import ensure_directory
from robot_state_format.ros import spin
from robot_state_format.ros.state_store import (
    StateStore,
    StateStoreConfigError,
    StateStoreModelError,
    StateStoreModelIOError,
)


def _err(cmd: str, msg: str) -> None:
    print(f"robot-state-format {cmd}: error: {msg}", file=sys.stderr)


def _start(args: argparse.Namespace, params: dict[str, Any]) -> tuple[Any, Any]:
    """rclpy up (SIGINT/SIGTERM end the command cleanly, exit 0), one StateStore with ``params``;
    returns the node and its :class:`robot_state_format.ros.spin.Stop`. A ``--model`` that is not a
    file is an I/O error (exit 2, as every command); one that cannot be loaded is invalid input (1)."""
    problem = input_problem(args.model) if args.model else None
    if problem is not None:
        what = "no such model file" if problem == "no such file or directory" else problem
        raise _UsageError(f"{shown_path(args.model)}: {what}")
    try:  # checked before the node exists: rclpy warns when it fails to make a node of a bad name
        validate_node_name(args.node_name)
    except NameValidationException as exc:
        raise _UsageError(f"--node-name: {spin.name_error_line(exc)}") from None
    try:
        stop = spin.init([sys.argv[0], "--ros-args", *args.ros_args] if args.ros_args else None)
    except spin.RosArgumentsError as exc:  # a params file rcl cannot open or parse
        raise _UsageError(str(exc)) from None
    if args.model:
        params = {"model_file": str(Path(args.model).resolve()), **params}
    overrides = [Parameter(k, value=v) for k, v in params.items()]
    try:
        return StateStore(args.node_name, parameter_overrides=overrides), stop
    except StateStoreConfigError as exc:  # a parameter given with --ros-args that the node refuses
        spin.finish(stop)
        raise _UsageError(str(exc)) from None
    except NameValidationException as exc:  # --node-name, a remapped name or topic rclpy refuses
        spin.finish(stop)
        raise _UsageError(spin.name_error_line(exc)) from None
    except StateStoreModelIOError as exc:  # a model_file given with --ros-args that cannot be read: I/O
        spin.finish(stop)
        raise _UsageError(str(exc)) from None
    except StateStoreModelError as exc:  # --model (or model_file) that cannot be loaded: FILE:LINE lines
        spin.finish(stop)
        raise _ModelError(str(exc)) from None
    except BaseException:
        spin.finish(stop)
        raise


class _UsageError(Exception):
    """The node refused its configuration: the command reports it and exits 2."""


class _ModelError(Exception):
    """The model cannot be loaded: the command prints the reader's diagnostics and exits 1."""


def _usage_errors(cmd: str, run: Callable[[argparse.Namespace], int]) -> Callable[[argparse.Namespace], int]:
    def wrapped(args: argparse.Namespace) -> int:
        try:
            return run(args)
        except _UsageError as exc:
            _err(cmd, str(exc))
            return 2
        except _ModelError as exc:
            _err(cmd, f"cannot load the model:\n{exc}")
            return 1
    return wrapped


def _stop(node: Any, stop: Any) -> None:
    try:
        node.shutdown()
    finally:
        spin.finish(stop, node)


def _spin(node: Any, stop: Any, until: float | None, done: Any = None) -> bool:
    """Spin until the deadline, ``done()``, or SIGINT/SIGTERM; True when interrupted."""
    return spin.spin(node, stop, until=until, done=done, timeout_sec=0.05)


def _start_in_out_dir(cmd: str, args: argparse.Namespace, extra: dict[str, Any] | None = None) -> tuple[Any, Any] | None:
    """:func:`_start` writing into ``-o/--output``, created with its parents when missing (None, reported,
    when it cannot be)."""
    out = Path(args.out)
    created, problem = ensure_directory(out, "--output")
    if problem is not None:
        _err(cmd, problem)
        return None
    if created:
        print(f"robot-state-format {cmd}: created {out}", file=sys.stderr)
    params: dict[str, Any] = {"output_dir": str(out.resolve()), **(extra or {})}
    if getattr(args, "allow_partial", False):
        params["allow_partial"] = True
    return _start(args, params)


def _run_save(args: argparse.Namespace) -> int:
    started = _start_in_out_dir("save", args)
    if started is None:
        return 2
    node, stop = started
    try:
        result: dict[str, Any] = {}

        def attempt() -> bool:  # wait while nothing (or not every joint) has been measured yet
            result["r"] = node.save("restart")
            return bool(result["r"].why != "wait")

        _spin(node, stop, time.monotonic() + args.timeout, attempt)
        saved = result.get("r") or node.save("restart")
    finally:
        _stop(node, stop)
    if saved.ok:
        print(saved.message)
        return 0
    _err("save", saved.message)
    return 1 if saved.why in ("wait", "refused") else 2


def _run_record(args: argparse.Namespace) -> int:
    missing = first_missing("mcap.writer", "mcap_ros2")  # refused before the --output folder is made
    if missing is not None:
        _err("record", missing)
        return 2
    started = _start_in_out_dir("record", args, {"record_topics": list(args.topics)} if args.topics else None)
    if started is None:
        return 2
    node, stop = started
    try:
        started = node.start_recording()
        if not started.ok:
            _err("record", started.message)
            return 2
        print(f"recording to {started.message} (Ctrl-C to stop)", file=sys.stderr)
        _spin(node, stop, time.monotonic() + args.duration if args.duration > 0 else None)
        stopped = node.stop_recording()
    finally:
        _stop(node, stop)
    if not stopped.ok:
        _err("record", stopped.message)
        return 2
    print(stopped.message)
    return 0


MCAP_MAGIC = b"\x89MCAP0\r\n"  # the first 8 bytes of every MCAP file (MCAP specification, "Magic")


def _not_mcap(path: Path, is_dir: bool) -> tuple[Path, str] | None:
    """The first file (restart file, or ``.mcap`` of a recording) that cannot be played and why: not MCAP
    (invalid input, exit 1, an empty why) or not readable (a FIFO, a device, no permission: exit 2)."""
    files = sorted(path.glob("*.mcap")) if is_dir else [path]
    for f in files:
        try:
            with open_input_file(f) as fh:  # never a blocking open (a FIFO without a writer)
                head = fh.read(len(MCAP_MAGIC))
        except OSError as exc:
            return f, os_error_text(exc)
        if f.suffix == ".mcap" and head != MCAP_MAGIC[:len(head)]:  # a file cut off inside its magic (or empty) is a cut recording
            return f, ""
    return None


def _run_replay(args: argparse.Namespace) -> int:
    path = Path(args.path)
    is_dir = directory_problem(path) is None
    problem = None if is_dir else input_problem(path)
    if problem is not None:  # missing, a FIFO or a device (never opened: it would block), a name too long
        _err("replay", f"{shown_path(path)}: {problem}")
        return 2
    bad = _not_mcap(path, is_dir)
    if bad is not None:
        if bad[1]:
            _err("replay", f"{shown_path(bad[0])}: cannot read: {bad[1]}")
            return 2
        _err("replay", f"{shown_path(bad[0])}: not an MCAP file (it does not start with the MCAP magic bytes)")
        return 1
    if not 0.001 <= args.speed <= 1000.0:
        _err("replay", f"--speed must be in 0.001..1000, got {args.speed:g}")
        return 2
    if not args.start_offset >= 0.0:
        _err("replay", f"--start-offset must be >= 0 seconds, got {args.start_offset:g}")
        return 2
    if args.wait_for_subscribers < 0:
        _err("replay", "--wait-for-subscribers must be >= 0")
        return 2
    is_file = not is_dir and path.suffix != ".mcap"
    params: dict[str, Any] = {"publish_link_tf": bool(args.link_tf)} if is_file else {
        "rate": float(args.speed), "loop": bool(args.loop), "start_offset": float(args.start_offset),
        "publish_clock": bool(args.clock), "tf_source": str(args.tf_source)}
    node, stop = _start(args, params)
    try:
        if is_file:
            replayed = node.replay(str(path.resolve()))
            if not replayed.ok:
                _err("replay", replayed.message)
                return 1
            print(replayed.message, file=sys.stderr)
            _spin(node, stop, time.monotonic() + args.hold if args.hold is not None else None)
            return 0
        node.hold_inputs()  # its own joint_states reader is no subscriber to wait for
        want = args.wait_for_subscribers
        if want > 0:
            try:  # a replay that publishes TF waits for TF listeners (RViz, Foxglove), else for joint_states
                waited = "tf" if node.playback_plan(path).tf != "none" else "joint_states"
            except Exception:  # noqa: BLE001 an unreadable file is reported by the replay itself
                waited = "joint_states"

            def enough() -> bool:
                return bool(node.subscriber_count(waited) >= want)

            if _spin(node, stop, time.monotonic() + args.timeout, enough):
                return 0
            if not enough():
                _err("replay", f"{node.subscriber_count(waited)} of {want} subscriber(s) on "
                     f"{'/tf' if waited == 'tf' else waited} after {args.timeout:g} s; nothing played")
                return 1
        # with subscribers waited for: they also acknowledge the first message before the rest follows
        played = node.play(str(path.resolve()), first_acked_timeout=args.timeout if want > 0 else 0.0)
        if not played.ok:
            _err("replay", played.message)
            return 2
        print(played.message, file=sys.stderr)
        player = node._player
        _spin(node, stop, None, lambda: not player.running)
        if player.error:
            _err("replay", player.error)
            return 2
        node.wait_for_all_acked(2.0)  # reliable subscribers get the last samples before the writer goes
        print(f"published {player.published} messages", file=sys.stderr)
        return 0
    finally:
        _stop(node, stop)

# the command bodies the CLI calls (cli/store.py): a configuration the node refuses exits 2
run_save = _usage_errors("save", _run_save)
run_record = _usage_errors("record", _run_record)
run_replay = _usage_errors("replay", _run_replay)
