"""What every simulator adapter offers (:class:`~robot_state_format.sim.mujoco_sim.MujocoSim`,
:class:`~robot_state_format.sim.drake_sim.DrakeSim`): the interface the runs, the demo and the
bridge program against."""

from __future__ import annotations

from typing import Protocol

from robot_state_format.model.types import Model
from robot_state_format.sim.mapping import FloatArray, WorldMap
from robot_state_format.usdf.types import WorldState


class Simulation(Protocol):
    """A passive simulation of one model, captured to and restored from USDF."""

    engine: str
    model: Model
    map: WorldMap
    step_count: int
    dt: float  # seconds per step

    @property
    def time(self) -> float:
        """Simulation time in seconds."""
        ...

    def step(self, n: int = 1) -> None:
        """Advance ``n`` steps."""
        ...

    def joint_values(self) -> tuple[dict[str, FloatArray], dict[str, FloatArray]]:
        """``(positions, velocities)`` of every moving joint, in the package's coordinates."""
        ...

    def root_coordinates(self) -> dict[str, FloatArray]:
        """Each floating root link's ``x y z qx qy qz qw`` in the world."""
        ...

    def capture(self) -> WorldState:
        """The current state (the simulator-state extension included)."""
        ...

    def restore(self, state: WorldState, *, file: str = "<state>") -> list[str]:
        """Put the simulation into ``state``; the warnings."""
        ...
