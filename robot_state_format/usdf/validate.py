"""Validate world_state documents: against the published XSD, and against a robot :class:`Model`.

Model checks (diagnostic codes):

* ``USDF_UNKNOWN_MODEL`` / ``USDF_UNKNOWN_LINK`` / ``USDF_UNKNOWN_JOINT`` — names the model lacks;
* ``USDF_DOF_MISMATCH`` — positions ≠ nq, velocities or torques ≠ nv of the joint type;
* ``USDF_BAD_QUATERNION`` — a ball/floating quaternion that is not unit length (1e-6);
* ``USDF_POSITION_LIMIT`` (warning) — a position outside the joint's limits;
* ``USDF_POSE_MISMATCH`` — with ``check_poses``, a link_state or nested model_state pose that
  differs from forward kinematics of the joint positions by more than ``tolerance``;
* ``USDF_MODEL_NOT_DESCRIBED`` (warning) — a model_state the model does not describe (not checked);
* ``USDF_NON_FINITE`` — a joint_state holding NaN or an infinity (a state built in code; the reader
  and the writer refuse them);
* with ``complete`` (a state to replay or restore onto the model):  ``USDF_MODEL_MISSING`` — a model
  file's state has no model_state named as the model (reported alone); ``USDF_MISSING_POSITIONS`` —
  a moving joint (mimic followers excepted) without positions.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from functools import lru_cache
from importlib import resources
from itertools import chain

import numpy as np
from lxml import etree

from robot_state_format.errors import Diagnostic, Severity, UsdfError
from robot_state_format.kinematics.fk import forward
from robot_state_format.kinematics.tree import compile_model
from robot_state_format.model.types import JointType, Limits, Model
from robot_state_format.model.xml import parse_xml, safe_parser
from robot_state_format.spatial import Transform, pose6_to_transform
from robot_state_format.usdf.layout import ModelLayout
from robot_state_format.usdf.types import JointState, ModelState, WorldState


@lru_cache(maxsize=1)
def schema() -> etree.XMLSchema:
    """The published XSD (package data ``usdf/schema/usdf.xsd``)."""
    path = resources.files("robot_state_format.usdf") / "schema" / "usdf.xsd"
    data = path.read_bytes()
    # base_url: the xs:import of the simulator-state schema (usdf-simulator.xsd) resolves beside it
    return etree.XMLSchema(etree.fromstring(data, safe_parser(), base_url=str(path)))


def validate_schema(data: str | bytes, *, file: str = "<string>") -> list[Diagnostic]:
    """XSD violations of a document (empty when valid); malformed XML is a ``USDF_XML_*`` error."""
    root, _ = parse_xml(data, file, error_type=UsdfError, code_prefix="USDF_XML",
                        description=False)
    xsd = schema()
    if xsd.validate(root):
        return []
    return [Diagnostic("USDF_SCHEMA", e.message, file, e.line) for e in xsd.error_log]


def validate_against_model(
    state: WorldState,
    model: Model,
    *,
    file: str = "<string>",
    check_poses: bool = False,
    tolerance: float = 1e-6,
    complete: bool = False,
) -> list[Diagnostic]:
    """Every inconsistency between ``state`` and ``model`` (errors and warnings).

    ``complete``: the state must describe the whole model, as a restart file replayed onto it does
    (see the module docstring)."""
    out: list[Diagnostic] = []
    if complete and not model.is_world and state.model(model.name) is None:
        have = ", ".join(repr(m.name) for m in state.model_states) or "none"
        return [Diagnostic("USDF_MODEL_MISSING", f"no model_state named {model.name!r} (the file has {have})",
                           file, None, None)]
    layout = ModelLayout(model)
    joints = {**model.constraints, **model.joints}
    links = model.links

    def diag(code: str, msg: str, where: str, sev: Severity = Severity.ERROR) -> None:
        out.append(Diagnostic(code, msg, file, None, where, sev))

    matched = match_model_states(state, model, layout)
    matched_ids = {id(m) for m in matched.values()}
    for ms in state.model_states:
        if id(ms) not in matched_ids:
            if model.is_world:
                diag("USDF_UNKNOWN_MODEL", f"model {ms.name!r} is not in world {model.name!r}",
                     f"model_state[name={ms.name}]")
            else:
                diag("USDF_MODEL_NOT_DESCRIBED", f"model_state {ms.name!r} is not {model.name!r}; not checked",
                     f"model_state[name={ms.name}]", Severity.WARNING)

    for path, ms in matched.items():
        prefix = f"{path}::" if path else ""
        for ls in ms.link_states:
            if f"{prefix}{ls.name}" not in links:
                diag("USDF_UNKNOWN_LINK", f"model {_label(model, path)!r} has no link {ls.name!r}",
                     f"link_state[name={ls.name}]")
        for js in ms.joint_states:
            joint = joints.get(f"{prefix}{js.name}")
            if joint is None:
                diag("USDF_UNKNOWN_JOINT", f"model {_label(model, path)!r} has no joint {js.name!r}",
                     f"joint_state[name={js.name}]")
                continue
            _check_joint(js, joint.type, joint.limits, joint.limits2, diag)
            if not all(map(math.isfinite, chain(js.positions or (), js.velocities or (), js.torques or ()))):
                diag("USDF_NON_FINITE", f"joint {js.name!r} has a non-finite value", f"joint_state[name={js.name}]")
        for nested in ms.model_states:
            if f"{prefix}{nested.name}" not in layout.slots:
                diag("USDF_UNKNOWN_MODEL", f"model {_label(model, path)!r} has no nested model {nested.name!r}",
                     f"model_state[name={nested.name}]")
    if complete:
        out.extend(_missing_positions(model, matched, file))
    if check_poses and not any(d.severity is Severity.ERROR for d in out):
        out.extend(_check_poses(state, model, layout, matched, file, tolerance))
    return out


def validate_world_against_models(
    state: WorldState,
    models: Mapping[str, Model],
    *,
    file: str = "<string>",
    check_poses: bool = False,
    tolerance: float = 1e-6,
) -> list[Diagnostic]:
    """A world of several robots: each top-level model_state named in ``models`` checked against its
    model (as :func:`validate_against_model`, the ``where`` of each diagnostic prefixed with the
    model_state name); a model_state ``models`` does not name is a ``USDF_MODEL_NOT_DESCRIBED`` warning
    and a name of ``models`` the state lacks a ``USDF_UNKNOWN_MODEL`` error."""
    out: list[Diagnostic] = []
    for ms in state.model_states:
        model = models.get(ms.name)
        if model is None:
            out.append(Diagnostic("USDF_MODEL_NOT_DESCRIBED", f"model_state {ms.name!r} has no model; not checked",
                                  file, None, f"model_state[name={ms.name}]", Severity.WARNING))
            continue
        if model.is_world:  # the model_state holds the world's models nested
            single = WorldState(model.name, state.version, state.stamp, [], list(ms.model_states))
        else:
            single = WorldState(state.name, state.version, state.stamp, [],
                                [ModelState(model.name, None, ms.pose, ms.twist, ms.link_states, ms.joint_states,
                                            ms.model_states)])
        for d in validate_against_model(single, model, file=file, check_poses=check_poses, tolerance=tolerance):
            where = f"model_state[name={ms.name}]" + (f"/{d.element}" if d.element else "")
            out.append(Diagnostic(d.code, d.message, d.file, d.line, where, d.severity))
    for name in models:
        if state.model(name) is None or "::" in name:
            out.append(Diagnostic("USDF_UNKNOWN_MODEL", f"the state has no top-level model_state {name!r}", file,
                                  None, None))
    return out


def _missing_positions(model: Model, matched: dict[str, ModelState], file: str) -> list[Diagnostic]:
    """``USDF_MISSING_POSITIONS`` naming the moving joints (mimic followers excepted) without positions."""
    given = {f"{path}::{js.name}" if path else js.name
             for path, ms in matched.items() for js in ms.joint_states if js.positions is not None}
    missing = [j.name for j in model.joints.values() if j.is_moving and not j.mimic and j.name not in given]
    if not missing:
        return []
    more = f" and {len(missing) - 10} more" if len(missing) > 10 else ""
    return [Diagnostic("USDF_MISSING_POSITIONS",
                       f"no positions for moving joint(s) {', '.join(map(repr, missing[:10]))}{more}", file, None, None)]


def _label(model: Model, path: str) -> str:
    return model.scoped(path) if path or not model.is_world else model.name


def match_model_states(state: WorldState, model: Model, layout: ModelLayout | None = None
                       ) -> dict[str, ModelState]:
    """Model path → the model_state describing it (a single robot also matches a lone model_state)."""
    layout = layout or ModelLayout(model)
    out: dict[str, ModelState] = {}
    for path, slot in layout.slots.items():
        ms = state.model(slot.usdf_path[0])
        if ms is None and not model.is_world and len(state.model_states) == 1:
            ms = state.model_states[0]
        for part in slot.usdf_path[1:]:
            ms = ms.model(part) if ms is not None else None
        if ms is not None:
            out[path] = ms
    return out


Report = Callable[..., None]


def _check_joint(js: JointState, jtype: JointType, limits: Limits | None, limits2: Limits | None,
                 report: Report) -> None:
    where = f"joint_state[name={js.name}]"
    nq, nv = jtype.nq, jtype.nv
    if js.positions is not None and len(js.positions) != nq:
        report("USDF_DOF_MISMATCH", f"{jtype.value} joint needs {nq} positions, got {len(js.positions)}",
               where)
        return
    for what, vals in (("velocities", js.velocities), ("torques", js.torques)):
        if vals is not None and len(vals) != nv:
            report("USDF_DOF_MISMATCH", f"{jtype.value} joint needs {nv} {what}, got {len(vals)}",
                   where)
    if js.positions is None:
        return
    if jtype in (JointType.BALL, JointType.FLOATING):
        quat = js.positions[-4:]
        norm = math.sqrt(sum(v * v for v in quat))
        if abs(norm - 1.0) > 1e-6:
            report("USDF_BAD_QUATERNION", f"quaternion (x y z w) has norm {norm:.9g}, not 1",
                   where)
        return
    bounded = {JointType.REVOLUTE: [limits], JointType.PRISMATIC: [limits], JointType.SCREW: [limits],
               JointType.UNIVERSAL: [limits, limits2], JointType.REVOLUTE2: [limits, limits2]}
    for k, lim in enumerate(bounded.get(jtype, [])):
        if lim is None:
            continue
        lower, upper = lim.lower, lim.upper
        value = js.positions[k]
        if lower is not None and upper is not None and lower > upper:
            continue  # inverted limits mean "unlimited" in some tools; the model reader reports them
        if (lower is not None and value < lower) or (upper is not None and value > upper):
            report("USDF_POSITION_LIMIT", f"position {value!r} outside limits [{lower}, {upper}]",
                   where, Severity.WARNING)


def _check_poses(state: WorldState, model: Model, layout: ModelLayout, matched: dict[str, ModelState],
                 file: str, tolerance: float) -> list[Diagnostic]:
    tree = compile_model(model)
    positions: dict[str, list[float]] = {}
    moving = set(tree.moving_joint_names)
    for path, ms in matched.items():
        prefix = f"{path}::" if path else ""
        for js in ms.joint_states:
            if js.positions is not None and f"{prefix}{js.name}" in moving:
                positions[f"{prefix}{js.name}"] = list(js.positions)
    missing = [n for n in tree.moving_joint_names if n not in positions]
    if missing:
        return [Diagnostic("USDF_POSES_UNCHECKED", f"poses not checked: no positions for {len(missing)} joint(s) "
                           f"({', '.join(missing[:5])})", file, None, None, Severity.WARNING)]
    q = tree.q_from_mapping(positions)
    if isinstance(q, tuple):
        q = q[0]
    poses = forward(tree, q)
    link_pose = {n: poses[i] for i, n in enumerate(tree.link_names)}
    out: list[Diagnostic] = []
    frames = {p: layout.frame_in_root(p, link_pose) for p in layout.slots}
    for path, ms in matched.items():
        prefix = f"{path}::" if path else ""
        inv_m = np.linalg.inv(frames[path])
        for ls in ms.link_states:
            name = f"{prefix}{ls.name}"
            if ls.pose is None or name not in link_pose:
                continue
            _compare(inv_m @ link_pose[name], ls.pose, tolerance, f"link_state[name={ls.name}]", file, out)
        parent = layout.parent_path(path)
        if parent is not None and ms.pose is not None:
            expected = np.linalg.inv(frames[parent]) @ frames[path]
            _compare(expected, ms.pose, tolerance, f"model_state[name={ms.name}]", file, out)
    return out


def _compare(expected: Transform, pose: tuple[float, ...], tol: float, where: str, file: str,
             out: list[Diagnostic]) -> None:
    got = pose6_to_transform(pose)
    dp = float(np.linalg.norm(expected[:3, 3] - got[:3, 3]))
    da = float(np.linalg.norm(expected[:3, :3].T @ got[:3, :3] - np.eye(3))) / math.sqrt(2.0)  # ~ angle
    if dp > tol or da > tol:
        out.append(Diagnostic("USDF_POSE_MISMATCH", f"pose differs from the kinematics of the joint positions "
                              f"by {dp:.3g} m, {da:.3g} rad (tolerance {tol:g})", file, None, where))
