"""MuJoCo adapter: a passive simulation of a Model, captured to and restored from USDF.

The MuJoCo model is generated from the Model (:mod:`robot_state_format.sim.mjcf_writer`), so every link
is a body and every joint a joint of the same name.  :meth:`MujocoSim.capture` writes the spec's
elements (model poses and twists, link poses and twists, joint positions and velocities, the
stamp) plus the simulator-state extension (:mod:`robot_state_format.usdf.simulator_state`): the
whole of MuJoCo's integration state (``mjSTATE_INTEGRATION``: time, qpos, qvel, act,
qacc_warmstart, ctrl, applied forces, mocap, equality activity, user and plugin data), written
bit-exact, so a restart continues bit for bit.  :meth:`MujocoSim.restore` sets positions and
velocities from the spec's elements; when the extension is present, fits this model (its layout
fingerprint) and agrees with those elements, it then restores the exact integration state.
"""

from __future__ import annotations

import hashlib
from typing import Any

import numpy as np

from robot_state_format.errors import ConversionError
from robot_state_format.kinematics.fk import forward, link_twists
from robot_state_format.model.types import JointType, Model
from robot_state_format.sim.adapter import JointValues, LinkMotions
from robot_state_format.sim.mapping import FloatArray, Targets, WorldMap, quat_close
from robot_state_format.sim.mjcf_user import is_user_mjcf, mj_body_name, mj_joint_name, user_layout
from robot_state_format.sim.mjcf_writer import DEFAULT_DT, MappedJoint, build_mjcf, floating_roots
from robot_state_format.spatial import matrix_to_quaternion, quaternion_to_matrix
from robot_state_format.usdf.export.mujoco import mujoco_module
from robot_state_format.usdf.simulator_state import SimulatorState, find_simulator_state, set_simulator_state
from robot_state_format.usdf.types import WorldState

ENGINE = "mujoco"
CONSISTENCY = 1e-7  # extension vs spec elements: larger means the file was edited


def _wxyz(x: FloatArray) -> FloatArray:
    qx, qy, qz, qw = matrix_to_quaternion(x)
    return np.array([qw, qx, qy, qz])


def _mat(wxyz: FloatArray) -> FloatArray:
    return quaternion_to_matrix((wxyz[1], wxyz[2], wxyz[3], wxyz[0]))


class MujocoSim:
    """A MuJoCo simulation of ``model`` (zero state: every joint at zero, bodies at rest)."""

    engine = ENGINE

    def __init__(self, model: Model, *, dt: float = DEFAULT_DT, floating_base: bool | None = None) -> None:
        mj = mujoco_module()
        self.mj = mj
        self.model = model
        self.dt = float(dt)
        self.user_file = is_user_mjcf(model)  # MuJoCo loads the user's own MJCF file
        self.mjcf = user_layout(model) if self.user_file else build_mjcf(model, dt=dt, floating_base=floating_base)
        self.map = WorldMap(model, [] if self.user_file else floating_roots(model, floating_base))
        try:
            self.m = mj.MjModel.from_xml_path(model.source_file) if self.user_file \
                else mj.MjModel.from_xml_string(self.mjcf.xml)
        except Exception as exc:  # noqa: BLE001 MuJoCo's compiler errors are ValueErrors; any is a refusal
            raise ConversionError(f"{model.source_file}: MuJoCo cannot compile the model: {exc}") from None
        if self.user_file:
            self.dt = float(self.m.opt.timestep)
        self.d = mj.MjData(self.m)
        self._scratch = mj.MjData(self.m)
        self.step_count = 0
        self.notes = list(self.mjcf.notes)
        jid = {mj_joint_name(mj.mj_id2name(self.m, mj.mjtObj.mjOBJ_JOINT, i), i): i for i in range(self.m.njnt)}
        self._adr: dict[str, list[tuple[int, int]]] = {}
        for mjnt in self.mjcf.joints:
            self._adr[mjnt.name] = [(int(self.m.jnt_qposadr[jid[n]]), int(self.m.jnt_dofadr[jid[n]]))
                                    for n in mjnt.mj_names]
        self._roots = {fr.link: (int(self.m.jnt_qposadr[jid[fr.mj_name]]), int(self.m.jnt_dofadr[jid[fr.mj_name]]))
                       for fr in self.mjcf.free_roots}
        bid = {mj_body_name(mj.mj_id2name(self.m, mj.mjtObj.mjOBJ_BODY, i), i): i for i in range(1, self.m.nbody)}
        self._body = [bid.get(n, -1) for n in self.map.tree.link_names]
        sig = [f"{self.m.nq} {self.m.nv} {self.m.na} {self.m.nu} {self.m.nmocap} {self.m.neq}"]
        sig += [f"{mj.mj_id2name(self.m, mj.mjtObj.mjOBJ_JOINT, i)}:{int(self.m.jnt_type[i])}" for i in range(self.m.njnt)]
        self.layout_signature = hashlib.sha1("\n".join(sig).encode()).hexdigest()[:16]
        self._components = [(s.name[len("mjSTATE_"):].lower(), s) for s in _single_bits(mj)
                            if s.value & int(mj.mjtState.mjSTATE_INTEGRATION) and s.name != "mjSTATE_TIME"]

    # ---- running ------------------------------------------------------------------------------

    @property
    def time(self) -> float:
        return float(self.d.time)

    def step(self, n: int = 1) -> None:
        for _ in range(n):
            self.mj.mj_step(self.m, self.d)
            self.step_count += 1

    # ---- reading ------------------------------------------------------------------------------

    def joint_values(self) -> JointValues:
        """Every moving joint's positions and velocities in the package's layout."""
        qpos, qvel = self.d.qpos, self.d.qvel
        pos: dict[str, FloatArray] = {}
        vel: dict[str, FloatArray] = {}
        for mjnt in self.mjcf.joints:
            adr = self._adr[mjnt.name]
            if mjnt.type is JointType.BALL:
                qa, da = adr[0]
                pos[mjnt.name], vel[mjnt.name] = _ball_from_mj(mjnt, qpos[qa:qa + 4], qvel[da:da + 3])
            elif mjnt.type is JointType.FLOATING:
                qa, da = adr[0]
                pos[mjnt.name], vel[mjnt.name] = floating_from_mj(mjnt, qpos[qa:qa + 7], qvel[da:da + 6])
            else:
                pos[mjnt.name] = np.array([qpos[qa] for qa, _ in adr])
                vel[mjnt.name] = np.array([qvel[da] for _, da in adr])
        return JointValues(pos, vel)

    def root_coordinates(self) -> dict[str, FloatArray]:
        """Floating root link → ``x y z qx qy qz qw`` (its world pose, MuJoCo's own numbers)."""
        out = {}
        for link, (qa, _) in self._roots.items():
            p = self.d.qpos[qa:qa + 7]
            out[link] = np.array([p[0], p[1], p[2], p[4], p[5], p[6], p[3]])
        return out

    def link_motions(self) -> LinkMotions:
        """World poses ``(nlinks, 4, 4)`` and twists ``(nlinks, 6)`` ``[v, w]`` in tree link order."""
        mj, s = self.mj, self._scratch
        s.qpos[:] = self.d.qpos
        s.qvel[:] = self.d.qvel
        s.mocap_pos[:] = self.d.mocap_pos
        s.mocap_quat[:] = self.d.mocap_quat
        mj.mj_kinematics(self.m, s)
        mj.mj_comPos(self.m, s)
        mj.mj_comVel(self.m, s)
        n = len(self._body)
        poses = np.zeros((n, 4, 4))
        twists = np.zeros((n, 6))
        res = np.zeros(6)
        if self.user_file and min(self._body, default=0) < 0:  # virtual links: from the joint values
            pos, vel = self.joint_values()
            tree = self.map.tree
            q = tree.q_from_mapping({k: pos[k].tolist() for k in tree.moving_joint_names})
            v = tree.v_from_mapping({k: vel[k].tolist() for k in tree.moving_joint_names})
            poses[:] = forward(tree, q, world=True)
            twists[:] = link_twists(tree, q, v)
        for i, b in enumerate(self._body):
            if b < 0 and self.user_file:
                continue
            if b < 0:  # a link MuJoCo has no body for (URDF 'world'): welded at the model pose
                poses[i] = np.asarray(self.model.pose) @ np.asarray(self.model.links[self.map.tree.link_names[i]].pose)
                continue
            poses[i, :3, :3] = s.xmat[b].reshape(3, 3)
            poses[i, :3, 3] = s.xpos[b]
            poses[i, 3, 3] = 1.0
            mj.mj_objectVelocity(self.m, s, mj.mjtObj.mjOBJ_XBODY, b, res, 0)  # at the body frame origin
            twists[i, :3] = res[3:]
            twists[i, 3:] = res[:3]
        return LinkMotions(poses, twists)

    def capture(self) -> WorldState:
        """The current state: spec elements plus the simulator-state extension."""
        poses, twists = self.link_motions()
        pos, vel = self.joint_values()
        state = self.map.capture_state(poses, twists, pos, vel, self.time)
        arrays: dict[str, tuple[float, ...]] = {}
        for name, bit in self._components:
            size = self.mj.mj_stateSize(self.m, bit)
            if size == 0:
                continue
            buf = np.empty(size)
            self.mj.mj_getState(self.m, self.d, buf, bit)
            arrays[name] = tuple(buf.tolist())
        set_simulator_state(state, SimulatorState(ENGINE, self.layout_signature, self.time, arrays, self.step_count,
                                                  self.mj.__version__, self.dt))
        return state

    # ---- writing ------------------------------------------------------------------------------

    def restore(self, state: WorldState, *, file: str = "<state>") -> list[str]:
        """Put the simulation in ``state``; return warnings.  ``UsdfError`` when it does not fit."""
        targets = self.map.restore_targets(state, file=file)
        warnings = list(targets.warnings)
        mj = self.mj
        mj.mj_resetData(self.m, self.d)
        qpos, qvel = self._arrays_from(targets)
        self.d.qpos[:] = qpos
        self.d.qvel[:] = qvel
        time = targets.time if targets.time is not None else 0.0
        self.d.time = time
        ext = find_simulator_state(state, ENGINE)
        exact = False
        if ext is not None:
            why = self._ext_mismatch(ext, qpos, qvel)
            if why is None:
                for name, bit in self._components:
                    if name in ext.arrays:
                        mj.mj_setState(self.m, self.d, np.asarray(ext.arrays[name], dtype=float), bit)
                self.d.time = ext.time
                exact = True
            else:
                warnings.append(f"simulator_state extension ignored: {why}")
        self.step_count = ext.step if exact and ext is not None and ext.step is not None \
            else int(round(self.d.time / self.dt))
        return warnings

    def _ext_mismatch(self, ext: SimulatorState, qpos: FloatArray, qvel: FloatArray) -> str | None:
        if ext.layout != self.layout_signature:
            return "it was written for another MuJoCo model layout"
        for name, bit in self._components:
            if name in ext.arrays and len(ext.arrays[name]) != self.mj.mj_stateSize(self.m, bit):
                return f"array {name!r} has {len(ext.arrays[name])} values, the model needs " \
                       f"{self.mj.mj_stateSize(self.m, bit)}"
        if (self.m.nq and "qpos" not in ext.arrays) or (self.m.nv and "qvel" not in ext.arrays):
            return "it lacks qpos or qvel"
        eq, ev = np.asarray(ext.arrays.get("qpos", ())), np.asarray(ext.arrays.get("qvel", ()))
        quat = np.zeros(self.m.nq, dtype=bool)
        for j in range(self.m.njnt):
            t, a = int(self.m.jnt_type[j]), int(self.m.jnt_qposadr[j])
            if t == int(self.mj.mjtJoint.mjJNT_FREE):
                quat[a + 3:a + 7] = True
            elif t == int(self.mj.mjtJoint.mjJNT_BALL):
                quat[a:a + 4] = True
        if np.abs(eq[~quat] - qpos[~quat]).max(initial=0.0) > CONSISTENCY:
            return "its qpos disagrees with the joint states (the file was edited?)"
        for j in range(self.m.njnt):
            t, a = int(self.m.jnt_type[j]), int(self.m.jnt_qposadr[j])
            s = a + 3 if t == int(self.mj.mjtJoint.mjJNT_FREE) else a
            if t in (int(self.mj.mjtJoint.mjJNT_FREE), int(self.mj.mjtJoint.mjJNT_BALL)) \
                    and quat_close(eq[s:s + 4], qpos[s:s + 4]) > CONSISTENCY:
                return "its qpos disagrees with the joint states (the file was edited?)"
        scale = 1.0 + np.abs(ev)
        if (np.abs(ev - qvel) / scale).max(initial=0.0) > CONSISTENCY:
            return "its qvel disagrees with the joint velocities (the file was edited?)"
        return None

    def _arrays_from(self, t: Targets) -> tuple[FloatArray, FloatArray]:
        qpos = np.array(self.m.qpos0, dtype=float)
        qvel = np.zeros(self.m.nv)
        for mjnt in self.mjcf.joints:
            adr = self._adr[mjnt.name]
            p, v = t.positions[mjnt.name], t.velocities[mjnt.name]
            if mjnt.type is JointType.BALL:
                qa, da = adr[0]
                qpos[qa:qa + 4], qvel[da:da + 3] = _ball_to_mj(mjnt, p, v)
            elif mjnt.type is JointType.FLOATING:
                qa, da = adr[0]
                qpos[qa:qa + 7], qvel[da:da + 6] = floating_to_mj(mjnt, p, v)
            else:
                for k, (qa, da) in enumerate(adr):
                    qpos[qa] = p[k]
                    qvel[da] = v[k]
        for link, (qa, da) in self._roots.items():
            x, tw = t.root_poses[link], t.root_twists[link]
            qpos[qa:qa + 3] = x[:3, 3]
            qpos[qa + 3:qa + 7] = _wxyz(x[:3, :3])
            qvel[da:da + 3] = tw[:3]
            qvel[da + 3:da + 6] = x[:3, :3].T @ tw[3:]
        return qpos, qvel


def _single_bits(mj: Any) -> list[Any]:
    out = []
    for name in dir(mj.mjtState):
        if not name.startswith("mjSTATE_"):
            continue
        s = getattr(mj.mjtState, name)
        v = int(s)
        if v and v & (v - 1) == 0:
            out.append(s)
    return sorted(out, key=int)


def _is_eye(r: FloatArray) -> bool:
    return bool(np.array_equal(r, np.eye(r.shape[0])))


def _ball_from_mj(j: MappedJoint, q: FloatArray, w: FloatArray) -> tuple[FloatArray, FloatArray]:
    if _is_eye(j.r_cj):
        return np.array([q[1], q[2], q[3], q[0]]), np.array(w, dtype=float)
    r = j.r_cj
    ours = r.T @ _mat(q) @ r
    qx, qy, qz, qw = matrix_to_quaternion(ours)
    return np.array([qx, qy, qz, qw]), r.T @ np.asarray(w)


def _ball_to_mj(j: MappedJoint, p: FloatArray, w: FloatArray) -> tuple[FloatArray, FloatArray]:
    if _is_eye(j.r_cj):
        return np.array([p[3], p[0], p[1], p[2]]), np.asarray(w, dtype=float)
    r = j.r_cj
    return _wxyz(r @ quaternion_to_matrix(tuple(p)) @ r.T), r @ np.asarray(w)


def floating_from_mj(j: MappedJoint, q: FloatArray, qv: FloatArray) -> tuple[FloatArray, FloatArray]:
    """Floating joint positions/velocities (package layout) of a free body in MuJoCo's terms: ``q``
    = world pose ``x y z qw qx qy qz``, ``qv`` = world linear velocity, body-axes angular velocity."""
    a, b = j.free_a, j.free_b
    assert a is not None and b is not None
    x_wc = np.eye(4)
    x_wc[:3, :3] = _mat(q[3:7])
    x_wc[:3, 3] = q[:3]
    w_c = np.asarray(qv[3:6])
    if _is_eye(a) and _is_eye(b):
        r = x_wc[:3, :3]
        return np.array([q[0], q[1], q[2], q[4], q[5], q[6], q[3]]), np.concatenate([r.T @ qv[:3], w_c])
    x_wj = x_wc @ np.linalg.inv(b)
    m = np.linalg.inv(a) @ x_wj
    qx, qy, qz, qw = matrix_to_quaternion(np.asarray(m[:3, :3], dtype=np.float64))
    w_j = b[:3, :3] @ w_c
    w_world = x_wj[:3, :3] @ w_j
    v_j_world = np.asarray(qv[:3]) - np.cross(w_world, x_wc[:3, 3] - x_wj[:3, 3])
    return (np.array([m[0, 3], m[1, 3], m[2, 3], qx, qy, qz, qw]),
            np.concatenate([x_wj[:3, :3].T @ v_j_world, w_j]))


def floating_to_mj(j: MappedJoint, p: FloatArray, v: FloatArray) -> tuple[FloatArray, FloatArray]:
    """The inverse of :func:`floating_from_mj`."""
    a, b = j.free_a, j.free_b
    assert a is not None and b is not None
    m = np.eye(4)
    m[:3, :3] = quaternion_to_matrix(tuple(p[3:7]))
    m[:3, 3] = p[:3]
    if _is_eye(a) and _is_eye(b):
        r = m[:3, :3]
        return np.array([p[0], p[1], p[2], p[6], p[3], p[4], p[5]]), np.concatenate([r @ v[:3], v[3:6]])
    x_wj = a @ m
    x_wc = x_wj @ b
    w_j = np.asarray(v[3:6])
    w_world = x_wj[:3, :3] @ w_j
    v_c = x_wj[:3, :3] @ np.asarray(v[:3]) + np.cross(w_world, x_wc[:3, 3] - x_wj[:3, 3])
    return (np.concatenate([x_wc[:3, 3], _wxyz(x_wc[:3, :3])]),
            np.concatenate([v_c, b[:3, :3].T @ w_j]))

