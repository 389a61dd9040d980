"""Differential harness: the project's readers against urdfdom, libsdformat and Pinocchio.

    .venv/bin/python conformance/run.py [--urdf DIR_OR_FILE ...] [--sdf DIR_OR_FILE ...]
                                        [--mutations N] [--install] [--show N] [--json OUT]

For every URDF: ``check_urdf``'s verdict (loads or refuses) against ``load_model_file``'s; for every
URDF both load, the link poses of forward kinematics at random configurations against Pinocchio
(1e-9). For every SDFormat file: ``sdf_ref``'s verdict (libsdformat's ``sdf::Root::Load``) against
ours; for every file both load, the world pose of every model, link, joint and frame against
``frames --json`` (1e-5). The corpus is every fixture (test/fixtures), the bundled samples,
example-robot-data's URDFs and conformance/cases, plus up to N (default 40) single-change mutations
of each bundled and test model (element and attribute removal, duplicated names, out-of-range
numbers). Exit 0 when everything agrees, 1 otherwise; the summary names each disagreement.

It changes nothing on the system unless asked: ``--install`` (as root) lets it ``apt-get install``
libsdformat-dev, g++ and pkg-config when the libsdformat reference cannot be built; without it the
SDFormat half is skipped with a line saying so.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import math
import os
import re
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path[:0] = [str(ROOT), str(HERE), str(ROOT / "test")]

from mutate import sample, spec_sample, version_swaps  # noqa: E402
from references import check_urdf_path, run_check_urdf, run_sdf_ref, sdf_ref_path  # noqa: E402

from robot_state_format.errors import RobotStateFormatError  # noqa: E402
from robot_state_format.model.frames import frames_document, joint_frame_keys  # noqa: E402
from robot_state_format.model.loader import load_model_file  # noqa: E402
from robot_state_format.model.types import JointType, Model  # noqa: E402


@dataclass
class Case:
    fmt: str             # urdf | sdf
    path: Path
    label: str
    kind: str            # fixture | mutation:<kind>
    search: tuple[str, ...] = ()


@dataclass
class Outcome:
    case: Case
    ref_loads: bool
    ours_loads: bool
    detail: str = ""
    poses_compared: int = 0
    pose_error: float | None = None

    @property
    def agree(self) -> bool:
        return self.ref_loads == self.ours_loads and (self.pose_error is None or self.pose_error <= 1e-5)


def _files(items: list[str], suffixes: tuple[str, ...]) -> list[Path]:
    out: list[Path] = []
    for item in items:
        p = Path(item)
        if p.is_dir():
            out.extend(sorted(f for f in p.rglob("*") if f.suffix in suffixes and f.is_file()))
        elif p.is_file():
            out.append(p)
    return out


def default_urdfs() -> list[Path]:
    from real_robots import real_urdfs

    return (_files([str(ROOT / "test/fixtures/urdf"), str(HERE / "cases/urdf")], (".urdf",))
            + sorted((ROOT / "robot_state_format/samples").glob("*.urdf")) + real_urdfs())


def default_sdfs() -> list[Path]:
    from real_robots import robots_dir

    real = sorted((robots_dir() / "cassie_description").rglob("*.sdf")) if robots_dir() is not None else []
    return (_files([str(ROOT / "test/fixtures/sdf"), str(HERE / "cases/sdf")], (".sdf", ".world"))
            + sorted((ROOT / "robot_state_format/samples").glob("*.sdf")) + real)


def mutation_bases(fmt: str) -> list[Path]:
    from real_robots import real_urdf, robots_dir

    if fmt == "urdf":
        real = [real_urdf(r) for r in ("ur_description/urdf/ur5_robot.urdf", "panda_description/urdf/panda.urdf")]
        return (sorted((ROOT / "robot_state_format/samples").glob("*.urdf"))
                + [ROOT / "test/fixtures/urdf/limit_no_effort.urdf"] + [p for p in real if p is not None])
    bases = sorted((ROOT / "robot_state_format/samples").glob("*.sdf"))
    bases += sorted((ROOT / "test/fixtures/sdf/reference/loads").glob("*.sdf"))[:6]
    if robots_dir() is not None:
        bases.append(robots_dir() / "cassie_description/robots/cassie_reduced.sdf")
    return [b for b in bases if b.is_file() and b"<include" not in b.read_bytes()]


def ours(path: Path, search: tuple[str, ...] = ()) -> tuple[Model | None, str]:
    try:
        return load_model_file(path, search_paths=list(search)), ""
    except RobotStateFormatError as exc:
        return None, str(exc).splitlines()[0][:300]
    except Exception as exc:  # noqa: BLE001 a crash is a disagreement too
        return None, f"CRASH {type(exc).__name__}: {exc}"[:300]


# -- URDF kinematics against Pinocchio ----------------------------------------------------------
@contextlib.contextmanager
def _quiet_stderr() -> Iterator[None]:
    sys.stderr.flush()
    saved = os.dup(2)
    with open(os.devnull, "wb") as null:
        os.dup2(null.fileno(), 2)
    try:
        yield
    finally:
        os.dup2(saved, 2)
        os.close(saved)


def fk_against_pinocchio(model: Model, path: Path, n: int = 3, seed: int = 0) -> tuple[int, float]:
    import pinocchio as pin

    from robot_state_format.kinematics import fk
    from robot_state_format.kinematics.tree import compile_model

    tree = compile_model(model)
    if any(j.type is JointType.PLANAR and j.axis is not None and not np.allclose(j.axis, (0, 0, 1))
           for j in model.joints.values()):
        return 0, 0.0  # Pinocchio's URDF parser ignores a planar joint's <axis> (its plane is always x-y)
    with _quiet_stderr():  # urdfdom logs what it tolerates on the C stderr
        pmodel = pin.buildModelFromUrdf(str(path))
    pdata = pmodel.createData()
    rng = np.random.default_rng(seed)
    frames = {pmodel.frames[i].name: i for i in range(len(pmodel.frames)) if pmodel.frames[i].type == pin.BODY}
    worst = 0.0
    compared = 0
    for _ in range(n):
        q = np.empty(tree.nq)
        for name in tree.moving_joint_names:
            j = model.joints[name]
            s = tree.q_slice(name)
            if j.type in (JointType.FLOATING, JointType.BALL):
                quat = rng.normal(size=4)
                if j.type is JointType.FLOATING:
                    q[s.start:s.start + 3] = rng.uniform(-2, 2, 3)
                    q[s.start + 3:s.stop] = quat / np.linalg.norm(quat)
                else:
                    q[s] = quat / np.linalg.norm(quat)
            else:
                lo, hi = -math.pi, math.pi
                lim = j.limits
                if j.type in (JointType.REVOLUTE, JointType.PRISMATIC) and lim is not None and \
                        lim.lower is not None and lim.upper is not None and lim.lower < lim.upper:
                    lo, hi = lim.lower, lim.upper
                q[s] = rng.uniform(lo, hi, s.stop - s.start)
        allq = tree.all_joint_positions(q)
        pq = pin.neutral(pmodel)
        for jid in range(1, pmodel.njoints):
            jm = pmodel.joints[jid]
            val = allq[pmodel.names[jid]]
            short = jm.shortname()
            if len(val) == 0:  # a joint read as fixed (a zero axis): Pinocchio's neutral value leaves it still
                continue
            if jm.nq == 2 and jm.nv == 1:  # unbounded revolute, aligned (RUB*) or not: (cos, sin)
                pq[jm.idx_q:jm.idx_q + 2] = [math.cos(val[0]), math.sin(val[0])]
            elif short == "JointModelPlanar":
                pq[jm.idx_q:jm.idx_q + 4] = [val[0], val[1], math.cos(val[2]), math.sin(val[2])]
            else:
                pq[jm.idx_q:jm.idx_q + jm.nq] = val
        pin.framesForwardKinematics(pmodel, pdata, pq)
        poses = fk.forward(tree, q)
        for i, name in enumerate(tree.link_names):
            if name in frames:
                worst = max(worst, float(np.max(np.abs(poses[i] - pdata.oMf[frames[name]].homogeneous))))
                compared += 1
    return compared, worst


# -- SDFormat poses against libsdformat -----------------------------------------------------------
def _quat_matrix(q: list[float]) -> np.ndarray:
    x, y, z, w = q
    return np.array([[1 - 2 * (y * y + z * z), 2 * (x * y - z * w), 2 * (x * z + y * w)],
                     [2 * (x * y + z * w), 1 - 2 * (x * x + z * z), 2 * (y * z - x * w)],
                     [2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x * x + y * y)]])


_LEFT_OUT = re.compile(r"joint '([^']+)': .*: the joint is left out$")


def sdf_pose_error(model: Model, entities: list[dict]) -> tuple[int, float, str]:
    doc = frames_document(model)["frames"]
    jkeys = joint_frame_keys(model)
    scoped_joint = {model.scoped(n): k for n, k in jkeys.items()}
    # a nested model's joint libsdformat loads unchecked and the reader leaves out, with a warning
    left_out = {model.scoped(m.group(1)) for w in model.warnings if (m := _LEFT_OUT.match(w.message))}
    worst, compared, missing = 0.0, 0, []
    for e in entities:
        if e["kind"] == "joint" and e["name"] in left_out:
            continue
        key = scoped_joint.get(e["name"], e["name"]) if e["kind"] == "joint" else e["name"]
        mine = doc.get(key)
        if mine is None:
            missing.append(f"{e['kind']} {e['name']}")
            continue
        dp = float(np.max(np.abs(np.array(mine["position"]) - np.array(e["position"]))))
        dr = float(np.max(np.abs(_quat_matrix(mine["quaternion"]) - _quat_matrix(e["quaternion"]))))
        worst = max(worst, dp, dr)
        compared += 1
    if missing:
        return compared, math.inf, "missing in frames: " + ", ".join(missing[:5])
    return compared, worst, ""


def run_case(case: Case, check_urdf: str | None, sdf_ref: str | None, fk: bool) -> Outcome | None:
    if case.fmt == "urdf":
        if check_urdf is None:
            return None
        ref = run_check_urdf(check_urdf, case.path)
        model, why = ours(case.path)
        out = Outcome(case, ref.loads, model is not None, why or _first_error(ref.log))
        if model is not None and ref.loads and fk:
            try:
                out.poses_compared, out.pose_error = fk_against_pinocchio(model, case.path)
            except Exception as exc:  # noqa: BLE001 Pinocchio refusing a file urdfdom loads is reported, not fatal
                out.detail = f"pinocchio: {type(exc).__name__}: {exc}"[:200]
        return out
    if sdf_ref is None:
        return None
    search = list(case.search) or [str(d) for d in (case.path.parent / "models", case.path.parent.parent / "models",
                                                    case.path.parent) if d.is_dir()]
    ref = run_sdf_ref(sdf_ref, case.path, search)
    model, why = ours(case.path, tuple(search))
    detail = why or "; ".join(e["message"] for e in ref.errors)[:300]
    out = Outcome(case, ref.loads, model is not None, detail)
    if model is not None and ref.loads:
        try:
            out.poses_compared, out.pose_error, extra = sdf_pose_error(model, ref.entities)
        except RobotStateFormatError as exc:
            out.pose_error, extra = math.inf, str(exc)
        if extra:
            out.detail = extra
    return out


def _first_error(log: str) -> str:
    for line in log.splitlines():
        if line.startswith(("Error", "ERROR")):
            return line.strip()[:200]
    return ""


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--urdf", action="append", default=None, metavar="PATH", help="URDF files or directories")
    ap.add_argument("--sdf", action="append", default=None, metavar="PATH", help="SDFormat files or directories")
    ap.add_argument("--mutations", type=int, default=40, metavar="N", help="mutations per base model (0: none)")
    ap.add_argument("--no-fk", action="store_true", help="skip the Pinocchio comparison")
    ap.add_argument("--install", action="store_true",
                    help="as root, apt-get install libsdformat-dev g++ pkg-config when the libsdformat reference "
                         "cannot be built (default: install nothing, skip the SDFormat half)")
    ap.add_argument("--no-install", action="store_true", help=argparse.SUPPRESS)  # the old default, kept
    ap.add_argument("--versions", action="store_true",
                    help="also every SDFormat file of 1.7 or later (without <include>) declared as each older "
                         "version from 1.4 (version-swap cases)")
    ap.add_argument("--show", type=int, default=40, help="disagreements listed per group")
    ap.add_argument("--json", metavar="OUT", help="write every outcome to OUT")
    args = ap.parse_args(argv)

    check_urdf = check_urdf_path()
    sdf_ref = sdf_ref_path(install=args.install and not args.no_install)
    missing = "MISSING (needs libsdformat-dev, g++, pkg-config: install them, or run with --install as root)"
    print(f"check_urdf: {check_urdf or 'MISSING'}; sdf_ref: {sdf_ref or missing}")
    only_urdf = args.urdf is not None and args.sdf is None
    only_sdf = args.sdf is not None and args.urdf is None
    cases: list[Case] = []
    tmp = Path(tempfile.mkdtemp(prefix="rsf-conformance-"))
    if not only_sdf:
        cases += [Case("urdf", p, str(p), "file") for p in (_files(args.urdf, (".urdf",)) if args.urdf
                                                             else default_urdfs())]
    if not only_urdf:
        cases += [Case("sdf", p, str(p), "file") for p in (_files(args.sdf, (".sdf", ".world")) if args.sdf
                                                            else default_sdfs())]
    if args.mutations > 0 and args.urdf is None and args.sdf is None:
        for fmt in ("urdf", "sdf"):
            for base in mutation_bases(fmt):
                extra = spec_sample(base.read_bytes(), args.mutations) if fmt == "sdf" else []
                for k, m in enumerate(sample(base.read_bytes(), args.mutations) + extra):
                    f = tmp / f"{base.stem}.m{k}.{fmt}"
                    f.write_bytes(m.text)
                    cases.append(Case(fmt, f, f"{base.name} {m.kind} {m.where}", "mutation:" + m.kind))
    if args.versions:
        for c in [c for c in cases if c.fmt == "sdf" and c.kind == "file"]:
            data = c.path.read_bytes()
            if b"<include" in data:
                continue
            for k, m in enumerate(version_swaps(data)):
                f = tmp / f"{c.path.stem}.v{k}.sdf"
                f.write_bytes(m.text)
                cases.append(Case("sdf", f, f"{c.path.name} {m.kind} {m.where}", "mutation:" + m.kind))
    t0 = time.perf_counter()
    outcomes = [o for c in cases if (o := run_case(c, check_urdf, sdf_ref, not args.no_fk)) is not None]
    elapsed = time.perf_counter() - t0

    status = 0
    for fmt in ("urdf", "sdf"):
        mine = [o for o in outcomes if o.case.fmt == fmt]
        if not mine:
            continue
        agree = sum(o.agree for o in mine)
        loads = sum(o.ref_loads for o in mine)
        posed = [o for o in mine if o.poses_compared]
        print(f"\n{fmt.upper()}: {len(mine)} cases ({sum(o.case.kind == 'file' for o in mine)} files, "
              f"{sum(o.case.kind != 'file' for o in mine)} mutations); reference loads {loads}; "
              f"verdicts agree {sum(o.ref_loads == o.ours_loads for o in mine)}; all agree {agree}; "
              f"poses compared on {len(posed)} cases ({sum(o.poses_compared for o in posed)} poses, worst "
              f"{max((o.pose_error or 0.0) for o in posed) if posed else 0.0:.2e})")
        groups: dict[str, list[Outcome]] = {}
        for o in mine:
            if o.agree:
                continue
            what = ("poses differ" if o.ref_loads == o.ours_loads
                    else "reference loads, we refuse" if o.ref_loads else "reference refuses, we load")
            groups.setdefault(what, []).append(o)
        for what, items in sorted(groups.items()):
            print(f"  {what}: {len(items)}")
            for o in items[:args.show]:
                print(f"    {o.case.label}: {o.detail}")
            status = 1
        kinds = Counter(o.case.kind for o in mine)
        print("  cases by kind: " + ", ".join(f"{k} {v}" for k, v in sorted(kinds.items())))
    print(f"\n{len(outcomes)} cases in {elapsed:.1f} s")
    if args.json:
        Path(args.json).write_text(json.dumps([{
            "format": o.case.fmt, "case": o.case.label, "kind": o.case.kind, "reference_loads": o.ref_loads,
            "ours_loads": o.ours_loads, "poses_compared": o.poses_compared, "pose_error": o.pose_error,
            "detail": o.detail} for o in outcomes], indent=1))
    return status


if __name__ == "__main__":
    sys.exit(main())
