"""Drake adapter: a passive simulation of the same model file, captured to and restored from USDF.

pydrake's ``Parser`` loads the model file itself (URDF or SDFormat; Model Directives through
``LoadModelDirectives`` + ``ProcessModelDirectives``); joints and bodies are found
by name in their model instances.  Conventions this package shares with MuJoCo, applied here:
a URDF robot's root link is welded to the world at the model pose unless ``floating_base``
(Drake alone would let it float); SDFormat models float unless static.

Joint coordinates are converted between the package's layout and Drake's: revolute and
prismatic 1:1; ball (Drake ``BallRpyJoint``: roll-pitch-yaw of ``X_FM``, angular velocity in F)
↔ quaternion and angular velocity in the child-side frame; planar (``PlanarJoint``: x, y, θ in
F) ↔ x, y in the package's in-plane basis and yaw.  Free bodies ↔ floating roots.  The
simulator-state extension holds Drake's exact ``q``, ``v`` and time, so a restart continues bit
for bit; without it positions and velocities restore from the spec's elements.
"""

from __future__ import annotations

import hashlib
import math
import sys
from pathlib import Path
from typing import Any

import numpy as np
from lxml import etree

from robot_state_format.errors import ConversionError
from robot_state_format.kinematics.tree import planar_basis
from robot_state_format.lazy_modules import MissingDependencyError
from robot_state_format.limits import read_input_file
from robot_state_format.model.packages import package_paths
from robot_state_format.model.types import SCOPE, JointType, Model
from robot_state_format.model.xacro.expand import expand_xacro_file
from robot_state_format.model.xml import parse_xml
from robot_state_format.sim.adapter import JointValues, LinkMotions
from robot_state_format.sim.mapping import FloatArray, WorldMap, quat_close
from robot_state_format.sim.mjcf_writer import (
    DEFAULT_DT,
    MIN_INERTIA,
    MIN_MASS,
    MappedJoint,
    build_mjcf,
    floating_roots,
    mujoco_inertial,
    principal_inertia,
)
from robot_state_format.sim.mujoco_sim import floating_from_mj, floating_to_mj
from robot_state_format.spatial import (
    matrix_to_quaternion,
    matrix_to_rpy,
    quaternion_to_matrix,
    rpy_to_matrix,
)
from robot_state_format.usdf.simulator_state import SimulatorState, find_simulator_state, set_simulator_state
from robot_state_format.usdf.types import WorldState

ENGINE = "drake"
CONSISTENCY = 1e-7


def _drake() -> Any:
    try:
        import pydrake.all as drake
    except ImportError:
        raise MissingDependencyError.of("pydrake") from None
    return drake


def _urdf_for_drake(path: Path, model: Model) -> tuple[str, list[str]]:
    """The URDF (xacro expanded) without visuals and mesh collisions (the geometry both engines
    use), its inertials as MuJoCo compiles them (:func:`mujoco_inertial`); the notes."""
    # xacro: expanded with its default arguments
    text = expand_xacro_file(path) if path.suffix == ".xacro" else read_input_file(path).decode("utf-8", "replace")
    root, _ = parse_xml(text, str(path))
    for el in root.xpath("//link/visual | //link/collision[geometry/mesh]"):
        el.getparent().remove(el)
    bounded: list[str] = []
    raised: list[str] = []
    for el in root.xpath("/robot/link[@name]"):
        link = model.links.get(str(el.get("name")))
        if link is None:
            continue
        ine = link.inertial
        given = ine is not None and ine.mass > 0
        mass, x, moments = mujoco_inertial(ine)
        if given and ine is not None and mass == ine.mass and x is None:
            continue  # MuJoCo uses it as it is
        (raised if given else bounded).append(link.name)
        if x is None:  # as given, mass raised to the bound
            assert ine is not None
            x, moments = principal_inertia(ine)
        for old in el.findall("inertial"):
            el.remove(old)
        el.insert(0, _inertial_element(mass, x, moments))
    notes = []
    if bounded:
        notes.append(f"{_names(bounded)} without inertia: MuJoCo's lower bounds used (mass {MIN_MASS!r} kg, "
                     f"principal moments {MIN_INERTIA!r} kg m^2 at the link origin)")
    if raised:
        notes.append(f"{_names(raised)}: mass or principal moments below MuJoCo's lower bounds "
                     f"({MIN_MASS!r} kg, {MIN_INERTIA!r} kg m^2), raised to them")
    return str(etree.tostring(root, encoding="unicode")), notes


def _names(links: list[str]) -> str:
    return ("link " if len(links) == 1 else "links ") + ", ".join(repr(n) for n in links)


def _inertial_element(mass: float, x: FloatArray, moments: FloatArray) -> Any:
    el = etree.Element("inertial")
    rpy = matrix_to_rpy(x[:3, :3])
    etree.SubElement(el, "origin", xyz=" ".join(repr(float(v)) for v in x[:3, 3]),
                     rpy=" ".join(repr(float(v)) for v in rpy))
    etree.SubElement(el, "mass", value=repr(float(mass)))
    etree.SubElement(el, "inertia", ixx=repr(float(moments[0])), iyy=repr(float(moments[1])),
                     izz=repr(float(moments[2])), ixy="0", ixz="0", iyz="0")
    return el


def _process_directives(dk: Any, parser: Any, path: Path) -> Any:
    """A Model Directives scene loaded by Drake (``LoadModelDirectives`` + ``ProcessModelDirectives``),
    every package of the ament index and ``ROS_PACKAGE_PATH`` known to Drake's package map."""
    packages = parser.package_map()
    for name, share in package_paths().items():
        if not packages.Contains(name):
            packages.Add(name, str(share))
    return dk.ProcessModelDirectives(dk.LoadModelDirectives(str(path)), parser.plant(), parser)


def _floating_from_drake(qs: FloatArray, vs: FloatArray) -> tuple[FloatArray, FloatArray]:
    """Drake's quaternion floating joint (q: qw qx qy qz x y z; v: w_FM, v_FM in F) → the package's
    layout (x y z qx qy qz qw; linear and angular velocity in the child-side frame)."""
    r = quaternion_to_matrix((qs[1], qs[2], qs[3], qs[0]))
    return (np.array([qs[4], qs[5], qs[6], qs[1], qs[2], qs[3], qs[0]]),
            np.concatenate([r.T @ np.asarray(vs[3:6]), r.T @ np.asarray(vs[0:3])]))


def _floating_to_drake(p: FloatArray, w: FloatArray) -> tuple[FloatArray, FloatArray]:
    x, y, z, qx, qy, qz, qw = (float(c) for c in p)
    n = math.sqrt(qx * qx + qy * qy + qz * qz + qw * qw)
    r = quaternion_to_matrix((qx / n, qy / n, qz / n, qw / n))
    return (np.array([qw / n, qx / n, qy / n, qz / n, x, y, z]),
            np.concatenate([r @ np.asarray(w[3:6]), r @ np.asarray(w[0:3])]))


class DrakeSim:
    """A discrete Drake ``MultibodyPlant`` of ``model.source_file`` (time step ``dt``)."""

    engine = ENGINE

    def __init__(self, model: Model, *, dt: float = DEFAULT_DT, floating_base: bool | None = None) -> None:
        dk = _drake()
        self.dk = dk
        self.model = model
        self.dt = float(dt)
        self.map = WorldMap(model, floating_roots(model, floating_base))
        self.notes: list[str] = []
        builder = dk.DiagramBuilder()
        plant, _ = dk.AddMultibodyPlantSceneGraph(builder, time_step=self.dt)
        self.plant = plant
        path = Path(model.source_file)
        try:
            parser = dk.Parser(plant)
            if model.format == "urdf":  # meshes left out, as in MuJoCo (package:// URIs need not resolve)
                text, notes = _urdf_for_drake(path, model)
                self.notes += notes
                instances = parser.AddModelsFromString(text, "urdf")
            elif model.format == "dmd":  # Drake's own directives processing, packages as this package finds them
                instances = _process_directives(dk, parser, path)
            else:
                instances = parser.AddModels(str(path))
        except Exception as exc:  # noqa: BLE001 Drake raises RuntimeError with its parser message (others too)
            raise ConversionError(f"{path}: Drake cannot load it: {exc}") from None
        del instances
        self._instances = {plant.GetModelInstanceName(dk.ModelInstanceIndex(i)): dk.ModelInstanceIndex(i)
                           for i in range(plant.num_model_instances())}
        if model.format == "urdf":
            inst = self._instance("")
            for r in model.root_links():
                if r == "world" or r in self.map.floating_roots:
                    continue
                x = np.asarray(model.pose) @ np.asarray(model.links[r].pose)
                plant.WeldFrames(plant.world_frame(), plant.GetFrameByName(r, inst), dk.RigidTransform(x))
        plant.Finalize()
        self.diagram = builder.Build()
        self.simulator = dk.Simulator(self.diagram)
        self.context = self.simulator.get_mutable_context()
        self.pctx = plant.GetMyMutableContextFromRoot(self.context)
        self.step_count = 0
        self._bodies = [self._body(n) for n in self.map.tree.link_names]
        self._joints = {n: self._joint(n) for n in self.map.moving_joints}
        # URDF floating joints: Drake leaves the child a free body (the joint's A, B as for MuJoCo)
        self._free_joints: dict[str, tuple[MappedJoint, Any]] = {}
        lifted = any(j is None and model.joints[n].type is JointType.FLOATING for n, j in self._joints.items())
        free_maps = {mj.name: mj for mj in build_mjcf(model, dt=dt).joints if mj.type is JointType.FLOATING} \
            if lifted else {}  # (a directives' floating joint below a moving body is a Drake joint, not lifted)
        for n, j in list(self._joints.items()):
            if j is None and n in free_maps:
                body = self._body(self.model.joints[n].child)
                if body is not None and body.is_floating_base_body():
                    self._free_joints[n] = (free_maps[n], body)
                    del self._joints[n]
                    continue
            if j is None:
                raise ConversionError(f"joint {n!r}: Drake has no joint of that name")
        sig = [f"{plant.num_positions()} {plant.num_velocities()}"]
        sig += [f"{plant.get_joint(dk.JointIndex(i)).name()}:{plant.get_joint(dk.JointIndex(i)).type_name()}"
                for i in range(plant.num_joints())]
        self.layout_signature = hashlib.sha1("\n".join(sig).encode()).hexdigest()[:16]
        self.simulator.Initialize()

    # ---- names ---------------------------------------------------------------------------------

    def _instance(self, path: str) -> Any:
        name = path if self.model.is_world else (self.model.name + (SCOPE + path if path else ""))
        inst = self._instances.get(name)
        if inst is None:
            raise ConversionError(f"Drake has no model instance {name!r}")
        return inst

    def _split(self, name: str) -> tuple[Any, str]:
        split = self.map.layout.split(name)
        if split is None:
            raise ConversionError(f"{name!r} belongs to no model")
        return self._instance(split[0]), split[1]

    def _body(self, link: str) -> Any:
        inst, local = self._split(link)
        if not self.plant.HasBodyNamed(local, inst):
            return None if local == "world" else self._missing(f"link {link!r}")
        return self.plant.GetBodyByName(local, inst)

    def _joint(self, name: str) -> Any:
        inst, local = self._split(name)
        if self.plant.HasJointNamed(local, inst):
            return self.plant.GetJointByName(local, inst)
        # Drake puts a joint in its child body's model instance (SDFormat joints into nested models)
        child = self._body(self.model.joints[name].child)
        for i in range(self.plant.num_joints()):
            j = self.plant.get_joint(self.dk.JointIndex(i))
            if j.name() == local and child is not None and j.child_body().index() == child.index():
                return j
        return None

    def _missing(self, what: str) -> Any:
        raise ConversionError(f"{what}: Drake has no body of that name")

    # ---- running -------------------------------------------------------------------------------

    @property
    def time(self) -> float:
        return float(self.context.get_time())

    def step(self, n: int = 1) -> None:
        for _ in range(n):
            try:
                self.simulator.AdvanceTo((self.step_count + 1) * self.dt)
            except RuntimeError as exc:  # e.g. a mass matrix that is not positive-definite
                raise ConversionError(f"{ENGINE}: step {self.step_count + 1} failed: "
                                      f"{' '.join(str(exc).split())}") from None
            self.step_count += 1

    # ---- conversions ---------------------------------------------------------------------------

    def _x_jf(self, name: str) -> FloatArray:
        """``X_JF``: Drake's parent-side joint frame F in the package's joint frame J."""
        j = self._joints[name]
        x_pf = np.asarray(j.frame_on_parent().GetFixedPoseInBodyFrame().GetAsMatrix4(), dtype=np.float64)
        return np.linalg.inv(np.asarray(self.model.joints[name].origin, dtype=float)) @ x_pf

    def joint_values(self) -> JointValues:
        q = self.plant.GetPositions(self.pctx)
        v = self.plant.GetVelocities(self.pctx)
        pos: dict[str, FloatArray] = {}
        vel: dict[str, FloatArray] = {}
        for n, j in self._joints.items():
            qs, vs = q[j.position_start():j.position_start() + j.num_positions()], \
                v[j.velocity_start():j.velocity_start() + j.num_velocities()]
            jt = self.model.joints[n].type
            if jt is JointType.BALL:
                r_jf = self._x_jf(n)[:3, :3]
                r = r_jf @ rpy_to_matrix(*qs) @ r_jf.T
                qx, qy, qz, qw = matrix_to_quaternion(r)
                pos[n] = np.array([qx, qy, qz, qw])
                vel[n] = r.T @ (r_jf @ np.asarray(vs))  # w in J's child-side frame
            elif jt is JointType.FLOATING and j.num_positions() == 7:  # directives' default_free_body_pose
                pos[n], vel[n] = _floating_from_drake(qs, vs)
            elif jt is JointType.PLANAR:
                e1, e2, r_jf = self._planar(n)
                p_j = r_jf @ np.array([qs[0], qs[1], 0.0])
                pv = r_jf @ np.array([vs[0], vs[1], 0.0])
                pos[n] = np.array([e1 @ p_j, e2 @ p_j, qs[2]])
                vel[n] = np.array([e1 @ pv, e2 @ pv, vs[2]])
            elif j.num_positions() == self.model.joints[n].nq:
                pos[n], vel[n] = np.array(qs), np.array(vs)
            else:
                raise ConversionError(f"joint {n!r}: Drake's {j.type_name()} joint does not map")
        for n, (mj, body) in self._free_joints.items():
            x = self.plant.GetFreeBodyPose(self.pctx, body).GetAsMatrix4()
            sv = self.plant.EvalBodySpatialVelocityInWorld(self.pctx, body)
            qx, qy, qz, qw = matrix_to_quaternion(x[:3, :3])
            qpos = np.array([x[0, 3], x[1, 3], x[2, 3], qw, qx, qy, qz])
            qvel = np.concatenate([sv.translational(), x[:3, :3].T @ sv.rotational()])
            pos[n], vel[n] = floating_from_mj(mj, qpos, qvel)
        return JointValues(pos, vel)

    def _planar(self, n: str) -> tuple[FloatArray, FloatArray, FloatArray]:
        jn = self.model.joints[n]
        axis = np.asarray(jn.axis if jn.axis is not None else (0.0, 0.0, 1.0), dtype=float)
        e1, e2 = planar_basis(axis / np.linalg.norm(axis))
        return e1, e2, self._x_jf(n)[:3, :3]

    def root_coordinates(self) -> dict[str, FloatArray]:
        out = {}
        for link in self.map.floating_roots:
            x = self.plant.GetFreeBodyPose(self.pctx, self._bodies[self.map.link_index[link]]).GetAsMatrix4()
            qx, qy, qz, qw = matrix_to_quaternion(x[:3, :3])
            out[link] = np.array([x[0, 3], x[1, 3], x[2, 3], qx, qy, qz, qw])
        return out

    def link_motions(self) -> LinkMotions:
        n = len(self._bodies)
        poses = np.zeros((n, 4, 4))
        twists = np.zeros((n, 6))
        for i, b in enumerate(self._bodies):
            if b is None:
                poses[i] = np.asarray(self.model.pose)
                continue
            poses[i] = self.plant.EvalBodyPoseInWorld(self.pctx, b).GetAsMatrix4()
            sv = self.plant.EvalBodySpatialVelocityInWorld(self.pctx, b)
            twists[i, :3] = sv.translational()
            twists[i, 3:] = sv.rotational()
        return LinkMotions(poses, twists)

    def capture(self) -> WorldState:
        poses, twists = self.link_motions()
        pos, vel = self.joint_values()
        state = self.map.capture_state(poses, twists, pos, vel, self.time)
        arrays = {"q": tuple(self.plant.GetPositions(self.pctx).tolist()),
                  "v": tuple(self.plant.GetVelocities(self.pctx).tolist())}
        version = getattr(sys.modules.get("pydrake"), "__version__", None)  # loaded by _drake()
        set_simulator_state(state, SimulatorState(ENGINE, self.layout_signature, self.time, arrays, self.step_count,
                                                  version, self.dt))
        return state

    def restore(self, state: WorldState, *, file: str = "<state>") -> list[str]:
        t = self.map.restore_targets(state, file=file)
        warnings = list(t.warnings)
        plant, ctx, dk = self.plant, self.pctx, self.dk
        q = plant.GetPositions(ctx).copy()
        v = plant.GetVelocities(ctx).copy()
        for n, j in self._joints.items():
            p, w = t.positions[n], t.velocities[n]
            qa, va, nq = j.position_start(), j.velocity_start(), j.num_positions()
            jt = self.model.joints[n].type
            if jt is JointType.BALL:
                r_jf = self._x_jf(n)[:3, :3]
                x, y, z, qw = p
                norm = math.sqrt(x * x + y * y + z * z + qw * qw)
                r_j = quaternion_to_matrix((x / norm, y / norm, z / norm, qw / norm))
                q[qa:qa + 3] = matrix_to_rpy(r_jf.T @ r_j @ r_jf)
                v[va:va + 3] = r_jf.T @ (r_j @ np.asarray(w))
            elif jt is JointType.FLOATING and nq == 7:
                q[qa:qa + 7], v[va:va + 6] = _floating_to_drake(p, w)
            elif jt is JointType.PLANAR:
                e1, e2, r_jf = self._planar(n)
                p_f = r_jf.T @ (p[0] * e1 + p[1] * e2)
                v_f = r_jf.T @ (w[0] * e1 + w[1] * e2)
                q[qa:qa + 3] = (p_f[0], p_f[1], p[2])
                v[va:va + 3] = (v_f[0], v_f[1], w[2])
            else:
                q[qa:qa + nq] = p
                v[va:va + nq] = w
        plant.SetPositions(ctx, q)
        plant.SetVelocities(ctx, v)
        for n, (mj, b) in self._free_joints.items():
            qpos, qvel = floating_to_mj(mj, t.positions[n], t.velocities[n])
            x = np.eye(4)
            x[:3, :3] = quaternion_to_matrix((qpos[4], qpos[5], qpos[6], qpos[3]))
            x[:3, 3] = qpos[:3]
            plant.SetFreeBodyPose(ctx, b, dk.RigidTransform(x))
            plant.SetFreeBodySpatialVelocity(ctx, b, dk.SpatialVelocity(x[:3, :3] @ qvel[3:], qvel[:3]))
        for link in self.map.floating_roots:
            b = self._bodies[self.map.link_index[link]]
            x, tw = t.root_poses[link], t.root_twists[link]
            plant.SetFreeBodyPose(ctx, b, dk.RigidTransform(x))
            plant.SetFreeBodySpatialVelocity(ctx, b, dk.SpatialVelocity(tw[3:], tw[:3]))
        self.context.SetTime(t.time if t.time is not None else 0.0)
        ext = find_simulator_state(state, ENGINE)
        exact = False
        if ext is not None:
            why = self._ext_mismatch(ext)
            if why is None:
                plant.SetPositions(ctx, np.asarray(ext.arrays["q"]))
                plant.SetVelocities(ctx, np.asarray(ext.arrays["v"]))
                self.context.SetTime(ext.time)
                exact = True
            else:
                warnings.append(f"simulator_state extension ignored: {why}")
        self.step_count = ext.step if exact and ext is not None and ext.step is not None \
            else int(round(self.time / self.dt))
        self.simulator.Initialize()
        return warnings

    def _ext_mismatch(self, ext: SimulatorState) -> str | None:
        if ext.layout != self.layout_signature:
            return "it was written for another Drake model layout"
        q, v = self.plant.GetPositions(self.pctx), self.plant.GetVelocities(self.pctx)
        eq, ev = np.asarray(ext.arrays.get("q", ())), np.asarray(ext.arrays.get("v", ()))
        if eq.shape != q.shape or ev.shape != v.shape:
            return "its q or v has the wrong size"
        quat = np.zeros(len(q), dtype=bool)
        for b in [self._bodies[self.map.link_index[k]] for k in self.map.floating_roots] + \
                [b for _, b in self._free_joints.values()]:
            s = b.floating_positions_start()
            quat[s:s + 4] = True
            if quat_close(eq[s:s + 4], q[s:s + 4]) > CONSISTENCY:
                return "its q disagrees with the model poses (the file was edited?)"
        for n, j in self._joints.items():  # roll-pitch-yaw angles: equal up to whole turns
            if self.model.joints[n].type is JointType.FLOATING:
                s = j.position_start()
                quat[s:s + 4] = True
                if quat_close(eq[s:s + 4], q[s:s + 4]) > CONSISTENCY:
                    return "its q disagrees with the joint states (the file was edited?)"
            if self.model.joints[n].type is JointType.BALL:
                s = j.position_start()
                d = eq[s:s + 3] - q[s:s + 3]
                if np.abs((d + math.pi) % (2 * math.pi) - math.pi).max() > CONSISTENCY:
                    return "its q disagrees with the joint states (the file was edited?)"
                quat[s:s + 3] = True
        if np.abs(eq[~quat] - q[~quat]).max(initial=0.0) > CONSISTENCY:
            return "its q disagrees with the joint states (the file was edited?)"
        if (np.abs(ev - v) / (1.0 + np.abs(ev))).max(initial=0.0) > CONSISTENCY:
            return "its v disagrees with the joint velocities (the file was edited?)"
        return None
