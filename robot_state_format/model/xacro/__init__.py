"""xacro expansion through the ``xacro`` package, without ROS, and the sandbox it runs in.

Modules: :mod:`.expand` (expansion with source lines kept, diagnostics, the child's side),
:mod:`.dom` (a linear ``replace_node`` for xacro's minidom documents), :mod:`.bounded_child` (one
function run in a child process under CPU-time, memory, wall-time and reply-size limits) and
:mod:`.confine` (Landlock and an audit hook confining that child for a description from the network).
"""

from __future__ import annotations

from robot_state_format.model.xacro.expand import (
    XacroExpansion,
    expand_xacro,
    expand_xacro_file,
    expand_xacro_mapped,
    parse_xacro_args,
)

__all__ = ["XacroExpansion", "expand_xacro", "expand_xacro_file", "expand_xacro_mapped", "parse_xacro_args"]
