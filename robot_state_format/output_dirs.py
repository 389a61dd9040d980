"""Output directories of every command and node (restart files, recordings, ``-o``/``--out`` of the
command line): created with their parents when missing, as rosbag2 and loggers do; refused only when
they cannot be created."""

from __future__ import annotations

import errno
import os
import stat
from pathlib import Path
from typing import NamedTuple, TextIO

from robot_state_format.limits import kind_of, os_error_text, shown_path


class DirectoryCheck(NamedTuple):
    """What :func:`ensure_directory` found: ``created`` (made now: the caller logs it) and ``problem``
    (why the directory cannot be used, or None)."""

    created: bool
    problem: str | None


def ensure_directory(path: Path, what: str) -> DirectoryCheck:
    """Make ``path`` (with its parents) if it is missing.

    Returns a :class:`DirectoryCheck`: ``created`` is True when the directory was made now (the caller
    logs it); ``problem`` is the reason it cannot be used (an existing non-directory, a read-only
    parent, a full disk...), or None.
    """
    try:
        st = os.stat(path)
    except FileNotFoundError:
        st = None
    except OSError as exc:  # a name too long, a parent that is a file or cannot be searched
        if exc.errno != errno.ENOTDIR:
            return DirectoryCheck(False, f"{what} {shown_path(path)!r} cannot be used: {os_error_text(exc)}")
        st = None
    if st is not None and stat.S_ISDIR(st.st_mode):
        return DirectoryCheck(False, None)
    if st is not None or path.is_symlink():
        return DirectoryCheck(False, f"{what} {shown_path(path)!r} exists and is not a directory")
    try:
        path.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        return DirectoryCheck(False, f"{what} {shown_path(path)!r} does not exist and cannot be created: {exc.strerror or exc}")
    if not path.is_dir():  # raced with something that is not a directory
        return DirectoryCheck(False, f"{what} {shown_path(path)!r} is not a directory")
    return DirectoryCheck(True, None)


def ensure_parent(path: str | Path) -> str | None:
    """Make the folder an output file ``path`` goes in (with its parents) if it is missing, as
    :func:`ensure_directory` does; the reason it cannot be used (naming ``path``), or None."""
    parent = Path(path).parent
    if str(parent) in ("", "."):
        return None
    problem = ensure_directory(parent, "output folder").problem
    return None if problem is None else f"{shown_path(path)}: {problem}"


def output_file_problem(path: str | os.PathLike[str]) -> str | None:
    """Why ``path`` cannot be written as an output file, or None (a regular file, or nothing yet).

    A FIFO, a device, a socket or a directory is refused before anything is opened (writing to a
    FIFO blocks until someone reads it; a file written *beside* it would not be what was asked for);
    so is a name the system refuses (too long, beneath a regular file). Never raises or blocks.
    """
    try:
        st = os.stat(path)
    except FileNotFoundError:
        return None
    except ValueError:
        return "not a valid file name (it holds a NUL byte)"
    except OSError as exc:
        return os_error_text(exc).lower()
    if stat.S_ISREG(st.st_mode):
        return None
    return f"is {kind_of(st.st_mode)}, not a regular file"


def open_output_file(path: str | os.PathLike[str]) -> TextIO:
    """``path`` opened for writing text (created or truncated), its folder made when missing.

    Raises :class:`OSError` whose ``strerror`` says why: what :func:`output_file_problem` refuses,
    checked again on the opened file (opened non-blocking: a FIFO without a reader never blocks).
    """
    problem = output_file_problem(path) or ensure_parent(os.fspath(path))
    if problem is not None:
        raise OSError(errno.EINVAL, problem, os.fsdecode(path))
    flags = os.O_WRONLY | os.O_CREAT | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0)
    fd = os.open(path, flags, 0o644)
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise OSError(errno.EINVAL, f"is {kind_of(st.st_mode)}, not a regular file", os.fsdecode(path))
        os.ftruncate(fd, 0)
        os.set_blocking(fd, True)
    except BaseException:
        os.close(fd)
        raise
    return os.fdopen(fd, "w", encoding="utf-8")
