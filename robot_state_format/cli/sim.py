"""``robot-state-format sim run``: headless passive simulation with USDF restart files (docs/simulation.md).

  sim run MODEL --engine mujoco|drake --steps N [--dt S] [--restart STATE.usdf] [--save-at K ...]
          [-o DIR] [--trajectory FILE.csv] [--floating-base]

Starts from the model's zero state (every joint at zero, at rest) or from a restart file, and
steps N times under gravity with no control.  ``--save-at K`` writes ``DIR/step_K.usdf`` when
the step count reaches K (steps are counted on from the restart file's step).  ``--trajectory``
writes ``step,time,<coordinate>...`` after every step, floats with full precision (repr).

Exit codes: 0 success, 1 a model or state that does not fit (invalid, unknown joints, wrong DOF
counts), 2 usage or I/O error (also: the engine's package is not installed).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from robot_state_format import options
from robot_state_format.cli._common import add_model_options, report_error, split_xacro_items
from robot_state_format.cli._kernel import numpy_kinematics
from robot_state_format.errors import ConversionError, ModelIOError, RobotStateFormatError
from robot_state_format.limits import input_problem, shown_path
from robot_state_format.model.loader import load_model_file
from robot_state_format.output_dirs import ensure_directory, open_output_file, output_file_problem
from robot_state_format.sim.mjcf_writer import DEFAULT_DT
from robot_state_format.sim.run import make_sim
from robot_state_format.sim.run import run as run_steps
from robot_state_format.usdf.reader import read_world_state_file
from robot_state_format.usdf.simulator_state import find_simulator_state

PROG = "robot-state-format sim"


def register(subparsers: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    p = subparsers.add_parser("sim", help="simulate a model (MuJoCo, Drake) with USDF restart files",
                              description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = p.add_subparsers(dest="sim_command", metavar="ACTION")
    p.set_defaults(func=lambda a: (p.print_help(sys.stderr), 2)[1])
    r = sub.add_parser("run", help="a headless passive run (gravity, no control)")
    r.add_argument("model", metavar="MODEL", help="URDF, xacro or SDFormat file")
    r.add_argument("--engine", required=True, choices=("mujoco", "drake"))
    r.add_argument("--steps", required=True, type=options.count(0, 10**9), metavar="N")
    r.add_argument("--dt", type=options.positive_seconds, default=None, metavar="S",
                   help="time step in seconds [the restart file's, else 0.002]")
    r.add_argument("--restart", metavar="STATE.usdf", help="start from this restart file")
    r.add_argument("--save-at", type=options.count(0, 10**9), nargs="+", action="extend", default=[], metavar="K",
                   help="write DIR/step_K.usdf when the step count reaches K (repeatable)")
    out = r.add_argument("-o", "--output", dest="out", default=".", metavar="DIR", help="directory for --save-at files [.]")
    options.old_spelling(r, out, "--out")  # the previous release's spelling
    r.add_argument("--trajectory", metavar="FILE.csv", help="one row per step: step,time,<coordinates>")
    r.add_argument("--floating-base", action="store_true",
                   help="give a URDF robot's root link a free joint (SDFormat models float unless static)")
    add_model_options(r)
    r.set_defaults(func=numpy_kinematics(_run))


def _run(args: argparse.Namespace) -> int:  # noqa: C901 (complexity 26): to be split, issue 38
    if args.steps < 0:
        print(f"{PROG}: error: --steps must be >= 0", file=sys.stderr)
        return 2
    for option, given, problem in (("MODEL", args.model, input_problem(args.model)),
                                   ("--restart", args.restart, args.restart and input_problem(args.restart)),
                                   ("--trajectory", args.trajectory, args.trajectory and output_file_problem(args.trajectory))):
        if problem:  # missing, a FIFO, a device, a directory, a name too long: refused before anything runs
            print(f"{PROG}: error: {option} {shown_path(given)}: {problem}", file=sys.stderr)
            return 2
    problem = ensure_directory(Path(args.out), "--output").problem if args.save_at else None
    if problem is not None:  # a FIFO or a file as --output: said before the run, not after it
        print(f"{PROG}: error: {problem}", file=sys.stderr)
        return 2
    dt = DEFAULT_DT if args.dt is None else args.dt
    state = None
    if args.restart is not None:
        try:
            state = read_world_state_file(args.restart).state
            ext = find_simulator_state(state, args.engine)
        except RobotStateFormatError as exc:
            if getattr(exc, "code", None) == "USDF_IO":
                print(f"{PROG}: error: {exc}", file=sys.stderr)
                return 2
            return report_error(PROG, exc, args.restart)
        if args.dt is None and ext is not None and ext.dt is not None:
            dt = ext.dt  # continue with the run's own time step
    if not dt > 0:
        print(f"{PROG}: error: --dt must be positive", file=sys.stderr)
        return 2
    try:
        _, xargs = split_xacro_items([], args.xacro_arg)
    except ValueError as exc:
        print(f"{PROG}: error: {exc}", file=sys.stderr)
        return 2
    try:
        model = load_model_file(args.model, xacro_args=xargs, search_paths=args.search_path)
    except RobotStateFormatError as exc:
        return report_error(PROG, exc, args.model)
    try:
        sim = make_sim(args.engine, model, dt=dt, floating_base=True if args.floating_base else None)
    except ConversionError as exc:
        code = 2 if "not installed" in str(exc) else 1
        print(f"{PROG}: error: {exc}", file=sys.stderr)
        return code
    if args.restart is not None and state is not None:
        try:
            for w in sim.restore(state, file=args.restart):
                print(f"{args.restart}: warning: {w}", file=sys.stderr)
        except ModelIOError as exc:
            print(f"{PROG}: error: {exc}", file=sys.stderr)
            return 2
        except RobotStateFormatError as exc:
            if getattr(exc, "code", None) == "USDF_IO":
                print(f"{PROG}: error: {exc}", file=sys.stderr)
                return 2
            return report_error(PROG, exc, args.restart)
    end = sim.step_count + args.steps
    bad = [k for k in args.save_at if not sim.step_count <= k <= end]
    if bad:
        print(f"{PROG}: error: --save-at {bad[0]} is outside this run's steps {sim.step_count}..{end}",
              file=sys.stderr)
        return 2
    for note in getattr(sim, "notes", []):
        print(f"{args.model}: warning: {note}", file=sys.stderr)
    traj = None
    first = sim.step_count
    try:
        if args.trajectory is not None:  # a FIFO, a device or a directory is refused, never opened blocking
            traj = open_output_file(args.trajectory)
        saved = run_steps(sim, args.steps, save_at=args.save_at, out_dir=args.out, trajectory=traj)
    except OSError as exc:
        print(f"{PROG}: error: {shown_path(exc.filename or '')}: {exc.strerror or exc}", file=sys.stderr)
        return 2
    except RobotStateFormatError as exc:  # the engine failed (or died): no header-only trajectory
        if traj is not None and sim.step_count == first:
            traj.close()
            Path(args.trajectory).unlink(missing_ok=True)
        return report_error(PROG, exc, args.model)
    finally:
        if traj is not None:
            traj.close()
    for p in saved:
        print(f"saved {p}")
    print(f"{args.engine}: {args.steps} steps of {sim.dt!r} s, now step {sim.step_count}, time {sim.time!r} s")
    return 0

