"""Atomic file replacement: a reader sees the old file or the new one, never a torn or empty one.

Write a temporary file in the destination's directory, ``fsync`` it, ``os.replace`` it over the
destination, then ``fsync`` the directory so the rename itself is durable.  A crash (even
``kill -9``) at any point leaves either the previous complete file or the new complete file;
at worst a stray ``.NAME.*.tmp`` file remains, which the next write does not depend on.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
from pathlib import Path

from robot_state_format.errors import Diagnostic, UsdfError
from robot_state_format.limits import shown_path
from robot_state_format.output_dirs import output_file_problem


def atomic_write(path: str | os.PathLike[str], data: bytes, *, fsync: bool = True, mode: int = 0o644) -> None:
    """Replace ``path`` with ``data`` atomically; ``UsdfError`` (``USDF_IO``) on I/O failure."""
    dest = Path(path)
    directory = dest.parent if str(dest.parent) else Path(".")
    tmp_name: str | None = None
    problem = output_file_problem(dest)
    if problem is not None:  # a FIFO, a device or a directory is not replaced by a file behind the user's back
        raise UsdfError(Diagnostic("USDF_IO", f"cannot write: {problem}", shown_path(dest), None))
    try:
        fd, tmp_name = tempfile.mkstemp(prefix=f".{dest.name}.", suffix=".tmp", dir=directory)
        try:
            view = memoryview(data)
            while view:
                written = os.write(fd, view)
                view = view[written:]
            if mode is not None:
                os.fchmod(fd, mode)
            if fsync:
                os.fsync(fd)
        finally:
            os.close(fd)
        os.replace(tmp_name, dest)
        tmp_name = None
        if fsync:
            fsync_directory(directory)
    except OSError as exc:
        raise UsdfError(Diagnostic("USDF_IO", f"cannot write: {exc.strerror or exc}", str(dest), None)) from None
    finally:
        if tmp_name is not None:
            with contextlib.suppress(OSError):
                os.unlink(tmp_name)


def fsync_directory(directory: str | os.PathLike[str]) -> None:
    """Make a rename in ``directory`` durable (no-op where directories cannot be opened)."""
    try:
        dfd = os.open(directory, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
    except OSError:
        return
    try:
        os.fsync(dfd)
    except OSError:
        pass
    finally:
        os.close(dfd)
