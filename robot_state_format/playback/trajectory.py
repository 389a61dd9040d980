"""The joint-state source's values, without ROS: a sweep that follows from the stamp, or fixed values.

* :func:`channels` / :func:`sample` / :func:`sample_at_stamp`: joint ``k`` follows
  ``centre + amplitude * sin(2 pi f t + k)``, ``f = 0.25 Hz``, inside its limits (half the range about
  the middle) or +/-0.5 (rad or m) when unlimited; quaternion joints (ball, floating) turn slowly about
  z; velocities are the exact derivatives. ``t`` is the stamp modulo the 4 s period, so the values of
  any message follow from its stamp alone.
* :func:`fixed_positions`: given values, every other moving, non-mimic joint at 0 (the middle of its
  limits when 0 is outside them; the identity for quaternion joints), as joint_state_publisher does.
* :func:`read_mapping_file` / :func:`positions_mapping`: those values from JSON/YAML.

Multi-DOF joints are MoveIt's sub-joints ``<joint>/<dof>`` (the state cache's table).
"""

from __future__ import annotations

import json
import math
import reprlib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from robot_state_format.errors import RobotStateFormatError
from robot_state_format.limits import input_problem, os_error_text, read_input_file, shown_path
from robot_state_format.model.types import Joint, JointType, Limits, Model
from robot_state_format.options import json_object
from robot_state_format.playback.fit import check_fit
from robot_state_format.playback.sub_joints import MULTI_DOF_SUFFIXES
from robot_state_format.usdf.reader import read_world_state_file

States = list[tuple[list[str], list[float]]]
"""Joint names and positions of each state a source publishes in turn."""

FREQ_HZ = 0.25
PERIOD_NS = 4_000_000_000  # 1 / FREQ_HZ: the sweep is periodic, so t = stamp mod period is exact
_IDENTITY = {JointType.BALL: [0.0, 0.0, 0.0, 1.0], JointType.FLOATING: [0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 1.0]}

Sample = tuple[list[str], list[float], list[float]]
"""JointState names, positions and velocities."""


class SourceError(RobotStateFormatError):
    """The values given to the joint-state source do not fit the model."""


class SourceIOError(SourceError):
    """The values file cannot be read (missing, a FIFO, a device, a directory, no permission): I/O."""


@dataclass(frozen=True)
class Channel:
    """One sinusoid of the sweep: a one-DOF joint or one sub-joint."""

    name: str
    centre: float
    amplitude: float
    phase: float


def _range(limits: Limits | None, default: float = 0.5) -> tuple[float, float]:
    if limits is not None and limits.lower is not None and limits.upper is not None and limits.upper > limits.lower:
        return (limits.lower + limits.upper) / 2.0, (limits.upper - limits.lower) / 4.0
    return 0.0, default


def channels(model: Model) -> tuple[list[Channel], list[tuple[str, str]]]:
    """Sinusoid channels of the model's moving joints, and quaternion joints (name, type)."""
    chans: list[Channel] = []
    quats: list[tuple[str, str]] = []
    k = 0
    for joint in model.joints.values():
        if not joint.is_moving or joint.mimic:
            continue
        suffixes = MULTI_DOF_SUFFIXES.get(joint.type)
        if suffixes is None:
            c, a = _range(joint.limits)
            chans.append(Channel(joint.name, c, a, float(k)))
        elif joint.type in (JointType.BALL, JointType.FLOATING):
            quats.append((joint.name, joint.type.value))
        else:
            for i, s in enumerate(suffixes):
                c, a = _range(joint.limits if i == 0 else joint.limits2)
                chans.append(Channel(f"{joint.name}/{s}", c, a, float(k + i)))
        k += 1
    return chans, quats


def sample(chans: list[Channel], quats: list[tuple[str, str]], t: float) -> Sample:
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


def sample_at_stamp(chans: list[Channel], quats: list[tuple[str, str]], stamp_ns: int) -> Sample:
    """The sweep's message stamped ``stamp_ns`` (what ``--sweep`` sends at that stamp)."""
    return sample(chans, quats, (int(stamp_ns) % PERIOD_NS) / 1e9)


def _default(joint: Joint) -> list[float]:
    if joint.type in _IDENTITY:
        return list(_IDENTITY[joint.type])
    out = []
    for lim in (joint.limits, joint.limits2)[:joint.nq]:
        lo = lim.lower if lim is not None and lim.lower is not None else -math.inf
        hi = lim.upper if lim is not None and lim.upper is not None else math.inf
        out.append(0.0 if lo <= 0.0 <= hi else (lo + hi) / 2.0)
    return out


def _finite(v: object) -> bool:
    """A finite JSON/YAML number (an integer of 400 digits is not: it does not fit a double)."""
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        return False
    try:
        return math.isfinite(float(v))
    except OverflowError:
        return False


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
            if not isinstance(values, list) or len(values) != joint.nq or not all(_finite(v) for v in values):
                raise SourceError(f"joint {name!r} ({joint.type.value}) needs {joint.nq} finite number(s), "
                                  f"got {reprlib.repr(value)}")  # bounded: a YAML alias bomb prints short
        suffixes = MULTI_DOF_SUFFIXES.get(joint.type)
        if suffixes is None:
            names.append(name)
        else:
            names += [f"{name}/{s}" for s in suffixes]
        pos += [float(v) for v in values]
    return names, pos, defaulted


def read_mapping_file(path: Path, model: Model) -> list[tuple[list[str], list[float]]]:
    """The states of a JSON/YAML values file: one mapping ``{joint: value}`` or a list of them."""
    try:  # the size-checked gate: a FIFO, a device, /dev/zero or a 2 GB file is refused before any read
        text = read_input_file(path).decode("utf-8")
    except OSError as exc:
        raise SourceIOError(f"{shown_path(path)}: cannot read: {os_error_text(exc)}") from None
    except UnicodeDecodeError as exc:
        raise SourceError(f"{shown_path(path)}: not UTF-8 text ({exc.reason})") from None
    is_yaml = path.suffix in (".yaml", ".yml")
    try:
        data = yaml.safe_load(text) if is_yaml else json.loads(text)
    except (yaml.YAMLError, ValueError, RecursionError) as exc:
        raise SourceError(f"{path}: not valid {'YAML' if is_yaml else 'JSON'}: {exc}") from None
    items = data if isinstance(data, list) else [data]
    if not items or not all(isinstance(d, dict) for d in items):
        raise SourceError(f"{path}: expected a mapping {{joint: value}} or a list of such mappings")
    return [fixed_positions(model, d)[:2] for d in items]


def read_values_file(path: Path, model: Model) -> States:
    """The states of ``--file``: a USDF restart file, or JSON/YAML holding a mapping or a list of them."""
    problem = input_problem(path)
    if problem is not None:  # missing, a directory, a FIFO, a name too long: never opened
        raise SourceIOError(f"{shown_path(path)}: {problem}, expected a .usdf, .json or .yaml file")
    if path.suffix != ".usdf":
        return read_mapping_file(path, model)
    state = read_world_state_file(path).state
    fit = check_fit(state, model)
    if not fit.ok:
        raise SourceError(f"{path}: does not fit model {model.name!r}: " + "; ".join(fit.problems))
    fields = fit.fields
    return [(list(fields.name), list(fields.position))]


def positions_mapping(text: str) -> dict[str, Any]:
    """``--positions``: JSON text, or the path of a JSON file; ValueError (a usage error) otherwise."""
    return json_object(text, "--positions")  # the one reader of JSON options (files through the size-checked gate)


__all__ = ["FREQ_HZ", "PERIOD_NS", "Channel", "Sample", "SourceError", "SourceIOError", "States", "channels", "fixed_positions",
           "positions_mapping", "read_mapping_file", "read_values_file", "sample", "sample_at_stamp"]
