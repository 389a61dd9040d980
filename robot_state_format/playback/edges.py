"""The static TF of a restart file: ``(parent, child, X_parent_child)`` edges (no rclpy)."""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

from robot_state_format import spatial as tfm
from robot_state_format.model.types import SCOPE, WORLD, Model
from robot_state_format.usdf.types import ModelState, WorldState

Edge = tuple[str, str, NDArray[np.float64]]


def _link_poses(ms: ModelState, prefix: str, x_top_ms: NDArray[np.float64]) -> dict[str, NDArray[np.float64]]:
    """Link poses of ``ms`` and its nested model_states in the top-level model_state's frame."""
    out = {f"{prefix}{ls.name}": x_top_ms @ tfm.pose6_to_transform(ls.pose)
           for ls in ms.link_states if ls.pose is not None}
    for sub in ms.model_states:
        if sub.pose is not None:  # a nested model_state is posed in its enclosing one
            out.update(_link_poses(sub, f"{prefix}{sub.name}{SCOPE}", x_top_ms @ tfm.pose6_to_transform(sub.pose)))
    return out


def _model_frame_in_file(model: Model, name: str) -> NDArray[np.float64]:
    """X_world_M of a world's top-level model ``name`` as the model file places it."""
    mf = model.models.get(name)
    if mf is None:
        return np.eye(4)
    pose = np.asarray(mf.pose, dtype=np.float64)
    if mf.attached_to in ("", WORLD) or mf.attached_to not in model.links:
        return pose
    return np.asarray(model.links[mf.attached_to].pose, dtype=np.float64) @ pose


def replay_edges(state: WorldState, model: Model, *, link_tf: bool = False) -> list[Edge]:
    """The static TF of a restart file, as ``(parent, child, X_parent_child)``.

    * each ``<frame>`` with a pose: its parent (default ``world``) → the frame;
    * each top-level model_state with a pose (every model of a world file; the model of a model
      file): its parent (default ``world``) → each root link of that model, ``X_parent_M ∘ X_M_root``
      with ``X_M_root`` from the model file (for worlds, the link's world pose brought into the
      model frame the file gives);
    * with ``link_tf``: parent link → child link of every joint whose two links have poses in the
      file (nested model_states included), ``X_M_parent⁻¹ ∘ X_M_child``.
    """
    edges: list[Edge] = []
    for f in state.frames:
        if f.pose is not None:
            edges.append((f.parent or WORLD, f.name, tfm.pose6_to_transform(f.pose)))
    tops: list[tuple[ModelState, str]]
    if model.is_world:
        tops = [(ms, f"{ms.name}{SCOPE}") for ms in state.model_states]
    else:
        top = state.model(model.name)
        tops = [(top, "")] if top is not None else []
    roots = model.root_links()
    for ms, prefix in tops:
        if ms.pose is not None:
            x_parent_m = tfm.pose6_to_transform(ms.pose)
            x_m_file = _model_frame_in_file(model, ms.name) if model.is_world else np.eye(4)
            for root in roots:
                if root.startswith(prefix) and root in model.links:
                    x_m_root = tfm.inverse(x_m_file) @ np.asarray(model.links[root].pose, dtype=np.float64)
                    edges.append((ms.parent or WORLD, root, x_parent_m @ x_m_root))
        if link_tf:
            poses = _link_poses(ms, prefix, np.eye(4))
            for joint in model.joints.values():
                if joint.parent in poses and joint.child in poses:
                    edges.append((joint.parent, joint.child, tfm.inverse(poses[joint.parent]) @ poses[joint.child]))
    return edges
