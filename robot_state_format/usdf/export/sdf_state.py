"""SDFormat 1.12 ``<state>`` ↔ USDF.

Written (``state_to_sdf``)::

    <sdf version="1.12"><world name="W"><state world_name="W">
      <sim_time>SEC NSEC</sim_time> <iterations>0</iterations>
      <model_state name="M">
        <joint_state name="J">                  (1 or 2 DOF: revolute, prismatic, universal, ...)
          <axis_state><position>q0</position><velocity>v0</velocity></axis_state>
          <axis2_state><position>q1</position><velocity>v1</velocity></axis2_state>
        </joint_state>
        <joint_state name="B">                  (more than 2 DOF: ball, planar, floating)
          <angle axis="0">q0</angle>...         (deprecated in 1.12, the only form that holds them)
        </joint_state>
        <model_state name="NESTED">...</model_state>
        <pose>X_world_M (top level) | X_parent_M (nested)</pose>
        <link_state name="L">
          <linear_velocity>, <angular_velocity>  (of the link frame, relative to and expressed in the world)
          <linear_wrench>, <angular_wrench>      (expressed in the world; torque about the link origin)
          <pose relative_to="__model__">X_M_L</pose>
        </link_state>
      </model_state>
    </state></world></sdf>

Joints (sdf/1.12/joint_state.sdf): a joint with at most two positions and two velocities is
written as ``<axis_state>`` / ``<axis2_state>`` holding ``<position>`` and ``<velocity>`` (radians,
or metres, no ``degrees`` attribute); an absent position or velocity is left out, never written
as 0.  Joints with more DOF (ball ``qx qy qz qw``, planar, floating) have no axis_state form:
their positions are written as the deprecated ``<angle axis="i">`` elements in the USDF order
(warning ``USDF_SDF_JOINT_ANGLE_DEPRECATED``) and their velocities are dropped.  Torques have no
SDFormat state element and are dropped (warning ``USDF_SDF_JOINT_RATES_DROPPED``, as for the
dropped velocities).  World-level ``<frame>``s have no SDFormat state element: they are folded
into the model poses.  Velocities and wrenches need the world pose (and, for velocities, the
twist) of their model; when unknown they are dropped, with a warning.

Read back (``sdf_to_state``: the state and the warnings):
``axis_state`` / ``axis2_state`` positions and velocities (``degrees="true"`` converted to radians),
and the older ``<angle axis="i">`` positions (axes must run 0, 1, ... without a gap; when an
axis_state is present the angles are ignored, with a warning).  A missing ``<position>`` stays
absent; an axis2_state value without the axis_state one is an error (USDF arrays cannot hold a
gap).  ``<acceleration>`` has no USDF field: ignored, with a warning.  Link poses without
``relative_to`` (or ``relative_to="world"``) are world poses (the Gazebo-classic convention) and
are made model-relative; in a model without ``<pose>`` they cannot be, and are dropped with a
warning, as are poses relative to other frames.  World velocities become model-frame twists
assuming the model frame is at rest (its twist is then written as zero).
"""

from __future__ import annotations

import math
from typing import Any, NamedTuple, cast

import numpy as np

from robot_state_format.errors import Diagnostic, Severity, UsdfError
from robot_state_format.model.xml import parse_xml
from robot_state_format.spatial import pose6_to_transform, transform_to_pose6
from robot_state_format.usdf.reader import ReadResult
from robot_state_format.usdf.resolve import world_poses
from robot_state_format.usdf.types import JointState, LinkState, ModelState, Stamp, Vec6, WorldState
from robot_state_format.usdf.writer import escape_name, format_floats

SDF_VERSION = "1.12"


class SdfText(NamedTuple):
    """An SDFormat document written from a state: its ``text`` and the ``warnings`` (what could not be kept)."""

    text: str
    warnings: list[Diagnostic]


def state_to_sdf(state: WorldState, *, pretty: bool = True) -> SdfText:
    """The SDFormat 1.12 document holding ``state`` as a ``<state>``, and what could not be kept."""
    warnings: list[Diagnostic] = []
    wp = world_poses(state)
    nl = "\n" if pretty else ""
    ind = "  " if pretty else ""
    name = escape_name(state.name)
    out = [f'<?xml version="1.0" encoding="UTF-8"?>{nl}<sdf version="{SDF_VERSION}">{nl}',
           f'{ind}<world name="{name}">{nl}{ind * 2}<state world_name="{name}">{nl}']
    pad = ind * 3
    if state.stamp is not None:
        out.append(f"{pad}<sim_time>{state.stamp.sec} {state.stamp.nanosec}</sim_time>{nl}")
    out.append(f"{pad}<iterations>0</iterations>{nl}")
    if state.frames:
        warnings.append(_warn("USDF_SDF_FRAMES_FOLDED", f"{len(state.frames)} world frame(s) folded into "
                              "model poses (SDFormat states have no world frames)"))

    def twist_world(ms: ModelState, scoped: str, top: bool) -> tuple[np.ndarray, np.ndarray] | None:
        # world twist of the model frame: only for top-level models posed in the world
        if not top or ms.twist is None or ms.parent not in (None, "world"):
            return None
        return np.array(ms.twist[:3]), np.array(ms.twist[3:])

    def model(ms: ModelState, scoped: str, depth: int, top: bool, mtw: tuple[np.ndarray, np.ndarray] | None
              ) -> None:
        p, i2, i3 = ind * depth, ind * (depth + 1), ind * (depth + 2)
        out.append(f'{p}<model_state name="{escape_name(ms.name)}">{nl}')
        for js in ms.joint_states:
            _joint(out, js, f"{scoped}::{js.name}", i2, i3, ind, nl, warnings)
        xm = wp.get(scoped)
        for n in ms.model_states:
            ntw = None
            if mtw is not None and xm is not None and n.twist is not None and n.pose is not None:
                rm = xm[:3, :3]
                d = rm @ np.array(n.pose[:3])
                ntw = (mtw[0] + np.cross(mtw[1], d) + rm @ np.array(n.twist[:3]), mtw[1] + rm @ np.array(n.twist[3:]))
            model(n, f"{scoped}::{n.name}", depth + 1, False, ntw)
        if top:
            if xm is not None:
                out.append(f"{i2}<pose>{format_floats(transform_to_pose6(xm))}</pose>{nl}")
            elif ms.pose is not None:
                warnings.append(_warn("USDF_SDF_POSE_DROPPED", f"model {scoped}: its world pose is unknown "
                                      "(a parent has no pose); pose dropped"))
        elif ms.pose is not None:
            out.append(f"{i2}<pose>{format_floats(ms.pose)}</pose>{nl}")
        for ls in ms.link_states:
            out.append(f'{i2}<link_state name="{escape_name(ls.name)}">{nl}')
            xl = wp.get(f"{scoped}::{ls.name}")
            if ls.twist is not None:
                if mtw is None or xm is None or ls.pose is None:
                    warnings.append(_warn("USDF_SDF_VELOCITY_DROPPED", f"link {scoped}::{ls.name}: the model's "
                                          "world twist is unknown; velocity dropped"))
                else:
                    rm = xm[:3, :3]
                    d = rm @ np.array(ls.pose[:3])
                    v = mtw[0] + np.cross(mtw[1], d) + rm @ np.array(ls.twist[:3])
                    w = mtw[1] + rm @ np.array(ls.twist[3:])
                    out.append(f"{i3}<linear_velocity>{format_floats(v.tolist())}</linear_velocity>{nl}")
                    out.append(f"{i3}<angular_velocity>{format_floats(w.tolist())}</angular_velocity>{nl}")
            if ls.wrench is not None:
                if xl is None:
                    warnings.append(_warn("USDF_SDF_WRENCH_DROPPED", f"link {scoped}::{ls.name}: its world pose "
                                          "is unknown; wrench dropped"))
                else:
                    r = xl[:3, :3]
                    f = r @ np.array(ls.wrench[:3])
                    t = r @ np.array(ls.wrench[3:])
                    out.append(f"{i3}<linear_wrench>{format_floats(f.tolist())}</linear_wrench>{nl}")
                    out.append(f"{i3}<angular_wrench>{format_floats(t.tolist())}</angular_wrench>{nl}")
            if ls.pose is not None:
                out.append(f'{i3}<pose relative_to="__model__">{format_floats(ls.pose)}</pose>{nl}')
            out.append(f"{i2}</link_state>{nl}")
        out.append(f"{p}</model_state>{nl}")

    for ms in state.model_states:
        model(ms, ms.name, 3, True, twist_world(ms, ms.name, True))
    out.append(f"{ind * 2}</state>{nl}{ind}</world>{nl}</sdf>{nl}")
    return SdfText("".join(out), warnings)


_AXIS_TAGS = ("axis_state", "axis2_state")


def _joint(out: list[str], js: JointState, scoped: str, i2: str, i3: str, ind: str, nl: str,
           warnings: list[Diagnostic]) -> None:
    """One ``<joint_state>``: axis_state/axis2_state for up to 2 DOF, deprecated angles beyond."""
    pos, vel = js.positions or (), js.velocities or ()
    npos, nvel = len(pos), len(vel)
    if js.torques is not None:
        warnings.append(_warn("USDF_SDF_JOINT_RATES_DROPPED", f"joint {scoped}: torques have no SDFormat "
                              "state element; dropped"))
    name = escape_name(js.name)
    if npos == 0 and nvel == 0:
        out.append(f'{i2}<joint_state name="{name}"/>{nl}')
        return
    out.append(f'{i2}<joint_state name="{name}">{nl}')
    if npos <= 2 and nvel <= 2:
        i4 = i3 + ind
        for k in range(max(npos, nvel)):
            tag = _AXIS_TAGS[k]
            out.append(f"{i3}<{tag}>{nl}")
            if k < npos:
                out.append(f"{i4}<position>{format_floats((pos[k],))}</position>{nl}")
            if k < nvel:
                out.append(f"{i4}<velocity>{format_floats((vel[k],))}</velocity>{nl}")
            out.append(f"{i3}</{tag}>{nl}")
    else:
        if pos:
            warnings.append(_warn("USDF_SDF_JOINT_ANGLE_DEPRECATED", f"joint {scoped}: {npos} positions (more "
                                  "than 2 DOF) have no axis_state form; written as the deprecated "
                                  "<angle axis=\"i\"> elements"))
            for k, v in enumerate(pos):
                out.append(f'{i3}<angle axis="{k}">{format_floats((v,))}</angle>{nl}')
        if vel:
            warnings.append(_warn("USDF_SDF_JOINT_RATES_DROPPED", f"joint {scoped}: {nvel} velocities (more "
                                  "than 2 DOF) have no SDFormat state element; dropped"))
    out.append(f"{i2}</joint_state>{nl}")


def _warn(code: str, msg: str) -> Diagnostic:
    return Diagnostic(code, msg, "<output>", None, None, Severity.WARNING)


# --------------------------------------------------------------------------------------------


def sdf_to_state(data: str | bytes, *, file: str = "<string>") -> ReadResult:
    """The USDF state of the first SDFormat ``<state>`` in ``data`` and the warnings (what USDF cannot
    hold, or was dropped); ``UsdfError`` if there is none or it is malformed."""
    root, xml_warnings = parse_xml(data, file, error_type=UsdfError, code_prefix="USDF_XML",
                                   description=False)
    st = root if root.tag == "state" else next(iter(root.iter("state")), None)
    if st is None:
        raise UsdfError(Diagnostic("USDF_SDF_NO_STATE", "no <state> element", file, root.sourceline))
    reader = _StateReader(file, list(xml_warnings))
    state = WorldState(name=st.get("world_name") or "__default__", stamp=reader.stamp(st.find("sim_time")))
    for el in st.findall("model_state"):
        state.model_states.append(reader.model(el, None, True))
    if reader.errors:
        reader.errors.sort(key=lambda d: d.line or 0)
        raise UsdfError(reader.errors)
    return ReadResult(state, reader.warnings)


class _StateReader:
    """The elements of one SDFormat ``<state>`` read into USDF, errors and warnings collected."""

    def __init__(self, file: str, warnings: list[Diagnostic]) -> None:
        self.file = file
        self.errors: list[Diagnostic] = []
        self.warnings = warnings

    def error(self, code: str, msg: str, el: Any) -> None:
        self.errors.append(Diagnostic(code, msg, self.file, el.sourceline, _where(el)))

    def warn(self, code: str, msg: str, el: Any) -> None:
        self.warnings.append(Diagnostic(code, msg, self.file, el.sourceline, _where(el), Severity.WARNING))

    def vec6(self, el: Any) -> Vec6 | None:
        return cast("Vec6 | None", self.vec(el, 6))  # six numbers or None

    def vec(self, el: Any, n: int) -> tuple[float, ...] | None:
        text = (el.text or "").split()
        try:
            vals = tuple(float(t) for t in text)
        except ValueError:
            vals = ()
        if len(vals) != n or not all(np.isfinite(vals)):
            self.error("USDF_SDF_BAD_VALUE", f"<{el.tag}> needs {n} finite numbers", el)
            return None
        return vals

    def vec3_or_zero(self, el: Any) -> np.ndarray:
        """Three numbers of ``el`` (zeros when ``el`` is absent or malformed: the error is recorded)."""
        return np.array(self.vec(el, 3) or (0.0,) * 3) if el is not None else np.zeros(3)

    def scalar(self, el: Any) -> float | None:
        one = self.vec(el, 1)
        if one is None:
            return None
        deg = el.get("degrees")
        if deg is None:
            return one[0]
        flag = deg.strip().lower()
        if flag in ("true", "1"):
            return math.radians(one[0])
        if flag not in ("false", "0"):
            self.error("USDF_SDF_BAD_VALUE", f"degrees={deg!r} is not a boolean (true, false, 1, 0)", el)
            return None
        return one[0]

    def single(self, parent: Any, tag: str) -> Any:
        found = parent.findall(tag)
        for extra in found[1:]:
            self.error("USDF_SDF_DUPLICATE", f"more than one <{tag}> in <{parent.tag}>", extra)
        return found[0] if found else None

    def stamp(self, sim: Any) -> Stamp | None:
        if sim is None:
            return None
        parts = (sim.text or "").split()
        if len(parts) == 2 and all(p.isdigit() for p in parts) and int(parts[1]) < 10**9:
            return Stamp(int(parts[0]), int(parts[1]))
        self.error("USDF_SDF_BAD_VALUE", "<sim_time> needs 'sec nsec'", sim)
        return None

    def per_dof(self, vals: list[float | None], what: str, el: Any) -> tuple[float, ...] | None:
        """Axis values (None: absent) → a USDF array; an axis2 value without the axis one is an error."""
        while vals and vals[-1] is None:
            vals.pop()
        if not vals:
            return None
        if any(v is None for v in vals):
            self.error("USDF_SDF_AXIS_GAP", f"joint_state {el.get('name')!r}: axis2_state has a {what} but "
                       f"axis_state has none (USDF {what}s run from the first axis without a gap)", el)
            return None
        return tuple(v for v in vals if v is not None)

    def joint(self, j: Any) -> JointState:
        js = JointState(j.get("name") or "")
        axes = [self.single(j, tag) for tag in _AXIS_TAGS]
        angles = j.findall("angle")
        if axes[0] is not None or axes[1] is not None:
            if angles:
                self.warn("USDF_SDF_ANGLE_IGNORED", f"joint_state {js.name!r}: <angle> ignored, the axis_state "
                          "elements hold the state", angles[0])
            self.axis_states(js, j, axes)
        elif angles:
            self.angles(js, j, angles)
        return js

    def axis_states(self, js: JointState, j: Any, axes: list[Any]) -> None:
        pos: list[float | None] = []
        vel: list[float | None] = []
        for a in axes:
            if a is None:
                pos.append(None)
                vel.append(None)
                continue
            p_el, v_el = self.single(a, "position"), self.single(a, "velocity")
            pos.append(self.scalar(p_el) if p_el is not None else None)
            vel.append(self.scalar(v_el) if v_el is not None else None)
            acc = a.find("acceleration")
            if acc is not None:
                self.warn("USDF_SDF_ACCELERATION_IGNORED", f"joint_state {js.name!r}: <acceleration> has no "
                          "USDF field; ignored", acc)
        js.positions = self.per_dof(pos, "position", j)
        js.velocities = self.per_dof(vel, "velocity", j)

    def angles(self, js: JointState, j: Any, angles: list[Any]) -> None:
        by_axis: dict[int, float | None] = {}
        for a in angles:
            axis = (a.get("axis") or "").strip()
            if not axis.isdigit():
                self.error("USDF_SDF_BAD_VALUE", f"<angle axis={a.get('axis')!r}>: the axis must be an unsigned "
                           "integer", a)
                continue
            if int(axis) in by_axis:
                self.error("USDF_SDF_DUPLICATE", f"joint_state {js.name!r}: more than one "
                           f"<angle axis=\"{int(axis)}\">", a)
                continue
            one = self.vec(a, 1)
            by_axis[int(axis)] = one[0] if one is not None else None
        missing = sorted(set(range(max(by_axis, default=-1) + 1)) - set(by_axis))
        if missing:
            self.error("USDF_SDF_AXIS_GAP", f"joint_state {js.name!r}: <angle> axes {sorted(by_axis)} given but "
                       f"not {missing} (USDF positions run from axis 0 without a gap)", j)
            return
        given = [by_axis[k] for k in range(len(by_axis))]
        values = [v for v in given if v is not None]
        if values and len(values) == len(given):
            js.positions = tuple(values)

    def model(self, el: Any, parent_world: np.ndarray | None, top: bool) -> ModelState:
        ms = ModelState(name=el.get("name") or "")
        pose_el = el.find("pose")
        if pose_el is not None:
            ms.pose = self.vec6(pose_el)
        xm = None
        if ms.pose is not None:
            local = pose6_to_transform(ms.pose)
            xm = local if top else (parent_world @ local if parent_world is not None else None)
        for j in el.findall("joint_state"):
            ms.joint_states.append(self.joint(j))
        for n in el.findall("model_state"):
            ms.model_states.append(self.model(n, xm, False))
        moving = False
        for ls_el in el.findall("link_state"):
            ls = LinkState(ls_el.get("name") or "")
            self.link_pose(ls, ls_el, ms.name, xm)
            moving = self.link_twist(ls, ls_el, ms.name, xm) or moving
            self.link_wrench(ls, ls_el, ms.name, xm)
            ms.link_states.append(ls)
        if moving:
            ms.twist = (0.0,) * 6
        return ms

    def link_pose(self, ls: LinkState, ls_el: Any, model: str, xm: np.ndarray | None) -> None:
        p_el = ls_el.find("pose")
        if p_el is None:
            return
        p = self.vec6(p_el)
        rel = p_el.get("relative_to")
        if p is None:
            pass
        elif rel in ("__model__", model):
            ls.pose = p
        elif rel not in (None, "", "world"):
            self.warn("USDF_SDF_LINK_POSE_DROPPED", f"link_state {model}::{ls.name}: a pose relative_to="
                      f"{rel!r} is not supported (only __model__, the model name or world); dropped", p_el)
        elif xm is None:
            self.warn("USDF_SDF_LINK_POSE_DROPPED", f"link_state {model}::{ls.name}: its pose is a world "
                      f"pose but model_state {model!r} has no world pose (no <pose>); dropped", p_el)
        else:
            ls.pose = transform_to_pose6(np.linalg.inv(xm) @ pose6_to_transform(p))

    def link_twist(self, ls: LinkState, ls_el: Any, model: str, xm: np.ndarray | None) -> bool:
        """Read the link's world velocities into its model-frame twist; whether it did."""
        lv, av = ls_el.find("linear_velocity"), ls_el.find("angular_velocity")
        if lv is None and av is None:
            return False
        if xm is None or ls.pose is None:
            self.warn("USDF_SDF_VELOCITY_DROPPED", f"link_state {model}::{ls.name}: velocities need the "
                      "model's world pose and the link pose; dropped", lv if lv is not None else av)
            return False
        rm_t = xm[:3, :3].T
        lin, ang = self.vec3_or_zero(lv), self.vec3_or_zero(av)
        ls.twist = tuple((rm_t @ lin).tolist() + (rm_t @ ang).tolist())
        return True

    def link_wrench(self, ls: LinkState, ls_el: Any, model: str, xm: np.ndarray | None) -> None:
        lw, aw = ls_el.find("linear_wrench"), ls_el.find("angular_wrench")
        if lw is None and aw is None:
            return
        if xm is None or ls.pose is None:
            self.warn("USDF_SDF_WRENCH_DROPPED", f"link_state {model}::{ls.name}: wrenches need the link's "
                      "world pose; dropped", lw if lw is not None else aw)
            return
        r_t = (xm @ pose6_to_transform(ls.pose))[:3, :3].T
        f, t = self.vec3_or_zero(lw), self.vec3_or_zero(aw)
        ls.wrench = tuple((r_t @ f).tolist() + (r_t @ t).tolist())


def _where(el: Any) -> str:
    name = el.get("name")
    return f"{el.tag}[name={name}]" if name is not None else str(el.tag)
