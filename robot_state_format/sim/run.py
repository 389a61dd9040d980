"""Headless passive runs (gravity, no control) and their trajectories, for any engine adapter.

An adapter (:class:`~robot_state_format.sim.mujoco_sim.MujocoSim`,
:class:`~robot_state_format.sim.drake_sim.DrakeSim`) offers ``step()``, ``time``,
``step_count``, ``joint_values()``, ``root_coordinates()``, ``capture()`` and ``restore()``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from pathlib import Path
from typing import TextIO

from robot_state_format.errors import ConversionError
from robot_state_format.model.types import JointType, Model
from robot_state_format.sim.adapter import Simulation
from robot_state_format.sim.drake_sim import DrakeSim
from robot_state_format.sim.isolated import IsolatedSim
from robot_state_format.sim.mjcf_writer import DEFAULT_DT, FREE_SUFFIX
from robot_state_format.sim.mujoco_sim import MujocoSim
from robot_state_format.usdf.writer import write_world_state_file

ENGINES = ("mujoco", "drake")

_SUFFIXES = {
    JointType.FLOATING: ("x", "y", "z", "qx", "qy", "qz", "qw"),
    JointType.BALL: ("qx", "qy", "qz", "qw"),
    JointType.PLANAR: ("x", "y", "yaw"),
    JointType.UNIVERSAL: ("1", "2"),
    JointType.REVOLUTE2: ("1", "2"),
}


ISOLATED_ENGINES = ("drake",)
"""Engines run in a child process unless asked otherwise (:mod:`~robot_state_format.sim.isolated`)."""


def make_sim(engine: str, model: Model, *, dt: float = DEFAULT_DT, floating_base: bool | None = None,
             isolate: bool | None = None) -> Simulation:
    """A simulation of ``model`` at its zero state (``ConversionError`` when the engine is missing).

    ``isolate``: run the engine in a child process (:class:`IsolatedSim`: a crash of the engine
    raises :class:`~robot_state_format.sim.isolated.EngineCrash` instead of ending this process);
    None: the engines of :data:`ISOLATED_ENGINES` are isolated, the others run in this process."""
    if engine not in ENGINES:
        raise ConversionError(f"unknown engine {engine!r} (one of {', '.join(ENGINES)})")
    if isolate if isolate is not None else engine in ISOLATED_ENGINES:
        return IsolatedSim(engine, model, dt=dt, floating_base=floating_base)
    if engine == "mujoco":
        return MujocoSim(model, dt=dt, floating_base=floating_base)
    if engine == "drake":
        return DrakeSim(model, dt=dt, floating_base=floating_base)
    raise ConversionError(f"unknown engine {engine!r} (one of {', '.join(ENGINES)})")


def trajectory_columns(sim: Simulation) -> list[str]:
    """``step``, ``time``, then every independent coordinate: each non-mimic moving joint
    (``NAME``, or ``NAME.x``... for multi-DOF joints) and each floating root link
    (``LINK__free.x .y .z .qx .qy .qz .qw``: its pose in the world)."""
    tree = sim.map.tree
    cols = ["step", "time"]
    for n in tree.moving_joint_names:
        jt = sim.model.joints[n].type
        suffixes = _SUFFIXES.get(jt)
        cols += [n] if suffixes is None else [f"{n}.{s}" for s in suffixes]
    for link in sim.map.floating_roots:
        cols += [f"{link}{FREE_SUFFIX}.{s}" for s in _SUFFIXES[JointType.FLOATING]]
    return cols


def trajectory_values(sim: Simulation) -> list[float]:
    pos, _ = sim.joint_values()
    out: list[float] = []
    for n in sim.map.tree.moving_joint_names:
        out += [float(x) for x in pos[n]]
    roots = sim.root_coordinates()
    for link in sim.map.floating_roots:
        out += [float(x) for x in roots[link]]
    return out


def restart_path(out_dir: str | Path, step: int) -> Path:
    """Where ``--save-at STEP`` writes: ``OUT/step_STEP.usdf``."""
    return Path(out_dir) / f"step_{step}.usdf"


def run(sim: Simulation, steps: int, *, save_at: Iterable[int] = (), out_dir: str | Path = ".",
        trajectory: TextIO | None = None, on_save: Callable[[int, Path], None] | None = None) -> list[Path]:
    """Step ``sim`` ``steps`` times; write restart files at the global step numbers ``save_at``
    (counting on from a restart file's step; the current step saves before stepping) and one
    trajectory row per step."""
    targets = sorted({int(k) for k in save_at})
    saved: list[Path] = []

    def save() -> None:
        p = restart_path(out_dir, sim.step_count)
        Path(out_dir).mkdir(parents=True, exist_ok=True)
        write_world_state_file(sim.capture(), p)
        saved.append(p)
        if on_save is not None:
            on_save(sim.step_count, p)

    if trajectory is not None:
        trajectory.write(",".join(trajectory_columns(sim)) + "\n")
    if sim.step_count in targets:
        save()
    for _ in range(steps):
        sim.step()
        if trajectory is not None:
            vals = [sim.step_count, sim.time, *trajectory_values(sim)]
            trajectory.write(",".join(repr(v) for v in vals) + "\n")
        if sim.step_count in targets:
            save()
    return saved
