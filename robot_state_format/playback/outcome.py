"""Typed outcomes of the store's requests: named fields, never unpacked by position."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

FailureKind = Literal["", "wait", "refused", "error"]


@dataclass(frozen=True)
class Outcome:
    """``ok`` and the message the user sees (the path written, or why not)."""

    ok: bool
    message: str

    def answer(self, response: Any) -> Any:
        """``response`` (a ``std_srvs/Trigger`` response, or anything with ``success`` and ``message``)
        filled with this outcome."""
        response.success, response.message = self.ok, self.message
        return response


@dataclass(frozen=True)
class SaveOutcome(Outcome):
    """A save: ``why`` is ``""`` (saved), ``wait`` (nothing measured yet), ``refused`` (stale or
    unstamped) or ``error`` (I/O, invalid)."""

    why: FailureKind = ""
