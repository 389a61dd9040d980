"""The argparse types of every numeric option of the command line and the nodes' console scripts.

One type per kind of number, so that the same value gets the same answer in every command: a value
that is not a number, not finite (``nan``, ``inf``), out of its range, or whose reciprocal overflows
(``--rate 1e-300``) is a usage error (argparse prints ``PROG: error: argument --x: ...``, exit 2)
before anything runs. Nothing here means "until Ctrl-C" by accident: a command whose default is to
run until stopped says so with its own default (``None`` or ``0``), never through ``nan`` or ``-1``.
"""

from __future__ import annotations

import argparse
import errno
import json
import math
import os
from collections.abc import Callable
from typing import Any, NoReturn

from robot_state_format.limits import os_error_text, read_input_file, shown_path

# Seconds are bounded so that ``time.monotonic() + value`` and timers stay exact and finite: a year.
MAX_SECONDS = 365.0 * 24 * 3600


class Parser(argparse.ArgumentParser):
    """An ``ArgumentParser`` whose usage errors are one line, ``PROG: error: MESSAGE (PROG --help: usage)``,
    exit 2 (argparse prints the whole usage first); sub-parsers are of this class too."""

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"{self.prog}: error: {message} ({self.prog} --help: usage)\n")


def _number(text: str) -> float:
    shown = text if len(text) <= 40 else f"{text[:20]}...({len(text)} characters)"
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{shown!r} is not a number") from None
    if not math.isfinite(value):
        raise argparse.ArgumentTypeError(f"{shown!r} is not a finite number")
    return value


def seconds(text: str) -> float:
    """A duration or timeout: a finite number of seconds, 0 to :data:`MAX_SECONDS` (a year)."""
    value = _number(text)
    if not 0.0 <= value <= MAX_SECONDS:
        raise argparse.ArgumentTypeError(f"{value:g} is not in 0..{MAX_SECONDS:g} seconds")
    return value


def positive_seconds(text: str) -> float:
    """A step or period: finite seconds above 0 (at least 1 microsecond), at most a year."""
    value = seconds(text)
    if value < 1e-6:
        raise argparse.ArgumentTypeError(f"{value:g} is not a positive number of seconds (at least 1e-06)")
    return value


def ranged(low: float, high: float, what: str = "") -> Callable[[str], float]:
    """A finite number in ``low..high`` (both included)."""
    def parse(text: str) -> float:
        value = _number(text)
        if not low <= value <= high:
            raise argparse.ArgumentTypeError(f"{value:g} is not in {low:g}..{high:g}{what}")
        return value
    parse.__name__ = "number"  # argparse names the type in "invalid <name> value" messages
    return parse


def rate_hz(high: float) -> Callable[[str], float]:
    """Messages per second: finite, above 0 (at least 0.001: one message in under 17 minutes) and at most ``high``."""
    return ranged(0.001, high, " per second")


def count(low: int = 0, high: int = 1 << 31) -> Callable[[str], int]:
    """A whole number in ``low..high`` (decimal digits only, no ``1e3``)."""
    def parse(text: str) -> int:
        shown = text if len(text) <= 40 else f"{text[:20]}...({len(text)} characters)"
        body = text.strip()
        if not (body.lstrip("+-").isascii() and body.lstrip("+-").isdigit()) or len(body) > 19:
            raise argparse.ArgumentTypeError(f"{shown!r} is not a whole number")
        value = int(body)
        if not low <= value <= high:
            raise argparse.ArgumentTypeError(f"{value} is not in {low}..{high}")
        return value
    parse.__name__ = "count"
    return parse


def finite(text: str) -> float:
    """Any finite number (a tolerance, a coordinate)."""
    return _number(text)


def non_negative(text: str) -> float:
    """A finite number >= 0 (a tolerance)."""
    value = _number(text)
    if value < 0:
        raise argparse.ArgumentTypeError(f"{value:g} is negative")
    return value


def json_object(text: str, option: str) -> dict[str, Any]:
    """A ``{joint: value}`` JSON object given inline, as ``@FILE``, or as the path of a JSON file.

    The file is read through the size-checked gate (a FIFO, a device or a directory is named as
    what it is, never opened blocking). Raise ``ValueError`` (a usage error, exit 2) naming
    ``option`` when it cannot be read or is not a JSON object.
    """
    source = text
    path: str | None = None
    if text.startswith("@"):
        path = text[1:]
    elif not text.lstrip().startswith(("{", "[")):  # JSON text (an object, or a list: refused below)
        try:
            os.stat(text)
            path = text  # something is there: read it (the gate says what it is if it is no file)
        except (OSError, ValueError) as exc:
            if isinstance(exc, OSError) and exc.errno not in (errno.ENOENT, errno.ENOTDIR):
                raise ValueError(f"{option}: cannot read {shown_path(text)}: {os_error_text(exc)}") from None
    if path is not None:
        try:
            source = read_input_file(path).decode("utf-8")
        except OSError as exc:
            raise ValueError(f"{option}: cannot read {shown_path(path)}: {os_error_text(exc)}") from None
        except UnicodeDecodeError as exc:
            raise ValueError(f"{option}: {shown_path(path)} is not UTF-8 text ({exc.reason})") from None
    try:
        value = json.loads(source)
    except json.JSONDecodeError as exc:
        raise ValueError(f"{option}: not valid JSON ({exc.msg} at line {exc.lineno} column {exc.colno})") from None
    except RecursionError:
        raise ValueError(f"{option}: not valid JSON (nested too deeply)") from None
    if not isinstance(value, dict):
        raise ValueError(f"{option}: expected a JSON object mapping joint names to values")
    return value


def old_spelling(parser: argparse.ArgumentParser, action: argparse.Action, *names: str) -> None:
    """Accept ``names`` (an option's former spelling) for ``action``, hidden from ``--help`` and the
    usage line; kept for one release (CHANGELOG.rst says which)."""
    hidden: dict[str, Any] = {"dest": action.dest, "default": argparse.SUPPRESS, "help": argparse.SUPPRESS}
    if action.nargs == 0:  # a flag (store_true)
        parser.add_argument(*names, action="store_const", const=action.const, **hidden)
    else:
        if action.type is not None:
            hidden["type"] = action.type
        parser.add_argument(*names, choices=action.choices, metavar=action.metavar, nargs=action.nargs, **hidden)
