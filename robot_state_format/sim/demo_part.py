"""The demo's simulation part (``./run demo``): save a restart file mid-run, restart, compare.

A MuJoCo simulation of the demo robot starts bent (every independent joint a little off its
zero, inside its limits) and runs 2N steps, writing a USDF restart file at step N; a fresh
simulation restarts from that file and runs the last N steps again.  The PNG plots the joint
trajectories of both runs over each other; the largest difference is printed (0.0: the restart
continued bit for bit).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import numpy as np

from robot_state_format.errors import RobotStateFormatError
from robot_state_format.lazy_modules import MissingDependencyError
from robot_state_format.model.loader import load_model_file
from robot_state_format.model.types import JointType, Model
from robot_state_format.sim.adapter import Simulation
from robot_state_format.sim.run import make_sim, restart_path, trajectory_columns, trajectory_values
from robot_state_format.usdf.build import state_from_model
from robot_state_format.usdf.plot import pyplot
from robot_state_format.usdf.reader import read_world_state_file
from robot_state_format.usdf.writer import write_world_state_file

STEPS = 500  # per half: 1 s of simulated time at MuJoCo's default 2 ms


def bent_positions(model: Model) -> dict[str, float]:
    """A start away from the zero configuration: 0.4 of the way to a limit (0.5 rad / 0.02 m if unlimited)."""
    out: dict[str, float] = {}
    for k, j in enumerate(model.joints.values()):
        if j.mimic or j.type not in (JointType.REVOLUTE, JointType.CONTINUOUS, JointType.PRISMATIC):
            continue
        sign = 1.0 if k % 2 == 0 else -1.0
        lim = j.limits
        if lim is not None and lim.lower is not None and lim.upper is not None and lim.upper > lim.lower:
            mid = (lim.lower + lim.upper) / 2.0
            out[j.name] = mid + sign * 0.4 * (lim.upper - lim.lower) / 2.0
        else:
            out[j.name] = sign * (0.02 if j.type is JointType.PRISMATIC else 0.5)
    return out


def _rows(sim: Simulation, n: int) -> np.ndarray:
    rows = []
    for _ in range(n):
        sim.step()
        rows.append([sim.time, *trajectory_values(sim)])
    return np.array(rows)


def simulation_demo(model_path: Path, out: Path, *, engine: str = "mujoco",
                    say: Callable[[str], None] = print) -> tuple[float, Path, Path | None]:
    """Run the restart demonstration; return (largest difference, restart file, PNG or None without matplotlib)."""
    model = load_model_file(model_path)
    sim_dir = out / "simulation"
    sim_dir.mkdir(parents=True, exist_ok=True)
    first = make_sim(engine, model)
    start = sim_dir / "start.usdf"
    write_world_state_file(state_from_model(model, bent_positions(model)), start)
    first.restore(read_world_state_file(start).state)
    run1 = _rows(first, STEPS)
    saved = restart_path(sim_dir, first.step_count)
    write_world_state_file(first.capture(), saved)
    run1 = np.vstack([run1, _rows(first, STEPS)])
    say(f"simulation ({engine}): ran {2 * STEPS} steps, saved {saved} at step {STEPS}")
    second = make_sim(engine, model)
    for w in second.restore(read_world_state_file(saved).state):
        say(f"restart warning: {w}")
    run2 = _rows(second, STEPS)
    diff = float(np.abs(run2 - run1[STEPS:]).max()) if run2.size else 0.0
    say(f"simulation: a fresh simulation restarted from {saved.name} and ran {STEPS} steps; "
        f"largest difference to the first run: {diff!r}")
    png = sim_dir / "restart_trajectories.png"
    try:
        _plot(run1, run2, trajectory_columns(first)[2:], png, diff, engine)
    except MissingDependencyError:  # the picture only: the demonstration itself is done
        return diff, saved, None
    return diff, saved, png


def _plot(run1: np.ndarray, run2: np.ndarray, names: list[str], png: Path, diff: float, engine: str) -> None:
    plt = pyplot()
    fig, ax = plt.subplots(figsize=(9, 5))
    shown = list(range(min(len(names), 8)))
    for i in shown:
        line, = ax.plot(run1[:, 0], run1[:, 1 + i], "-", lw=2.5, alpha=0.45, label=names[i])
        ax.plot(run2[:, 0], run2[:, 1 + i], "--", lw=1.2, color=line.get_color())
    t_restart = run2[0, 0] if len(run2) else run1[-1, 0]
    ax.axvline(t_restart, color="grey", lw=1, ls=":")
    ax.text(t_restart, ax.get_ylim()[1], " restart file", va="top", color="grey")
    ax.set_xlabel("simulation time (s)")
    ax.set_ylabel("joint position (rad, m)")
    ax.set_title(f"{engine}: first run (solid) and the run restarted from the file (dashed)\n"
                 f"largest difference {diff:.3g}")
    ax.legend(fontsize=7, ncol=2, loc="best")
    fig.tight_layout()
    fig.savefig(png, dpi=110)
    plt.close(fig)


def demo_summary(model_path: Path, out: Path, *, say: Callable[[str], None] = print) -> tuple[bool, str]:
    """The demo's one-line result: ``(ok, text)``; ok is False only when the restart did not continue
    within 1e-9 (a missing MuJoCo, or a model it cannot simulate, is reported and not a failure)."""
    try:
        diff, saved, png = simulation_demo(model_path, out, say=say)
    except RobotStateFormatError as exc:
        return True, f"skipped ({exc})"
    plot = f"plot {png}" if png is not None else "no plot (needs matplotlib)"
    return diff <= 1e-9, f"restarted from {saved.name}: largest difference {diff!r}; {plot}"
