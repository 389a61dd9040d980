"""The pose graph and the attached-to graph of SDFormat 1.7+ (older versions are normalised
to the same form while parsing).

Vertices are keyed by their model-relative scoped name (``link``, ``inner::link``; in a world
``robot::link``).  A nested model's frame is the vertex named after the model (``inner``,
which ``inner::__model__`` also names).  The root is ``__model__`` for a model file and
``world`` for a world file; in a model file the world frame is the extra vertex
:data:`WORLD_KEY`, at ``inv(model pose)`` in the root frame (:attr:`FrameGraph.world_key`
names the world frame's vertex either way).

References resolve only *inward*: from a scope, ``a::b`` names ``b`` in the nested model
``a``; there is no way to name an outer scope.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from robot_state_format.model.sdf.elements import Report
from robot_state_format.model.sdf.ir import MODEL_FRAME, FrameIR, Item, JointIR, LinkIR, Scope
from robot_state_format.model.sdf.naming import check_names, check_root_name
from robot_state_format.model.types import WORLD, Source
from robot_state_format.spatial import Transform, inverse

WORLD_KEY = "<world>"
FAILED = object()


@dataclass
class Vertex:
    key: str
    kind: str  # link, joint, frame, model, root, world
    item: Item | None
    scope: Scope | None  # the scope the vertex is declared in (None for the root and WORLD_KEY)


class FrameGraph:
    def __init__(self, root: Scope, report: Report, world_pose: Transform) -> None:
        self.root = root
        self.report = report
        self.vertices: dict[str, Vertex] = {}
        self._edges: dict[str, tuple[str | None, Transform] | None] = {}
        self._edge_busy: set[str] = set()
        self._poses: dict[str, Transform | None] = {}
        self._bodies: dict[str, object] = {}
        self._canonical: dict[str, object] = {}
        self._reported: set[tuple[str, str]] = set()
        root.parent = None
        self.world_key = WORLD if root.is_world else WORLD_KEY
        if root.is_world:
            root.key, root.prefix = WORLD, ""
            self.vertices[WORLD] = Vertex(WORLD, "root", root, None)
        else:
            root.key, root.prefix = MODEL_FRAME, ""
            self.vertices[MODEL_FRAME] = Vertex(MODEL_FRAME, "root", root, None)
            self.vertices[WORLD_KEY] = Vertex(WORLD_KEY, "world", None, None)
            self._poses[WORLD_KEY] = inverse(world_pose)
            self._edges[WORLD_KEY] = (None, inverse(world_pose))
        check_root_name(root, report)
        self._index(root)

    def set_world_pose(self, x_world_root: Transform) -> None:
        """Place the world frame of a model file (before any pose through it is computed)."""
        if not self.root.is_world:
            self._poses[WORLD_KEY] = inverse(x_world_root)
            self._edges[WORLD_KEY] = (None, inverse(x_world_root))

    # ----------------------------------------------------------------- structure
    def _index(self, scope: Scope) -> None:
        check_names(scope, self.report)
        for item in scope.accepted:
            key = self.key_of(scope, item)
            if isinstance(item, Scope):
                item.parent = scope
                item.key, item.prefix = key, key + "::"
                self.vertices[key] = Vertex(key, "model", item, scope)
                self._index(item)
            else:
                self.vertices[key] = Vertex(key, item.kind, item, scope)

    def key_of(self, scope: Scope, item: Item) -> str:
        """Vertex key of a member; a pre-1.7 namesake of another type gets a private key."""
        if scope.local.get(item.name) is item:
            return scope.prefix + item.name
        return f"{scope.prefix}{item.name}\x00{item.kind}"

    def scopes(self) -> list[Scope]:
        out: list[Scope] = []

        def rec(s: Scope) -> None:
            out.append(s)
            for item in s.accepted:
                if isinstance(item, Scope):
                    rec(item)

        rec(self.root)
        return out

    def members(self, scope: Scope) -> list[Item]:
        """Members that made it into the graph (duplicates and empty names left out)."""
        return list(scope.accepted)

    def resolve(self, scope: Scope, ref: str) -> str | None:
        """The vertex a scope-relative name refers to, or ``None``."""
        if ref == MODEL_FRAME:
            return scope.key
        if ref in scope.local and (ref != WORLD or scope.version < (1, 7)):
            return scope.prefix + ref
        if ref == WORLD:
            return scope.key if scope.is_world else None
        parts = ref.split("::")
        if any(p == "" for p in parts):
            return None
        s = scope
        for p in parts[:-1]:
            nxt = s.local.get(p)
            if not isinstance(nxt, Scope):
                return None
            s = nxt
        last = parts[-1]
        if last == MODEL_FRAME:
            return s.key
        if last in s.local:
            return s.prefix + last
        return None

    def exists_elsewhere(self, name: str) -> bool:
        """Whether ``name`` is a member of some scope (to tell 'not found' from 'not a sibling')."""
        return any(name in s.local for s in self.scopes())

    # ----------------------------------------------------------------- errors
    def _error(self, code: str, message: str, src: Source, key: str) -> None:
        if (code, key) in self._reported:
            return
        self._reported.add((code, key))
        self.report.error_at(code, message, src)

    # ----------------------------------------------------------------- pose graph
    def _edge(self, key: str) -> tuple[str | None, Transform] | None:
        if key in self._edges:
            return self._edges[key]
        if key in self._edge_busy:
            v = self.vertices[key]
            self._error("SDF_POSE_GRAPH_CYCLE", f"the pose of {key!r} depends on itself", _src(v), key)
            return None
        self._edge_busy.add(key)
        try:
            result = self._compute_edge(key)
        finally:
            self._edge_busy.discard(key)
        self._edges[key] = result
        return result

    def _compute_edge(self, key: str) -> tuple[str | None, Transform] | None:
        v = self.vertices[key]
        item = v.item
        if v.kind == "root":
            return None, np.eye(4)
        assert v.scope is not None and item is not None
        scope = v.scope
        what = "relative_to"
        if isinstance(item, LinkIR):
            rel: str = item.rel
        elif isinstance(item, FrameIR):
            rel = item.rel or item.attached_to
            what = "relative_to" if item.rel else "attached_to"
        elif isinstance(item, JointIR):
            rel = item.rel or item.child
            what = "relative_to" if item.rel else "child"
        else:
            assert isinstance(item, Scope)
            rel = item.rel or (WORLD if scope.is_world else MODEL_FRAME)
        parent = self.resolve(scope, rel)
        if parent is None:
            # (a 1.5/1.6 //pose/@frame="world" in a model is refused too: libsdformat 12 reads it as
            # relative_to="world", which no model can name)
            if rel == WORLD and not scope.is_world and what == "child":
                parent = self.world_key
            else:
                if what == "relative_to":
                    self._error("SDF_RELATIVE_TO_NOT_FOUND",
                                f"relative_to {rel!r} of {key!r} names no frame in its model", _src(v), key)
                return None
        if parent == key:
            self._error("SDF_POSE_GRAPH_CYCLE", f"{key!r} is posed relative to itself", _src(v), key)
            return None
        x = np.array(item.pose)
        placement = item.placement if isinstance(item, (Scope, FrameIR)) else None
        if placement:
            pscope = item if isinstance(item, Scope) else scope
            pkey = self.resolve(pscope, placement)
            x_mp = self.chain(pkey, key) if pkey is not None else None
            if x_mp is None:
                self._error("SDF_PLACEMENT_FRAME_NOT_FOUND",
                            f"placement_frame {placement!r} names no frame of model {item.name!r}", _src(v), key)
                return None
            x = x @ inverse(x_mp)
        return parent, x

    def chain(self, key: str, stop: str) -> Transform | None:
        """Pose of ``key`` relative to ``stop``, following relative_to edges up to ``stop``."""
        x = np.eye(4)
        seen: set[str] = set()
        k: str | None = key
        while k != stop:
            if k is None or k in seen:
                return None
            seen.add(k)
            e = self._edge(k)
            if e is None:
                return None
            k, xe = e
            x = xe @ x
        return x

    def pose(self, key: str) -> Transform | None:
        """Zero-configuration pose of a vertex in the root frame (``None`` after an error)."""
        if key in self._poses:
            return self._poses[key]
        path: list[tuple[str, Transform]] = []
        on_path: set[str] = set()
        k: str | None = key
        base: Transform | None = None
        while True:
            assert k is not None
            if k in self._poses:
                base = self._poses[k]
                break
            if k in on_path:
                v = self.vertices[k]
                self._error("SDF_POSE_GRAPH_CYCLE", f"relative_to graph has a cycle through {k!r}", _src(v), k)
                base = None
                break
            on_path.add(k)
            e = self._edge(k)
            if e is None:
                self._poses[k] = None
                base = None
                break
            parent, x = e
            if parent is None:
                self._poses[k] = x
                base = x
                break
            path.append((k, x))
            k = parent
        for pk, px in reversed(path):
            base = None if base is None else base @ px
            if base is not None and not np.all(np.isfinite(base)):
                v = self.vertices[pk]
                self._error("SDF_INVALID", f"the pose of {pk!r} is not finite (numerically unusable)", _src(v), pk)
                base = None
            self._poses[pk] = base
        return self._poses.get(key)

    def relative(self, key: str, frame: str) -> Transform | None:
        a, b = self.pose(key), self.pose(frame)
        return None if a is None or b is None else inverse(b) @ a

    # ----------------------------------------------------------------- attached-to graph
    def canonical(self, scope: Scope) -> str | None:
        """Key of the canonical link of a model (explicit, first link, or first nested model's)."""
        if scope.key in self._canonical:
            c = self._canonical[scope.key]
            return c if isinstance(c, str) else None
        self._canonical[scope.key] = FAILED
        result: str | None = None
        if scope.canonical:
            k = self.resolve(scope, scope.canonical)
            if k is None or self.vertices[k].kind != "link":  # a nested "n::l" in any version, as libsdformat 12
                self._error("SDF_CANONICAL_LINK_NOT_FOUND",
                            f"canonical_link {scope.canonical!r} names no link of model {scope.name!r}",
                            scope.source, scope.key)
            else:
                result = k
        else:
            for item in self.members(scope):
                if isinstance(item, LinkIR):
                    result = scope.prefix + item.name
                    break
            if result is None and scope.version >= (1, 5):
                for item in self.members(scope):
                    if isinstance(item, Scope):
                        result = self.canonical(item)
                        if result is not None:
                            break
        self._canonical[scope.key] = result if result is not None else FAILED
        return result

    def body(self, key: str) -> str | None:
        """The link (key) or :data:`WORLD` a vertex is attached to; ``None`` after an error."""
        if key in self._bodies:
            b = self._bodies[key]
            return b if isinstance(b, str) else None
        seen: list[str] = []
        k: str | None = key
        result: str | None = None
        while True:
            assert k is not None
            if k in self._bodies:
                b = self._bodies[k]
                result = b if isinstance(b, str) else None
                break
            if k in seen:
                v = self.vertices[k]
                self._error("SDF_ATTACHED_TO_CYCLE", f"attached_to graph has a cycle through {k!r}", _src(v), k)
                result = None
                break
            seen.append(k)
            v = self.vertices[k]
            nxt, final = self._attached(v)
            if nxt is None:
                result = final
                break
            k = nxt
        for s in seen:
            self._bodies[s] = result if result is not None else FAILED
        return result

    def _attached(self, v: Vertex) -> tuple[str | None, str | None]:
        """(next vertex, or None with the final body)."""
        item = v.item
        if v.kind == "world":
            return None, WORLD
        if v.kind == "root":
            assert isinstance(item, Scope)
            if item.is_world or item.static:
                return None, WORLD
            c = self.canonical(item)
            return (None, WORLD) if c is None else (c, None)
        if isinstance(item, LinkIR):
            return None, v.key
        assert v.scope is not None
        scope = v.scope
        if isinstance(item, Scope):
            if item.static:
                return None, WORLD
            c = self.canonical(item)
            return (None, WORLD) if c is None else (c, None)
        if isinstance(item, JointIR):
            k = self.resolve(scope, item.child)
            if k is None:
                return None, WORLD if item.child == WORLD else None
            return k, None
        assert isinstance(item, FrameIR)
        k = self.resolve(scope, item.attached_to)
        if k is None:
            if item.attached_to == WORLD and scope.is_world:  # in a model: refused in every version, as libsdformat 12
                return None, WORLD
            self._error("SDF_ATTACHED_TO_NOT_FOUND",
                        f"attached_to {item.attached_to!r} of frame {v.key!r} names no frame in its model",
                        item.source, v.key)
            return None, None
        if k == v.key:
            self._error("SDF_ATTACHED_TO_CYCLE", f"frame {v.key!r} is attached to itself", item.source, v.key)
            return None, None
        return k, None


def _src(v: Vertex) -> Source:
    if v.item is None:
        return Source()
    return v.item.source
