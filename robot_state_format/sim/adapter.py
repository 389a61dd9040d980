"""What every simulator adapter offers (:class:`~robot_state_format.sim.mujoco_sim.MujocoSim`,
:class:`~robot_state_format.sim.drake_sim.DrakeSim`): the interface the runs, the demo and the
bridge program against."""

from __future__ import annotations

from typing import NamedTuple, Protocol

from robot_state_format.model.types import Model
from robot_state_format.sim.mapping import FloatArray, WorldMap
from robot_state_format.usdf.types import WorldState


class JointValues(NamedTuple):
    """Every moving joint's ``positions`` and ``velocities`` by name, in the package's coordinates."""

    positions: dict[str, FloatArray]
    velocities: dict[str, FloatArray]


class LinkMotions(NamedTuple):
    """Every link's world ``poses`` ``(nlinks, 4, 4)`` and ``twists`` ``(nlinks, 6)``, linear then angular, in
    tree link order."""

    poses: FloatArray
    twists: FloatArray


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

    def joint_values(self) -> JointValues:
        """The positions and velocities of every moving joint, in the package's coordinates."""
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
