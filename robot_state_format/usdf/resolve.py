"""Parent resolution of a world_state: names, cycles, and world poses of every frame.

Parents name (docs/usdf-spec.md §Parents): ``world``; a ``<frame>`` or a top-level
``<model_state>`` (one namespace); a nested model_state by scoped name ``outer::inner``; or a
link_state by scoped name ``model::link`` / ``outer::inner::link``.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from robot_state_format.errors import Diagnostic, UsdfError
from robot_state_format.spatial import Transform, pose6_to_transform
from robot_state_format.usdf.types import WORLD_FRAME, FrameState, ModelState, WorldState

# A node is ("frame", name) | ("model", scoped) | ("link", scoped_model, link) | ("world",)
Node = tuple[str, ...]


def _index(state: WorldState) -> tuple[dict[str, object], dict[str, ModelState]]:
    top: dict[str, object] = {}
    for f in state.frames:
        top.setdefault(f.name, f)
    models: dict[str, ModelState] = {}

    def walk(ms: ModelState, prefix: str) -> None:
        scoped = f"{prefix}{ms.name}"
        models.setdefault(scoped, ms)
        for n in ms.model_states:
            walk(n, scoped + "::")

    for ms in state.model_states:
        top.setdefault(ms.name, ms)
        walk(ms, "")
    return top, models


_Index = tuple[dict[str, object], dict[str, ModelState]]


def resolve_name(state: WorldState, name: str, index: _Index | None = None) -> Node | None:
    """The node a parent name refers to, or ``None`` when unknown (``index``: :func:`_index` of ``state``,
    made once by a caller resolving many names)."""
    if name == WORLD_FRAME:
        return ("world",)
    top, models = index or _index(state)
    obj = top.get(name)
    if obj is not None:
        return ("model", name) if isinstance(obj, ModelState) else ("frame", name)
    if name in models:
        return ("model", name)
    # model::link — longest model prefix first, the rest is the link name (which may hold '::')
    parts = name.split("::")
    for k in range(len(parts) - 1, 0, -1):
        scoped = "::".join(parts[:k])
        ms = models.get(scoped)
        if ms is not None and ms.link("::".join(parts[k:])) is not None:
            return ("link", scoped, "::".join(parts[k:]))
    return None


def _parent_of(state: WorldState, node: Node, index: _Index | None = None) -> Node | None:
    kind = node[0]
    index = index or _index(state)
    if kind == "frame":
        f = index[0].get(node[1])
        f = f if isinstance(f, FrameState) else state.frame(node[1])
        return resolve_name(state, f.parent or WORLD_FRAME, index) if f is not None else None
    if kind == "model":
        scoped = node[1]
        if "::" in scoped:  # nested: posed in the enclosing model_state
            return ("model", scoped.rsplit("::", 1)[0])
        ms = index[1].get(scoped)
        return resolve_name(state, (ms.parent if ms else None) or WORLD_FRAME, index)
    if kind == "link":
        return ("model", node[1])
    return None


def parent_diagnostics(state: WorldState, *, file: str = "<string>",
                       lines: Mapping[str, int] | None = None) -> list[Diagnostic]:
    """Unknown parents (``USDF_UNKNOWN_PARENT``) and cycles (``USDF_PARENT_CYCLE``)."""
    lines = lines or {}
    out: list[Diagnostic] = []
    index = _index(state)  # once: a chain of thousands of frames resolves in linear time
    starts: list[tuple[str, str, str | None]] = [("frame", f.name, f.parent) for f in state.frames]
    starts += [("model_state", m.name, m.parent) for m in state.model_states]
    for tag, name, parent in starts:
        where = f"{tag}[name={name}]"
        line = lines.get(f"{tag}:{name}")
        if parent is not None and resolve_name(state, parent, index) is None:
            out.append(Diagnostic("USDF_UNKNOWN_PARENT", f"parent {parent!r} names no frame, model_state "
                                  "or link_state (nor 'world')", file, line, where))
    if out:
        return out
    reaches_world: set[Node] = set()  # nodes whose parents were followed to the world already
    for tag, name, _ in starts:
        node: Node | None = ("frame", name) if tag == "frame" else ("model", name)
        seen: list[Node] = []
        on_path: set[Node] = set()
        while node is not None and node[0] != "world" and node not in reaches_world:
            if node in on_path:
                chain = " -> ".join(n[-1] if n[0] != "link" else f"{n[1]}::{n[2]}" for n in seen + [node])
                out.append(Diagnostic("USDF_PARENT_CYCLE", f"parent cycle: {chain}", file,
                                      lines.get(f"{tag}:{name}"), f"{tag}[name={name}]"))
                break
            seen.append(node)
            on_path.add(node)
            node = _parent_of(state, node, index)
        else:
            reaches_world.update(seen)
    return out


def world_poses(state: WorldState) -> dict[str, Transform]:
    """``X_world_F`` for every frame, model_state (scoped) and posed link_state (``model::link``).

    Entries whose pose, or an ancestor's, is absent are left out (absent is not zero).
    Raises :class:`UsdfError` on unknown parents or cycles.
    """
    diags = parent_diagnostics(state)
    if diags:
        raise UsdfError(diags)
    cache: dict[Node, Transform | None] = {("world",): np.eye(4)}
    index = _index(state)

    def pose_of(node: Node) -> Transform | None:
        """Up the parents to one already known, then down again: a loop, not recursion (a chain of
        thousands of frames is a valid state)."""
        path: list[tuple[Node, Node | None]] = []
        n: Node | None = node
        while n is not None and n not in cache:
            cache[n] = None  # guards against re-entry (cycles were ruled out above)
            parent = _parent_of(state, n, index)
            path.append((n, parent))
            n = parent
        for n_, parent in reversed(path):
            local = _local_pose(state, n_)
            up = cache.get(parent) if parent is not None else None
            cache[n_] = None if up is None or local is None else up @ local
        return cache[node]

    out: dict[str, Transform] = {}
    for f in state.frames:
        p = pose_of(("frame", f.name))
        if p is not None:
            out[f.name] = p

    def walk(ms: ModelState, scoped: str) -> None:
        p = pose_of(("model", scoped))
        if p is not None:
            out[scoped] = p
        for ls in ms.link_states:
            lp = pose_of(("link", scoped, ls.name))
            if lp is not None:
                out[f"{scoped}::{ls.name}"] = lp
        for n in ms.model_states:
            walk(n, f"{scoped}::{n.name}")

    for ms in state.model_states:
        walk(ms, ms.name)
    return out


def _local_pose(state: WorldState, node: Node) -> Transform | None:
    if node[0] == "frame":
        f = state.frame(node[1])
        return None if f is None or f.pose is None else pose6_to_transform(f.pose)
    if node[0] == "model":
        ms = state.model(node[1])
        return None if ms is None or ms.pose is None else pose6_to_transform(ms.pose)
    if node[0] == "link":
        ms = state.model(node[1])
        ls = ms.link(node[2]) if ms is not None else None
        return None if ls is None or ls.pose is None else pose6_to_transform(ls.pose)
    return None
