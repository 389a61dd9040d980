"""MuJoCo keyframes from USDF states (the ``mujoco`` package is an optional dependency).

:func:`keyframe_arrays` maps every MuJoCo joint of a compiled ``MjModel`` to the USDF state:

* hinge / slide ← the joint_state of the same name (``positions[0]``, ``velocities[0]``);
  MuJoCo's URDF import splits a planar joint ``p`` into ``p_TX``, ``p_TY``, ``p_RZ``: those take
  ``positions[0..2]`` of ``p``;
* ball ← ``qx qy qz qw`` reordered to MuJoCo's ``w x y z``; the angular velocity is the same
  vector (child frame);
* free ← the body's *world* pose resolved from the state (model_state pose ∘ link_state pose,
  through any parent frames): ``x y z`` and ``w x y z``; qvel = world linear velocity of the
  body origin, then the angular velocity in the body frame (MuJoCo's free-joint convention).

A joint the state does not cover keeps MuJoCo's ``qpos0`` (and zero velocity), with a warning.
"""

from __future__ import annotations

import math
import os
from pathlib import Path
from typing import Any

import numpy as np

from robot_state_format.errors import ConversionError
from robot_state_format.kinematics.transforms import matrix_to_quaternion, pose6_to_transform
from robot_state_format.usdf.resolve import world_poses
from robot_state_format.usdf.types import JointState, ModelState, WorldState

_PLANAR_SUFFIX = {"_TX": 0, "_TY": 1, "_RZ": 2}


def _mujoco() -> Any:
    try:
        import mujoco
    except ImportError:
        raise ConversionError("the mujoco package is not installed (pip install mujoco)") from None
    return mujoco


def load_mujoco_model(path: str | os.PathLike[str], *, free_base: bool = False,
                      strip_geometry: bool = False) -> Any:
    """Compile an MJCF or URDF file with MuJoCo; return the ``MjSpec`` (compile with ``.compile()``).

    URDF files are imported with ``fusestatic="false"`` so every link stays a body.
    ``strip_geometry`` removes URDF visuals and collisions (meshes MuJoCo cannot find);
    ``free_base`` gives the first top-level body a free joint (a floating base) if it has none.
    """
    mujoco = _mujoco()
    p = Path(path)
    try:
        text = p.read_text(encoding="utf-8")
    except OSError as exc:
        raise ConversionError(f"{p}: cannot read: {exc.strerror or exc}") from None
    from robot_state_format.model.xml import parse_xml
    from robot_state_format.errors import ModelError

    try:
        root, _ = parse_xml(text, str(p))
    except ModelError as exc:
        raise ConversionError(str(exc)) from None
    if root.tag == "robot":
        from lxml import etree

        if strip_geometry:
            for el in root.xpath("//visual|//collision"):
                el.getparent().remove(el)
        ext = root.find("mujoco")
        if ext is None:
            ext = etree.SubElement(root, "mujoco")
        comp = ext.find("compiler")
        if comp is None:
            comp = etree.SubElement(ext, "compiler")
        comp.set("fusestatic", "false")
        comp.set("discardvisual", "false")
        comp.set("boundmass", comp.get("boundmass", "1e-6"))
        comp.set("boundinertia", comp.get("boundinertia", "1e-9"))
        comp.set("balanceinertia", "true")  # real URDFs break the triangle inequality; poses unaffected
        text = etree.tostring(root, encoding="unicode")
    try:
        spec = mujoco.MjSpec.from_string(text)
        if free_base:
            body = spec.worldbody.first_body()
            if body is not None and body.first_joint() is None:
                joint = body.add_freejoint()
                joint.name = "floating_base"
        return spec
    except Exception as exc:  # MuJoCo raises ValueError with its compiler message
        raise ConversionError(f"{p}: MuJoCo cannot load it: {exc}") from None


def _select(state: WorldState, model_state: str | None) -> ModelState:
    if model_state is not None:
        ms = state.model(model_state)
        if ms is None:
            raise ConversionError(f"the state has no model_state {model_state!r}")
        return ms
    if len(state.model_states) != 1:
        names = ", ".join(m.name for m in state.model_states) or "none"
        raise ConversionError(f"the state holds {len(state.model_states)} model_states ({names}); name one")
    return state.model_states[0]


def _joint_table(ms: ModelState, prefix: str = "") -> dict[str, JointState]:
    out = {f"{prefix}{js.name}": js for js in ms.joint_states}
    for n in ms.model_states:
        out.update(_joint_table(n, f"{prefix}{n.name}::"))
    return out


def _world_twist(state: WorldState, scoped: str, ms_name: str, link: str) -> tuple[np.ndarray, np.ndarray] | None:
    """World linear velocity of the link origin and world angular velocity (model parent = world)."""
    ms = state.model(ms_name)
    if ms is None:
        return None
    ls = ms.link(link)
    if ls is None or ls.twist is None or ms.twist is None or ms.pose is None or ls.pose is None:
        return None
    if ms.parent not in (None, "world"):
        return None
    xm = pose6_to_transform(ms.pose)
    rm = xm[:3, :3]
    vm, wm = np.array(ms.twist[:3]), np.array(ms.twist[3:])
    p_rel = rm @ np.array(ls.pose[:3])
    w = wm + rm @ np.array(ls.twist[3:])
    v = vm + np.cross(wm, p_rel) + rm @ np.array(ls.twist[:3])
    return v, w


def keyframe_arrays(state: WorldState, mj_model: Any, *, model_state: str | None = None
                    ) -> tuple[np.ndarray, np.ndarray, list[str]]:
    """``(qpos, qvel, warnings)`` restoring ``state`` in a compiled MuJoCo model."""
    mujoco = _mujoco()
    ms = _select(state, model_state)
    table = _joint_table(ms)
    qpos = np.array(mj_model.qpos0, dtype=float)
    qvel = np.zeros(mj_model.nv)
    warnings: list[str] = []
    poses: dict[str, np.ndarray] | None = None
    jt = mujoco.mjtJoint
    for j in range(mj_model.njnt):
        name = mujoco.mj_id2name(mj_model, mujoco.mjtObj.mjOBJ_JOINT, j) or ""
        kind = int(mj_model.jnt_type[j])
        qa, da = int(mj_model.jnt_qposadr[j]), int(mj_model.jnt_dofadr[j])
        if kind == jt.mjJNT_FREE:
            body = mujoco.mj_id2name(mj_model, mujoco.mjtObj.mjOBJ_BODY, int(mj_model.jnt_bodyid[j])) or ""
            if poses is None:
                poses = world_poses(state)
            key = f"{ms.name}::{body}"
            x = poses.get(key)
            if x is None:
                warnings.append(f"free joint {name!r}: no pose for link {body!r} in the state; qpos0 kept")
                continue
            qx, qy, qz, qw = matrix_to_quaternion(x[:3, :3])
            qpos[qa:qa + 7] = [x[0, 3], x[1, 3], x[2, 3], qw, qx, qy, qz]
            tw = _world_twist(state, key, ms.name, body)
            if tw is not None:
                qvel[da:da + 3] = tw[0]
                qvel[da + 3:da + 6] = x[:3, :3].T @ tw[1]
            continue
        js = table.get(name)
        comp = 0
        if js is None and name[-3:] in _PLANAR_SUFFIX and name[:-3] in table:
            js, comp = table[name[:-3]], _PLANAR_SUFFIX[name[-3:]]
        if js is None:
            warnings.append(f"joint {name!r}: not in the state; qpos0 kept")
            continue
        if kind == jt.mjJNT_BALL:
            if js.positions is not None:
                if len(js.positions) != 4:
                    raise ConversionError(f"ball joint {name!r} needs 4 positions (qx qy qz qw)")
                x_, y_, z_, w_ = js.positions
                n = math.sqrt(x_ * x_ + y_ * y_ + z_ * z_ + w_ * w_)
                qpos[qa:qa + 4] = [w_ / n, x_ / n, y_ / n, z_ / n]
            if js.velocities is not None:
                if len(js.velocities) != 3:
                    raise ConversionError(f"ball joint {name!r} needs 3 velocities")
                qvel[da:da + 3] = js.velocities
            continue
        if js.positions is not None:
            if len(js.positions) <= comp:
                raise ConversionError(f"joint {name!r}: the state has {len(js.positions)} positions")
            qpos[qa] = js.positions[comp]
        if js.velocities is not None and len(js.velocities) > comp:
            qvel[da] = js.velocities[comp]
    return qpos, qvel, warnings


def mujoco_keyframe(state: WorldState, mj_model: Any, *, name: str = "usdf",
                    model_state: str | None = None) -> tuple[str, list[str]]:
    """``<keyframe><key .../></keyframe>`` text (lossless floats) and the mapping warnings."""
    from robot_state_format.usdf.writer import escape_name, format_floats

    qpos, qvel, warnings = keyframe_arrays(state, mj_model, model_state=model_state)
    time = ""
    if state.stamp is not None:
        time = f' time="{state.stamp.sec + state.stamp.nanosec * 1e-9!r}"'
    text = (f'<keyframe>\n  <key name="{escape_name(name)}"{time}\n'
            f'       qpos="{format_floats(qpos.tolist())}"\n'
            f'       qvel="{format_floats(qvel.tolist())}"/>\n</keyframe>\n')
    return text, warnings


def parse_keyframe(text: str) -> tuple[np.ndarray, np.ndarray, float]:
    """``(qpos, qvel, time)`` of the first ``<key>`` of a keyframe document (for applying it)."""
    from robot_state_format.errors import UsdfError
    from robot_state_format.model.xml import parse_xml

    root, _ = parse_xml(text, "<keyframe>", error_type=UsdfError, code_prefix="USDF_XML")
    key = root if root.tag == "key" else root.find("key")
    if key is None:
        raise ConversionError("no <key> element")
    qpos = np.array([float(v) for v in (key.get("qpos") or "").split()])
    qvel = np.array([float(v) for v in (key.get("qvel") or "").split()])
    return qpos, qvel, float(key.get("time") or 0.0)
