"""xacro's ``name:=value`` arguments, as words on a command line or in a parameter (no xacro needed to read them)."""

from __future__ import annotations

from collections.abc import Sequence

__all__ = ["parse_xacro_args"]


def parse_xacro_args(items: Sequence[str]) -> dict[str, str]:
    """``["name:=value", ...]`` → ``{"name": "value"}``; raise ``ValueError`` on a malformed item."""
    out: dict[str, str] = {}
    for item in items:
        name, sep, value = item.partition(":=")
        if not sep or not name:
            shown = item if len(item) <= 100 else f"{item[:80]}...({len(item)} characters)"
            raise ValueError(f"xacro argument {shown!r} is not of the form name:=value")
        out[name] = value
    return out
