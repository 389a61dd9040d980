"""What a caller decides about a bounded child (:mod:`.bounded_child`) without loading it: how an untrusted
document's child is confined (:class:`Confinement`) and when a wait for a child stops (:func:`add_interrupt`).

Kept apart so a node that never expands xacro (every start-up of a URDF, SDFormat or MJCF model) does not pay
for the child machinery's imports (subprocess, tempfile, json: about 20 ms).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

__all__ = ["Confinement", "add_interrupt", "interrupted"]


@dataclass(frozen=True)
class Confinement:
    """Run untrusted code: fresh interpreter, empty environment, read-only access under ``readable``."""

    readable: tuple[str, ...] = ()


_interrupts: list[Callable[[], bool]] = []


def add_interrupt(check: Callable[[], bool]) -> Callable[[], None]:
    """While waiting for a child, also stop (kill it: ``ChildFailed("interrupted")``) once ``check()`` is
    true, e.g. a node's SIGTERM flag. Returns the function that removes ``check``."""
    _interrupts.append(check)
    return lambda: _interrupts.remove(check) if check in _interrupts else None


def interrupted() -> bool:
    """Whether any check added with :func:`add_interrupt` asks the wait to stop."""
    return any(check() for check in _interrupts)
