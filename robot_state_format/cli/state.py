"""``robot-state-format state ...``: USDF world_state files (docs/usdf-spec.md, docs/usdf.md).

  state validate FILE [--model MODEL] [--lenient] [--check-poses]
  state from-model MODEL --positions JSON [--velocities JSON] [--efforts JSON] [-o FILE]
      (moving joints left out of --positions / --velocities are written as 0, with a warning)
  state export FILE --model MODEL --to mujoco-keyframe|sdf-state [-o OUT]
  state import FILE --from sdf-state [-o OUT]
  state plot FILE [--model MODEL] -o OUT.png

Exit codes (the table of ``robot-state-format --help``): 0 valid / done, 1 invalid input (an invalid
document or model, joint values that do not fit the model), 2 usage or I/O error.
Errors go to stderr as ``FILE:LINE: error: [CODE] text``; warnings likewise as ``warning``.
JSON arguments are JSON text or the path of a JSON file: ``{"joint": 0.5, "ball": [0, 0, 0, 1]}``.
"""

from __future__ import annotations

import argparse
import re
import sys
from collections.abc import Callable
from typing import Any

from lxml import etree

from robot_state_format import options
from robot_state_format.cli._common import json_mapping
from robot_state_format.cli._kernel import numpy_kinematics
from robot_state_format.errors import (
    ConversionError,
    Diagnostic,
    DiagnosticError,
    KinematicsError,
    ModelIOError,
    Severity,
)
from robot_state_format.kinematics.tree import CompiledTree, compile_model
from robot_state_format.limits import input_problem, read_input_file, shown_path
from robot_state_format.model.joint_limits import limit_warnings
from robot_state_format.model.loader import load_model_file
from robot_state_format.model.types import Model
from robot_state_format.model.xml import safe_parser
from robot_state_format.output_dirs import ensure_parent, output_file_problem
from robot_state_format.usdf.atomic import atomic_write
from robot_state_format.usdf.build import state_from_model
from robot_state_format.usdf.export.mujoco import load_mujoco_model, mujoco_keyframe
from robot_state_format.usdf.export.sdf_state import sdf_to_state, state_to_sdf
from robot_state_format.usdf.plot import plot_world_state
from robot_state_format.usdf.read_elements import MAX_SEC_DIGITS
from robot_state_format.usdf.reader import read_world_state_file
from robot_state_format.usdf.types import WorldState
from robot_state_format.usdf.validate import validate_against_model, validate_schema
from robot_state_format.usdf.writer import write_world_state

PROG = "robot-state-format state"


class _Usage(Exception):
    """A usage or I/O problem: exit code 2."""


def register(subparsers: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    p = subparsers.add_parser("state", help="USDF world_state files: validate, build, export, import, plot",
                              description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = p.add_subparsers(dest="state_command", metavar="ACTION")
    p.set_defaults(func=lambda a: (p.print_help(sys.stderr), 2)[1])

    v = sub.add_parser("validate", help="validate a world_state file (optionally against a model)")
    v.add_argument("file", metavar="FILE")
    v.add_argument("--model", metavar="MODEL", help="robot description to check names, DOFs and limits against")
    v.add_argument("--lenient", action="store_true", help="accept the proposal's spellings (root <world>)")
    v.add_argument("--check-poses", action="store_true",
                   help="with --model: link poses must match the kinematics of the joint positions")
    v.add_argument("--tolerance", type=options.non_negative, default=1e-6, help="pose tolerance (m, rad) [1e-6]")
    v.add_argument("--schema", action="store_true", help="also validate against the published XSD")
    v.add_argument("-q", "--quiet", action="store_true", help="no summary line")
    v.set_defaults(func=_validate)

    f = sub.add_parser("from-model", help="a world_state of a model at given joint values")
    f.add_argument("model", metavar="MODEL")
    f.add_argument("--positions", required=True, metavar="JSON", help="joint positions {name: value|[values]}")
    f.add_argument("--velocities", metavar="JSON", help="joint velocities (link twists are then written)")
    f.add_argument("--efforts", metavar="JSON", help="joint efforts (torques)")
    f.add_argument("--stamp", metavar="SEC[.NSEC]", help="time stamp, e.g. 12.000000500")
    f.add_argument("--name", help="world_state name (default: the model's)")
    f.add_argument("--compact", action="store_true", help="no indentation")
    f.add_argument("-o", "--output", metavar="FILE", help="write atomically to FILE (default: stdout)")
    f.set_defaults(func=_from_model)

    e = sub.add_parser("export", help="export a world_state to a simulator format")
    e.add_argument("file", metavar="FILE")
    e.add_argument("--model", required=True, metavar="MODEL",
                   help="mujoco-keyframe: the MJCF or URDF MuJoCo loads; sdf-state: the robot description the "
                        "state is validated against first")
    e.add_argument("--to", required=True, choices=("mujoco-keyframe", "sdf-state"))
    e.add_argument("--model-state", metavar="NAME", help="which model_state (when the state holds several)")
    free = e.add_argument("--floating-base", action="store_true", help="mujoco: give a URDF's root body a free joint")
    options.old_spelling(e, free, "--free-base")  # the previous release's spelling
    e.add_argument("-o", "--output", metavar="OUT")
    e.set_defaults(func=_export)

    i = sub.add_parser("import", help="import a simulator state into USDF")
    i.add_argument("file", metavar="FILE")
    i.add_argument("--from", dest="source", required=True, choices=("sdf-state",))
    i.add_argument("-o", "--output", metavar="OUT")
    i.set_defaults(func=_import)

    pl = sub.add_parser("plot", help="draw a world_state's links and frames to a PNG")
    pl.add_argument("file", metavar="FILE")
    pl.add_argument("--model", metavar="MODEL", help="robot description (adds parent → child link edges)")
    pl.add_argument("--lenient", action="store_true")
    pl.add_argument("-o", "--output", required=True, metavar="OUT.png")
    pl.set_defaults(func=_plot)
    for q in (v, f, e, pl):
        q.add_argument("--xacro", action="store_true", help="expand the model as xacro whatever its name")


# --------------------------------------------------------------------------------------------


def _guard(func: Callable[[argparse.Namespace], int]) -> Callable[[argparse.Namespace], int]:
    """``func`` with this command's error → exit-code contract, run with numpy kinematics."""
    @numpy_kinematics
    def run(args: argparse.Namespace) -> int:
        try:
            return int(func(args))
        except _Usage as exc:
            print(f"{PROG}: error: {exc}", file=sys.stderr)
            return 2
        except DiagnosticError as exc:
            if exc.code.endswith("_IO"):
                for d in exc.diagnostics:
                    print(d.format(), file=sys.stderr)
                return 2
            _print(exc.diagnostics)
            return 1
        except (ModelIOError, OSError) as exc:
            print(f"{PROG}: error: {exc}", file=sys.stderr)
            return 2
        except (KinematicsError, ConversionError) as exc:
            print(f"{PROG}: error: {exc}", file=sys.stderr)
            return 1
    return run


def _print(diags: list[Diagnostic]) -> None:
    errors = [d for d in diags if d.severity is Severity.ERROR]
    for d in errors + [d for d in diags if d.severity is not Severity.ERROR]:
        print(d.format(), file=sys.stderr)


def _need_file(path: str, what: str) -> None:
    """A usage error unless ``path`` is a file: a directory is named as one, not as a missing file."""
    problem = input_problem(path)  # never raises (a name too long) nor opens (a FIFO)
    if problem == "no such file or directory":
        raise _Usage(f"{shown_path(path)}: no such {what}")
    if problem is not None:
        raise _Usage(f"{shown_path(path)}: {problem.replace('not a regular file', f'expected a {what}')}")


def _load_model(path: str, xacro: bool = False) -> Model:
    _need_file(path, "model file")
    return load_model_file(path, xacro=xacro)


def _locate(diags: list[Diagnostic], path: str) -> list[Diagnostic]:
    """Give a line to diagnostics that name an element (``joint_state[name=j]``) but no line: the
    first element of that tag and name in the file (checks against a model work on the parsed state)."""
    if all(d.line is not None or not d.element for d in diags):
        return diags
    try:
        root = etree.fromstring(read_input_file(path), safe_parser())  # the gate, as every read
    except (OSError, etree.LxmlError):
        return diags
    lines: dict[tuple[str, str], int] = {}
    for el in root.iter():
        if isinstance(el.tag, str) and el.get("name") is not None and el.sourceline:
            lines.setdefault((etree.QName(el).localname, el.get("name")), int(el.sourceline))
    out = []
    for d in diags:
        m = re.fullmatch(r"([A-Za-z_]+)\[name=(.*)\]", d.element or "")
        line = lines.get((m.group(1), m.group(2))) if m and d.line is None else None
        out.append(Diagnostic(d.code, d.message, d.file, line, d.element, d.severity) if line else d)
    return out


def _read_state(path: str, lenient: bool = False) -> WorldState:
    res = read_world_state_file(path, lenient=lenient)
    for w in res.warnings:
        print(w.format(), file=sys.stderr)
    return res.state


def _json_arg(text: str | None, what: str) -> dict[str, Any] | None:
    if text is None:
        return None
    try:
        return json_mapping(text, f"--{what}")
    except ValueError as exc:
        raise _Usage(str(exc)) from None


def _output_folder(output: str) -> None:
    """The folders of ``-o`` made when missing (a usage/I-O error when they cannot be); a FIFO, a
    device or a directory as ``-o`` is refused before anything is computed or written."""
    problem = output_file_problem(output)
    problem = f"{shown_path(output)}: {problem}" if problem is not None else ensure_parent(output)
    if problem is not None:
        raise _Usage(problem)


def _emit(text: str, output: str | None) -> None:
    if output is None:
        sys.stdout.write(text)
        return
    _output_folder(output)
    atomic_write(output, text.encode("utf-8"))


# --------------------------------------------------------------------------------------------


@_guard
def _validate(args: argparse.Namespace) -> int:
    _need_file(args.file, "world_state file")
    model = _load_model(args.model, args.xacro) if args.model else None
    state = _read_state(args.file, args.lenient)
    diags: list[Diagnostic] = []
    if args.schema:
        diags += validate_schema(read_input_file(args.file), file=args.file)
    if model is not None:
        diags += [Diagnostic(d.code, d.message, args.file, d.line, d.element, d.severity)
                  for d in validate_against_model(state, model, file=args.file, check_poses=args.check_poses,
                                                  tolerance=args.tolerance)]
    diags = _locate(diags, args.file)
    _print(diags)
    if any(d.severity is Severity.ERROR for d in diags):
        return 1
    if not args.quiet:
        n_links = sum(len(m.link_states) for m in state.model_states)
        print(f"{args.file}: valid world_state {state.name!r}: {len(state.model_states)} model_states, "
              f"{n_links} link_states, {len(state.frames)} frames"
              + (f", consistent with {args.model}" if model is not None else ""))
    return 0


def _parse_stamp(text: str | None) -> tuple[int, int] | None:
    if text is None:
        return None
    sec, _, frac = text.partition(".")
    shown = text if len(text) <= 40 else f"{text[:20]}...({len(text)} characters)"
    if not (sec.isascii() and sec.isdigit()) or (frac and not (frac.isascii() and frac.isdigit() and len(frac) <= 9)):
        raise _Usage(f"--stamp {shown!r}: expected SEC or SEC.FRACTION (digits; up to 9 after the point)")
    if len(sec) > MAX_SEC_DIGITS:  # what a USDF reader takes (and int() converts in bounded time)
        raise _Usage(f"--stamp {shown!r}: SEC has {len(sec)} digits, at most {MAX_SEC_DIGITS}")
    return int(sec), int(frac.ljust(9, "0")) if frac else 0


@_guard
def _from_model(args: argparse.Namespace) -> int:
    positions = _json_arg(args.positions, "positions") or {}
    velocities = _json_arg(args.velocities, "velocities")
    efforts = _json_arg(args.efforts, "efforts")
    stamp = _parse_stamp(args.stamp)
    model = _load_model(args.model, args.xacro)
    tree = compile_model(model)  # a joint name or value that does not fit the model: KinematicsError, exit 1
    state = state_from_model(model, positions, velocities, efforts, stamp, tree=tree, name=args.name)
    _print(_defaulted(tree, args.model, positions, velocities))
    for w in limit_warnings(model, positions, tree.resolve_joint):  # written as given, named on stderr
        print(f"{PROG} from-model: warning: {w}", file=sys.stderr)
    _emit(write_world_state(state, pretty=not args.compact), args.output)
    return 0


def _defaulted(tree: CompiledTree, model_file: str, positions: dict[str, Any], velocities: dict[str, Any] | None
               ) -> list[Diagnostic]:
    """Warnings naming the moving joints left out of --positions / --velocities (written as zero)."""
    out: list[Diagnostic] = []
    for what, given, value in (("positions", positions, "0 (identity quaternion for ball and floating joints)"),
                               ("velocities", velocities, "0")):
        if given is None:
            continue
        named = {tree.resolve_joint(str(n)) for n in given}
        missing = [j for j in tree.moving_joint_names if j not in named]
        if missing:
            out.append(Diagnostic("USDF_JOINT_DEFAULTED", f"{len(missing)} joint(s) not in --{what}, written as "
                                  f"{value}: {', '.join(missing)}", model_file, None, None, Severity.WARNING))
    return out


@_guard
def _export(args: argparse.Namespace) -> int:
    state = _read_state(args.file)
    if args.to == "sdf-state":
        problems = _locate(validate_against_model(state, _load_model(args.model, args.xacro), file=args.file), args.file)
        _print(problems)
        if any(d.severity is Severity.ERROR for d in problems):
            return 1
        text, warnings = state_to_sdf(state)
        _print(warnings)
        _emit(text, args.output)
        return 0
    _need_file(args.model, "model file")
    spec = load_mujoco_model(args.model, free_base=args.floating_base, strip_geometry=True)
    try:
        mj = spec.compile()
    except Exception as exc:  # noqa: BLE001 MuJoCo's compiler errors are ValueError; any is exit 1 with its text
        raise ConversionError(f"{args.model}: MuJoCo cannot compile it: {exc}") from None
    text, unmapped = mujoco_keyframe(state, mj, model_state=args.model_state)
    for w in unmapped:
        print(f"{args.file}: warning: [USDF_MUJOCO_UNMAPPED] {w}", file=sys.stderr)
    _emit(text, args.output)
    return 0


@_guard
def _import(args: argparse.Namespace) -> int:
    try:
        data = read_input_file(args.file)
    except OSError as exc:
        raise _Usage(f"{args.file}: cannot read: {exc.strerror}") from None
    read = sdf_to_state(data, file=args.file)
    state, warnings = read.state, read.warnings
    _print(warnings)
    _emit(write_world_state(state), args.output)
    return 0


@_guard
def _plot(args: argparse.Namespace) -> int:
    _need_file(args.file, "world_state file")
    _output_folder(args.output)
    model = _load_model(args.model, args.xacro) if args.model else None
    state = _read_state(args.file, args.lenient)
    out = plot_world_state(state, args.output, model=model)
    print(f"wrote {out}")
    return 0
