"""xacro's ``name:=value`` arguments, as words on a command line or in a parameter (no xacro needed to read them)."""

from __future__ import annotations

from collections.abc import Sequence

__all__ = ["parse_xacro_args"]


def parse_xacro_args(items: Sequence[str]) -> dict[str, str]:
    """``["name:=value", ...]`` → ``{"name": "value"}``, as the xacro command line reads its mappings.

    Both sides are stripped of white space; an item with an empty side, or whose name starts with one
    ``_`` (a ROS parameter assignment), is ignored (the argument keeps its default). Raise ``ValueError``
    on an item without ``:=`` or with more than one (xacro: "Invalid remapping argument")."""
    out: dict[str, str] = {}
    for item in items:
        parts = [part.strip() for part in item.split(":=")]
        if len(parts) != 2:
            shown = item if len(item) <= 100 else f"{item[:80]}...({len(item)} characters)"
            why = "is not of the form name:=value" if len(parts) < 2 else \
                "holds more than one ':=' (xacro refuses it: invalid remapping argument)"
            raise ValueError(f"xacro argument {shown!r} {why}")
        name, value = parts
        if not name or not value or (len(name) > 1 and name[0] == "_" and name[1] != "_"):
            continue
        out[name] = value
    return out
