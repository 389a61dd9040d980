"""SDFormat 1.12 ``<state>`` ↔ USDF.

Written (``state_to_sdf``)::

    <sdf version="1.12"><world name="W"><state world_name="W">
      <sim_time>SEC NSEC</sim_time> <iterations>0</iterations>
      <model_state name="M">
        <joint_state name="J"><angle axis="0">q0</angle>...</joint_state>
        <model_state name="NESTED">...</model_state>
        <pose>X_world_M (top level) | X_parent_M (nested)</pose>
        <link_state name="L">
          <linear_velocity>, <angular_velocity>  (of the link frame, relative to and expressed in the world)
          <linear_wrench>, <angular_wrench>      (expressed in the world; torque about the link origin)
          <pose relative_to="__model__">X_M_L</pose>
        </link_state>
      </model_state>
    </state></world></sdf>

SDFormat's joint_state holds positions only (one ``<angle axis="i">`` per USDF position, in
the USDF order, so a ball joint's quaternion is four angles ``x y z w``): joint velocities and
torques are dropped, with a warning.  World-level ``<frame>``s have no SDFormat state element:
they are folded into the model poses.  Velocities and wrenches need the world pose (and, for
velocities, the twist) of their model; when unknown they are dropped, with a warning.

Read back (``sdf_to_state``): link poses without ``relative_to`` are world poses (the
Gazebo-classic convention) and are made model-relative; world velocities become model-frame
twists assuming the model frame is at rest (its twist is then written as zero).
"""

from __future__ import annotations

import numpy as np

from robot_state_format.errors import Diagnostic, Severity, UsdfError
from robot_state_format.kinematics.transforms import pose6_to_transform, transform_to_pose6
from robot_state_format.model.xml import parse_xml
from robot_state_format.usdf.resolve import world_poses
from robot_state_format.usdf.types import JointState, LinkState, ModelState, Stamp, WorldState
from robot_state_format.usdf.writer import escape_name, format_floats

SDF_VERSION = "1.12"


def state_to_sdf(state: WorldState, *, pretty: bool = True) -> tuple[str, list[Diagnostic]]:
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
            if js.velocities is not None or js.torques is not None:
                warnings.append(_warn("USDF_SDF_JOINT_RATES_DROPPED", f"joint {scoped}::{js.name}: velocities "
                                      "and torques have no SDFormat state element; dropped"))
            if not js.positions:
                out.append(f'{i2}<joint_state name="{escape_name(js.name)}"/>{nl}')
                continue
            out.append(f'{i2}<joint_state name="{escape_name(js.name)}">{nl}')
            for k, v in enumerate(js.positions):
                out.append(f'{i3}<angle axis="{k}">{format_floats((v,))}</angle>{nl}')
            out.append(f"{i2}</joint_state>{nl}")
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
    return "".join(out), warnings


def _warn(code: str, msg: str) -> Diagnostic:
    return Diagnostic(code, msg, "<output>", None, None, Severity.WARNING)


# --------------------------------------------------------------------------------------------


def sdf_to_state(data: str | bytes, *, file: str = "<string>") -> WorldState:
    """The USDF state of the first SDFormat ``<state>`` in ``data`` (``UsdfError`` if none or malformed)."""
    root, _ = parse_xml(data, file, error_type=UsdfError, code_prefix="USDF_XML")
    st = root if root.tag == "state" else next(iter(root.iter("state")), None)
    if st is None:
        raise UsdfError(Diagnostic("USDF_SDF_NO_STATE", "no <state> element", file, root.sourceline))
    errors: list[Diagnostic] = []

    def vec(el: object, n: int) -> tuple[float, ...] | None:
        text = (getattr(el, "text", None) or "").split()
        try:
            vals = tuple(float(t) for t in text)
        except ValueError:
            vals = ()
        if len(vals) != n or not all(np.isfinite(vals)):
            errors.append(Diagnostic("USDF_SDF_BAD_VALUE", f"<{el.tag}> needs {n} finite numbers",  # type: ignore[attr-defined]
                                     file, el.sourceline))  # type: ignore[attr-defined]
            return None
        return vals

    name = st.get("world_name") or "__default__"
    stamp = None
    sim = st.find("sim_time")
    if sim is not None:
        parts = (sim.text or "").split()
        if len(parts) == 2 and all(p.isdigit() for p in parts) and int(parts[1]) < 10**9:
            stamp = Stamp(int(parts[0]), int(parts[1]))
        else:
            errors.append(Diagnostic("USDF_SDF_BAD_VALUE", "<sim_time> needs 'sec nsec'", file, sim.sourceline))
    state = WorldState(name=name, stamp=stamp)

    def model(el: object, parent_world: np.ndarray | None, top: bool) -> ModelState:
        ms = ModelState(name=el.get("name") or "")  # type: ignore[attr-defined]
        pose_el = el.find("pose")  # type: ignore[attr-defined]
        if pose_el is not None:
            ms.pose = vec(pose_el, 6)  # type: ignore[assignment]
        xm = None
        if ms.pose is not None:
            local = pose6_to_transform(ms.pose)
            xm = local if top else (parent_world @ local if parent_world is not None else None)
        rm_t = xm[:3, :3].T if xm is not None else None
        moving = False
        for j in el.findall("joint_state"):  # type: ignore[attr-defined]
            angles = sorted(((int(a.get("axis", "0")), a) for a in j.findall("angle")), key=lambda t: t[0])
            vals = []
            for _, a in angles:
                one = vec(a, 1)
                vals.append(one[0] if one else 0.0)
            ms.joint_states.append(JointState(j.get("name") or "", tuple(vals)))
        for n in el.findall("model_state"):  # type: ignore[attr-defined]
            ms.model_states.append(model(n, xm, False))
        for ls_el in el.findall("link_state"):  # type: ignore[attr-defined]
            ls = LinkState(ls_el.get("name") or "")
            p_el = ls_el.find("pose")
            if p_el is not None:
                p = vec(p_el, 6)
                if p is not None:
                    if p_el.get("relative_to") in ("__model__", ms.name):
                        ls.pose = p  # type: ignore[assignment]
                    elif xm is not None:
                        ls.pose = transform_to_pose6(np.linalg.inv(xm) @ pose6_to_transform(p))
            lv, av = ls_el.find("linear_velocity"), ls_el.find("angular_velocity")
            if (lv is not None or av is not None) and rm_t is not None and ls.pose is not None:
                lin = np.array(vec(lv, 3) or (0.0,) * 3) if lv is not None else np.zeros(3)
                ang = np.array(vec(av, 3) or (0.0,) * 3) if av is not None else np.zeros(3)
                ls.twist = tuple((rm_t @ lin).tolist() + (rm_t @ ang).tolist())  # type: ignore[assignment]
                moving = True
            lw, aw = ls_el.find("linear_wrench"), ls_el.find("angular_wrench")
            if (lw is not None or aw is not None) and xm is not None and ls.pose is not None:
                r_t = (xm @ pose6_to_transform(ls.pose))[:3, :3].T
                f = np.array(vec(lw, 3) or (0.0,) * 3) if lw is not None else np.zeros(3)
                t = np.array(vec(aw, 3) or (0.0,) * 3) if aw is not None else np.zeros(3)
                ls.wrench = tuple((r_t @ f).tolist() + (r_t @ t).tolist())  # type: ignore[assignment]
            ms.link_states.append(ls)
        if moving:
            ms.twist = (0.0,) * 6
        return ms

    for el in st.findall("model_state"):
        state.model_states.append(model(el, None, True))
    if errors:
        raise UsdfError(errors)
    return state
