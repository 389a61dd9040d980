"""Joint kind codes of the compiled kernels (:mod:`robot_state_format.kinematics.kernel`), without numba:
the constants are laid out by :func:`robot_state_format.kinematics.compiled.constants`, which must not
import numba."""

FIXED, ROTARY, SCREW, PRISMATIC, GENERIC = 0, 1, 2, 3, 4

__all__ = ["FIXED", "GENERIC", "PRISMATIC", "ROTARY", "SCREW"]
