"""The newest transform of every TF edge, and lookups along parent chains (no rclpy, no tf2).

Enough to place each robot's root frame in the common frame: ``lookup(target, source)`` walks
from ``source`` up its parents until it reaches ``target``, or up from both to a shared ancestor.
No time interpolation: each edge holds the transform received last.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

from robot_state_format.spatial import inverse

Matrix = NDArray[np.float64]
MAX_DEPTH = 1024


class TfTree:
    """Latest ``X_parent_child`` per child frame (frame ids without a leading ``/``)."""

    def __init__(self) -> None:
        self.edges: dict[str, tuple[str, Matrix]] = {}
        self.version = 0

    def set(self, parent: str, child: str, x_parent_child: Matrix) -> None:
        self.edges[child.lstrip("/")] = (parent.lstrip("/"), np.asarray(x_parent_child, dtype=np.float64))
        self.version += 1

    def _chain(self, frame: str) -> dict[str, Matrix]:
        """Every ancestor of ``frame`` (itself included) → ``X_ancestor_frame``."""
        out = {frame: np.eye(4)}
        x = np.eye(4)
        for _ in range(MAX_DEPTH):
            edge = self.edges.get(frame)
            if edge is None or edge[0] in out:
                break
            frame, x_pf = edge
            x = x_pf @ x
            out[frame] = x
        return out

    def lookup(self, target: str, source: str) -> Matrix | None:
        """``X_target_source``, or None when the two frames are not connected."""
        target, source = target.lstrip("/"), source.lstrip("/")
        up = self._chain(source)
        if target in up:
            return up[target]
        x_t = np.eye(4)
        frame = target
        for _ in range(MAX_DEPTH):
            edge = self.edges.get(frame)
            if edge is None:
                return None
            frame, x_pf = edge
            x_t = x_pf @ x_t  # X_frame_target
            if frame in up:
                return inverse(x_t) @ up[frame]
        return None
