"""World states from a Model and joint values, via the kinematics; and a fast snapshot serialiser.

* :func:`state_from_model` — a :class:`WorldState` (every link's pose and twist, every moving
  joint's positions and velocities, mimic followers included) from joint-value mappings.
* :class:`SnapshotBuilder` — the same document as ``write_world_state(state_from_model(...))``,
  serialised straight from numpy arrays through a precompiled text template (usdf/snapshot_text.py:
  one gather, one float formatting call, one join), for the state_publisher's snapshots.  The
  template's text is cut out of ``write_world_state``'s document of the layout (sentinel numbers):
  the writer is the one serialisation.
* :class:`Placement` — where the model's top-level model_state is posed (from outside the model: e.g.
  TF), given to ``build``/``state`` so that the snapshot is placed through the types, never by
  editing its text.
* :func:`world_poses` — every frame/model/link pose of any state in the world frame.

Conventions (docs/usdf-spec.md): a link_state's pose and twist are relative to, and expressed in,
its model_state's frame; a top-level model_state is posed (and its twist given) in the world;
a nested model_state in its enclosing model_state's frame.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from robot_state_format.errors import Diagnostic, UsdfError
from robot_state_format.kinematics.fk import link_twists, pose6_and_twists, poses_and_twists
from robot_state_format.kinematics.tree import CompiledTree, compile_model
from robot_state_format.model.types import Model
from robot_state_format.spatial import matrices_to_rpy
from robot_state_format.usdf.layout import ModelLayout
from robot_state_format.usdf.resolve import world_poses
from robot_state_format.usdf.snapshot_text import SnapshotTemplate, derive_template, sentinels
from robot_state_format.usdf.types import (
    FrameState,
    JointState,
    LinkState,
    ModelState,
    Stamp,
    Vec6,
    WorldState,
)
from robot_state_format.usdf.writer import escape_name, stamp_element, write_world_state

__all__ = ["Placement", "SnapshotBuilder", "state_from_model", "world_poses"]

FloatArray = NDArray[np.float64]


@dataclass(frozen=True)
class Placement:
    """Where a snapshot's (first) top-level model_state is: a pose known from outside the model.

    * ``parent`` None: ``pose`` (``x y z roll pitch yaw``) is in the world and replaces the
      model_state's pose; its twist is kept.  ``pose`` None: pose and twist are unknown, so absent
      (never zero).
    * ``parent`` set: the model_state's ``<parent>`` is that frame, ``pose`` is relative to it (None:
      absent), the twist is absent (not known in that frame), and the state declares
      ``<frame name=parent>``, posed in the world by ``parent_pose`` when known (absent otherwise).

    Worlds (``model.is_world``) are never placed.  Six finite numbers per pose (``UsdfError``
    USDF_ARITY otherwise; non-finite numbers are refused when written).
    """

    pose: tuple[float, ...] | None
    parent: str | None = None
    parent_pose: tuple[float, ...] | None = None

    def __post_init__(self) -> None:
        for field_name in ("pose", "parent_pose"):
            value = getattr(self, field_name)
            if value is not None:
                object.__setattr__(self, field_name, _vec6(value, field_name))

    @property
    def shape(self) -> tuple[bool, str | None, bool]:
        """What the document's text depends on (its numbers aside): pose known, parent, parent pose known."""
        return (self.pose is not None, self.parent, self.parent is not None and self.parent_pose is not None)

    def numbers(self) -> list[float]:
        """The values this placement writes, in :meth:`SnapshotBuilder.build`'s order: pose, parent pose."""
        out: list[float] = list(self.pose) if self.pose is not None else []
        if self.parent is not None and self.parent_pose is not None:
            out += self.parent_pose
        return out

    def apply(self, state: WorldState) -> None:
        """Place ``state``'s first top-level model_state (in place; see the class docstring)."""
        if not state.model_states:
            return
        ms = state.model_states[0]
        ms.pose = _as_vec6(self.pose)
        if self.pose is None or self.parent is not None:
            ms.twist = None
        if self.parent is not None:
            ms.parent = self.parent
            state.frames.append(FrameState(self.parent, None, _as_vec6(self.parent_pose)))


def _vec6(value: Iterable[float], what: str) -> tuple[float, ...]:
    try:
        out = tuple(float(x) for x in value)
    except (TypeError, ValueError):
        raise UsdfError(Diagnostic("USDF_NOT_A_NUMBER", f"placement {what} {value!r} is not numbers", "<output>",
                                   None, "model_state")) from None
    if len(out) != 6:
        raise UsdfError(Diagnostic("USDF_ARITY", f"placement {what} needs 6 numbers, got {len(out)}", "<output>",
                                   None, "model_state"))
    return out


def _as_vec6(value: tuple[float, ...] | None) -> Vec6 | None:
    if value is None:
        return None
    return (value[0], value[1], value[2], value[3], value[4], value[5])


def poses_to_pose6(x: FloatArray) -> FloatArray:
    """``(n, 4, 4)`` transforms → ``(n, 6)`` ``x y z roll pitch yaw`` (transforms.matrices_to_rpy)."""
    out = np.empty((x.shape[0], 6))
    out[:, :3] = x[:, :3, 3]
    out[:, 3:] = matrices_to_rpy(x[:, :3, :3])
    out += 0.0  # -0.0 -> 0.0
    return out


@dataclass
class _Values:
    model_pose: FloatArray  # (k, 6) per slot, in its parent (world or enclosing model)
    model_twist: FloatArray  # (k, 6)
    link_pose: FloatArray  # (n, 6) in its model_state frame, tree link order
    link_twist: FloatArray  # (n, 6)
    qa: FloatArray
    va: FloatArray | None
    efforts: FloatArray | None  # (nv,) independent velocity order


class SnapshotBuilder:
    """Serialise world_state snapshots of one Model fast (see docs/ARCHITECTURE.md, "USDF API").

    ``build(q, v, efforts, link_poses=..., link_twists=..., stamp=...)`` takes the kinematics'
    arrays (``q`` ``(nq,)``, ``v``/``efforts`` ``(nv,)`` in the tree's order, ``link_poses``
    ``(nlinks, 4, 4)`` from ``forward(tree, q)``, ``link_twists`` ``(nlinks, 6)`` from
    ``link_twists(tree, q, v)``; poses/twists are computed when not given).  The text equals
    ``write_world_state(state_from_model(...), pretty=pretty)`` for the same values.
    """

    def __init__(self, model: Model, tree: CompiledTree | None = None, *, name: str | None = None,
                 pretty: bool = True) -> None:
        self.model = model
        self.tree = tree if tree is not None else compile_model(model)
        self.name = name or model.name
        self.pretty = pretty
        self.layout = ModelLayout(model)
        t = self.tree
        self.slot_paths = list(self.layout.slots)
        slot_index = {p: i for i, p in enumerate(self.slot_paths)}
        link_pos = {n: i for i, n in enumerate(t.link_names)}
        # link -> (slot, local name)
        self.link_slot = np.empty(t.nlinks, dtype=np.intp)
        self.link_local: list[str] = []
        for i, n in enumerate(t.link_names):
            split = self.layout.split(n)
            if split is None:
                raise UsdfError(Diagnostic("USDF_UNMAPPED", f"link {n!r} belongs to no model", model.source_file,
                                           None))
            self.link_slot[i] = slot_index[split[0]]
            self.link_local.append(split[1])
        # moving joints (nq > 0) in tree order -> slot, local, qa/va ranges, effort range
        self.joints: list[tuple[int, str, int, int, int, int, int]] = []
        self.joint_model_names: list[str] = []
        for j, n in enumerate(t.joint_names):
            jt = t.joint_types[j]
            if jt.nq == 0:
                continue
            split = self.layout.split(n)
            if split is None:
                raise UsdfError(Diagnostic("USDF_UNMAPPED", f"joint {n!r} belongs to no model",
                                           model.source_file, None))
            eff = -1
            if n in t.moving_joint_names:
                eff = t.v_slice(n).start
            self.joints.append((slot_index[split[0]], split[1], int(t.joint_qa[j]), jt.nq, int(t.joint_va[j]),
                                jt.nv, eff))
            self.joint_model_names.append(n)
        # model frames: X_root_M = X_root_A(q) @ offset (A = attached link, or the root frame itself)
        zero = {n: np.asarray(model.links[n].pose, dtype=float) for n in t.link_names if n in model.links}
        self.slot_link = np.full(len(self.slot_paths), -1, dtype=np.intp)
        self.slot_offset = np.empty((len(self.slot_paths), 4, 4))
        self.slot_parent = np.full(len(self.slot_paths), -1, dtype=np.intp)
        for k, p in enumerate(self.slot_paths):
            x0 = self.layout.frame_in_root(p, zero)
            a = self.layout.attached_link(p)
            if a is not None and a in link_pos:
                self.slot_link[k] = link_pos[a]
                self.slot_offset[k] = np.linalg.inv(zero[a]) @ x0
            else:
                self.slot_offset[k] = x0
            pp = self.layout.parent_path(p)
            if pp is not None:
                self.slot_parent[k] = slot_index[pp]
        self.trivial = (len(self.slot_paths) == 1 and self.slot_link[0] == -1
                        and bool(np.array_equal(self.slot_offset[0], np.eye(4))))
        self._world_pose = np.asarray(model.pose, dtype=float) if not model.is_world else np.eye(4)
        self._templates: dict[tuple[object, ...], SnapshotTemplate] = {}
        self._deps: NDArray[np.bool_] | None = None
        self._trivial_pose6 = poses_to_pose6((self._world_pose @ self.slot_offset[0])[None])
        self._zero6 = np.zeros((1, 6))
        self._zero6.flags.writeable = False

    # ---- what is known ---------------------------------------------------------------------

    def _dependencies(self) -> NDArray[np.bool_]:
        """``(nlinks + njoints_moving_entries, n_moving)``: which moving joints each link pose and each
        joint_state depends on (a mimic follower on its leaders, transitively)."""
        t, model = self.tree, self.model
        mi = {n: i for i, n in enumerate(t.moving_joint_names)}
        nm = len(mi)

        def roots(name: str) -> set[int]:
            """The moving joints ``name`` follows, transitively (a stack, not recursion: a chain of
            thousands of mimic joints is valid; each joint once, so a cycle ends too)."""
            out: set[int] = set()
            todo, seen = [name], {name}
            while todo:
                n = todo.pop()
                if n in mi:
                    out.add(mi[n])
                joint = model.joints.get(n)
                for m in joint.mimic if joint is not None else ():
                    if m.joint not in seen:
                        seen.add(m.joint)
                        todo.append(m.joint)
            return out

        link_dep = np.zeros((t.nlinks, nm), dtype=bool)
        for j, name in enumerate(t.joint_names):  # child link nroot + j; parents come first
            link = t.nroot + j
            par = int(t.link_parent[link])
            if par >= 0:
                link_dep[link] = link_dep[par]
            for r in roots(name):
                link_dep[link, r] = True
        joint_dep = np.zeros((len(self.joints), nm), dtype=bool)
        for k, name in enumerate(self.joint_model_names):
            for r in roots(name):
                joint_dep[k, r] = True
        return np.concatenate([link_dep, joint_dep])

    def known_masks(self, known: NDArray[np.bool_] | None) -> tuple[NDArray[np.bool_], NDArray[np.bool_],
                                                                    NDArray[np.bool_]] | None:
        """``(slot, link, joint_state)`` known masks from ``known`` (per moving joint, in
        ``tree.moving_joint_names`` order), or None when everything is known."""
        if known is None:
            return None
        kn = np.asarray(known, dtype=bool).reshape(len(self.tree.moving_joint_names))
        if kn.all():
            return None
        if self._deps is None:
            self._deps = self._dependencies()
        ok: NDArray[np.bool_] = ~np.any(self._deps[:, ~kn], axis=1)
        nl = self.tree.nlinks
        links, joints = ok[:nl], ok[nl:]
        k = len(self.slot_paths)
        slots = np.ones(k, dtype=bool)
        for s in range(k):  # parents come before children (ModelLayout sorts by depth)
            a = int(self.slot_link[s])
            if a >= 0 and not links[a]:
                slots[s] = False
            par = int(self.slot_parent[s])
            if par >= 0 and not slots[par]:
                slots[s] = False
        return slots, links & slots[self.link_slot], joints

    # ---- numbers ------------------------------------------------------------------------------

    def values(self, q: FloatArray, v: FloatArray | None = None, efforts: FloatArray | None = None, *,
               link_poses: FloatArray | None = None, link_twists_: FloatArray | None = None) -> _Values:
        t = self.tree
        q = np.asarray(q, dtype=np.float64)
        va = None
        if v is not None:
            v = np.asarray(v, dtype=np.float64)
            va = t.expand_v(v)
        if self.trivial and link_poses is None and link_twists_ is None:  # the snapshot path: no 4x4 poses
            pose6, tw = pose6_and_twists(t, q, v, va=va)
            eff = None if efforts is None else np.asarray(efforts, dtype=np.float64).reshape(t.nv)
            return _Values(self._trivial_pose6, self._zero6, pose6, tw if tw is not None else np.zeros((t.nlinks, 6)),
                           t.expand_q(q), va, eff)
        if link_poses is None:
            poses, tw = poses_and_twists(t, q, v if link_twists_ is None else None, va=va)
            if link_twists_ is not None:
                tw = np.asarray(link_twists_, dtype=np.float64)
        else:
            poses = np.asarray(link_poses, dtype=np.float64)
            tw = None
            if v is not None:
                tw = link_twists(t, q, v) if link_twists_ is None else np.asarray(link_twists_, dtype=np.float64)
        qa = t.expand_q(q)
        k = len(self.slot_paths)
        eff = None if efforts is None else np.asarray(efforts, dtype=np.float64).reshape(t.nv)
        if self.trivial:  # one model_state, the model frame is the root frame
            return _Values(self._trivial_pose6, self._zero6, poses_to_pose6(poses),
                           tw if tw is not None else np.zeros((t.nlinks, 6)), qa, va, eff)
        # model frames in the root frame, and their twists
        xm = np.empty((k, 4, 4))
        vm = np.zeros((k, 6))
        for s in range(k):
            a = self.slot_link[s]
            if a >= 0:
                xm[s] = poses[a] @ self.slot_offset[s]
                if tw is not None:
                    w = tw[a, 3:]
                    vm[s, :3] = tw[a, :3] + np.cross(w, xm[s, :3, 3] - poses[a, :3, 3])
                    vm[s, 3:] = w
            else:
                xm[s] = self.slot_offset[s]
        m = xm[self.link_slot]
        rt = np.transpose(m[:, :3, :3], (0, 2, 1))
        lpose = np.zeros_like(poses)
        lpose[:, :3, :3] = rt @ poses[:, :3, :3]
        d = poses[:, :3, 3] - m[:, :3, 3]
        lpose[:, :3, 3] = np.einsum("nij,nj->ni", rt, d)
        lpose[:, 3, 3] = 1.0
        ltw = None
        if tw is not None:
            mv = vm[self.link_slot]
            ltw = np.empty_like(tw)
            ltw[:, 3:] = np.einsum("nij,nj->ni", rt, tw[:, 3:] - mv[:, 3:])
            ltw[:, :3] = np.einsum("nij,nj->ni", rt, tw[:, :3] - mv[:, :3] - np.cross(mv[:, 3:], d))
        # model_state poses/twists in their parents
        mpose = np.empty((k, 4, 4))
        mtw = np.zeros((k, 6))
        for s in range(k):
            par = self.slot_parent[s]
            if par < 0:
                mpose[s] = self._world_pose @ xm[s]
                mtw[s] = vm[s]  # the root frame is the world (worlds) or fixed with M = root (models)
            else:
                rt = xm[par, :3, :3].T
                d = xm[s, :3, 3] - xm[par, :3, 3]
                mpose[s] = np.eye(4)
                mpose[s, :3, :3] = rt @ xm[s, :3, :3]
                mpose[s, :3, 3] = rt @ d
                mtw[s, 3:] = rt @ (vm[s, 3:] - vm[par, 3:])
                mtw[s, :3] = rt @ (vm[s, :3] - vm[par, :3] - np.cross(vm[par, 3:], d))
        return _Values(poses_to_pose6(mpose), mtw, poses_to_pose6(lpose),
                       ltw if ltw is not None else np.zeros((t.nlinks, 6)), qa, va, eff)

    # ---- text ---------------------------------------------------------------------------------

    def build(self, q: FloatArray, v: FloatArray | None = None, efforts: FloatArray | None = None, *,
              link_poses: FloatArray | None = None, link_twists: FloatArray | None = None,
              stamp: Stamp | tuple[int, int] | None = None, known: NDArray[np.bool_] | None = None,
              placement: Placement | None = None) -> str:
        """The world_state document for these joint values (see the class docstring).

        ``known`` (per moving joint, ``tree.moving_joint_names`` order; None: all) leaves out what
        depends on an unmeasured joint: its joint_state, the link_states below it, and the pose and
        twist of a model_state fixed to such a link (absent, never zero).  ``placement`` poses the
        top-level model_state (:class:`Placement`; ignored for worlds).  The text equals
        ``write_world_state(self.state(...same arguments...), pretty=self.pretty)``.
        """
        if self.model.is_world:
            placement = None
        vals = self.values(q, v, efforts, link_poses=link_poses, link_twists_=link_twists)
        has_v = vals.va is not None
        has_e = vals.efforts is not None
        stamp_text = ""
        if stamp is not None:
            sec, nsec = stamp
            if not (isinstance(sec, (int, np.integer)) and isinstance(nsec, (int, np.integer))
                    and sec >= 0 and 0 <= nsec < 10**9):
                raise UsdfError(Diagnostic("USDF_BAD_STAMP", f"bad stamp {stamp!r}", "<output>", None, "stamp"))
            stamp_text = stamp_element(int(sec), int(nsec), pretty=self.pretty)
        template = self._template(has_v, has_e, self.known_masks(known), placement)
        t = self.tree
        k, n = len(self.slot_paths), t.nlinks
        # the values in the template's order, copied in one call
        parts = [vals.model_pose.ravel(), vals.model_twist.ravel(), vals.link_pose.ravel(), vals.link_twist.ravel(),
                 vals.qa.reshape(t.nqa)]
        assert parts[0].size + parts[1].size == 12 * k and parts[2].size + parts[3].size == 12 * n
        if vals.va is not None:
            parts.append(vals.va.reshape(t.nva))
        if vals.efforts is not None:
            parts.append(vals.efforts.reshape(t.nv))
        if placement is not None:
            extra = placement.numbers()
            if extra:
                parts.append(np.asarray(extra, dtype=np.float64))
        size = sum(a.size for a in parts)
        if size > template.nvalues:
            raise ValueError(f"{size} values for a layout of {template.nvalues}")
        buf = np.zeros(template.nvalues + 1) if size < template.nvalues else np.empty(template.nvalues + 1)
        np.concatenate(parts, out=buf[:size])
        return template.render(buf, stamp_text)  # refuses NaN and infinities (check_finite)

    def _template(self, has_v: bool, has_e: bool,
                  masks: tuple[NDArray[np.bool_], NDArray[np.bool_], NDArray[np.bool_]] | None,
                  placement: Placement | None = None) -> SnapshotTemplate:
        """The text of this layout, cut out of the writer's document of a state holding sentinel numbers
        (usdf/snapshot_text.py: the writer alone decides tags, escaping and layout).  The layout is the
        velocities/efforts given, the known masks and the placement's shape (its numbers are values)."""
        shape = placement.shape if placement is not None else None
        key = (has_v, has_e, shape) if masks is None else (has_v, has_e, shape, *(m.tobytes() for m in masks))
        cached = self._templates.get(key)
        if cached is not None:
            return cached
        t = self.tree
        k, n = len(self.slot_paths), t.nlinks
        base_qa = 12 * (k + n)  # the value order of build(): model poses, model twists, link poses, link twists, ...
        base_va = base_qa + t.nqa
        base_e = base_va + (t.nva if has_v else 0)
        base_p = base_e + (t.nv if has_e else 0)
        nplaced = len(placement.numbers()) if placement is not None else 0
        nvalues = base_p + nplaced
        # a parent frame's name is element text: the sentinels must not spell it
        parent = placement.parent if placement is not None else None
        marks = sentinels(nvalues, avoid=escape_name(parent) if parent is not None else "")
        vals = _Values(marks[:6 * k].reshape(k, 6), marks[6 * k:12 * k].reshape(k, 6),
                       marks[12 * k:12 * k + 6 * n].reshape(n, 6), marks[12 * k + 6 * n:base_qa].reshape(n, 6),
                       marks[base_qa:base_va], marks[base_va:base_e] if has_v else None,
                       marks[base_e:base_p] if has_e else None)
        marked = None
        if placement is not None:
            m = marks[base_p:nvalues].tolist()
            pose = m[:6] if placement.pose is not None else None
            marked = Placement(pose, placement.parent, m[len(m) - 6:] if shape is not None and shape[2] else None)
        document = write_world_state(self._assemble(vals, masks, Stamp(0, 0), marked), pretty=self.pretty)
        result = derive_template(document, marks, stamp_element(0, 0, pretty=self.pretty))
        if len(self._templates) >= 32:  # known-joint patterns vary: keep the cache bounded
            self._templates.clear()
        self._templates[key] = result
        return result

    # ---- objects ------------------------------------------------------------------------------

    def state(self, q: FloatArray, v: FloatArray | None = None, efforts: FloatArray | None = None, *,
              link_poses: FloatArray | None = None, link_twists: FloatArray | None = None,
              stamp: Stamp | tuple[int, int] | None = None, known: NDArray[np.bool_] | None = None,
              placement: Placement | None = None) -> WorldState:
        """The same snapshot as a :class:`WorldState` (``known`` and ``placement`` as in :meth:`build`)."""
        vals = self.values(q, v, efforts, link_poses=link_poses, link_twists_=link_twists)
        st = Stamp(int(stamp[0]), int(stamp[1])) if stamp is not None else None
        return self._assemble(vals, self.known_masks(known), st, placement)

    def _assemble(self, vals: _Values,
                  masks: tuple[NDArray[np.bool_], NDArray[np.bool_], NDArray[np.bool_]] | None,
                  stamp: Stamp | None, placement: Placement | None = None) -> WorldState:
        """The :class:`WorldState` of these values: what :meth:`build`'s text holds (``masks``: known_masks)."""
        has_v = vals.va is not None
        slot_ok, link_ok, joint_ok = masks if masks is not None else (None, None, None)
        k = len(self.slot_paths)
        states = []
        for s in range(k):
            name = self.layout.slots[self.slot_paths[s]].usdf_path[-1]
            if slot_ok is not None and not slot_ok[s]:
                states.append(ModelState(name))
                continue
            states.append(ModelState(name, None, _t6(vals.model_pose[s]),
                                     _t6(vals.model_twist[s]) if has_v else None))
        for li in range(self.tree.nlinks):
            if link_ok is not None and not link_ok[li]:
                continue
            s = int(self.link_slot[li])
            states[s].link_states.append(LinkState(self.link_local[li], _t6(vals.link_pose[li]),
                                                   _t6(vals.link_twist[li]) if has_v else None))
        for ji, (slot, local, qa, nq, va, nv, ev) in enumerate(self.joints):
            if joint_ok is not None and not joint_ok[ji]:
                continue
            vel = tuple(vals.va[va:va + nv].tolist()) if vals.va is not None else None
            tor = tuple(vals.efforts[ev:ev + nv].tolist()) if vals.efforts is not None and ev >= 0 else None
            states[slot].joint_states.append(JointState(local, tuple(vals.qa[qa:qa + nq].tolist()), vel, tor))
        top: list[ModelState] = []
        for s in range(k):
            par = int(self.slot_parent[s])
            (top if par < 0 else states[par].model_states).append(states[s])
        state = WorldState(self.name, "1.0", stamp, [], top)
        if placement is not None and not self.model.is_world:
            placement.apply(state)
        return state


def _t6(a: FloatArray) -> tuple[float, float, float, float, float, float]:
    x = a.tolist()
    return (x[0], x[1], x[2], x[3], x[4], x[5])


def state_from_model(
    model: Model,
    positions: Mapping[str, float | Sequence[float]],
    velocities: Mapping[str, float | Sequence[float]] | None = None,
    efforts: Mapping[str, float | Sequence[float]] | None = None,
    stamp: Stamp | tuple[int, int] | None = None,
    *,
    tree: CompiledTree | None = None,
    name: str | None = None,
) -> WorldState:
    """A world_state of ``model`` at these joint values (joints left out: zero / identity).

    Names are model-relative, scoped or unique unscoped (as the kinematics resolves them);
    velocities and efforts are per DOF (``nv`` values).  Unknown names raise ``KinematicsError``.
    """
    builder = SnapshotBuilder(model, tree, name=name)
    t = builder.tree
    q = t.q_from_mapping(positions)
    v = t.v_from_mapping(velocities) if velocities is not None else None
    eff = t.v_from_mapping(efforts) if efforts is not None else None
    state = builder.state(q, v, eff, stamp=stamp)
    if efforts is not None:  # torques only for the joints given (absent is not zero)
        named = {t.resolve_joint(str(n)) for n in efforts}
        by_slot = {id(js): n for js, n in zip(_joint_states(state), builder.joint_model_names, strict=True)}
        for js in _joint_states(state):
            if by_slot[id(js)] not in named:
                js.torques = None
    return state


def _joint_states(state: WorldState) -> list[JointState]:
    """Joint states in SnapshotBuilder.joints order (tree order)."""
    out: list[JointState] = []

    def walk(ms: ModelState) -> None:
        out.extend(ms.joint_states)
        for n in ms.model_states:
            walk(n)

    for ms in state.model_states:
        walk(ms)
    return out
