"""Typed outcomes of the store's requests (they unpack as the ``(ok, message)`` pairs they replace)."""

from __future__ import annotations

from typing import Literal, NamedTuple

FailureKind = Literal["", "wait", "refused", "error"]


class Outcome(NamedTuple):
    """``ok`` and the message the user sees (the path written, or why not)."""

    ok: bool
    message: str


class SaveOutcome(NamedTuple):
    """A save: ``why`` is ``""`` (saved), ``wait`` (nothing measured yet), ``refused`` (stale or
    unstamped) or ``error`` (I/O, invalid)."""

    ok: bool
    message: str
    why: FailureKind
