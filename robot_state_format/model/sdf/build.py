"""Resolved scopes → :class:`~robot_state_format.model.types.Model`.

Joint contract: with R the root frame, P/C the parent/child links and J the joint frame at
zero configuration, ``origin = inv(X_RP) @ X_RJ``, ``child_offset = inv(X_RJ) @ X_RC`` and
axes are unit vectors in J.  A joint whose parent is the world is posed in the root frame.
Loops: a deterministic spanning tree (breadth first from the world, then from the links that
are no joint's child, joints in declaration order); loop-closing joints, gearboxes and joints
to a world child go to ``Model.constraints`` with a warning.
"""

from __future__ import annotations

from collections import deque

import numpy as np

from robot_state_format.model.sdf.elements import Report
from robot_state_format.model.sdf.graph import WORLD_KEY, FrameGraph
from robot_state_format.model.sdf.ir import MODEL_FRAME, FrameIR, JointIR, LinkIR, Scope
from robot_state_format.model.types import (
    WORLD,
    Extension,
    Frame,
    Joint,
    JointType,
    Link,
    Mimic,
    Model,
    ModelFrame,
    Shape,
    Source,
)
from robot_state_format.spatial import Transform, inverse


def build(root: Scope, report: Report, file: str) -> Model:
    graph = FrameGraph(root, report, root.pose)
    model_pose = np.eye(4)
    if not root.is_world:
        model_pose = np.array(root.pose)
        if root.rel:  # (libsdformat 12: "must be left empty", in every version, even "world")
            report.error_at("SDF_RELATIVE_TO_NOT_FOUND",
                            f"the top-level model's pose cannot be relative to {root.rel!r}", root.source)
        if root.placement:
            pk = graph.resolve(root, root.placement)
            x_mp = graph.chain(pk, MODEL_FRAME) if pk is not None else None
            if x_mp is None:
                report.error_at("SDF_PLACEMENT_FRAME_NOT_FOUND",
                                f"placement_frame {root.placement!r} names no frame of model {root.name!r}",
                                root.source)
            else:
                model_pose = model_pose @ inverse(x_mp)
        graph.set_world_pose(model_pose)
    model = Model(name=root.name, format="sdf", is_world=root.is_world, pose=model_pose, source_file=file,
                  version=f"{root.version[0]}.{root.version[1]}")
    scopes = graph.scopes()
    _check_links_exist(graph, scopes, report)
    _links(graph, scopes, model)
    _joints(graph, scopes, model, report)
    _models_and_frames(graph, scopes, model)
    _flattened_model_frames(model)
    for s in scopes:
        for e in s.extensions:
            owner = (s.prefix + e.owner) if e.owner else (_model_name(s) or None)
            model.extensions.append(Extension(e.tag, e.xml, owner, e.source))
    _check_finite(model, report, root.source)
    return model


def _check_finite(model: Model, report: Report, root_source: Source) -> None:
    """Every transform of the result is finite (``SDF_INVALID`` where huge values overflowed)."""
    def bad(x: Transform | None) -> bool:
        return x is not None and not bool(np.all(np.isfinite(x)))

    def complain(what: str, src: Source) -> None:
        report.error_at("SDF_INVALID", f"{what} is not finite (numerically unusable)", src)

    if bad(model.pose):
        complain(f"the pose of model {model.name!r}", root_source)
    for link in model.links.values():
        if bad(link.pose) or (link.inertial is not None and bad(link.inertial.origin)):
            complain(f"the pose of link {link.name!r}", link.source)
        for shape in [*link.visuals, *link.collisions]:
            if bad(shape.origin):
                complain(f"the pose of {shape.name or 'a shape'!r} of link {link.name!r}",
                         shape.source if shape.source.line is not None else link.source)
    for j in [*model.joints.values(), *model.constraints.values()]:
        if bad(j.origin) or bad(j.child_offset):
            complain(f"the pose of joint {j.name!r} relative to its links", j.source)
    for f in model.frames.values():
        if bad(f.pose):
            complain(f"the pose of frame {f.name!r}", f.source)
    for mf in model.models.values():
        if bad(mf.pose):
            complain(f"the pose of model {mf.name!r}", mf.source)


def _model_name(s: Scope) -> str:
    return "" if s.key in (MODEL_FRAME, WORLD) else s.key


def _check_links_exist(graph: FrameGraph, scopes: list[Scope], report: Report) -> None:
    for s in scopes:
        if s.is_world or s.static:
            continue
        if s.canonical is None and graph.canonical(s) is None and not _declares_link(s):
            # libsdformat refuses it in every version
            report.error_at("SDF_MODEL_WITHOUT_LINK", f"model {s.name!r} has no link (only static models may "
                            "have none)", s.source)


def _declares_link(s: Scope) -> bool:
    """Whether a link is declared at all (rejected names are reported on their own), or a nested static model
    (libsdformat attaches the model to the static model's frame, which needs no link)."""
    return any(isinstance(i, LinkIR) or (isinstance(i, Scope) and (i.static or _declares_link(i))) for i in s.items)


def _shape(graph: FrameGraph, scope: Scope, link_key: str, x_rl: Transform | None, shape: Shape,
           rel: str | None) -> Shape:
    if rel is None or x_rl is None:
        return shape
    k = graph.resolve(scope, rel)
    if k is None and rel == WORLD and (scope.is_world or scope.version < (1, 7)):
        k = graph.world_key  # 1.5/1.6 //pose/@frame="world": the world frame
    x_rf = graph.pose(k) if k is not None else None
    if x_rf is None:
        if k is None:
            graph.report.error_at("SDF_RELATIVE_TO_NOT_FOUND",
                                  f"relative_to {rel!r} names no frame in the model of link {link_key!r}",
                                  shape.source)
        return shape
    return Shape(shape.geometry, inverse(x_rl) @ x_rf @ shape.origin, shape.name, shape.material, shape.source)


def _links(graph: FrameGraph, scopes: list[Scope], model: Model) -> None:
    for s in scopes:
        for item in graph.members(s):
            if not isinstance(item, LinkIR):
                continue
            key = s.prefix + item.name
            x = graph.pose(key)
            model.links[key] = Link(
                name=key, pose=np.array(x) if x is not None else np.eye(4), inertial=item.inertial,
                visuals=[_shape(graph, s, key, x, v.shape, v.rel) for v in item.visuals],
                collisions=[_shape(graph, s, key, x, c.shape, c.rel) for c in item.collisions],
                source=item.source)


UNCHECKED_PARENT = ("; libsdformat 12 does not check the parent of a joint in a nested model and Gazebo leaves "
                    "such a joint out ('Failed to resolve parent link'): the joint is left out")


def _nested(scope: Scope) -> bool:
    """A model inside a model (libsdformat 12 checks the joints' parents of the outermost models only)."""
    return scope.parent is not None and not scope.parent.is_world


def _bad_end(report: Report, scope: Scope, which: str, code: str, message: str, j: JointIR) -> None:
    """A joint's end that cannot be resolved: an error, or a warning for a nested model's parent (left out)."""
    if which == "parent" and _nested(scope):
        report.warn_at(code, message + UNCHECKED_PARENT, j.source)
    else:
        report.error_at(code, message, j.source)


def _end(graph: FrameGraph, scope: Scope, j: JointIR, key: str, which: str, report: Report) -> str | None:
    """Resolve a joint's parent or child to a body key or WORLD (None after an error or when left out)."""
    ref = j.parent if which == "parent" else j.child
    if ref == MODEL_FRAME:  # libsdformat 12 finds no frame __model__ for a joint's parent or child
        refused = "" if which == "parent" and _nested(scope) else " (libsdformat refuses it)"
        _bad_end(report, scope, which, f"SDF_JOINT_{which.upper()}_NOT_FOUND", f"joint {key!r}: {which} {ref!r}: "
                 f"a joint's {which} cannot be the model frame itself{refused}", j)
        return None
    k = graph.resolve(scope, ref)
    if k is None:
        if ref == WORLD:
            if which == "child":  # libsdformat refuses it in every version
                report.error_at("SDF_JOINT_CHILD_WORLD", f"joint {key!r}: the child cannot be the world", j.source)
                return None
            return WORLD
        if ref.startswith("::") or ref.endswith("::") or "::::" in ref:
            _bad_end(report, scope, which, "SDF_INVALID_SCOPED_NAME", f"joint {key!r}: {which} {ref!r} is not a "
                     "valid scoped name (no outer scope can be named)", j)
            return None
        if "::" not in ref and graph.exists_elsewhere(ref):
            code = "NOT_SIBLING"
            msg = f"joint {key!r}: {which} {ref!r} exists elsewhere but is not a sibling of the joint"
        else:
            code = "NOT_FOUND"
            msg = f"joint {key!r}: {which} {ref!r} names no link in this model"
        _bad_end(report, scope, which, f"SDF_JOINT_{which.upper()}_{code}", msg, j)
        return None
    v = graph.vertices[k]
    if v.kind == "joint" and v.item is j:
        report.error_at("SDF_ATTACHED_TO_CYCLE", f"joint {key!r} names itself as its {which}", j.source)
        return None
    return graph.body(k)


def _axis(graph: FrameGraph, scope: Scope, j: JointIR, key: str, x_rj: Transform, which: int,
          report: Report) -> tuple[float, float, float] | None:
    ax = j.axis if which == 1 else j.axis2
    if ax is None:
        return None
    v = np.array(ax.xyz, dtype=float)
    if ax.expressed_in is not None:
        ek = graph.resolve(scope, ax.expressed_in)
        x_re = graph.pose(ek) if ek is not None else None
        if ek is None:  # libsdformat 12 loads it (JointAxis::ResolveXyz fails later); Gazebo's physics then
            # takes xyz as written, in the joint frame
            report.warn_at("SDF_EXPRESSED_IN_NOT_FOUND",
                           f"joint {key!r}: expressed_in {ax.expressed_in!r} names no frame in its model; libsdformat "
                           "12 loads the file but cannot resolve this axis, and Gazebo's physics reads xyz in the "
                           "joint frame: read so here", ax.source if ax.source.line is not None else j.source)
        elif x_re is None:
            return None
        else:
            v = (x_rj[:3, :3].T @ x_re[:3, :3]) @ v
    n = float(np.linalg.norm(v))
    if not np.isfinite(n) or n < 1e-12:
        report.error_at("SDF_AXIS_ZERO", f"joint {key!r}: axis xyz is the zero vector", j.source)
        return None
    v = v / n
    return (float(v[0]), float(v[1]), float(v[2]))


def _joints(graph: FrameGraph, scopes: list[Scope], model: Model, report: Report) -> None:
    candidates: list[Joint] = []
    for s in scopes:
        for item in graph.members(s):
            if not isinstance(item, JointIR):
                continue
            key = s.prefix + item.name
            vkey = graph.key_of(s, item)
            if item.parent == item.child:
                report.error_at("SDF_JOINT_PARENT_SAME_AS_CHILD",
                                f"joint {key!r}: parent and child are both {item.parent!r}", item.source)
                continue
            parent = _end(graph, s, item, key, "parent", report)
            child = _end(graph, s, item, key, "child", report)
            if parent is None or child is None:
                continue
            if parent == child:
                _bad_end(report, s, "parent", "SDF_JOINT_SAME_LINK", f"joint {key!r}: parent {item.parent!r} and "
                         f"child {item.child!r} are both attached to {parent!r}", item)
                continue
            x_rj = graph.pose(vkey)
            x_rp = np.eye(4) if parent == WORLD else graph.pose(parent)
            x_rc = np.eye(4) if child == WORLD else graph.pose(child)
            if x_rj is None or x_rp is None or x_rc is None:
                continue
            joint = Joint(name=key, type=item.type, parent=parent, child=child,
                          origin=inverse(x_rp) @ x_rj, child_offset=inverse(x_rj) @ x_rc,
                          screw_pitch=item.screw_pitch, gearbox_ratio=item.gearbox_ratio, source=item.source)
            for which, ax in ((1, item.axis), (2, item.axis2)):
                if ax is None:
                    continue
                vec = _axis(graph, s, item, key, x_rj, which, report)
                if which == 1:
                    joint.axis, joint.limits, joint.dynamics = vec, ax.limits, ax.dynamics
                else:
                    joint.axis2, joint.limits2, joint.dynamics2 = vec, ax.limits, ax.dynamics
            if item.type is JointType.CONTINUOUS and joint.limits is not None:
                joint.limits.lower = joint.limits.upper = None
            for m in item.mimic:
                lk = graph.resolve(s, m.joint)
                if lk is None or graph.vertices[lk].kind != "joint":
                    report.error_at("SDF_MIMIC_JOINT_NOT_FOUND",
                                    f"joint {key!r} mimics {m.joint!r}, which is no joint of its model", m.source)
                    continue
                joint.mimic.append(Mimic(lk, m.multiplier, m.offset, m.dof, m.leader_dof))
            if item.gearbox_reference_body is not None:
                rk = graph.resolve(s, item.gearbox_reference_body)
                if rk is None and item.gearbox_reference_body != WORLD:
                    report.error_at("SDF_GEARBOX_REFERENCE_NOT_FOUND",
                                    f"joint {key!r}: gearbox_reference_body {item.gearbox_reference_body!r} "
                                    "names no link", item.source)
                joint.gearbox_reference_body = graph.body(rk) if rk is not None else WORLD
            candidates.append(joint)
    _mimic_cycles(candidates, report)
    _spanning_tree(candidates, model, report)


def _mimic_cycles(joints: list[Joint], report: Report) -> None:
    """A follower axis that (through a chain of mimics) follows itself is an error
    (``SDF_MIMIC_CYCLE``), a joint axis mimicking itself included."""
    edges: dict[tuple[str, int], list[tuple[str, int]]] = {}
    by_name = {j.name: j for j in joints}
    for j in joints:
        for m in j.mimic:
            edges.setdefault((j.name, m.dof), []).append((m.joint, m.leader_dof))
    done: set[tuple[str, int]] = set()
    reported: set[frozenset[tuple[str, int]]] = set()
    for start in edges:
        if start in done:
            continue
        path: list[tuple[str, int]] = [start]
        on_path = {start}
        todo = [iter(edges.get(start, []))]
        while todo:
            nxt = next(todo[-1], None)
            if nxt is None:
                node = path.pop()
                on_path.discard(node)
                done.add(node)
                todo.pop()
                continue
            if nxt in on_path:
                ring = path[path.index(nxt):]
                if frozenset(ring) not in reported:
                    reported.add(frozenset(ring))
                    first = by_name[ring[0][0]]
                    if len(ring) == 1:
                        msg = f"joint {first.name!r} mimics itself"
                    else:
                        msg = "mimic joints form a cycle: " + " -> ".join(n for n, _ in [*ring, ring[0]])
                    report.error_at("SDF_MIMIC_CYCLE", msg, first.source)
            elif nxt not in done:
                path.append(nxt)
                on_path.add(nxt)
                todo.append(iter(edges.get(nxt, [])))


def _spanning_tree(candidates: list[Joint], model: Model, report: Report) -> None:
    tree_edges: list[Joint] = []
    by_parent: dict[str, list[Joint]] = {}
    for j in candidates:
        if j.type is JointType.GEARBOX:
            model.constraints[j.name] = j
            report.warn_at("SDF_GEARBOX_CONSTRAINT",
                           f"gearbox joint {j.name!r} couples joint rates; kept as a constraint, not a tree edge",
                           j.source)
        elif j.child == WORLD:
            model.constraints[j.name] = j
            report.warn_at("SDF_JOINT_TO_WORLD_CHILD",
                           f"joint {j.name!r} has the world as its child; kept as a constraint", j.source)
        else:
            by_parent.setdefault(j.parent, []).append(j)
            tree_edges.append(j)
    is_child = {j.child for j in tree_edges}
    visited: set[str] = {WORLD}
    queue: deque[str] = deque([WORLD])
    roots = [n for n in model.links if n not in is_child]
    pending = [*roots, *model.links]
    in_tree: set[str] = set()

    def drain() -> None:
        while queue:
            node = queue.popleft()
            for j in by_parent.get(node, []):
                if j.child not in visited:
                    visited.add(j.child)
                    in_tree.add(j.name)
                    queue.append(j.child)

    drain()
    for n in pending:
        if n not in visited:
            visited.add(n)
            queue.append(n)
            drain()
    for j in tree_edges:
        if j.name in in_tree:
            model.joints[j.name] = j
        else:
            model.constraints[j.name] = j
            report.warn_at("SDF_KINEMATIC_LOOP",
                           f"joint {j.name!r} closes a kinematic loop (child {j.child!r} already has a parent "
                           "joint); kept as a constraint", j.source)


def _models_and_frames(graph: FrameGraph, scopes: list[Scope], model: Model) -> None:
    for s in scopes:
        for item in graph.members(s):
            if isinstance(item, FrameIR):
                _frame(graph, s, item, model)
        if s.is_world:
            continue
        body = graph.body(s.key)
        x = graph.pose(s.key)
        if body is None or x is None:
            continue
        if body != WORLD:
            xb = graph.pose(body)
            if xb is None:
                continue
            x = inverse(xb) @ x
        canon = graph.canonical(s)
        model.models[_model_name(s)] = ModelFrame(name=_model_name(s), attached_to=body, pose=x,
                                                  canonical_link=canon, static=s.static, source=s.source)


def _flattened_model_frames(model: Model) -> None:
    """A 1.7 model flattened by libsdformat (``inner::link``, frame ``inner::__model__``) is a nested
    model again for libsdformat 12, which rebuilds it: its model frame is listed as the model ``inner``."""
    for name, frame in list(model.frames.items()):
        if name.endswith("::" + MODEL_FRAME):
            inner = name[:-len("::" + MODEL_FRAME)]
            if inner and inner not in model.models:
                model.models[inner] = ModelFrame(name=inner, attached_to=frame.attached_to, pose=frame.pose,
                                                 source=frame.source)


def _frame(graph: FrameGraph, s: Scope, item: FrameIR, model: Model) -> None:
    key = s.prefix + item.name
    vkey = graph.key_of(s, item)
    body = graph.body(vkey)
    x = graph.pose(vkey)
    if body is None or x is None:
        return
    if body != WORLD:
        xb = graph.pose(body)
        if xb is None:
            return
        x = inverse(xb) @ x
    model.frames[key] = Frame(name=key, attached_to=body, pose=x, source=item.source)


_ = WORLD_KEY
