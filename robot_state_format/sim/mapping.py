"""Simulator-neutral mapping between a simulated world and a USDF :class:`WorldState`.

An adapter (MuJoCo, Drake) reports, in the world frame, every link's pose and twist
(``[linear velocity of the link origin, angular velocity]``), and every moving joint's
positions and velocities in this package's layout (docs/kinematics.md); :func:`capture_state`
turns that into a world_state laid out as every other producer of the package does
(:class:`~robot_state_format.usdf.build.SnapshotBuilder`).  :func:`restore_targets` reads a
world_state back into the same quantities, checking it fits the model.

Floating bases: a root link with a free joint makes its model's frame move.  For a model file
the model frame follows the canonical link (URDF: the root link), and the model_state's pose
and twist are that frame's, in the world.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
from numpy.typing import NDArray

from robot_state_format.errors import Diagnostic, Severity, UsdfError
from robot_state_format.kinematics.tree import CompiledTree, compile_model
from robot_state_format.model.types import WORLD, Model
from robot_state_format.spatial import Transform, matrix_to_rpy
from robot_state_format.usdf.build import SnapshotBuilder
from robot_state_format.usdf.resolve import world_poses
from robot_state_format.usdf.types import JointState, ModelState, Stamp, WorldState
from robot_state_format.usdf.validate import validate_against_model

FloatArray = NDArray[np.float64]


@dataclass
class Targets:
    """What a world_state asks a simulator to be in."""

    positions: dict[str, FloatArray]  # every moving tree joint (mimic followers too)
    velocities: dict[str, FloatArray]  # the same, zero where the state has none (see warnings)
    root_poses: dict[str, Transform]  # floating root link -> X_world_link
    root_twists: dict[str, FloatArray]  # floating root link -> [v, w] in the world
    time: float | None
    warnings: list[str] = field(default_factory=list)


def stamp_of(time: float) -> Stamp:
    """The USDF stamp of a simulation time (whole nanoseconds, rounded)."""
    ns = max(0, int(round(time * 1e9)))
    return Stamp(ns // 1_000_000_000, ns % 1_000_000_000)


class WorldMap:
    """A Model prepared for capture/restore: its tree, its model_state layout, its floating roots."""

    def __init__(self, model: Model, floating_roots: list[str]) -> None:
        self.model = model
        self.tree: CompiledTree = compile_model(model)
        self.builder = SnapshotBuilder(model, self.tree)
        self.layout = self.builder.layout
        self.floating_roots = list(floating_roots)
        self.link_index = {n: i for i, n in enumerate(self.tree.link_names)}
        # the link the moving model frame follows (model files with a floating base)
        self.frame_link: str | None = None
        if not model.is_world and self.floating_roots:
            mf = model.models.get("")
            canon = mf.canonical_link if mf is not None else None
            self.frame_link = canon if canon in self.floating_roots else self.floating_roots[0]
        self.moving_joints = [n for j, n in enumerate(self.tree.joint_names) if self.tree.joint_types[j].nq > 0]

    # ---- simulator -> state ---------------------------------------------------------------------

    def capture_state(self, link_poses: FloatArray, link_twists: FloatArray, positions: dict[str, FloatArray],
                      velocities: dict[str, FloatArray], time: float, *, name: str | None = None) -> WorldState:
        """A world_state from world link poses ``(nlinks, 4, 4)`` and twists ``(nlinks, 6)`` in tree
        link order, and every moving joint's positions/velocities (``tree.moving_joint_names`` at
        least; followers keep the simulator's own values)."""
        t = self.tree
        x_wr, v_r, w_r = self.root_motion(link_poses, link_twists)
        r = x_wr[:3, :3]
        rt = r.T
        poses = np.empty_like(link_poses)
        poses[:, :3, :3] = rt @ link_poses[:, :3, :3]
        d = link_poses[:, :3, 3] - x_wr[:3, 3]
        poses[:, :3, 3] = d @ r
        poses[:, 3, :] = (0.0, 0.0, 0.0, 1.0)
        twists = np.empty_like(link_twists)
        twists[:, 3:] = (link_twists[:, 3:] - w_r) @ r
        twists[:, :3] = (link_twists[:, :3] - v_r - np.cross(w_r, d)) @ r
        q = np.concatenate([np.asarray(positions[n], dtype=float) for n in t.moving_joint_names]) \
            if t.moving_joint_names else np.zeros(0)
        v = np.concatenate([np.asarray(velocities[n], dtype=float) for n in t.moving_joint_names]) \
            if t.moving_joint_names else np.zeros(0)
        state = self.builder.state(q, v, link_poses=poses, link_twists=twists, stamp=stamp_of(time))
        if name is not None:
            state.name = name
        # followers: the simulator's own values (a soft constraint may not hold exactly)
        for n in t.mimic_followers:
            js = self._joint_state(state, n)
            if js is not None and n in positions:
                js.positions = tuple(float(x) for x in positions[n])
                if n in velocities:
                    js.velocities = tuple(float(x) for x in velocities[n])
        if self.frame_link is not None:
            top = state.model_states[0]
            rpy = matrix_to_rpy(r)
            top.pose = (float(x_wr[0, 3]), float(x_wr[1, 3]), float(x_wr[2, 3]),
                        float(rpy[0]) + 0.0, float(rpy[1]) + 0.0, float(rpy[2]) + 0.0)
            top.twist = (float(v_r[0]), float(v_r[1]), float(v_r[2]), float(w_r[0]), float(w_r[1]), float(w_r[2]))
        return state

    def root_motion(self, link_poses: FloatArray, link_twists: FloatArray) -> tuple[Transform, FloatArray, FloatArray]:
        """``X_world_root`` and the root frame's ``v, w`` (world) for these link motions."""
        if self.model.is_world:
            return np.eye(4), np.zeros(3), np.zeros(3)
        if self.frame_link is None:
            return np.asarray(self.model.pose, dtype=float), np.zeros(3), np.zeros(3)
        i = self.link_index[self.frame_link]
        x_wc = link_poses[i]
        x_wm = x_wc @ np.linalg.inv(np.asarray(self.model.links[self.frame_link].pose, dtype=float))
        w = link_twists[i, 3:].copy()
        v = link_twists[i, :3] + np.cross(w, x_wm[:3, 3] - x_wc[:3, 3])
        return x_wm, v, w

    def _joint_state(self, state: WorldState, name: str) -> JointState | None:
        ms = self._model_state(state, name)
        split = self.layout.split(name)
        if ms is None or split is None:
            return None
        return ms.joint(split[1])

    def _model_state(self, state: WorldState, name: str) -> ModelState | None:
        split = self.layout.split(name)
        if split is None:
            return None
        return state.model("::".join(self.layout.slots[split[0]].usdf_path))

    # ---- state -> simulator ---------------------------------------------------------------------

    def restore_targets(self, state: WorldState, *, file: str = "<state>") -> Targets:
        """Joint values and floating-root motions asked by ``state``; ``UsdfError`` when it does not
        fit the model (unknown names, wrong counts, missing positions or poses)."""
        diags = [d for d in validate_against_model(state, self.model, file=file) if d.severity is Severity.ERROR]
        t = self.tree
        warnings: list[str] = []
        positions: dict[str, FloatArray] = {}
        velocities: dict[str, FloatArray] = {}
        q = t.neutral()
        v = np.zeros(t.nv)
        at_rest: list[str] = []
        for n in self.moving_joints:
            js = self._joint_state(state, n)
            follower = n in t.mimic_followers
            if js is None or js.positions is None:
                if not follower:
                    diags.append(Diagnostic("USDF_MISSING_JOINT", f"the state has no positions for joint {n!r}",
                                            file, None, f"joint_state[name={n}]"))
                continue
            positions[n] = np.asarray(js.positions, dtype=float)
            if js.velocities is not None:
                velocities[n] = np.asarray(js.velocities, dtype=float)
            elif not follower:
                at_rest.append(n)
            if not follower and n in t.moving_joint_names and len(js.positions) == len(q[t.q_slice(n)]):
                q[t.q_slice(n)] = js.positions
                if js.velocities is not None and len(js.velocities) == len(v[t.v_slice(n)]):
                    v[t.v_slice(n)] = js.velocities
        if diags:
            raise UsdfError(diags)
        if at_rest:
            warnings.append(f"no velocities in the state for {len(at_rest)} joint(s), restored at rest: "
                            + ", ".join(at_rest))
        # followers the state leaves out follow their leaders
        derived_q = t.all_joint_positions(q)
        derived_v = t.all_joint_velocities(v)
        for n in self.moving_joints:
            if n not in positions:
                positions[n] = np.asarray(derived_q[n], dtype=float)
                velocities[n] = np.asarray(derived_v[n], dtype=float)
            elif n not in velocities:
                velocities[n] = np.zeros(self.model.joints[n].nv)
        root_poses: dict[str, Transform] = {}
        root_twists: dict[str, FloatArray] = {}
        if self.floating_roots:
            wp = world_poses(state)
            for link in self.floating_roots:
                x, tw = self._root_world(state, wp, link, warnings)
                root_poses[link] = x
                root_twists[link] = tw
        time = state.stamp.to_seconds() if state.stamp is not None else None
        return Targets(positions, velocities, root_poses, root_twists, time, warnings)

    def _root_world(self, state: WorldState, wp: dict[str, Transform], link: str,
                    warnings: list[str]) -> tuple[Transform, FloatArray]:
        split = self.layout.split(link)
        assert split is not None
        path, local = split
        mscoped = "::".join(self.layout.slots[path].usdf_path)
        ms = state.model(mscoped)
        key = f"{mscoped}::{local}"
        top_name = self.layout.slots[path].usdf_path[0]
        top = state.model(top_name)
        ls = ms.link(local) if ms is not None else None
        if key in wp and ls is not None and ls.pose is not None:
            x = wp[key]
        elif not self.model.is_world and top_name in wp:
            x = wp[top_name] @ np.asarray(self.model.links[link].pose, dtype=float)
        else:
            raise UsdfError(Diagnostic("USDF_MISSING_POSE", f"floating link {link!r}: the state gives no world pose "
                                       f"(neither a link_state pose nor a model_state pose)", "<state>", None,
                                       f"link_state[name={local}]"))
        # world twist: model twist composed with the link's twist in the model (spec §4)
        assert top is not None
        if top.twist is None or top.parent not in (None, WORLD):
            warnings.append(f"floating link {link!r}: model_state {top_name!r} has no twist in the world; "
                            "restored at rest")
            return x, np.zeros(6)
        x_wm = wp[mscoped] if mscoped in wp else np.eye(4)
        vm, wm = np.asarray(top.twist[:3]), np.asarray(top.twist[3:])
        if ms is not top and ms is not None and ms.twist is not None:  # nested: compose once more
            r0 = wp[top_name][:3, :3]
            p = x_wm[:3, 3] - wp[top_name][:3, 3]
            vm = vm + np.cross(wm, p) + r0 @ np.asarray(ms.twist[:3])
            wm = wm + r0 @ np.asarray(ms.twist[3:])
        ls = ms.link(local) if ms is not None else None
        if ls is not None and ls.twist is not None:
            rm = x_wm[:3, :3]
            p = x[:3, 3] - x_wm[:3, 3]
            w = wm + rm @ np.asarray(ls.twist[3:])
            v = vm + np.cross(wm, p) + rm @ np.asarray(ls.twist[:3])
        else:
            w, v = wm, vm + np.cross(wm, x[:3, 3] - x_wm[:3, 3])
        return x, np.concatenate([v, w])


def quat_close(a: FloatArray, b: FloatArray) -> float:
    """Distance of two quaternions as rotations: normalised, up to sign."""
    a = np.asarray(a, dtype=float) / np.linalg.norm(a)
    b = np.asarray(b, dtype=float) / np.linalg.norm(b)
    return float(min(np.abs(a - b).max(), np.abs(a + b).max()))

