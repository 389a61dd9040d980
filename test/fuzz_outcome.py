"""What a reader may do with any input: return a consistent Model, or raise the project's own error."""

from __future__ import annotations

import re
from collections.abc import Callable

from robot_state_format.errors import DiagnosticError, RobotStateFormatError
from robot_state_format.model.types import WORLD, Model

_CODE = re.compile(r"[A-Z][A-Z0-9_]*")


def assert_reads_or_refuses(read: Callable[[bytes | str], Model], data: bytes | str) -> None:
    """A Model whose tree joints name existing links (or the world), or coded diagnostics / a message."""
    try:
        model = read(data)
    except DiagnosticError as exc:
        assert exc.diagnostics and all(_CODE.fullmatch(d.code) for d in exc.diagnostics), exc.diagnostics
        return
    except RobotStateFormatError as exc:  # e.g. an unreadable include: a message, never a bare error
        assert str(exc)
        return
    assert isinstance(model, Model)
    for j in model.joints.values():
        assert j.child in model.links and (j.parent in model.links or j.parent == WORLD), j.name
