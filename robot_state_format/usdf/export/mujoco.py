"""MuJoCo keyframes from USDF states (the ``mujoco`` package is an optional dependency).

:func:`keyframe_arrays` maps every MuJoCo joint of a compiled ``MjModel`` to the USDF state:

* hinge / slide ← the joint_state of the same name (``positions[0]``, ``velocities[0]``);
  MuJoCo's URDF import splits a planar joint ``p`` into ``p_TX``, ``p_TY``, ``p_RZ``: those take
  ``positions[0..2]`` of ``p``;
* ball ← ``qx qy qz qw`` reordered to MuJoCo's ``w x y z``; the angular velocity is the same
  vector (child frame);
* free ← the body's *world* pose.  MuJoCo's free joint holds ``x y z qw qx qy qz`` (the body
  frame in the world) and qvel = the world linear velocity of the body origin, then the angular
  velocity in the body frame.  The pose comes from the state's link pose when there is one
  (model_state pose ∘ link_state pose, through any parent frames); otherwise from the floating
  joint_state of the same name (``x y z qx qy qz qw`` and, in the child frame, ``vx vy vz wx wy
  wz``): ``X_world_body = X_world_model ∘ X0 ∘ (p, q)`` where ``X0`` is the body's default
  placement (``qpos0``: the joint origin MuJoCo folded into the body).  A model_state without a
  pose (and parent ``world``) is then taken as the world frame at rest, with a warning.
  Velocities are placed in the world through the model_state's twist: when the model's parent
  is a frame (e.g. ``odom``), or its twist is absent, they cannot be, and the free joint's qvel
  stays zero with a warning.

A joint the state does not cover keeps MuJoCo's ``qpos0`` (and zero velocity), with a warning.

A world of several robots: :func:`load_mujoco_world` puts each model_state's model file into one
MuJoCo model (names prefixed ``M/``, each robot fixed at its model_state's world pose) and
:func:`world_keyframe_arrays` fills every robot's joints from its own model_state.
"""

from __future__ import annotations

import math
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np
from lxml import etree

from robot_state_format.errors import ConversionError, ModelError, UsdfError
from robot_state_format.lazy_modules import MissingDependencyError
from robot_state_format.limits import read_input_file
from robot_state_format.model.mjcf.document import load_document
from robot_state_format.model.xml import parse_xml
from robot_state_format.spatial import matrix_to_quaternion, quaternion_to_matrix
from robot_state_format.usdf.resolve import world_poses
from robot_state_format.usdf.types import JointState, ModelState, WorldState
from robot_state_format.usdf.writer import escape_name, format_floats

_PLANAR_SUFFIX = {"_TX": 0, "_TY": 1, "_RZ": 2}


def mujoco_module() -> Any:
    """The ``mujoco`` package (optional: ``MissingDependencyError`` naming the install when it is missing)."""
    try:
        import mujoco
    except ImportError:
        raise MissingDependencyError.of("mujoco") from None
    return mujoco


def load_mujoco_model(path: str | os.PathLike[str], *, free_base: bool = False,
                      strip_geometry: bool = False) -> Any:
    """Compile an MJCF or URDF file with MuJoCo; return the ``MjSpec`` (compile with ``.compile()``).

    URDF files are imported with ``fusestatic="false"`` so every link stays a body.
    ``strip_geometry`` removes URDF visuals and collisions (meshes MuJoCo cannot find);
    ``free_base`` gives the first top-level body a free joint (a floating base) if it has none.
    """
    mujoco = mujoco_module()
    p = Path(path)
    try:
        text = read_input_file(p).decode("utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise ConversionError(f"{p}: cannot read: {getattr(exc, 'strerror', None) or exc}") from None
    try:
        root, _ = parse_xml(text, str(p))
    except ModelError as exc:
        raise ConversionError(str(exc)) from None
    if root.tag == "mujoco":
        try:  # the reader's bounds first: a <replicate> bomb is refused before MuJoCo expands it
            load_document(text, str(p))
        except ModelError as exc:
            raise ConversionError(str(exc)) from None
    if root.tag == "robot":
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
    except Exception as exc:  # noqa: BLE001 MuJoCo raises ValueError with its compiler message; any is a refusal
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


def _joint_table(ms: ModelState, scoped: str, prefix: str = "") -> dict[str, tuple[JointState, str]]:
    """Joint name (scoped below ``ms``) → (joint_state, scoped name of its model_state)."""
    out = {f"{prefix}{js.name}": (js, scoped) for js in ms.joint_states}
    for n in ms.model_states:
        out.update(_joint_table(n, f"{scoped}::{n.name}", f"{prefix}{n.name}::"))
    return out


def _model_twist(state: WorldState, scoped: str) -> tuple[np.ndarray, np.ndarray] | str:
    """The world twist ``(v, w)`` of a top-level model_state's frame, or why it is unknown."""
    ms = state.model(scoped)
    if ms is None or "::" in scoped:
        return f"model_state {scoped!r} is nested (its world twist is not composed)"
    if ms.parent not in (None, "world"):
        return (f"model_state {scoped!r} is posed in {ms.parent!r}, not the world: its twist cannot be put "
                "in the world")
    if ms.twist is None:
        return f"model_state {scoped!r} has no twist"
    return np.array(ms.twist[:3]), np.array(ms.twist[3:])


def _free_qvel(x_body: np.ndarray, x_model: np.ndarray, model_tw: tuple[np.ndarray, np.ndarray],
               v_local: np.ndarray, w_local: np.ndarray) -> np.ndarray:
    """MuJoCo free-joint qvel of a body moving at ``(v_local, w_local)`` (relative to the model frame,
    in body axes): world linear velocity of the body origin, then angular velocity in body axes."""
    vm, wm = model_tw
    r = x_body[:3, :3]
    w = wm + r @ w_local
    v = vm + np.cross(wm, x_body[:3, 3] - x_model[:3, 3]) + r @ v_local
    return np.concatenate([v, r.T @ w])


def keyframe_arrays(state: WorldState, mj_model: Any, *, model_state: str | None = None
                    ) -> tuple[np.ndarray, np.ndarray, list[str]]:
    """``(qpos, qvel, warnings)`` restoring ``state`` in a compiled MuJoCo model."""
    ms = _select(state, model_state)
    scoped = model_state if model_state is not None else ms.name
    qpos = np.array(mj_model.qpos0, dtype=float)
    qvel = np.zeros(mj_model.nv)
    warnings: list[str] = []
    _fill(state, mj_model, ms, scoped, "", qpos, qvel, warnings)
    return qpos, qvel, warnings


def world_keyframe_arrays(state: WorldState, mj_model: Any, prefixes: Mapping[str, str] | None = None
                          ) -> tuple[np.ndarray, np.ndarray, list[str]]:
    """``(qpos, qvel, warnings)`` restoring a world of several top-level model_states in one MuJoCo model
    whose joints and bodies of model_state ``M`` are named ``prefixes[M] + name`` (default ``"M/"``, as
    :func:`load_mujoco_world` names them). A MuJoCo joint of no listed model keeps ``qpos0``, with a warning."""
    mujoco = mujoco_module()
    table = dict(prefixes) if prefixes is not None else {ms.name: f"{ms.name}/" for ms in state.model_states}
    qpos = np.array(mj_model.qpos0, dtype=float)
    qvel = np.zeros(mj_model.nv)
    warnings: list[str] = []
    for name, prefix in table.items():
        ms = state.model(name)
        if ms is None or "::" in name:
            raise ConversionError(f"the state has no top-level model_state {name!r}")
        _fill(state, mj_model, ms, name, prefix, qpos, qvel, warnings)
    for j in range(mj_model.njnt):
        jname = mujoco.mj_id2name(mj_model, mujoco.mjtObj.mjOBJ_JOINT, j) or ""
        if not any(jname.startswith(p) for p in table.values()):
            warnings.append(f"joint {jname!r}: of no model_state of the state; qpos0 kept")
    return qpos, qvel, warnings


def load_mujoco_world(state: WorldState, files: Mapping[str, str | os.PathLike[str]], *,
                      strip_geometry: bool = False) -> Any:
    """One ``MjSpec`` holding the model file of each top-level model_state ``M`` of ``files``, its
    bodies and joints named ``M/<name>``, attached to the world at the model_state's world pose
    (fixed-base robots stay where the state puts them; a model_state without a world pose is at the
    origin). Compile with ``.compile()``; restore with :func:`world_keyframe_arrays`."""
    mujoco = mujoco_module()
    poses = world_poses(state)
    world = mujoco.MjSpec()
    for name, path in files.items():
        if state.model(name) is None:
            raise ConversionError(f"the state has no model_state {name!r}")
        child = load_mujoco_model(path, strip_geometry=strip_geometry)
        x = poses.get(name, np.eye(4))
        qx, qy, qz, qw = matrix_to_quaternion(x[:3, :3])
        frame = world.worldbody.add_frame(pos=x[:3, 3].tolist(), quat=[qw, qx, qy, qz])
        try:
            world.attach(child, prefix=f"{name}/", frame=frame)
        except Exception as exc:  # noqa: BLE001 MuJoCo's own message (name clashes, ...)
            raise ConversionError(f"{path}: cannot be added to the world as {name!r}: {exc}") from None
    return world


def _fill(state: WorldState, mj_model: Any, ms: ModelState, scoped: str, prefix: str, qpos: np.ndarray,
          qvel: np.ndarray, warnings: list[str]) -> None:
    """Set the MuJoCo joints named ``prefix + <joint>`` from model_state ``ms`` (scoped name ``scoped``)."""
    mujoco = mujoco_module()
    table = _joint_table(ms, scoped)
    poses: dict[str, np.ndarray] | None = None
    jt = mujoco.mjtJoint
    for j in range(mj_model.njnt):
        name = mujoco.mj_id2name(mj_model, mujoco.mjtObj.mjOBJ_JOINT, j) or ""
        if not name.startswith(prefix):
            continue
        name = name[len(prefix):]
        kind = int(mj_model.jnt_type[j])
        qa, da = int(mj_model.jnt_qposadr[j]), int(mj_model.jnt_dofadr[j])
        if kind == jt.mjJNT_FREE:
            if poses is None:
                poses = world_poses(state)
            _free_joint(state, poses, scoped, ms, table.get(name), mj_model, j, qpos, qvel, warnings, prefix)
            continue
        entry = table.get(name)
        js = entry[0] if entry is not None else None
        comp = 0
        if js is None and name[-3:] in _PLANAR_SUFFIX and name[:-3] in table:
            js, comp = table[name[:-3]][0], _PLANAR_SUFFIX[name[-3:]]
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


def _free_joint(state: WorldState, poses: dict[str, np.ndarray], scoped: str, ms: ModelState,
                entry: tuple[JointState, str] | None, mj_model: Any, j: int, qpos: np.ndarray,
                qvel: np.ndarray, warnings: list[str], prefix: str = "") -> None:
    """qpos/qvel of MuJoCo free joint ``j``: from the body's link_state pose, else its joint_state."""
    mujoco = mujoco_module()
    name = (mujoco.mj_id2name(mj_model, mujoco.mjtObj.mjOBJ_JOINT, j) or "")[len(prefix):]
    qa, da = int(mj_model.jnt_qposadr[j]), int(mj_model.jnt_dofadr[j])
    body = (mujoco.mj_id2name(mj_model, mujoco.mjtObj.mjOBJ_BODY, int(mj_model.jnt_bodyid[j])) or "")[len(prefix):]
    x = poses.get(f"{scoped}::{body}")
    if x is not None:  # the link pose in the world
        qx, qy, qz, qw = matrix_to_quaternion(x[:3, :3])
        qpos[qa:qa + 7] = [x[0, 3], x[1, 3], x[2, 3], qw, qx, qy, qz]
        ls = ms.link(body)
        if ls is None or ls.twist is None:
            return
        tw = _model_twist(state, scoped)
        if isinstance(tw, str):
            warnings.append(f"free joint {name!r}: the velocity of link {body!r} is not placed: {tw}; qvel zero")
            return
        xm = poses[scoped]
        # ls.twist is relative to the model frame in *model* axes: express it in body axes first
        rb = x[:3, :3].T @ xm[:3, :3]
        qvel[da:da + 6] = _free_qvel(x, xm, tw, rb @ np.array(ls.twist[:3]), rb @ np.array(ls.twist[3:]))
        return
    js, mscoped = entry if entry is not None else (None, "")
    if js is None or js.positions is None:
        warnings.append(f"free joint {name!r}: no pose for link {body!r} and no positions for joint {name!r} in "
                        "the state; qpos0 kept")
        return
    if len(js.positions) != 7:
        raise ConversionError(f"free joint {name!r} needs 7 positions (x y z qx qy qz qw), the state has "
                              f"{len(js.positions)}")
    owner = state.model(mscoped)
    xm_known = poses.get(mscoped)
    at_rest_world = False
    if xm_known is not None:
        xm = xm_known
    else:
        if owner is not None and owner.pose is None and owner.parent in (None, "world") and "::" not in mscoped:
            xm = np.eye(4)
            at_rest_world = owner.twist is None
            warnings.append(f"free joint {name!r}: model_state {mscoped!r} has no pose; its frame is taken as "
                            "the world" + (" (at rest)" if at_rest_world else ""))
        else:
            warnings.append(f"free joint {name!r}: model_state {mscoped!r} has no world pose (a parent has no "
                            "pose); qpos0 kept")
            return
    px, py, pz, qx, qy, qz, qw = js.positions
    n = math.sqrt(qx * qx + qy * qy + qz * qz + qw * qw)
    if not n > 0:
        raise ConversionError(f"free joint {name!r}: the quaternion is zero")
    local = np.eye(4)
    local[:3, :3] = quaternion_to_matrix((qx / n, qy / n, qz / n, qw / n))
    local[:3, 3] = (px, py, pz)
    x0 = np.eye(4)  # the body's default placement: MuJoCo's qpos0 for this joint
    q0 = mj_model.qpos0[qa:qa + 7]
    x0[:3, :3] = quaternion_to_matrix((q0[4], q0[5], q0[6], q0[3]))
    x0[:3, 3] = q0[:3]
    x_placed = xm @ x0
    x = x_placed @ local
    if np.array_equal(x_placed, np.eye(4)):  # keep the state's own quaternion, bit for bit
        qpos[qa:qa + 7] = [px, py, pz, qw / n, qx / n, qy / n, qz / n]
    else:
        rx, ry, rz, rw = matrix_to_quaternion(x[:3, :3])
        qpos[qa:qa + 7] = [x[0, 3], x[1, 3], x[2, 3], rw, rx, ry, rz]
    if js.velocities is None:
        return
    if len(js.velocities) != 6:
        raise ConversionError(f"free joint {name!r} needs 6 velocities, the state has {len(js.velocities)}")
    tw = (np.zeros(3), np.zeros(3)) if at_rest_world else _model_twist(state, mscoped)
    if isinstance(tw, str):
        warnings.append(f"free joint {name!r}: its joint velocities are not placed: {tw}; qvel zero")
        return
    qvel[da:da + 6] = _free_qvel(x, xm, tw, np.array(js.velocities[:3]), np.array(js.velocities[3:]))


def mujoco_keyframe(state: WorldState, mj_model: Any, *, name: str = "usdf",
                    model_state: str | None = None, prefixes: Mapping[str, str] | None = None
                    ) -> tuple[str, list[str]]:
    """``<keyframe><key .../></keyframe>`` text (lossless floats) and the mapping warnings; with
    ``prefixes`` (model_state → MuJoCo name prefix) the key of a world (:func:`world_keyframe_arrays`)."""
    if prefixes is not None:
        qpos, qvel, warnings = world_keyframe_arrays(state, mj_model, prefixes)
    else:
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
    root, _ = parse_xml(text, "<keyframe>", error_type=UsdfError, code_prefix="USDF_XML",
                        description=False)
    key = root if root.tag == "key" else root.find("key")
    if key is None:
        raise ConversionError("no <key> element")
    qpos = np.array([float(v) for v in (key.get("qpos") or "").split()])
    qvel = np.array([float(v) for v in (key.get("qvel") or "").split()])
    return qpos, qvel, float(key.get("time") or 0.0)
