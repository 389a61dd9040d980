"""World poses of every model, link, joint and explicit frame: the ``frames --json`` document.

``frames_document(model, link_poses)`` works for URDF and SDFormat Models alike:

* links: ``model.pose @ X_root_link`` (``Link.pose``, or ``link_poses[name]`` from forward kinematics);
* joints (tree joints and constraints): the joint frame ``J = X_root_child @ inv(child_offset)``,
  with ``axis``/``axis2`` rotated into the world (``None`` when absent);
* explicit frames and nested model frames: ``pose(attached_to) @ pose``, where ``attached_to``
  is a link, :data:`~robot_state_format.model.types.WORLD` (the root frame, as for joints),
  or another frame/model of the same Model;
* the top-level model (not for worlds): ``model.pose``.

Names are fully scoped with :meth:`Model.scoped`.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import numpy as np

from robot_state_format.errors import Diagnostic, ModelError
from robot_state_format.model.types import WORLD, Joint, Model
from robot_state_format.spatial import Transform, inverse, matrix_to_quaternion


def _clean(v: float) -> float:
    """Round-off noise to zero and -0.0 to 0.0, so hand-derived values compare cleanly."""
    f = float(v)
    return 0.0 if abs(f) < 1e-15 else f


def _entry(kind: str, pose: Transform) -> dict[str, Any]:
    q = matrix_to_quaternion(pose[:3, :3])
    return {
        "kind": kind,
        "position": [_clean(pose[0, 3]), _clean(pose[1, 3]), _clean(pose[2, 3])],
        "quaternion": [_clean(c) for c in q],
    }


def link_poses_in_root(model: Model, link_poses: Mapping[str, Transform] | None = None) -> dict[str, Transform]:
    """Model-relative link name → X_root_link (``link_poses`` overriding ``Link.pose``)."""
    out = {name: link.pose for name, link in model.links.items()}
    if link_poses is not None:
        for name, pose in link_poses.items():
            if name not in model.links:
                raise ModelError(Diagnostic("MODEL_UNKNOWN_LINK", f"no link {name!r} in model {model.name!r}",
                                            model.source_file, None))
            out[name] = np.asarray(pose, dtype=float)
    return out


def frame_poses_in_root(model: Model, link_poses: Mapping[str, Transform] | None = None) -> dict[str, Transform]:
    """X_root_F of every link, explicit frame and model frame (model-relative names, models by
    their name as in ``Model.models``); ``WORLD`` maps to the root frame."""
    poses: dict[str, Transform] = {WORLD: np.eye(4)}
    poses.update(link_poses_in_root(model, link_poses))
    pending: dict[str, tuple[str, Transform]] = {}
    for name, frame in model.frames.items():
        pending[name] = (frame.attached_to, frame.pose)
    model_poses: dict[str, Transform] = {}
    for name, mf in model.models.items():
        if name == "" and not model.is_world:
            model_poses[""] = np.eye(4)  # the root frame is the top-level model frame
            continue
        pending["\0model:" + name] = (mf.attached_to, mf.pose)
    # resolve chains (a frame may be attached to another frame), at most len(pending) rounds
    for _ in range(len(pending) + 1):
        if not pending:
            break
        progressed = False
        for key in list(pending):
            attached, pose = pending[key]
            base = poses.get(attached)
            if base is None and attached in model_poses:
                base = model_poses[attached]
            if base is None:
                continue
            result = base @ pose
            if key.startswith("\0model:"):
                model_poses[key[len("\0model:"):]] = result
            else:
                poses[key] = result
            del pending[key]
            progressed = True
        if not progressed:
            break
    if pending:
        key = next(iter(pending))
        raise ModelError(Diagnostic("MODEL_UNRESOLVED_FRAME",
                                    f"frame {key.replace(chr(0) + 'model:', '')!r} is attached to unknown "
                                    f"frame {pending[key][0]!r}", model.source_file, None))
    for name, pose in model_poses.items():
        poses["\0model:" + name] = pose
    return poses


def _joint_frame(joint: Joint, poses: Mapping[str, Transform]) -> Transform:
    child = poses.get(joint.child)
    if child is not None and joint.child != WORLD:
        return child @ inverse(joint.child_offset)
    parent = poses.get(joint.parent, poses[WORLD])
    return parent @ joint.origin


def _axis(rot: np.ndarray, axis: tuple[float, float, float] | None) -> list[float] | None:
    if axis is None:
        return None
    v = rot @ np.asarray(axis, dtype=float)
    n = math.sqrt(float(v @ v))
    return [_clean(c) for c in (v / n if n > 0 else v)]


def _link_name(model: Model, name: str) -> str:
    """Scoped link name; the world frame stays ``world`` (unless the model has a link of that name,
    as URDFs often do)."""
    return name if name == WORLD and name not in model.links else model.scoped(name)


JOINT_SUFFIX = " (joint)"


def joint_frame_keys(model: Model) -> dict[str, str]:
    """Model-relative joint (and constraint) name → its key in the ``frames`` table.

    URDF names are unique per type only, so a joint may share its name with a link (``<link
    name="b"/>`` and ``<joint name="b">``). Models, links and explicit frames keep their plain
    scoped name; a joint whose scoped name is already taken by one of them (or by an earlier joint)
    is keyed ``NAME (joint)`` (``NAME (joint 2)``, ... if that too is taken). The ``joints`` table is
    keyed by the plain scoped joint name.
    """
    taken: set[str] = set()
    if not model.is_world:
        taken.add(model.scoped(""))
    taken.update(model.scoped(n) for n in model.models if n or model.is_world)
    taken.update(model.scoped(n) for n in model.links)
    taken.update(model.scoped(n) for n in model.frames)
    keys: dict[str, str] = {}
    for table in (model.joints, model.constraints):
        for name in table:
            key = model.scoped(name)
            if key in taken:
                key = f"{model.scoped(name)}{JOINT_SUFFIX}"
                n = 2
                while key in taken:
                    key = f"{model.scoped(name)} (joint {n})"
                    n += 1
            taken.add(key)
            keys[name] = key
    return keys


def frames_document(model: Model, link_poses: Mapping[str, Transform] | None = None) -> dict[str, Any]:
    """``{"frames": {NAME: {kind, position, quaternion}}, "joints": {NAME: {type, parent, child,
    axis, axis2}}}`` with world poses; ``link_poses`` are model-relative X_root_link (default: zero
    configuration). A joint named like a link is keyed ``NAME (joint)`` in ``frames``
    (:func:`joint_frame_keys`), so no frame is lost."""
    poses = frame_poses_in_root(model, link_poses)
    world = model.pose
    keys = joint_frame_keys(model)
    frames: dict[str, Any] = {}
    if not model.is_world:
        frames[model.scoped("")] = _entry("model", world)
    for name in model.models:
        if name == "" and not model.is_world:
            continue
        frames[model.scoped(name)] = _entry("model", world @ poses["\0model:" + name])
    for name in model.links:
        frames[model.scoped(name)] = _entry("link", world @ poses[name])
    joints: dict[str, Any] = {}
    for table in (model.joints, model.constraints):
        for name, joint in table.items():
            x = world @ _joint_frame(joint, poses)
            frames[keys[name]] = _entry("joint", x)
            joints[model.scoped(name)] = {
                "type": joint.type.value,
                "parent": _link_name(model, joint.parent),
                "child": _link_name(model, joint.child),
                "axis": _axis(x[:3, :3], joint.axis),
                "axis2": _axis(x[:3, :3], joint.axis2),
            }
    for name in model.frames:
        frames[model.scoped(name)] = _entry("frame", world @ poses[name])
    return {"frames": frames, "joints": joints}


_MAX_INDENT = 160  # characters of tree indentation (20 levels of 8); deeper levels keep this indentation


def _fmt(values: list[float]) -> str:
    return " ".join(f"{v:.6g}" for v in values)


def format_frames_tree(model: Model, link_poses: Mapping[str, Transform] | None = None) -> str:
    """A readable tree: root links, then each joint and its child link, with world poses."""
    doc = frames_document(model, link_poses)
    frames = doc["frames"]
    lines: list[str] = []
    kind = "world" if model.is_world else "model"
    lines.append(f"{model.scoped('') if not model.is_world else model.name} ({model.format} {kind})")
    if not model.is_world:
        e = frames[model.scoped("")]
        lines.append(f"  pose: xyz [{_fmt(e['position'])}] quat xyzw [{_fmt(e['quaternion'])}]")

    children: dict[str, list[Joint]] = {}
    for j in model.joints.values():
        children.setdefault(j.parent, []).append(j)
    attached: dict[str, list[str]] = {}
    for fname, frame in model.frames.items():
        attached.setdefault(frame.attached_to, []).append(fname)

    keys = joint_frame_keys(model)

    def pose_text(name: str, joint: bool = False) -> str:
        e = frames[keys[name] if joint else model.scoped(name)]
        return f"xyz [{_fmt(e['position'])}] quat [{_fmt(e['quaternion'])}]"

    def items_of(link: str) -> list[tuple[str, Any]]:
        return [("frame", f) for f in attached.get(link, [])] + [("joint", j) for j in children.get(link, [])]

    def walk(start: str, start_prefix: str) -> None:
        """Depth first with a stack of its own (a chain of thousands of joints is a valid model); the
        indentation stops growing at :data:`_MAX_INDENT` characters (the text stays linear in the chain)."""
        stack: list[tuple[list[tuple[str, Any]], str, int]] = [(items_of(start), start_prefix, 0)]
        while stack:
            items, prefix, i = stack.pop()
            if i == len(items):
                continue
            stack.append((items, prefix, i + 1))
            what, item = items[i]
            last = i == len(items) - 1
            branch = "└── " if last else "├── "
            nxt = prefix + ("    " if last else "│   ") if len(prefix) < _MAX_INDENT else prefix
            if what == "frame":
                lines.append(f"{prefix}{branch}frame {item}  {pose_text(item)}")
                continue
            jd = doc["joints"][model.scoped(item.name)]
            axis = f" axis [{_fmt(jd['axis'])}]" if jd["axis"] is not None else ""
            axis2 = f" axis2 [{_fmt(jd['axis2'])}]" if jd["axis2"] is not None else ""
            lines.append(f"{prefix}{branch}joint {item.name} ({item.type.value}{axis}{axis2})  "
                         f"{pose_text(item.name, joint=True)}")
            if item.child in model.links:
                lines.append(f"{nxt}└── link {item.child}  {pose_text(item.child)}")
                stack.append((items_of(item.child), nxt + "    " if len(nxt) < _MAX_INDENT else nxt, 0))

    if WORLD not in model.links and (children.get(WORLD) or attached.get(WORLD)):
        lines.append("  world")
        walk(WORLD, "  ")
    for root in model.root_links():
        lines.append(f"  link {root}  {pose_text(root)}")
        walk(root, "  ")
    for name in model.models:
        if name:
            e = frames[model.scoped(name)]
            lines.append(f"  model {name}  xyz [{_fmt(e['position'])}] quat [{_fmt(e['quaternion'])}]")
    for name, joint in model.constraints.items():
        jd = doc["joints"][model.scoped(name)]
        lines.append(f"  constraint {name} ({joint.type.value}: {jd['parent']} -> {jd['child']})  "
                     f"{pose_text(name, joint=True)}")
    return "\n".join(lines) + "\n"
