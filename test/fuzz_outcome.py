"""What a reader may do with any input (the outcome classes of fuzz/harness.py): return a model
that holds the invariants (joints name existing links, finite poses, a tree that compiles), or
raise the project's own error with stable codes and lines inside the document; anything else fails."""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from fuzz.harness import check_diagnostics, check_model
from robot_state_format.errors import DiagnosticError, RobotStateFormatError
from robot_state_format.model.types import Model


def assert_reads_or_refuses(read: Callable[[bytes | str], Model], data: bytes | str) -> None:
    """A model holding the invariants, or coded diagnostics inside the document / a message."""
    try:
        model = read(data)
    except DiagnosticError as exc:
        assert exc.diagnostics
        check_diagnostics(exc, data)
        return
    except RobotStateFormatError as exc:  # e.g. an unreadable include: a message, never a bare error
        assert str(exc)
        return
    check_model(model)
