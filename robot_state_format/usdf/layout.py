"""How a :class:`Model` maps onto world_state model_states (docs/usdf-spec.md §Models).

A model file (not a world) is one top-level ``model_state`` named ``Model.name``; its nested
models (``Model.models`` entries ``inner``, ``inner::deeper``) are nested model_states.  A world
has one top-level model_state per top-level model (``Model.models`` names without ``::``).
Every link and joint belongs to the model_state of the longest model prefix of its
model-relative name; the rest is its local name in that model_state.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from robot_state_format.model.types import SCOPE, WORLD, Model
from robot_state_format.spatial import Transform


@dataclass(frozen=True)
class ModelSlot:
    """One model_state: ``path`` is the model-relative model name (``""`` = the top model),
    ``usdf_path`` the chain of model_state names from the top level."""

    path: str
    usdf_path: tuple[str, ...]
    attached_to: str  # link name (model-relative) or WORLD / "" (the root frame itself)
    pose: Transform  # X_attached_model


class ModelLayout:
    """Model paths, and the model_state each link and joint lives in."""

    def __init__(self, model: Model) -> None:
        self.model = model
        self.slots: dict[str, ModelSlot] = {}
        if model.is_world:
            names = sorted((n for n in model.models if n), key=lambda n: n.count(SCOPE))
        else:
            self.slots[""] = ModelSlot("", (model.name,), "", np.eye(4))
            names = sorted((n for n in model.models if n), key=lambda n: n.count(SCOPE))
        for n in names:
            mf = model.models[n]
            parts = tuple(n.split(SCOPE))
            usdf = parts if model.is_world else (model.name, *parts)
            self.slots[n] = ModelSlot(n, usdf, mf.attached_to, np.asarray(mf.pose, dtype=float))

    def split(self, name: str) -> tuple[str, str] | None:
        """``(model path, local name)`` of a model-relative link/joint name, or None."""
        parts = name.split(SCOPE)
        for k in range(len(parts) - 1, 0, -1):
            prefix = SCOPE.join(parts[:k])
            if prefix in self.slots:
                return prefix, SCOPE.join(parts[k:])
        if "" in self.slots:
            return "", name
        return None

    def top_paths(self) -> list[str]:
        return [p for p, s in self.slots.items() if len(s.usdf_path) == 1]

    def children(self, path: str) -> list[str]:
        depth = len(self.slots[path].usdf_path)
        prefix = self.slots[path].usdf_path
        return [p for p, s in self.slots.items()
                if len(s.usdf_path) == depth + 1 and s.usdf_path[:depth] == prefix]

    def parent_path(self, path: str) -> str | None:
        s = self.slots[path]
        if len(s.usdf_path) == 1:
            return None
        want = s.usdf_path[:-1]
        return next(p for p, o in self.slots.items() if o.usdf_path == want)

    def frame_in_root(self, path: str, link_pose: dict[str, Transform] | None = None) -> Transform:
        """``X_root_M`` of model path ``path`` given link poses in the root frame (default: zero config)."""
        s = self.slots[path]
        if s.attached_to == "":
            return np.eye(4)
        if s.attached_to == WORLD:
            return np.linalg.inv(self.model.pose) @ s.pose if not self.model.is_world else s.pose.copy()
        if link_pose is not None and s.attached_to in link_pose:
            return link_pose[s.attached_to] @ s.pose
        link = self.model.links.get(s.attached_to)
        if link is not None:
            return np.asarray(link.pose) @ s.pose
        if s.attached_to in self.model.frames:
            fr = self.model.frames[s.attached_to]
            base = self._attached_pose(fr.attached_to, link_pose)
            return base @ fr.pose @ s.pose
        if s.attached_to in self.slots:
            return self.frame_in_root(s.attached_to, link_pose) @ s.pose
        return s.pose.copy()

    def _attached_pose(self, name: str, link_pose: dict[str, Transform] | None) -> Transform:
        if name == WORLD:
            return np.eye(4) if self.model.is_world else np.asarray(np.linalg.inv(self.model.pose), dtype=float)
        if link_pose is not None and name in link_pose:
            return link_pose[name]
        link = self.model.links.get(name)
        return np.asarray(link.pose) if link is not None else np.eye(4)

    def attached_link(self, path: str) -> str | None:
        """The link the model frame is fixed to (following explicit frames), or None (root/world)."""
        name = self.slots[path].attached_to
        for _ in range(64):
            if name in ("", WORLD):
                return None
            if name in self.model.links:
                return name
            if name in self.model.frames:
                name = self.model.frames[name].attached_to
            elif name in self.slots:
                name = self.slots[name].attached_to
            else:
                return None
        return None
