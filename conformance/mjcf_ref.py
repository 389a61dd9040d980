"""MJCF against MuJoCo: verdicts (MuJoCo loads it / refuses it) and every pose at random configurations.

MuJoCo (the ``mujoco`` wheel in ``.venv``) is the reference: ``MjModel.from_xml_path`` decides whether a
file is valid, ``mj_kinematics`` where every body (``xpos``/``xmat``), site (``site_xpos``/``site_xmat``)
and joint anchor (``xanchor``/``xaxis``) is at a configuration. The reader's Model is compiled and its
forward kinematics evaluated at the same ``qpos`` (a joint's value is its qpos), body by body and site by
site. The corpus: Gymnasium's and dm_control's MJCF assets (``uv pip install gymnasium`` and
``uv pip install --no-deps dm_control``: only their XML files are used) and variants of them
(:func:`variants`): ``mutate.py``'s generic single changes, plus MJCF ones (every orientation form with
random values, a random mixed-case ``eulerseq``, radians, extra hinge/slide/ball joints with random
``pos``/``axis``/``ref`` in one body, bodies wrapped in a posed ``<frame>``).

The wider corpus (``--wide``, issue 36): every MJCF model file (root ``<mujoco>``) of dm_control (all of
it: suite, locomotion, manipulation, its test assets), Gymnasium-Robotics, Meta-World and robosuite's robots
and grippers, and (second round) robosuite-models, MyoSuite and myo-sim, gym-aloha, gym-hil, gym-xarm, MJX
Safety Gym, Brax, MuJoCo Warp's test data, mjlab, MuJoCo Playground, dexterity, dm_robotics (moma, panda),
fancy_gym, OGBench, RoboPianist and Safety-Gymnasium, the PyPI packages installed without their dependencies into ``conformance/build/corpus``
(``--install`` runs ``pip install --no-deps --target``; nothing is fetched at run time otherwise).

    .venv/bin/python conformance/mjcf_ref.py [--mutations N] [--configs K] [--json OUT] [FILE_OR_DIR ...]
    .venv/bin/python conformance/mjcf_ref.py --wide [--install] --mutations 0 --configs 3
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import random
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from dataclasses import asdict, dataclass
from pathlib import Path

import mujoco
import numpy as np
from lxml import etree

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "conformance"))

from mutate import sample  # noqa: E402

from robot_state_format.errors import RobotStateFormatError  # noqa: E402
from robot_state_format.kinematics.fk import forward  # noqa: E402
from robot_state_format.kinematics.tree import compile_model  # noqa: E402
from robot_state_format.model.loader import load_model_file  # noqa: E402
from robot_state_format.model.types import Frame, Model  # noqa: E402

TOLERANCE = 1e-9
CORPUS = ROOT / "conformance" / "build" / "corpus"
CORPUS_PACKAGES = ("dm-control", "gymnasium-robotics", "metaworld", "robosuite",
                   # the second round (issue 36): suites the project had not used
                   "robosuite-models", "myo-sim", "myosuite", "gym-aloha", "gym-hil", "gym-xarm", "mjx-safety-gym",
                   "brax", "mujoco-warp", "mjlab", "playground", "dexterity", "dm-robotics-moma",
                   "dm-robotics-panda", "fancy-gym", "ogbench", "robopianist", "safety-gymnasium")
# (package directory, sub-directories holding its models)
CORPUS_DIRS = (("dm_control", ("",)), ("gymnasium_robotics", ("envs/assets",)), ("metaworld", ("",)),
               ("robosuite", ("models/assets/robots", "models/assets/grippers")),
               ("robosuite_models", ("",)), ("myo_sim", ("",)), ("myosuite", ("",)), ("gym_aloha", ("",)),
               ("gym_hil", ("",)), ("gym_xarm", ("",)), ("mjx_safety_gym", ("",)), ("brax", ("",)),
               ("mujoco_warp", ("",)), ("mjlab", ("",)), ("mujoco_playground", ("",)), ("dexterity", ("",)),
               ("dm_robotics", ("moma", "panda")), ("fancy_gym", ("",)), ("ogbench", ("",)),
               ("robopianist", ("",)), ("safety_gymnasium", ("",)))


def install_corpus() -> bool:
    """pip-install the corpus packages (no dependencies) into conformance/build/corpus."""
    r = subprocess.run([sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--target", str(CORPUS),
                        *CORPUS_PACKAGES], capture_output=True, text=True)
    if r.returncode != 0:
        print(r.stderr[-2000:])
    return r.returncode == 0


def _is_model(path: Path) -> bool:
    try:
        for _, el in etree.iterparse(str(path), events=("start",), resolve_entities=False, no_network=True):
            return bool(el.tag == "mujoco")
    except etree.XMLSyntaxError:
        return False
    return False


def wide_files() -> list[Path]:
    """The wider corpus's model files (those installed): see the module text."""
    out: list[Path] = []
    for pkg, subs in CORPUS_DIRS:
        for sub in subs:
            d = CORPUS / pkg / sub
            if d.is_dir():
                out += sorted(p for p in d.rglob("*.xml") if _is_model(p))
    return out


def asset_files() -> list[Path]:
    """Gymnasium's and dm_control's MJCF model files (those installed)."""
    out: list[Path] = []
    for pkg, sub in (("gymnasium", "envs/mujoco/assets"), ("dm_control", "suite")):
        spec = importlib.util.find_spec(pkg)
        if spec is None or not spec.submodule_search_locations:
            continue
        d = Path(next(iter(spec.submodule_search_locations))) / sub
        out += sorted(p for p in d.glob("*.xml"))
    return out


def random_configurations(m: mujoco.MjModel, k: int, rng: np.random.Generator) -> Iterator[np.ndarray]:
    """``qpos0`` first, then random ``qpos``: hinge/slide within their range (or +-pi / +-1 m), unit
    quaternions for ball and free joints, free positions within +-2 m."""
    yield m.qpos0.copy()
    for _ in range(k - 1):
        q = m.qpos0.copy()
        for j in range(m.njnt):
            a, t = int(m.jnt_qposadr[j]), int(m.jnt_type[j])
            if t == mujoco.mjtJoint.mjJNT_FREE:
                q[a:a + 3] = rng.uniform(-2, 2, 3)
                u = rng.normal(size=4)
                q[a + 3:a + 7] = u / np.linalg.norm(u)
            elif t == mujoco.mjtJoint.mjJNT_BALL:
                u = rng.normal(size=4)
                q[a:a + 4] = u / np.linalg.norm(u)
            else:
                lo, hi = (m.jnt_range[j] if m.jnt_limited[j] else
                          ((-np.pi, np.pi) if t == mujoco.mjtJoint.mjJNT_HINGE else (-1.0, 1.0)))
                q[a] = rng.uniform(lo, hi)
        yield q


def joint_names(m: mujoco.MjModel) -> list[str]:
    """Every joint's name in the reader's Model: its own, or ``jointN`` (N its index) followed by as many
    ``_`` as it takes to differ from every named joint and body and the unnamed ones before it."""
    taken = {n for kind, count in ((mujoco.mjtObj.mjOBJ_JOINT, m.njnt), (mujoco.mjtObj.mjOBJ_BODY, m.nbody))
             for i in range(count) if (n := mujoco.mj_id2name(m, kind, i))}
    out = []
    for j in range(m.njnt):
        name = mujoco.mj_id2name(m, mujoco.mjtObj.mjOBJ_JOINT, j)
        if not name:
            name = f"joint{j}"
            while name in taken:
                name += "_"
            taken.add(name)
        out.append(name)
    return out


def joint_mapping(m: mujoco.MjModel, qpos: np.ndarray, skip: frozenset[str] = frozenset()) -> dict[str, object]:
    """Joint name (the reader's rule for unnamed ones) → value in the package's layout."""
    out: dict[str, object] = {}
    for j, name in enumerate(joint_names(m)):
        if name in skip:
            continue
        a, t = int(m.jnt_qposadr[j]), int(m.jnt_type[j])
        if t == mujoco.mjtJoint.mjJNT_FREE:
            out[name] = [*qpos[a:a + 3], *qpos[a + 4:a + 7], qpos[a + 3]]
        elif t == mujoco.mjtJoint.mjJNT_BALL:
            out[name] = [*qpos[a + 1:a + 4], qpos[a]]
        else:
            out[name] = float(qpos[a])
    return out


def mimic_consistent(m: mujoco.MjModel, model: Model, qpos: np.ndarray) -> np.ndarray:
    """``qpos`` with every mimic follower set from its leader (as the equality constraint holds)."""
    q = qpos.copy()
    ids = {name: j for j, name in enumerate(joint_names(m))}
    for name, joint in model.joints.items():
        for mim in joint.mimic:
            q[m.jnt_qposadr[ids[name]]] = mim.multiplier * q[m.jnt_qposadr[ids[mim.joint]]] + mim.offset
    return q


def _site_frame(model: Model, name: str) -> Frame:
    """The Model frame of MuJoCo's site ``name``: ``name``, or ``name_site`` (``name_site_``, ...) when a body
    or frame has that name (docs/models.md)."""
    key = name
    while True:
        fr = model.frames.get(key)
        if fr is not None and fr.source is not None and str(fr.source.element or "").startswith("site"):
            return fr
        key = f"{name}_site" if key == name else key + "_"
        if len(key) > len(name) + 16:
            raise KeyError(f"site {name!r} has no frame")


def pose_errors(model: Model, m: mujoco.MjModel, configs: int, seed: int = 0) -> tuple[int, float, str]:
    """(poses compared, worst error, where): bodies, sites and joint anchors/axes against mj_kinematics."""
    d = mujoco.MjData(m)
    tree = compile_model(model)
    rng = np.random.default_rng(seed)
    followers = frozenset(tree.mimic_followers)
    count, worst, where = 0, 0.0, ""
    for qpos in random_configurations(m, configs, rng):
        qpos = mimic_consistent(m, model, qpos)
        d.qpos[:] = qpos
        mujoco.mj_kinematics(m, d)
        x = forward(tree, tree.q_from_mapping(joint_mapping(m, qpos, followers)), world=True)
        poses = {n: x[i] for i, n in enumerate(tree.link_names)}
        checks: list[tuple[str, np.ndarray, np.ndarray, np.ndarray]] = []
        for b in range(1, m.nbody):
            name = mujoco.mj_id2name(m, mujoco.mjtObj.mjOBJ_BODY, b) or f"body{b}"
            checks.append((f"body {name}", poses[name], d.xpos[b], d.xmat[b].reshape(3, 3)))
        for s in range(m.nsite):
            name = mujoco.mj_id2name(m, mujoco.mjtObj.mjOBJ_SITE, s) or f"site{s}"
            fr = _site_frame(model, name)
            base = poses[fr.attached_to] if fr.attached_to in poses else np.eye(4)
            checks.append((f"site {name}", base @ fr.pose, d.site_xpos[s], d.site_xmat[s].reshape(3, 3)))
        for label, ours, pos, rot in checks:
            err = max(float(np.abs(ours[:3, 3] - pos).max()), float(np.abs(ours[:3, :3] - rot).max()))
            count += 1
            if err > worst:
                worst, where = err, label
        for j, name in enumerate(joint_names(m)):
            joint = model.joints[name]
            if joint.axis is None:
                continue
            jf = poses[joint.child] @ np.linalg.inv(joint.child_offset)
            anchor = jf[:3, 3]
            if int(m.jnt_type[j]) == mujoco.mjtJoint.mjJNT_SLIDE:  # MuJoCo's anchor stays before the slide
                anchor = anchor - jf[:3, :3] @ np.asarray(joint.axis) * float(qpos[m.jnt_qposadr[j]] - m.qpos0[m.jnt_qposadr[j]])
            err = max(float(np.abs(anchor - d.xanchor[j]).max()),
                      float(np.abs(jf[:3, :3] @ np.asarray(joint.axis) - d.xaxis[j]).max()))
            count += 1
            if err > worst:
                worst, where = err, f"joint {name}"
    return count, worst, where


# ---- MJCF variants ----------------------------------------------------------------------------

def _rand_orientation(rng: random.Random) -> tuple[str, str]:
    form = rng.choice(["quat", "axisangle", "euler", "xyaxes", "zaxis"])
    n = {"quat": 4, "axisangle": 4, "euler": 3, "xyaxes": 6, "zaxis": 3}[form]
    return form, " ".join(f"{rng.uniform(-2, 2):.6g}" for _ in range(n))


def _clear_orientation(el: etree._Element) -> None:
    for a in ("quat", "axisangle", "euler", "xyaxes", "zaxis"):
        el.attrib.pop(a, None)


def mjcf_variant(data: bytes, rng: random.Random) -> tuple[str, bytes]:
    """One MJCF-specific variant (kind, document)."""
    root = etree.fromstring(data, etree.XMLParser(resolve_entities=False, no_network=True))
    kind = rng.choice(["orientations", "eulerseq", "radian", "joints", "frame"])
    bodies = list(root.iter("body"))
    if kind in ("orientations", "eulerseq", "radian"):
        comp = root.find("compiler")
        if comp is None:
            comp = etree.SubElement(root, "compiler")
            root.insert(0, comp)
        if kind == "eulerseq":
            comp.set("eulerseq", "".join(rng.choice("xyzXYZ") for _ in range(3)))
        if kind == "radian":
            comp.set("angle", "radian" if comp.get("angle", "degree") == "degree" else "degree")
        placed = [e for e in [*root.iter("site"), *root.iter("geom")]  # not a tendon's path elements
                  if any(a.tag in ("worldbody", "default") for a in e.iterancestors())]
        for el in [*bodies, *placed]:
            if rng.random() < 0.6 and el.get("fromto") is None:
                _clear_orientation(el)
                form, text = _rand_orientation(rng)
                el.set("euler" if kind == "eulerseq" else form, text if kind != "eulerseq" else
                       " ".join(f"{rng.uniform(-3, 3):.6g}" for _ in range(3)))
    elif kind == "joints":
        for b in bodies:
            if b.find("freejoint") is not None or any(j.get("type") == "free" for j in b.findall("joint")):
                continue
            if rng.random() < 0.5:
                for k in range(rng.randint(1, 2)):
                    j = etree.Element("joint")
                    j.set("name", f"extra_{k}_{b.get('name') or id(b)}")
                    j.set("type", rng.choice(["hinge", "hinge", "slide", "ball"]))
                    j.set("pos", " ".join(f"{rng.uniform(-0.3, 0.3):.5g}" for _ in range(3)))
                    j.set("axis", " ".join(f"{rng.uniform(-1, 1):.5g}" for _ in range(3)))
                    j.set("ref", f"{rng.uniform(-1, 1):.4g}")
                    b.insert(rng.randint(0, len(b)), j)
    else:
        for b in bodies:
            if rng.random() < 0.4 and b.getparent() is not None and b.find("freejoint") is None:
                parent = b.getparent()
                fr = etree.Element("frame")
                fr.set("pos", " ".join(f"{rng.uniform(-0.5, 0.5):.5g}" for _ in range(3)))
                form, text = _rand_orientation(rng)
                fr.set(form, text)
                parent.replace(b, fr)
                fr.append(b)
    return kind, etree.tostring(root, xml_declaration=True, encoding="utf-8")


@dataclass
class Outcome:
    file: str
    variant: str
    mujoco: str  # "loads" or MuJoCo's first error line
    ours: str  # "loads" or our first error
    agree: bool
    poses: int = 0
    worst: float = 0.0
    where: str = ""


def check_file(path: Path, label: str, configs: int) -> Outcome:
    try:
        m = mujoco.MjModel.from_xml_path(str(path))
        ref = "loads"
    except Exception as exc:  # noqa: BLE001 MuJoCo's errors are ValueErrors; any refusal is the reference's answer
        m, ref = None, str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
    try:
        model: Model | None = load_model_file(path)
        ours = "loads"
    except RobotStateFormatError as exc:
        model, ours = None, str(exc).splitlines()[0]
    out = Outcome(str(path), label, ref, ours, (m is None) == (model is None))
    if m is not None and model is not None:
        out.poses, out.worst, out.where = pose_errors(model, m, configs)
        out.agree = out.worst <= TOLERANCE
    return out


def run(files: list[Path], mutations: int, configs: int, seed: int = 0) -> list[Outcome]:
    outcomes: list[Outcome] = []
    rng = random.Random(seed)
    with tempfile.TemporaryDirectory() as tmp:
        for f in files:
            outcomes.append(check_file(f, "original", configs))
            if mutations <= 0:
                continue
            work = Path(tmp) / f.parent.name
            if not work.exists():
                shutil.copytree(f.parent, work, ignore=shutil.ignore_patterns("*.py"))
            data = f.read_bytes()
            variants = [(f"{m.kind} {m.where}", m.text) for m in sample(data, mutations // 2, seed)]
            variants += [mjcf_variant(data, rng) for _ in range(mutations - len(variants))]
            for k, (label, text) in enumerate(variants):
                p = work / f"_variant_{k}_{f.name}"
                p.write_bytes(text)
                outcomes.append(check_file(p, label, configs))
                p.unlink()
    return outcomes


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("paths", nargs="*")
    ap.add_argument("--mutations", type=int, default=20, help="variants per file (half generic, half MJCF)")
    ap.add_argument("--configs", type=int, default=5, help="configurations per loaded file (qpos0 + random)")
    ap.add_argument("--json")
    ap.add_argument("--show", type=int, default=10)
    ap.add_argument("--wide", action="store_true", help="the wider corpus (see the module text)")
    ap.add_argument("--install", action="store_true", help="pip-install the wider corpus first")
    args = ap.parse_args(argv)
    if args.install and not install_corpus():
        return 2
    files = [q for p in args.paths for q in (sorted(Path(p).glob("*.xml")) if Path(p).is_dir() else [Path(p)])] \
        if args.paths else (wide_files() if args.wide else asset_files())
    if not files:
        print("no MJCF files (install gymnasium and dm_control, see the module text)")
        return 1
    t0 = time.monotonic()
    outcomes = run(files, args.mutations, args.configs)
    bad = [o for o in outcomes if not o.agree]
    loads = sum(o.mujoco == "loads" for o in outcomes)
    compared = [o for o in outcomes if o.poses]
    worst = max((o.worst for o in compared), default=0.0)
    print(f"{len(outcomes)} cases ({len(files)} files, {len(outcomes) - len(files)} variants), MuJoCo loads {loads}, "
          f"verdicts and poses agree {len(outcomes) - len(bad)}; {len(compared)} models, "
          f"{sum(o.poses for o in compared)} poses compared, worst {worst:.2g} ({time.monotonic() - t0:.0f} s)")
    if args.wide:  # the figure per source package
        for pkg, _ in CORPUS_DIRS:
            mine = [o for o in outcomes if Path(o.file).is_relative_to(CORPUS / pkg)]
            if mine:
                print(f"  {pkg}: {len(mine)} files, MuJoCo loads {sum(o.mujoco == 'loads' for o in mine)}, agree "
                      f"{sum(o.agree for o in mine)}, {sum(o.poses for o in mine)} poses")
    for o in bad[:args.show]:
        print(f"DISAGREE {Path(o.file).name} [{o.variant}]: mujoco={o.mujoco!r} ours={o.ours!r} "
              f"worst={o.worst:.3g} at {o.where}")
    if args.json:
        Path(args.json).write_text(json.dumps([asdict(o) for o in outcomes], indent=1))
    return 0 if not bad else 1


if __name__ == "__main__":
    sys.exit(main())
