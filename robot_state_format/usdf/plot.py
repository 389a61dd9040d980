"""A matplotlib picture of a world_state: link origins joined parent → child, frames as small axes."""

from __future__ import annotations

import io
import os
from pathlib import Path
from typing import Any

import numpy as np

from robot_state_format.lazy_modules import MissingDependencyError
from robot_state_format.model.types import WORLD, Model
from robot_state_format.usdf.atomic import atomic_write
from robot_state_format.usdf.layout import ModelLayout
from robot_state_format.usdf.resolve import world_poses
from robot_state_format.usdf.types import ModelState, WorldState


def _state_link_name(layout: ModelLayout, name: str) -> str | None:
    split = layout.split(name)
    if split is None:
        return None
    return "::".join((*layout.slots[split[0]].usdf_path, split[1]))


def pyplot() -> Any:
    """``matplotlib.pyplot`` on the file-only Agg backend (optional: ``MissingDependencyError`` when missing)."""
    try:
        import matplotlib

        matplotlib.use("Agg", force=False)
        import matplotlib.pyplot as plt
    except ImportError:
        raise MissingDependencyError.of("matplotlib") from None
    return plt


def plot_world_state(state: WorldState, out: str | os.PathLike[str], *, model: Model | None = None,
                     title: str | None = None, dpi: int = 120) -> Path:
    """Draw ``state`` into a PNG at ``out`` (the model adds the parent → child link edges)."""
    plt = pyplot()
    wp = world_poses(state)
    links: dict[str, np.ndarray] = {}
    models: dict[str, np.ndarray] = {}

    def walk(ms: ModelState, scoped: str) -> None:
        if scoped in wp:
            models[scoped] = wp[scoped]
        for ls in ms.link_states:
            key = f"{scoped}::{ls.name}"
            if key in wp:
                links[key] = wp[key]
        for n in ms.model_states:
            walk(n, f"{scoped}::{n.name}")

    for ms in state.model_states:
        walk(ms, ms.name)
    frames = {f.name: wp[f.name] for f in state.frames if f.name in wp}
    edges: list[tuple[str, str]] = []
    if model is not None:
        layout = ModelLayout(model)
        for j in model.joints.values():
            c = _state_link_name(layout, j.child)
            p = _state_link_name(layout, j.parent) if j.parent != WORLD else None
            if c in links and p in links:
                edges.append((p, c))
    else:  # no model: join each link to its model frame
        for key in links:
            owner = key.rsplit("::", 1)[0]
            if owner in models:
                edges.append((owner, key))

    points = [x[:3, 3] for x in (*links.values(), *models.values(), *frames.values())]
    pts = np.array(points) if points else np.zeros((1, 3))
    lo, hi = pts.min(axis=0), pts.max(axis=0)
    span = float(max(np.max(hi - lo), 0.2))
    axis_len = 0.06 * span

    fig = plt.figure(figsize=(7, 7))
    ax = fig.add_subplot(projection="3d")
    for a, b in edges:
        pa = links.get(a, models.get(a))
        pb = links[b]
        if pa is not None:
            ax.plot(*zip(pa[:3, 3], pb[:3, 3], strict=True), color="0.35", linewidth=1.6)
    if links:
        lp = np.array([x[:3, 3] for x in links.values()])
        ax.scatter(lp[:, 0], lp[:, 1], lp[:, 2], s=14, color="black", depthshade=False, label="link origins")

    def draw_axes(x: np.ndarray, length: float, width: float) -> None:
        o = x[:3, 3]
        for k, color in enumerate(("tab:red", "tab:green", "tab:blue")):
            e = o + length * x[:3, k]
            ax.plot([o[0], e[0]], [o[1], e[1]], [o[2], e[2]], color=color, linewidth=width)

    for x in links.values():
        draw_axes(x, axis_len * 0.6, 1.0)
    for name, x in (*models.items(), *frames.items()):
        draw_axes(x, axis_len * 1.5, 2.2)
        ax.text(*x[:3, 3], f" {name}", fontsize=7, color="tab:purple")
    draw_axes(np.eye(4), axis_len * 2, 1.5)
    ax.text(0, 0, 0, " world", fontsize=7)

    center = (lo + hi) / 2
    half = span / 2 * 1.1
    ax.set_xlim(center[0] - half, center[0] + half)
    ax.set_ylim(center[1] - half, center[1] + half)
    ax.set_zlim(center[2] - half, center[2] + half)
    ax.set_box_aspect((1, 1, 1))
    ax.set_xlabel("x [m]")
    ax.set_ylabel("y [m]")
    ax.set_zlabel("z [m]")
    stamp = f"  t={state.stamp.sec}.{state.stamp.nanosec:09d}" if state.stamp else ""
    ax.set_title(title or f"world_state {state.name!r}{stamp}: {len(links)} links, "
                 f"{len(models)} model_states, {len(frames)} frames", fontsize=9)
    out_path = Path(out)
    png = io.BytesIO()  # PNG whatever the name ends with: matplotlib would add ".png" to a name without one
    fig.savefig(png, dpi=dpi, format="png")
    plt.close(fig)
    atomic_write(out_path, png.getvalue())  # exactly ``out`` (a FIFO or a device is refused, USDF_IO)
    return out_path
