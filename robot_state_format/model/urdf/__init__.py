"""URDF reader: ``read_urdf(text) -> Model`` (docs/models.md, "URDF").

Modules: :mod:`.reader` (the checked reader, element by element), :mod:`.fast` (a whole ``<link>`` or
``<joint>`` written as most robots write it, read in one pass), :mod:`.values` (numbers, vectors, poses
and their diagnostics), :mod:`.parts` (joint-type tables, bytes before parsing, materials),
:mod:`.validate` (structural validation, zero-configuration poses), :mod:`.gazebo` (what libsdformat's
URDF conversion refuses in a URDF urdfdom loads).
"""

from __future__ import annotations

from robot_state_format.model.urdf.reader import read_urdf

__all__ = ["read_urdf"]
