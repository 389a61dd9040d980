"""World states from a Model and joint values, via the kinematics; and a fast snapshot serialiser.

* :func:`state_from_model` — a :class:`WorldState` (every link's pose and twist, every moving
  joint's positions and velocities, mimic followers included) from joint-value mappings.
* :class:`SnapshotBuilder` — the same document as ``write_world_state(state_from_model(...))``,
  serialised straight from numpy arrays with one gather and one ``str.format`` per call
  (for the state_publisher's periodic snapshots).
* :func:`world_poses` — every frame/model/link pose of any state in the world frame.

Conventions (docs/usdf-spec.md): a link_state's pose and twist are relative to, and expressed in,
its model_state's frame; a top-level model_state is posed (and its twist given) in the world;
a nested model_state in its enclosing model_state's frame.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from robot_state_format.errors import Diagnostic, UsdfError
from robot_state_format.kinematics.fk import forward, link_twists
from robot_state_format.kinematics.transforms import matrices_to_rpy
from robot_state_format.kinematics.tree import CompiledTree, compile_model
from robot_state_format.model.types import Model
from robot_state_format.usdf.layout import ModelLayout
from robot_state_format.usdf.resolve import world_poses
from robot_state_format.usdf.types import JointState, LinkState, ModelState, Stamp, WorldState
from robot_state_format.usdf.writer import XML_DECLARATION, escape_name

__all__ = ["SnapshotBuilder", "state_from_model", "world_poses"]

FloatArray = NDArray[np.float64]


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
        self._templates: dict[tuple[bool, bool, bool], tuple[str, NDArray[np.intp]]] = {}

    # ---- numbers ------------------------------------------------------------------------------

    def values(self, q: FloatArray, v: FloatArray | None = None, efforts: FloatArray | None = None, *,
               link_poses: FloatArray | None = None, link_twists_: FloatArray | None = None) -> _Values:
        t = self.tree
        q = np.asarray(q, dtype=np.float64)
        poses = forward(t, q) if link_poses is None else np.asarray(link_poses, dtype=np.float64)
        qa = t.expand_q(q)
        va = None
        tw = None
        if v is not None:
            v = np.asarray(v, dtype=np.float64)
            va = t.expand_v(v)
            tw = link_twists(t, q, v) if link_twists_ is None else np.asarray(link_twists_, dtype=np.float64)
        k = len(self.slot_paths)
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
        if self.trivial:
            lpose = poses
            ltw = tw
        else:
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
        eff = None if efforts is None else np.asarray(efforts, dtype=np.float64).reshape(t.nv)
        return _Values(poses_to_pose6(mpose), mtw, poses_to_pose6(lpose),
                       ltw if ltw is not None else np.zeros((t.nlinks, 6)), qa, va, eff)

    # ---- text ---------------------------------------------------------------------------------

    def build(self, q: FloatArray, v: FloatArray | None = None, efforts: FloatArray | None = None, *,
              link_poses: FloatArray | None = None, link_twists: FloatArray | None = None,
              stamp: Stamp | tuple[int, int] | None = None) -> str:
        """The world_state document for these joint values (see the class docstring)."""
        vals = self.values(q, v, efforts, link_poses=link_poses, link_twists_=link_twists)
        has_v = vals.va is not None
        has_e = vals.efforts is not None
        template, order = self._template(has_v, has_e, stamp is not None)
        parts = [vals.model_pose.ravel(), vals.model_twist.ravel(), vals.link_pose.ravel(),
                 vals.link_twist.ravel(), vals.qa]
        if has_v:
            parts.append(vals.va)  # type: ignore[arg-type]
        if has_e:
            parts.append(vals.efforts)  # type: ignore[arg-type]
        flat = np.concatenate(parts)[order]
        if not np.isfinite(flat).all():
            raise UsdfError(Diagnostic("USDF_NON_FINITE", "NaN or infinity in the snapshot values", "<output>",
                                       None, "world_state"))
        strs = list(map(float.__repr__, flat.tolist()))
        if stamp is not None:
            sec, nsec = stamp
            if not (isinstance(sec, (int, np.integer)) and isinstance(nsec, (int, np.integer))
                    and sec >= 0 and 0 <= nsec < 10**9):
                raise UsdfError(Diagnostic("USDF_BAD_STAMP", f"bad stamp {stamp!r}", "<output>", None, "stamp"))
            return template.format(int(sec), int(nsec), *strs)
        return template.format(*strs)

    def _template(self, has_v: bool, has_e: bool, has_stamp: bool) -> tuple[str, NDArray[np.intp]]:
        key = (has_v, has_e, has_stamp)
        cached = self._templates.get(key)
        if cached is not None:
            return cached
        t = self.tree
        k, n = len(self.slot_paths), t.nlinks
        base_mtw, base_lp = k * 6, 2 * k * 6
        base_ltw = base_lp + n * 6
        base_qa = base_ltw + n * 6
        base_va = base_qa + t.nqa
        base_e = base_va + (t.nva if has_v else 0)
        nl = "\n" if self.pretty else ""
        ind = "  " if self.pretty else ""
        out: list[str] = [XML_DECLARATION.replace("{", "{{").replace("}", "}}")]
        order: list[int] = []

        def esc(name: str) -> str:
            return escape_name(name).replace("{", "{{").replace("}", "}}")

        def ph(start: int, count: int) -> str:
            order.extend(range(start, start + count))
            return " ".join(["{}"] * count)

        out.append(f'<world_state name="{esc(self.name)}" version="1.0">{nl}')
        if has_stamp:
            out.append(f'{ind}<stamp sec="{{}}" nanosec="{{}}"/>{nl}')
        children: dict[int, list[int]] = {s: [] for s in range(k)}
        for s in range(k):
            if self.slot_parent[s] >= 0:
                children[int(self.slot_parent[s])].append(s)

        def model(s: int, depth: int) -> None:
            pad, inner = ind * depth, ind * (depth + 1)
            name = self.layout.slots[self.slot_paths[s]].usdf_path[-1]
            out.append(f'{pad}<model_state name="{esc(name)}">{nl}')
            out.append(f"{inner}<pose>{ph(s * 6, 6)}</pose>{nl}")
            if has_v:
                out.append(f"{inner}<twist>{ph(base_mtw + s * 6, 6)}</twist>{nl}")
            i3 = inner + ind
            for li in np.flatnonzero(self.link_slot == s):
                out.append(f'{inner}<link_state name="{esc(self.link_local[li])}">{nl}')
                out.append(f"{i3}<pose>{ph(base_lp + int(li) * 6, 6)}</pose>{nl}")
                if has_v:
                    out.append(f"{i3}<twist>{ph(base_ltw + int(li) * 6, 6)}</twist>{nl}")
                out.append(f"{inner}</link_state>{nl}")
            for slot, local, qa, nq, va, nv, ev in self.joints:
                if slot != s:
                    continue
                out.append(f'{inner}<joint_state name="{esc(local)}">{nl}')
                out.append(f"{i3}<positions>{ph(base_qa + qa, nq)}</positions>{nl}")
                if has_v:
                    out.append(f"{i3}<velocities>{ph(base_va + va, nv)}</velocities>{nl}")
                if has_e and ev >= 0:
                    out.append(f"{i3}<torques>{ph(base_e + ev, nv)}</torques>{nl}")
                out.append(f"{inner}</joint_state>{nl}")
            for c in children[s]:
                model(c, depth + 1)
            out.append(f"{pad}</model_state>{nl}")

        for s in range(k):
            if self.slot_parent[s] < 0:
                model(s, 1)
        out.append(f"</world_state>{nl}")
        result = ("".join(out), np.asarray(order, dtype=np.intp))
        self._templates[key] = result
        return result

    # ---- objects ------------------------------------------------------------------------------

    def state(self, q: FloatArray, v: FloatArray | None = None, efforts: FloatArray | None = None, *,
              link_poses: FloatArray | None = None, link_twists: FloatArray | None = None,
              stamp: Stamp | tuple[int, int] | None = None) -> WorldState:
        """The same snapshot as a :class:`WorldState`."""
        vals = self.values(q, v, efforts, link_poses=link_poses, link_twists_=link_twists)
        has_v = vals.va is not None
        k = len(self.slot_paths)
        states = []
        for s in range(k):
            name = self.layout.slots[self.slot_paths[s]].usdf_path[-1]
            states.append(ModelState(name, None, _t6(vals.model_pose[s]),
                                     _t6(vals.model_twist[s]) if has_v else None))
        for li in range(self.tree.nlinks):
            s = int(self.link_slot[li])
            states[s].link_states.append(LinkState(self.link_local[li], _t6(vals.link_pose[li]),
                                                   _t6(vals.link_twist[li]) if has_v else None))
        for slot, local, qa, nq, va, nv, ev in self.joints:
            vel = tuple(vals.va[va:va + nv].tolist()) if vals.va is not None else None
            tor = tuple(vals.efforts[ev:ev + nv].tolist()) if vals.efforts is not None and ev >= 0 else None
            states[slot].joint_states.append(JointState(local, tuple(vals.qa[qa:qa + nq].tolist()), vel, tor))
        top: list[ModelState] = []
        for s in range(k):
            par = int(self.slot_parent[s])
            (top if par < 0 else states[par].model_states).append(states[s])
        st = Stamp(int(stamp[0]), int(stamp[1])) if stamp is not None else None
        return WorldState(self.name, "1.0", st, [], top)


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
