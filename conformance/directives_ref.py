"""Drake Model Directives against pydrake: every frame's world pose, at the default configuration
and at random ones.

pydrake (``drake`` on PyPI) is the reference: ``LoadModelDirectives`` + ``ProcessModelDirectives``
into a ``MultibodyPlant``, ``Finalize``, then ``Frame.CalcPoseInWorld`` of every frame both sides
name (bodies, SDFormat frames and ``__model__`` frames, frames added by ``add_frame``; Drake's own
joint frames have no counterpart).  Our side: :func:`load_model_file`, forward kinematics, and
:func:`frame_poses_in_root`.  Random configurations draw every independent moving joint within its
limits (±π without); a mimic follower gets ``multiplier * leader + offset`` on Drake's side (Drake's
plant leaves it independent).  Joints left out stay at the default (``Model.default_positions``).

    .venv/bin/python conformance/directives_ref.py [--samples 20] [--seed 7]

Scenes: :func:`write_scenes` writes them into a directory from the bundled models (the samples and
``test/fixtures/sdf/models/arm``), naming files by ``file://`` URIs and, for one scene, by
``package://`` through a throw-away ament prefix.
"""

from __future__ import annotations

import argparse
import math
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

import numpy as np
from pydrake.multibody.parsing import LoadModelDirectives, Parser, ProcessModelDirectives
from pydrake.multibody.plant import MultibodyPlant
from pydrake.multibody.tree import FrameIndex

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from robot_state_format.errors import ModelError  # noqa: E402
from robot_state_format.kinematics import fk  # noqa: E402
from robot_state_format.kinematics.tree import compile_model  # noqa: E402
from robot_state_format.model.directives.compose import NAMESPACE  # noqa: E402
from robot_state_format.model.frames import frame_poses_in_root  # noqa: E402
from robot_state_format.model.loader import load_model_file  # noqa: E402
from robot_state_format.model.packages import clear_cache  # noqa: E402
from robot_state_format.model.types import SCOPE, JointType, Model  # noqa: E402

SAMPLES = ROOT / "robot_state_format" / "samples"
SDF_ARM = ROOT / "test" / "fixtures" / "sdf" / "models" / "arm" / "model.sdf"
WORLD_INSTANCE = "WorldModelInstance"
SUB_FILES = ("arm_sub",)  # included by other scenes (its names are relative to a namespace)


def _uri(p: Path) -> str:
    return "file://" + str(p.resolve())


def write_scenes(out: Path) -> dict[str, Path]:
    """The test scenes, written into ``out`` (``out/prefix`` is an ament prefix for ``package://``)."""
    arm, pend, table = _uri(SAMPLES / "arm7_gripper.urdf"), _uri(SAMPLES / "double_pendulum.urdf"), \
        _uri(SAMPLES / "table.sdf")
    scenes: dict[str, str] = {}
    scenes["arm_on_table"] = f"""directives:
- add_model: {{name: table, file: "{table}"}}
- add_weld:
    parent: world
    child: table::__model__
    X_PC: {{translation: [0.5, -0.25, 0.0], rotation: !Rpy {{deg: [0, 0, 30]}}}}
- add_model:
    name: arm
    file: {arm}
    default_joint_positions: {{joint1: [0.3], joint2: [0.6], joint4: [-0.9], finger_left_joint: [0.01]}}
- add_weld: {{parent: table::mount, child: arm::base_link}}
- add_model: {{name: gripper, file: "{_uri(SDF_ARM)}"}}
- add_weld:
    parent: arm::tool_frame
    child: gripper::upper
    X_PC: {{translation: [0, 0, 0.02], rotation: !AngleAxis {{angle_deg: 90, axis: [0, 1, 1]}}}}
- add_frame:
    name: camera
    X_PF: {{base_frame: table::top, translation: [-0.4, 0, 0.8], rotation: !Rpy {{deg: [10, 45, -20]}}}}
- add_frame:
    name: camera_optical
    X_PF: {{base_frame: camera, rotation: !Rpy {{deg: [-90, 0, -90]}}}}
- add_frame:
    name: gripper::grasp
    X_PF: {{base_frame: gripper::tip, translation: [0, 0, 0.05], rotation: !AngleAxis {{angle_deg: 180}}}}
"""
    scenes["arm_sub"] = f"""directives:
- add_model:
    name: robot
    file: {arm}
    default_joint_positions: {{joint3: [-0.4]}}
- add_frame:
    name: robot::wrist_camera
    X_PF: {{base_frame: robot::link7, translation: [0.05, 0, 0.02], rotation: !Rpy {{deg: [0, -30, 0]}}}}
- add_weld: {{parent: base, child: robot::base_link}}
"""
    scenes["namespaced"] = f"""directives:
- add_model_instance: {{name: left}}
- add_model_instance: {{name: right}}
- add_frame:
    name: left::base
    X_PF: {{base_frame: world, translation: [0, 0.4, 0.1]}}
- add_frame:
    name: right::base
    X_PF: {{base_frame: world, translation: [0, -0.4, 0.1], rotation: !Rpy {{deg: [0, 0, 180]}}}}
- add_directives: {{file: "{_uri(out / 'arm_sub.dmd.yaml')}", model_namespace: left}}
- add_directives: {{file: "package://dmd_scenes/arm_sub.dmd.yaml", model_namespace: right}}
- add_frame:
    name: between
    X_PF: {{base_frame: left::robot::wrist_camera, translation: [0, 0, 0.1]}}
"""
    scenes["free_bodies"] = f"""directives:
- add_model:
    name: pendulum
    file: {pend}
    default_free_body_pose:
      link A: {{translation: [1, 2, 3], rotation: !AngleAxis {{angle_deg: 30, axis: [0, 0, 1]}}}}
- add_model:
    name: pendulum2
    file: {pend}
    default_joint_positions: {{joint A: [0.4], joint B: [-1.1]}}
    default_free_body_pose:
      link A: {{base_frame: pendulum::link C, translation: [0, 0, -0.2], rotation: !Rpy {{deg: [90, 0, 45]}}}}
- add_model:
    name: sdf_arm
    file: {_uri(SDF_ARM)}
    default_free_body_pose:
      __model__: {{translation: [0, 1, 1], rotation: !Rpy {{deg: [0, 90, 0]}}}}
- add_model:
    name: sdf_arm2
    file: {_uri(SDF_ARM)}
- add_frame:
    name: pendulum::marker
    X_PF: {{base_frame: pendulum::link B, translation: [0.1, 0, 0]}}
"""
    out.mkdir(parents=True, exist_ok=True)
    (out / "static_shelf.sdf").write_text("""<?xml version="1.0"?>
<sdf version="1.9">
  <model name="shelf">
    <static>true</static>
    <pose>1 1 0 0 0 0.4</pose>
    <link name="board"><pose>0 0 0.5 0.1 0 0</pose></link>
    <frame name="slot" attached_to="board"><pose>0.1 0 0.05 0 0 0</pose></frame>
  </model>
</sdf>
""", encoding="utf-8")
    (out / "world_link.urdf").write_text("""<robot name="rooted">
  <link name="world"/>
  <link name="base"/>
  <link name="arm"/>
  <joint name="fix" type="fixed"><parent link="world"/><child link="base"/><origin xyz="0 -1 0.2" rpy="0 0 0.3"/></joint>
  <joint name="hinge" type="revolute"><parent link="base"/><child link="arm"/><origin xyz="0 0 0.5" rpy="0.2 0 0"/>
    <axis xyz="0 1 1"/><limit lower="-2" upper="2" effort="1" velocity="1"/></joint>
</robot>
""", encoding="utf-8")
    scenes["static_and_rooted"] = f"""directives:
- add_model: {{name: shelf, file: "{_uri(out / 'static_shelf.sdf')}"}}
- add_model: {{name: rooted, file: "{_uri(out / 'world_link.urdf')}"}}
- add_model: {{name: sdf_arm, file: "{_uri(SDF_ARM)}"}}
- add_weld:
    parent: shelf::slot
    child: sdf_arm::__model__
    X_PC: {{rotation: !AngleAxis {{angle_deg: -45, axis: [1, 1, 0]}}}}
- add_frame:
    name: marker
    X_PF: {{base_frame: rooted::arm, translation: [0, 0, 0.3]}}
"""
    scenes["rerooted"] = f"""directives:
- add_model:
    name: arm
    file: {arm}
    default_joint_positions: {{joint2: [0.4], joint3: [-0.3]}}
- add_frame:
    name: post
    X_PF: {{base_frame: world, translation: [0, 0, 1.2], rotation: !Rpy {{deg: [0, 90, 0]}}}}
- add_weld: {{parent: post, child: arm::link3, X_PC: {{translation: [0.1, 0, 0]}}}}
- add_model: {{name: table, file: "{table}"}}
- add_weld: {{parent: arm::hand, child: table::top, X_PC: {{rotation: !Rpy {{deg: [180, 0, 0]}}}}}}
"""
    scenes["drake_models"] = """directives:
- add_model:
    name: table
    file: package://drake/examples/kuka_iiwa_arm/models/table/extra_heavy_duty_table_surface_only_collision.sdf
- add_weld:
    parent: world
    child: table::link
    X_PC: {translation: [0, 0, -0.7645], rotation: !Rpy {deg: [0, 0, 15]}}
- add_model:
    name: acrobot
    file: package://drake/examples/acrobot/Acrobot_no_collision.urdf
    default_joint_positions: {shoulder: [0.3], elbow: [-0.6]}
- add_weld:
    parent: table::link
    child: acrobot::base_link
    X_PC: {translation: [0.2, 0, 0.1]}
- add_model:
    name: rooted_acrobot
    file: package://drake/examples/acrobot/Acrobot.urdf
- add_model:
    name: cuboid
    file: package://drake/examples/kuka_iiwa_arm/models/objects/simple_cuboid.urdf
    default_free_body_pose:
      base_link: {base_frame: acrobot::hand, translation: [0, 0, -0.1], rotation: !AngleAxis {angle_deg: 60, axis: [1, 0, 0]}}
- add_model: {name: cart_pole, file: "package://drake/examples/multibody/cart_pole/cart_pole.sdf"}
- add_frame:
    name: cart_pole::camera
    X_PF: {base_frame: table::link, translation: [1, 0, 1], rotation: !Rpy {deg: [-90, 0, 30]}}
"""
    out.mkdir(parents=True, exist_ok=True)
    paths = {}
    for name, text in scenes.items():
        paths[name] = out / f"{name}.dmd.yaml"
        paths[name].write_text(text, encoding="utf-8")
    index = out / "prefix" / "share" / "ament_index" / "resource_index" / "packages"
    index.mkdir(parents=True, exist_ok=True)
    (index / "dmd_scenes").write_text("", encoding="utf-8")
    share = out / "prefix" / "share" / "dmd_scenes"
    if not share.exists():
        share.symlink_to(out, target_is_directory=True)
    return paths


def ament_prefix(out: Path) -> str:
    return str(out / "prefix")


# ---- pydrake ------------------------------------------------------------------------------------

def drake_plant(scene: Path, prefix: str | None = None) -> tuple[Any, Any]:
    """(plant, default context) of ``scene`` as pydrake processes it."""
    plant = MultibodyPlant(0.0)
    parser = Parser(plant)
    if prefix is not None:
        share = Path(prefix) / "share"
        for marker in (share / "ament_index" / "resource_index" / "packages").iterdir():
            if not parser.package_map().Contains(marker.name):
                parser.package_map().Add(marker.name, str(share / marker.name))
    ProcessModelDirectives(LoadModelDirectives(str(scene)), plant, parser)
    plant.Finalize()
    return plant, plant.CreateDefaultContext()


def _our_name(plant: Any, frame: Any) -> str:
    inst = plant.GetModelInstanceName(frame.model_instance())
    return frame.name() if inst == WORLD_INSTANCE else f"{inst}{SCOPE}{frame.name()}"


def _drake_own(name: str) -> bool:
    """A frame Drake makes for a joint (``J_parent``, ``J_child``, a weld's ``P_welds_to_C_P_F``, an
    axis-aligned joint's ``J_child_M`` / ``J_J_parent_F``)."""
    return name.endswith(("_parent", "_child", "_M", "_F")) or "_welds_to_" in name


def drake_poses(plant: Any, context: Any) -> dict[str, np.ndarray]:
    out = {}
    for i in range(plant.num_frames()):
        f = plant.get_frame(FrameIndex(i))
        out[_our_name(plant, f)] = np.asarray(f.CalcPoseInWorld(context).GetAsMatrix4())
    return out


def set_drake_positions(plant: Any, context: Any, model: Model, q: dict[str, list[float]]) -> None:
    """Our joint values (our layout) into Drake's context; mimic followers from their leaders."""
    values = dict(q)
    for j in model.joints.values():
        if j.mimic and j.mimic[0].joint in values:
            m = j.mimic[0]
            values[j.name] = [m.multiplier * values[m.joint][0] + m.offset]
    qa = plant.GetPositions(context).copy()
    for name, v in values.items():
        inst, _, local = name.rpartition(SCOPE)
        joint = plant.GetJointByName(local, plant.GetModelInstanceByName(inst))
        s, n = joint.position_start(), joint.num_positions()
        if model.joints[name].type is JointType.FLOATING:  # ours x y z qx qy qz qw; Drake's qw qx qy qz x y z
            v = [v[6], v[3], v[4], v[5], v[0], v[1], v[2]]
        assert n == len(v), (name, n, v)
        qa[s:s + n] = v
    plant.SetPositions(context, qa)


# ---- ours ---------------------------------------------------------------------------------------

def our_poses(model: Model, q: dict[str, list[float]]) -> dict[str, np.ndarray]:
    tree = compile_model(model)
    vec, _ = tree.resolve_mapping(q, strict=True)
    poses = fk.forward(tree, vec)
    root = frame_poses_in_root(model, {n: poses[i] for i, n in enumerate(tree.link_names)})
    out: dict[str, np.ndarray] = {}
    for key, x in root.items():
        if key.startswith("\0model:"):
            name = key[len("\0model:"):]
            if model.models[name].source.element != NAMESPACE:  # not an instance in Drake
                out[f"{name}{SCOPE}__model__"] = x  # Drake has a __model__ frame for SDFormat models only
        else:
            out[key] = x
    return out


def random_positions(model: Model, rng: np.random.Generator) -> dict[str, list[float]]:
    """Every independent moving joint: within limits (±π without), floating joints a random pose."""
    q: dict[str, list[float]] = {}
    for j in model.joints.values():
        if not j.is_moving or j.mimic:
            continue
        if j.type is JointType.FLOATING:
            quat = rng.normal(size=4)
            quat /= np.linalg.norm(quat)
            q[j.name] = [*rng.uniform(-1, 1, 3).tolist(), *quat.tolist()]
        elif j.nq == 1:
            lo, hi = -math.pi, math.pi
            if j.limits is not None and j.limits.lower is not None and j.limits.upper is not None:
                lo, hi = j.limits.lower, j.limits.upper
            q[j.name] = [float(rng.uniform(lo, hi))]
    return q


def compare(scene: Path, samples: int, seed: int, prefix: str | None) -> dict[str, Any]:
    """Worst pose difference (max abs over the 4x4 entries) per configuration, and the counts."""
    env_old = os.environ.get("AMENT_PREFIX_PATH")
    if prefix is not None:
        os.environ["AMENT_PREFIX_PATH"] = prefix
        clear_cache()
    try:
        model = load_model_file(scene)
    finally:
        if prefix is not None:
            if env_old is None:
                os.environ.pop("AMENT_PREFIX_PATH", None)
            else:
                os.environ["AMENT_PREFIX_PATH"] = env_old
            clear_cache()
    plant, ctx = drake_plant(scene, prefix)
    rng = np.random.default_rng(seed)
    configs = [dict(model.default_positions)] + [
        {**model.default_positions, **random_positions(model, rng)} for _ in range(samples)]
    worst, frames_compared, missing, lacking = 0.0, 0, set(), set()
    for q in configs:
        set_drake_positions(plant, ctx, model, q)
        ref, ours = drake_poses(plant, ctx), our_poses(model, q)
        for name, x in ours.items():
            if name not in ref:
                inst = name[:-len("::__model__")] if name.endswith("::__model__") else None
                if inst is None or not plant.HasModelInstanceNamed(inst):  # URDF instances: no __model__
                    missing.add(name)
                continue
            worst = max(worst, float(np.abs(ref[name] - x).max()))
            frames_compared += 1
        lacking |= {n for n in ref if n not in ours and not _drake_own(n.rpartition(SCOPE)[2]) and n != "world"}
    return {"scene": scene.name, "configs": len(configs), "frames": frames_compared, "worst": worst,
            "ours_not_in_drake": sorted(missing),
            "drake_not_in_ours": sorted(lacking), "links": len(model.links), "joints": len(model.joints)}


_DRAKE_LOADS = r"""
import sys
from pydrake.multibody.parsing import LoadModelDirectives, Parser, ProcessModelDirectives
from pydrake.multibody.plant import MultibodyPlant
plant = MultibodyPlant(0.0)
parser = Parser(plant)
for name, path in (a.split("=", 1) for a in sys.argv[2:]):
    parser.package_map().Add(name, path)
try:
    ProcessModelDirectives(LoadModelDirectives(sys.argv[1]), plant, parser)
    plant.Finalize()
except Exception as exc:
    print(str(exc)[:300])
    sys.exit(3)
"""

_NUMBER = re.compile(r"(?<![\w.:/-])-?\d+(?:\.\d+)?(?![\w.])")
_NAME_VALUE = re.compile(r"((?:name|parent|child|base_frame|model_namespace): *)([^,}\n]+)")


def mutations(text: str, rng: np.random.Generator, n: int) -> list[tuple[str, str]]:
    """``n`` variants of a scene, one change each: a line removed, a number replaced (``-1``, ``0.25``,
    ``7``, ``1e400``, ``.nan``, ``abc``, ``[1, 2]``; half the changes), a name replaced (``nowhere``,
    ``a::b``, empty), a key misspelt."""
    lines = text.splitlines()
    out: list[tuple[str, str]] = []
    for _ in range(n):
        kind = [0, 1, 1, 1, 1, 2, 2, 3][int(rng.integers(8))]
        new = list(lines)
        i = int(rng.integers(1, len(lines)))
        if kind == 0:
            what = f"line {i + 1} removed"
            del new[i]
        elif kind == 1:
            spots = [(k, m) for k, line in enumerate(lines) for m in _NUMBER.finditer(line)]
            if not spots:
                continue
            k, m = spots[int(rng.integers(len(spots)))]
            repl = ["-1", "0.25", "7", "1e400", ".nan", "abc", "[1, 2]"][int(rng.integers(7))]
            new[k] = lines[k][:m.start()] + repl + lines[k][m.end():]
            what = f"line {k + 1}: {m.group(0)} -> {repl}"
        elif kind == 2:
            spots = [(k, m) for k, line in enumerate(lines) for m in _NAME_VALUE.finditer(line)]
            if not spots:
                continue
            k, m = spots[int(rng.integers(len(spots)))]
            repl = ["nowhere", "a::b", "''"][int(rng.integers(3))]
            new[k] = lines[k][:m.start(2)] + repl + lines[k][m.end(2):]
            what = f"line {k + 1}: {m.group(2).strip()} -> {repl}"
        else:
            keys = [(k, m) for k, line in enumerate(lines) for m in re.finditer(r"([A-Za-z_]+):", line)]
            k, m = keys[int(rng.integers(len(keys)))]
            new[k] = lines[k][:m.start(1)] + m.group(1) + "x" + lines[k][m.end(1):]
            what = f"line {k + 1}: key {m.group(1)} misspelt"
        out.append((what, "\n".join(new) + "\n"))
    return out


def verdicts(scene: Path, prefix: str | None) -> tuple[str, str]:
    """(ours, Drake's): ``loads``, ``refused`` (ours: a ModelError; Drake: an exception or an abort),
    or ours ``crash: ...`` (any other exception: a bug)."""
    env_old = os.environ.get("AMENT_PREFIX_PATH")
    if prefix is not None:
        os.environ["AMENT_PREFIX_PATH"] = prefix
    clear_cache()
    try:
        load_model_file(scene)
        ours = "loads"
    except ModelError:
        ours = "refused"
    except Exception as exc:  # noqa: BLE001 a crash is reported as a disagreement
        ours = f"crash: {type(exc).__name__}: {exc}"
    finally:
        if env_old is None:
            os.environ.pop("AMENT_PREFIX_PATH", None)
        else:
            os.environ["AMENT_PREFIX_PATH"] = env_old
        clear_cache()
    pkgs = []
    if prefix is not None:
        share = Path(prefix) / "share"
        pkgs = [f"{m.name}={share / m.name}" for m in (share / "ament_index" / "resource_index" / "packages").iterdir()]
    r = subprocess.run([sys.executable, "-c", _DRAKE_LOADS, str(scene), *pkgs], capture_output=True, text=True,
                       timeout=120)
    return ours, "loads" if r.returncode == 0 else "refused"


def drake_scenes(prefix: Path, samples: int, seed: int) -> int:
    """Every ``*.dmd.yaml`` under ``PREFIX/share/*``: both verdicts, and every frame pose where both load."""
    bad = 0
    for scene in sorted(prefix.glob("share/*/*.dmd.yaml")):
        ours, drake = verdicts(scene, str(prefix))
        line = f"{scene.name:32s} ours {ours:8s} Drake {drake:8s}"
        ok = ours == drake
        if ok and ours == "loads":
            r = compare(scene, samples, seed, str(prefix))
            ok = r["worst"] <= 1e-9 and not r["ours_not_in_drake"] and not r["drake_not_in_ours"]
            line += f" {r['frames']:5d} frame poses  worst {r['worst']:.1e}"
        bad += not ok
        print(line + ("  agree" if ok else "  DISAGREE"), flush=True)
    return 1 if bad else 0


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--samples", type=int, default=20, help="random configurations per scene (default 20)")
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--mutations", type=int, default=15, help="variants per scene (default 15, 0 for none)")
    ap.add_argument("--drake-scenes", metavar="PREFIX", help="only the scenes of an ament prefix holding Drake's "
                    "own test scenes (conformance/drake_scenes): verdicts, and poses where both load")
    args = ap.parse_args()
    if args.drake_scenes:
        return drake_scenes(Path(args.drake_scenes).resolve(), args.samples, args.seed)
    bad = 0
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp)
        scenes = write_scenes(out)
        extra = {"arm7_on_table": SAMPLES / "arm7_on_table.dmd.yaml"}
        prefix_samples = out / "rsf_prefix"
        idx = prefix_samples / "share" / "ament_index" / "resource_index" / "packages"
        idx.mkdir(parents=True)
        (idx / "robot_state_format").write_text("")
        (prefix_samples / "share" / "robot_state_format").symlink_to(ROOT / "robot_state_format")
        for name, path in [*((n, p) for n, p in scenes.items() if n not in SUB_FILES), *extra.items()]:
            prefix = str(prefix_samples) if name in extra else ament_prefix(out)
            r = compare(path, args.samples, args.seed, prefix)
            ok = r["worst"] <= 1e-9 and not r["ours_not_in_drake"] and not r["drake_not_in_ours"]
            bad += not ok
            if args.mutations:
                rng = np.random.default_rng(args.seed)
                agree = n = loads = known = 0
                for what, text in mutations(path.read_text(encoding="utf-8"), rng, args.mutations):
                    variant = out / f"{name}_variant.dmd.yaml"
                    variant.write_text(text, encoding="utf-8")
                    ours, drake = verdicts(variant, prefix)
                    n += 1
                    loads += drake == "loads"
                    if ours == drake and ours == "loads":
                        r2 = compare(variant, 2, args.seed, prefix)
                        ok2 = r2["worst"] <= 1e-9 and not r2["ours_not_in_drake"] and not r2["drake_not_in_ours"]
                        if not ok2:
                            print(f"  variant ({what}): poses disagree: {r2}")
                            continue
                    if ours != drake:
                        if ours == "refused" and what.endswith(("-> .nan", "-> 1e400")):
                            known += 1  # non-finite numbers: refused on purpose (docs/models.md)
                            continue
                        print(f"  variant ({what}): ours {ours}, Drake {drake}")
                        continue
                    agree += 1
                bad += agree + known != n
                print(f"{name:18s} variants: {n}, Drake loads {loads}, verdicts (and poses) agree {agree}"
                      + (f", non-finite numbers refused where Drake loads them {known}" if known else ""))
            print(f"{name:18s} {r['links']:3d} links {r['joints']:3d} joints  {r['configs']:3d} configurations  "
                  f"{r['frames']:5d} frame poses  worst {r['worst']:.1e}  {'agree' if ok else 'DISAGREE'}"
                  + (f"  missing in Drake: {r['ours_not_in_drake']}" if r["ours_not_in_drake"] else "")
                  + (f"  missing here: {r['drake_not_in_ours']}" if r["drake_not_in_ours"] else ""))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
