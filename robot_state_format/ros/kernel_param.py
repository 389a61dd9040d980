"""The ``kinematics_kernel`` parameter of the nodes: numpy (the default) or the opt-in numba kernels.

Read-only (chosen at start).  Its default is ``ROBOT_STATE_FORMAT_KERNEL`` when set, else ``numpy``.
``numba`` where numba cannot be imported logs one error line (how to install it) and the node runs
numpy: the same transforms, to within 1e-12 (docs/kinematics.md).
"""

from __future__ import annotations

import os

from rcl_interfaces.msg import ParameterDescriptor, ParameterType
from rclpy.node import Node

from robot_state_format.kinematics import compiled

NAME = "kinematics_kernel"

__all__ = ["NAME", "declare"]


def declare(node: Node) -> str:
    """Declare ``kinematics_kernel`` on ``node``, select that kernel for the process; the kernel in use."""
    default = os.environ.get(compiled.ENV, "").strip().lower() or "numpy"
    node.declare_parameter(NAME, default, ParameterDescriptor(
        description="kinematics kernel: numpy (default, no JIT) or numba (opt-in extra: faster snapshots, "
                    "~1-2 s more start-up and ~150 MB more memory)",
        type=ParameterType.PARAMETER_STRING, read_only=True))
    problem = compiled.select(str(node.get_parameter(NAME).value))
    if problem:
        node.get_logger().error(problem)
    return "numba" if compiled.kernel() is not None else "numpy"
