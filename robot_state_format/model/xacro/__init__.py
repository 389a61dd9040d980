"""xacro expansion through the ``xacro`` package, without ROS, and the sandbox it runs in.

Modules: :mod:`.expand` (expansion with source lines kept, diagnostics, the child's side),
:mod:`.dom` (a linear ``replace_node`` for xacro's minidom documents), :mod:`.bounded_child` (one
function run in a child process under CPU-time, memory, wall-time and reply-size limits),
:mod:`.child_control` (a child's confinement and interrupts, light to import), :mod:`.args` (``name:=value``
arguments) and :mod:`.confine` (Landlock and an audit hook confining that child for a description from the
network).

The names below are imported from :mod:`.expand` on first use (:pep:`562`), so importing one light
submodule (``args``, ``child_control``) does not load the expansion machinery.
"""

from __future__ import annotations

import importlib

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from robot_state_format.model.xacro.args import parse_xacro_args
    from robot_state_format.model.xacro.expand import (
        XacroExpansion,
        expand_xacro,
        expand_xacro_file,
        expand_xacro_mapped,
    )

__all__ = ["XacroExpansion", "expand_xacro", "expand_xacro_file", "expand_xacro_mapped", "parse_xacro_args"]

_HOME_OF = {"XacroExpansion": "expand", "expand_xacro": "expand", "expand_xacro_file": "expand",
            "expand_xacro_mapped": "expand", "parse_xacro_args": "args"}


def __getattr__(name: str) -> Any:
    """A public name, imported from its home module on first use (then cached in this module)."""
    home = _HOME_OF.get(name)
    if home is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f"{__name__}.{home}"), name)
    globals()[name] = value
    return value
