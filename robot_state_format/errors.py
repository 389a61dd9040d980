"""The one error hierarchy of robot_state_format.

Every reader, the kinematics and the USDF code raise subclasses of
:class:`RobotStateFormatError`; nothing public raises a bare ``KeyError``,
``IndexError`` or an lxml error.  Problems found in a document are described
by :class:`Diagnostic` objects (file, line, element, stable code, text) so that
the command line can print them as ``FILE:LINE: error: [CODE] text``.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum


class Severity(str, Enum):
    """How bad a diagnostic is: errors make a document invalid, warnings do not."""

    ERROR = "error"
    WARNING = "warning"


@dataclass(frozen=True)
class Diagnostic:
    """One problem found in a document.

    ``code`` is stable (tests and scripts match on it, e.g. ``URDF_DUPLICATE_LINK``);
    ``file`` is the path or a pseudo name such as ``<string>``; ``line`` is 1-based
    or ``None`` when unknown; ``element`` names the XML element (e.g. ``joint[name=j1]``).
    """

    code: str
    message: str
    file: str = "<string>"
    line: int | None = None
    element: str | None = None
    severity: Severity = Severity.ERROR

    def format(self) -> str:
        """``FILE:LINE: severity: [CODE] text`` — the command-line contract (``FILE: severity: ...``
        when the line is unknown: never a made-up line 0)."""
        where = f"{self.file}:{self.line}" if self.line is not None else self.file  # no line: none printed
        elem = f" ({self.element})" if self.element else ""
        return f"{where}: {self.severity.value}: [{self.code}] {self.message}{elem}"

    def __str__(self) -> str:
        return self.format()


class RobotStateFormatError(Exception):
    """Base of every error this package raises on purpose."""


class DiagnosticError(RobotStateFormatError):
    """An error carrying one or more diagnostics (the first is the headline)."""

    def __init__(self, diagnostics: list[Diagnostic] | Diagnostic) -> None:
        if isinstance(diagnostics, Diagnostic):
            diagnostics = [diagnostics]
        if not diagnostics:
            raise ValueError("DiagnosticError needs at least one diagnostic")
        self.diagnostics: list[Diagnostic] = list(diagnostics)
        super().__init__("\n".join(d.format() for d in self.diagnostics))

    @property
    def errors(self) -> list[Diagnostic]:
        return [d for d in self.diagnostics if d.severity is Severity.ERROR]

    @property
    def code(self) -> str:
        return self.diagnostics[0].code


class ModelError(DiagnosticError):
    """A robot description (URDF, xacro, SDFormat) is malformed or invalid."""


class ModelIOError(RobotStateFormatError):
    """A robot description could not be read at all (missing file, permission, I/O)."""


class KinematicsError(RobotStateFormatError):
    """Bad input to the kinematics: unknown joint, wrong shape, non-finite or non-unit values."""


class UsdfError(DiagnosticError):
    """A USDF world_state document is malformed, invalid, or inconsistent with a model."""


class ConversionError(RobotStateFormatError):
    """A model cannot be expressed in the requested target format (with the reason)."""


def error_text(exc: BaseException, limit: int = 3) -> str:
    """One line for a log or a service answer: the first ``limit`` error diagnostics (``(+N more)``), or the message."""
    if isinstance(exc, DiagnosticError):
        lines = [d.format() for d in exc.errors] or [d.format() for d in exc.diagnostics]
        return "; ".join(lines[:limit]) + (f" (+{len(lines) - limit} more)" if len(lines) > limit else "")
    return str(exc) or type(exc).__name__
