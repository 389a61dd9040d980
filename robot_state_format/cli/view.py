"""``robot-state-format view PATH``: the state in a browser (viser; the ``view`` extra).

PATH is a model (URDF, xacro, SDFormat, MJCF, ``.dmd.yaml``), a world_state file (a restart file: every
robot at its saved configuration, free bodies where they were; ``--model`` gives robots their visuals) or
an MCAP recording (its file or rosbag2 directory: a time slider to scrub, ``play`` at recorded pace).
The scene is served on ``http://HOST:PORT`` (printed; ``127.0.0.1`` unless ``--host``), until Ctrl-C or
SIGTERM (or ``--duration`` seconds); the server serves its client page and the scene, no file by path.
``--export DIR`` writes ``DIR/index.html`` instead: a static page any web server (or the file itself)
shows without this project. ``--live`` shows the robots of a running ROS 2 graph (``/tf``, ``/tf_static``,
``robot_description``, ``world_state`` and ``joint_states`` of each ``--namespace``) moving.

Exit codes: 0 done (also stopped by Ctrl-C or SIGTERM), 1 invalid model, state, recording or positions,
2 usage or I/O error, or viser (or, with --live, ROS 2) not installed.
"""

from __future__ import annotations

import argparse
import signal
import sys
import threading
from pathlib import Path
from types import FrameType
from typing import Any

from robot_state_format.cli._common import add_model_options, json_mapping, report_error, split_xacro_items
from robot_state_format.cli._kernel import numpy_kinematics
from robot_state_format.errors import ModelIOError, RobotStateFormatError
from robot_state_format.lazy_modules import optional_module
from robot_state_format.model.loader import load_model_file
from robot_state_format.model.types import Model
from robot_state_format.recording.writer import RecordingError, RecordingFormatError
from robot_state_format.view import sources
from robot_state_format.view.server import SceneView, Timeline, export_html, start_server, stop_server

view_live = optional_module("robot_state_format.ros.view_live")

PROG = "robot-state-format view"
HELP = "show a model, restart file, recording or live robots in a browser"


def register(subparsers: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    p = subparsers.add_parser("view", help=HELP, description=__doc__,
                              formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("path", metavar="PATH", nargs="?", help="model, world_state file, or MCAP recording")
    p.add_argument("xacro_items", nargs="*", metavar="NAME:=VALUE", help="xacro argument(s)")
    p.add_argument("--model", action="append", default=[], metavar="MODEL",
                   help="a world_state's robot model (repeatable): draws the model_state of its name")
    p.add_argument("--positions", metavar="JSON", default="{}",
                   help="a model's joint positions, e.g. '{\"joint1\": 0.5}' (default: zero)")
    p.add_argument("--host", default="127.0.0.1", help="address to serve on (default 127.0.0.1: this machine only)")
    p.add_argument("--port", type=int, default=8080, help="port (default 8080; taken: the next free one; 0: any)")
    p.add_argument("--export", metavar="DIR", help="write DIR/index.html (a static page) instead of serving")
    p.add_argument("--duration", type=float, default=None, metavar="S", help="serve for S seconds, then exit 0")
    p.add_argument("--live", action="store_true", help="show the live ROS 2 graph (no PATH)")
    p.add_argument("--namespace", action="append", default=[], metavar="NS",
                   help="with --live: a robot's namespace (repeatable; default: the root namespace)")
    add_model_options(p)
    p.set_defaults(func=numpy_kinematics(run))


def _load(args: argparse.Namespace, path: str, xacro_args: dict[str, str]) -> Model:
    return load_model_file(path, xacro_args=xacro_args, search_paths=args.search_path, xacro=args.xacro)


def _frames(args: argparse.Namespace, xacro_args: dict[str, str]) -> sources.Frames:
    path = Path(args.path)
    kind = sources.input_kind(path)
    if kind != "world_state" and args.model:
        raise ValueError(f"--model is for a world_state file; {args.path} is a {kind}")
    if kind != "model" and args.positions != "{}":
        raise ValueError(f"--positions is for a model; {args.path} is a {kind.replace('_', ' ')}")
    if kind == "recording":
        return sources.recording_frames(path)
    if kind == "world_state":
        state = sources.read_state_file(path)
        models = [_load(args, m, xacro_args) for m in args.model]
        return sources.state_scene(state, models)
    model = _load(args, args.path, xacro_args)
    positions = json_mapping(args.positions, "--positions")
    out = sources.Frames([(0.0, sources.model_scene(model, positions))])
    out.warnings.extend(d.format() for d in model.warnings)
    return out


def _wait(duration: float | None) -> None:
    """Until Ctrl-C, SIGTERM or ``duration`` seconds."""
    done = threading.Event()

    def stop(_sig: int, _frame: FrameType | None) -> None:
        done.set()

    old = signal.signal(signal.SIGTERM, stop)
    try:
        done.wait(duration)
    except KeyboardInterrupt:
        pass
    finally:
        signal.signal(signal.SIGTERM, old)


def _url(host: str, port: int) -> str:
    shown = f"[{host}]" if ":" in host else host
    return f"http://{shown}:{port}/"


def _serve(args: argparse.Namespace, frames: sources.Frames) -> int:
    server = start_server(args.host, args.port)
    timeline: Timeline | None = None
    try:
        view = SceneView(server, args.search_path)
        if len(frames.frames) > 1:
            timeline = Timeline(view, frames.frames)
            timeline.start()
        else:
            view.show(frames.frames[0][1])
        for w in view.warnings:
            print(f"{PROG}: warning: {w}", file=sys.stderr)
        print(f"{PROG}: serving {args.path} on {_url(args.host, server.get_port())} (Ctrl-C stops)", flush=True)
        _wait(args.duration)
    finally:
        if timeline is not None:
            timeline.stop()
        stop_server(server)
    return 0


def run(args: argparse.Namespace) -> int:
    if args.live:
        if args.path is not None or args.export:
            print(f"{PROG}: error: --live takes no PATH and no --export", file=sys.stderr)
            return 2
        live: Any = view_live
        return int(live.serve(args.host, args.port, args.namespace or ["/"], args.duration, PROG))
    if args.path is None:
        print(f"{PROG}: error: give a PATH (model, world_state file or recording) or --live", file=sys.stderr)
        return 2
    try:
        paths, xacro_args = split_xacro_items([args.path, *args.xacro_items], args.xacro_arg)
        if len(paths) != 1:
            raise ValueError(f"expected one PATH, got {len(paths)}: {' '.join(paths)}")
        frames = _frames(args, xacro_args)
    except ValueError as exc:
        print(f"{PROG}: error: {exc}", file=sys.stderr)
        return 2
    except RecordingError as exc:
        print(f"{PROG}: error: {exc}", file=sys.stderr)
        return 1 if isinstance(exc, RecordingFormatError) else 2
    except RobotStateFormatError as exc:
        return report_error(PROG, exc, args.path)
    for w in frames.warnings:
        print(f"{PROG}: warning: {w}", file=sys.stderr)
    if not frames.frames:
        print(f"{PROG}: error: {args.path}: nothing to show", file=sys.stderr)
        return 1
    if args.export:
        try:
            page, warnings = export_html(frames.frames, Path(args.export), args.search_path)
        except OSError as exc:
            return report_error(PROG, ModelIOError(f"cannot write {args.export}: {exc.strerror or exc}"), args.export)
        for w in warnings:
            print(f"{PROG}: warning: {w}", file=sys.stderr)
        print(page)
        return 0
    return _serve(args, frames)
