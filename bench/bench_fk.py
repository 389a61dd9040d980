"""Forward-kinematics benchmark against Pinocchio on romeo (example-robot-data), same run.

    python3 bench/bench_fk.py [--urdf PATH] [--quick]

Prints, per configuration: our single ``forward`` and ``joint_transforms`` against one
``pin.forwardKinematics`` call, and our ``forward_batch`` on batches of 1000 and 100 000 against
``pin.forwardKinematics`` in a Python loop (with and without ``pin.updateFramePlacements``, which
Pinocchio needs to give the poses of links attached by fixed joints).  Times are the best of a few
repeats; the ratio is ours / Pinocchio's (below 1 = faster).  Needs ``pin`` and
``example-robot-data`` (requirements/test.txt).
"""

from __future__ import annotations

import argparse
import importlib.metadata
import os
import sys
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np

# BENCH_FK_ROOT: another checkout's root to measure instead of this one (before/after comparisons)
sys.path.insert(0, os.environ.get("BENCH_FK_ROOT") or str(Path(__file__).resolve().parents[1]))

from figures import Figures
from kernels import numba_kernel, using
from machine import describe_machine

from robot_state_format.kinematics import compiled, fk
from robot_state_format.kinematics.tree import compile_model
from robot_state_format.model.urdf.reader import read_urdf


def find_romeo() -> Path:
    """romeo.urdf as installed by the example-robot-data wheel."""
    for f in importlib.metadata.files("example-robot-data") or []:
        if str(f).endswith("romeo_description/urdf/romeo.urdf"):
            return Path(str(f.locate()))
    raise SystemExit("example-robot-data is not installed (pip install example-robot-data)")



def main() -> int:  # noqa: PLR0915 (96 statements): to be split, issue 38
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--urdf", type=Path, default=None)
    ap.add_argument("--quick", action="store_true", help="smaller batches, fewer repeats")
    ap.add_argument("--wall", action="store_true", help="time with the wall clock instead of CPU time")
    ap.add_argument("--json", action="store_true", help="also print the figures as one BENCH_JSON line")
    ap.add_argument("--smoke", action="store_true", help="tiny batches, one round (checks the bench runs)")
    args = ap.parse_args()
    args.quick = args.quick or args.smoke
    global WALL
    WALL = args.wall
    import pinocchio as pin

    path = args.urdf or find_romeo()
    data = path.read_bytes()
    model = read_urdf(data, file=str(path))
    tree = compile_model(model)
    pmodel = pin.buildModelFromUrdf(str(path))  # mimic followers as independent joints
    pdata = pmodel.createData()
    print(f"machine: {describe_machine()}; numpy {np.__version__}; pinocchio {pin.__version__}; "
          f"clock: {'wall' if args.wall else 'process CPU time'}; load average: {os.getloadavg()[0]:.1f}")
    print(f"model: {path.name}: {tree.nlinks} links, {tree.njoints} joints, "
          f"{len(tree.moving_joint_names) + len(tree.mimic_followers)} movable "
          f"({len(tree.mimic_followers)} mimic), nq={tree.nq}; pinocchio nq={pmodel.nq}")

    rng = np.random.default_rng(0)
    names = list(tree.moving_joint_names)

    def random_q(n: int) -> np.ndarray:
        q = np.empty((n, tree.nq))
        for name in names:
            j = model.joints[name]
            lo = j.limits.lower if j.limits and j.limits.lower is not None else -np.pi
            hi = j.limits.upper if j.limits and j.limits.upper is not None else np.pi
            q[:, tree.q_slice(name)] = rng.uniform(lo, hi, (n, 1))
        return q

    def pin_q(q: np.ndarray) -> np.ndarray:
        """Pinocchio's q (every joint independent, continuous joints as cos/sin) from ours."""
        allq = tree.all_joint_positions(q)
        out = pin.neutral(pmodel)
        for jid in range(1, pmodel.njoints):
            jm = pmodel.joints[jid]
            val = allq[pmodel.names[jid]]
            if jm.nq == 2:
                out[jm.idx_q:jm.idx_q + 2] = [np.cos(val[0]), np.sin(val[0])]
            else:
                out[jm.idx_q] = val[0]
        return out

    def pin_v(v: np.ndarray) -> np.ndarray:
        """Pinocchio's v (every joint independent) from ours."""
        allv = tree.all_joint_velocities(v)
        out = np.zeros(pmodel.nv)
        for jid in range(1, pmodel.njoints):
            jm = pmodel.joints[jid]
            out[jm.idx_v] = allv[pmodel.names[jid]][0]
        return out

    quick = args.quick
    repeat = 1 if args.smoke else 5 if quick else 9

    q1 = random_q(1)[0]
    pq1 = pin_q(q1)
    # sanity: same poses as Pinocchio (frames of every link)
    pin.forwardKinematics(pmodel, pdata, pq1)
    pin.updateFramePlacements(pmodel, pdata)
    ours = fk.forward(tree, q1)
    err = max(np.abs(pdata.oMf[pmodel.getFrameId(n, pin.BODY)].homogeneous - ours[i]).max()
              for i, n in enumerate(tree.link_names))
    print(f"check: max |pose difference| vs Pinocchio over all links = {err:.2e}")

    # one configuration; every case is timed in turn in each round (the machine may be shared)
    n1 = 20 if args.smoke else 300 if quick else 2000
    v1 = rng.uniform(-1.0, 1.0, tree.nv)
    pv1 = pin_v(v1)
    text = data.decode()
    kern = numba_kernel()  # the opt-in extra, timed beside the default when installed
    extra = {} if kern is None else {
        "forward_numba": (using(kern, lambda: fk.forward(tree, q1)), max(1, n1 // 4)),
        "twists_numba": (using(kern, lambda: fk.link_twists(tree, q1, v1)), max(1, n1 // 4)),
    }
    single = interleaved({
        "pin": (lambda: pin.forwardKinematics(pmodel, pdata, pq1), n1),
        "pin_frames": (lambda: (pin.forwardKinematics(pmodel, pdata, pq1),
                                pin.updateFramePlacements(pmodel, pdata)), n1),
        "pin_vel": (lambda: (pin.forwardKinematics(pmodel, pdata, pq1, pv1),
                             pin.updateFramePlacements(pmodel, pdata)), n1),
        "forward": (using(None, lambda: fk.forward(tree, q1)), max(1, n1 // 4)),
        "tf": (lambda: fk.joint_transforms(tree, q1), n1),
        "twists": (using(None, lambda: fk.link_twists(tree, q1, v1)), max(1, n1 // 4)),
        **extra,
    }, repeat)
    compiled.use_kernel(False)  # the rest: the default
    load = interleaved({
        "pin_load": (lambda: pin.buildModelFromXML(text), 5 if quick else 20),
        "read": (lambda: read_urdf(data, file=str(path)), 5 if quick else 20),
        "compile": (lambda: compile_model(model), 5 if quick else 20),
    }, repeat)
    rows = [
        ("forward, 1 configuration", single["forward"], single["pin_frames"], "fk+frames"),
        ("joint_transforms (TF), 1 configuration", single["tf"], single["pin"], "fk"),
        ("link_twists, 1 configuration", single["twists"], single["pin_vel"], "fk(q,v)+frames"),
        ("compile_model", load["compile"], load["pin_load"], "buildModelFromXML"),
        ("read_urdf + compile_model", load["read"] + load["compile"], load["pin_load"], "buildModelFromXML"),
    ]
    for n in ((100,) if args.smoke else (1000, 10000) if quick else (1000, 100000)):
        qs = random_q(n)
        npin = min(n, 20000)
        pqs = [pin_q(q) for q in qs[:npin]]

        def pin_loop(pqs: list[np.ndarray] = pqs) -> None:
            for pq in pqs:
                pin.forwardKinematics(pmodel, pdata, pq)

        def pin_loop_frames(pqs: list[np.ndarray] = pqs) -> None:
            for pq in pqs:
                pin.forwardKinematics(pmodel, pdata, pq)
                pin.updateFramePlacements(pmodel, pdata)

        reused = fk.forward_batch(tree, qs)
        if n <= 1000:
            ok = np.array_equal(reused[:50], np.stack([fk.forward(tree, q) for q in qs[:50]]))
            print(f"check: batch == single bit for bit: {ok}")
        res = interleaved({
            "pin": (pin_loop, 1),
            "pin_frames": (pin_loop_frames, 1),
            "new": (lambda qs=qs: fk.forward_batch(tree, qs), 1),
            "reuse": (lambda qs=qs, r=reused: fk.forward_batch(tree, qs, out=r), 1),
        }, 3 if n > 10000 else repeat)
        pin_t, pin_f = res["pin"] / npin, res["pin_frames"] / npin
        rows.append((f"forward_batch N={n}, new result array", res["new"] / n, pin_t, "fk loop"))
        rows.append((f"forward_batch N={n}, out= reused", res["reuse"] / n, pin_t, "fk loop"))
        rows.append((f"forward_batch N={n}, out= reused", res["reuse"] / n, pin_f, "fk+frames loop"))
        reused = None

    print(f"{'case (per configuration)':44s} {'ours us':>9s} {'Pinocchio us':>13s} {'(what)':16s} {'ratio':>6s}")
    for label, ours_t, pin_t, what in rows:
        print(f"{label:44s} {ours_t * 1e6:9.2f} {pin_t * 1e6:13.2f} {what:16s} {ours_t / pin_t:6.2f}")
    print("ratio = ours / Pinocchio (below 1: faster).  'fk' = pin.forwardKinematics (joint placements only);")
    print("'fk+frames' adds pin.updateFramePlacements, needed for the links attached by fixed joints.")
    print(f"goal: joint_transforms well under 50 us: {single['tf'] * 1e6:.1f} us")
    figs = Figures()
    figs.add("fk forward romeo, 1 configuration", single["forward"] * 1e6, single["pin_frames"] * 1e6, "us",
             anchor_is="pinocchio forwardKinematics + updateFramePlacements", goal="<= 3")
    figs.add("fk link_twists romeo, 1 configuration", single["twists"] * 1e6, single["pin_vel"] * 1e6, "us",
             anchor_is="pinocchio forwardKinematics(q, v) + updateFramePlacements", goal="<= 4")
    if kern is not None:
        figs.add("fk forward romeo, 1 configuration (numba extra)", single["forward_numba"] * 1e6,
                 single["pin_frames"] * 1e6, "us", anchor_is="pinocchio forwardKinematics + updateFramePlacements",
                 goal="<= 3")
        figs.add("fk link_twists romeo, 1 configuration (numba extra)", single["twists_numba"] * 1e6,
                 single["pin_vel"] * 1e6, "us", anchor_is="pinocchio forwardKinematics(q, v) + updateFramePlacements",
                 goal="<= 4")
    figs.add("fk joint_transforms romeo (TF), 1 configuration", single["tf"] * 1e6, single["pin"] * 1e6, "us",
             anchor_is="pinocchio forwardKinematics")
    figs.add("model load romeo: read_urdf + compile_model", (load["read"] + load["compile"]) * 1e3,
             load["pin_load"] * 1e3, "ms", anchor_is="pinocchio buildModelFromXML", goal="<= 1.0")
    label, ours_t, pin_t, _ = rows[5]
    figs.add(f"fk {label} per configuration", ours_t * 1e6, pin_t * 1e6, "us", anchor_is="pinocchio fk loop")
    figs.emit(args.json)
    return 0


def interleaved(cases: dict[str, tuple[Callable[[], object], int]], rounds: int) -> dict[str, float]:
    """Best time per call of each case; the cases take turns in every round.

    The clock is CPU time of this process (``--wall``: elapsed time), so that other programs on a
    shared machine disturb the comparison less.
    """
    clock = time.perf_counter if WALL else time.process_time
    best_t = {k: float("inf") for k in cases}
    for _ in range(rounds):
        for k, (fn, number) in cases.items():
            t0 = clock()
            for _ in range(number):
                fn()
            best_t[k] = min(best_t[k], (clock() - t0) / number)
    return best_t


WALL = False


if __name__ == "__main__":
    raise SystemExit(main())
