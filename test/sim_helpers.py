"""Shared pieces of the simulation tests (test/{cli,ros,sim}/test_sim_*.py): robots and a perturbed start."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import numpy as np

from robot_state_format.model import load_model_file
from robot_state_format.model.types import Model

sys.path.insert(0, str(Path(__file__).parent))
from real_robots import real_urdf

HERE = Path(__file__).parent
SAMPLES = HERE.parent / "robot_state_format" / "samples"
SIM = HERE / "fixtures" / "sim"

# name -> (model file, floating_base)
ROBOTS: dict[str, tuple[Path, bool | None]] = {
    "arm7_gripper": (SAMPLES / "arm7_gripper.urdf", None),  # fixed-base arm, mimic finger
    "legged_world": (SIM / "legged_world.sdf", None),  # floating quadruped + ball tail on a ground, pendulum
    "floating_mimic": (SIM / "floating_mimic.urdf", None),  # URDF floating joint, mimic with offset
    "planar_cart": (HERE / "fixtures" / "usdf" / "robots" / "planar_cart.urdf", None),  # planar joint
    "nested_world": (SAMPLES / "nested_world.sdf", None),  # nested models, a floating robot, a static box
}


def solo12() -> Path | None:
    return real_urdf("solo_description/robots/solo12.urdf")


def load(name: str) -> tuple[Model, bool | None]:
    path, fb = ROBOTS[name]
    return load_model_file(path), fb


def kick_mujoco(sim: Any, seed: int = 7, scale: float = 0.8) -> None:
    """Random joint velocities (a non-trivial, reproducible start)."""
    rng = np.random.default_rng(seed)
    sim.d.qvel[:] = rng.normal(size=sim.m.nv) * scale
