"""Simulator adapters (ROS-free): MuJoCo and Drake runs captured to and restored from USDF.

``capture(sim) -> WorldState`` and ``restore(sim, state)`` work on any adapter
(:class:`~robot_state_format.sim.mujoco_sim.MujocoSim`, :class:`~robot_state_format.sim.drake_sim.DrakeSim`);
:func:`~robot_state_format.sim.run.make_sim` builds one by engine name.  The engines' packages
are optional and imported only when an adapter is made (docs/simulation.md).
"""

from __future__ import annotations

from robot_state_format.sim.adapter import Simulation
from robot_state_format.usdf.types import WorldState


def capture(sim: Simulation) -> WorldState:
    """The simulation's current state: every model's pose and twist, link poses and twists, joint
    positions and velocities, the time stamp, and the simulator-state extension."""
    return sim.capture()


def restore(sim: Simulation, state: WorldState, *, file: str = "<state>") -> list[str]:
    """Put ``sim`` into ``state`` (``UsdfError`` when it does not fit the model); return warnings."""
    return sim.restore(state, file=file)
