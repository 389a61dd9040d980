"""The bounds every reader applies to untrusted input, and the one gate that reads input files.

Real robot descriptions and USDF states stay far below each bound (the largest real models in the
test corpus are under 1 MB, a few thousand elements, and no list of more than 16 numbers); a document
past one is refused with a clear error instead of costing minutes or gigabytes.  Each bound can be
changed by an environment variable read at import time, or by assigning the module attribute
(e.g. ``robot_state_format.limits.MAX_DOCUMENT_BYTES = 256 << 20``) before reading:

=============================  ==================================  =========================
attribute                      environment variable                default
=============================  ==================================  =========================
``MAX_DOCUMENT_BYTES``         ``RSF_MAX_DOCUMENT_BYTES``          32 MiB per document/file
``MAX_XML_ELEMENTS``           ``RSF_MAX_XML_ELEMENTS``            100 000 elements
``MAX_NUMBERS_PER_LIST``       ``RSF_MAX_NUMBERS_PER_LIST``        10 000 numbers per value
``MAX_XACRO_ELEMENTS``         ``RSF_MAX_XACRO_ELEMENTS``          10 000 elements expanded
``MAX_NUMBERS_PER_DOCUMENT``   ``RSF_MAX_NUMBERS_PER_DOCUMENT``    1 000 000 numbers (USDF)
``MAX_SDF_INCLUDES``           ``RSF_MAX_SDF_INCLUDES``            1 000 files included
``MAX_EXPANDED_BYTES``         ``RSF_MAX_EXPANDED_BYTES``          64 MiB, all included files together
``MAX_EXPANDED_ELEMENTS``      ``RSF_MAX_EXPANDED_ELEMENTS``       200 000 elements, all files together
``MAX_LINKS``                  ``RSF_MAX_LINKS``                   30 000 links/bodies, all files together
``MAX_XACRO_CPU_SECONDS``      ``RSF_MAX_XACRO_CPU_SECONDS``       10 s of CPU per xacro expansion
``MAX_XACRO_MEMORY_BYTES``     ``RSF_MAX_XACRO_MEMORY_BYTES``      512 MiB per xacro expansion
``MAX_XACRO_SECONDS``          ``RSF_MAX_XACRO_SECONDS``           30 s (wall clock) per expansion
``MAX_XACRO_ARGS_CHARS``       ``RSF_MAX_XACRO_ARGS_CHARS``        65 536 characters of xacro_args
``MAX_FRAME_ID_CHARS``         ``RSF_MAX_FRAME_ID_CHARS``          4 096 characters of a frame id
=============================  ==================================  =========================

``MAX_PACKAGE_SCAN_DIRECTORIES`` (``RSF_MAX_PACKAGE_SCAN_DIRECTORIES``, default 10 000) bounds the
directories one ``package://`` lookup visits below ``ROS_PACKAGE_PATH`` (each real directory once).

:func:`read_input_file` opens only regular files: a FIFO, a device (``/dev/zero``), a socket or a
directory is an :class:`OSError` at once, never a blocking or endless read; the size is checked
with ``fstat`` before reading, and the read itself never takes more than the bound.
"""

from __future__ import annotations

import errno
import os
import stat
from typing import BinaryIO


def _env_int(name: str, default: int) -> int:
    text = os.environ.get(name)
    if text is None or not text.strip():
        return default
    try:
        value = int(text)
    except ValueError:
        return default
    return value if value > 0 else default


MAX_DOCUMENT_BYTES: int = _env_int("RSF_MAX_DOCUMENT_BYTES", 32 * 1024 * 1024)
MAX_XML_ELEMENTS: int = _env_int("RSF_MAX_XML_ELEMENTS", 100_000)
MAX_NUMBERS_PER_LIST: int = _env_int("RSF_MAX_NUMBERS_PER_LIST", 10_000)
MAX_NUMBERS_PER_DOCUMENT: int = _env_int("RSF_MAX_NUMBERS_PER_DOCUMENT", 1_000_000)
# files read by SDFormat <include>s in one read (a model including another twice per level doubles)
MAX_SDF_INCLUDES: int = _env_int("RSF_MAX_SDF_INCLUDES", 1_000)
# one description and every file it includes or adds (SDFormat <include>, MJCF <include>, Model
# Directives add_model/add_directives), counted together (model/access.py): a small document adding one
# large file many times is refused at the first file past a bound
MAX_EXPANDED_BYTES: int = _env_int("RSF_MAX_EXPANDED_BYTES", 64 * 1024 * 1024)
MAX_EXPANDED_ELEMENTS: int = _env_int("RSF_MAX_EXPANDED_ELEMENTS", 200_000)
MAX_LINKS: int = _env_int("RSF_MAX_LINKS", 30_000)  # <link> and <body> elements
# directories a package:// lookup visits below ROS_PACKAGE_PATH (each real directory once)
MAX_PACKAGE_SCAN_DIRECTORIES: int = _env_int("RSF_MAX_PACKAGE_SCAN_DIRECTORIES", 10_000)
# xacro processes an element in 30-90 us (minidom, its expression lexer, a scope look-up per name):
# the bound is lower than MAX_XML_ELEMENTS so that a macro bomb is refused well under a second of CPU
# on a busy 2-core machine (the largest real robot description seen, tiago's, has 4 083 elements); a macro
# call counts 10 and an element nested in N calls 1 + N/200 (model/xacro/expand.py: what xacro does for them).
MAX_XACRO_ELEMENTS: int = _env_int("RSF_MAX_XACRO_ELEMENTS", 10_000)
# xacro runs code (``${...}`` is Python's eval): each expansion runs in a child process with these
# bounds (model/xacro/bounded_child.py); its output is bounded by MAX_DOCUMENT_BYTES
MAX_XACRO_CPU_SECONDS: int = _env_int("RSF_MAX_XACRO_CPU_SECONDS", 10)
MAX_XACRO_MEMORY_BYTES: int = _env_int("RSF_MAX_XACRO_MEMORY_BYTES", 512 * 1024 * 1024)
MAX_XACRO_SECONDS: int = _env_int("RSF_MAX_XACRO_SECONDS", 30)
# the xacro_args text a peer may set on a running node: it is split as a shell would (shlex, whose time
# grows with the square of the length: 64 Ki characters 0.05 s, 2 Mi characters 38 s on this machine)
MAX_XACRO_ARGS_CHARS: int = _env_int("RSF_MAX_XACRO_ARGS_CHARS", 65_536)
# frame_prefix and model_parent_frame set on a running node: every TF message carries them once per
# transform, so a 2 MB prefix would make each /tf message of a 50-link robot 100 MB
MAX_FRAME_ID_CHARS: int = _env_int("RSF_MAX_FRAME_ID_CHARS", 4096)

_KINDS = (
    (stat.S_ISDIR, "a directory"),
    (stat.S_ISFIFO, "a FIFO (named pipe)"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
    (stat.S_ISSOCK, "a socket"),
)


class InputTooLarge(OSError):
    """A file over :data:`MAX_DOCUMENT_BYTES` (an ``OSError`` with ``errno.EFBIG``)."""


def kind_of(mode: int) -> str:
    """What a file of ``st_mode`` ``mode`` is, in words ("a FIFO (named pipe)", "a directory", ...)."""
    for test, name in _KINDS:
        if test(mode):
            return name
    return "not a regular file"


def shown_path(path: str | os.PathLike[str]) -> str:
    """``path`` for a message: over-long names (a peer may send 100 kB) are cut to their two ends."""
    text = os.fsdecode(path)
    return text if len(text) <= 200 else f"{text[:100]}...{text[-40:]} ({len(text)} characters)"


def os_error_text(exc: OSError) -> str:
    """The reason of ``exc`` in words ("File name too long", "Permission denied"), without the path."""
    return str(exc.strerror or exc)


def input_problem(path: str | os.PathLike[str]) -> str | None:
    """Why ``path`` cannot be read as an input file ("no such file or directory", "is a FIFO (named
    pipe), not a regular file", "file name too long", ...), or None for a regular file.

    Never raises and never blocks (one ``stat``): for a check before a path is handed to code that
    opens it itself (MuJoCo, Drake); :func:`read_input_file` and :func:`open_input_file` check again
    on the opened file.
    """
    try:
        st = os.stat(path)
    except OSError as exc:
        return os_error_text(exc).lower() if exc.errno != errno.ENOENT else "no such file or directory"
    except ValueError:  # a NUL in the name
        return "not a valid file name (it holds a NUL byte)"
    if not stat.S_ISREG(st.st_mode):
        return f"is {kind_of(st.st_mode)}, not a regular file"
    return None


def directory_problem(path: str | os.PathLike[str]) -> str | None:
    """Why ``path`` is not a directory that can be listed ("no such file or directory", "is a FIFO
    (named pipe), not a directory", "file name too long", ...), or None. Never raises or blocks."""
    try:
        st = os.stat(path)
    except OSError as exc:
        return os_error_text(exc).lower() if exc.errno != errno.ENOENT else "no such file or directory"
    except ValueError:
        return "not a valid file name (it holds a NUL byte)"
    if not stat.S_ISDIR(st.st_mode):
        return f"is {kind_of(st.st_mode) if not stat.S_ISREG(st.st_mode) else 'a file'}, not a directory"
    return None


def _open_regular(path: str | os.PathLike[str], bound: int) -> int:
    """A blocking descriptor of the regular file ``path`` no larger than ``bound`` (opened
    non-blocking, so a FIFO without a writer never blocks, then checked with ``fstat``)."""
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_NOCTTY", 0)
    try:
        fd = os.open(path, flags)
    except IsADirectoryError:
        raise IsADirectoryError(errno.EISDIR, "is a directory, not a regular file", str(path)) from None
    except ValueError:  # a NUL in the name
        raise OSError(errno.EINVAL, "not a valid file name (it holds a NUL byte)", str(path)) from None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise OSError(errno.EINVAL, f"is {kind_of(st.st_mode)}, not a regular file", str(path))
        if st.st_size > bound:
            raise InputTooLarge(errno.EFBIG, f"is {st.st_size} bytes, over the {bound}-byte limit "
                                "(RSF_MAX_DOCUMENT_BYTES)", str(path))
        os.set_blocking(fd, True)
    except BaseException:
        os.close(fd)
        raise
    return fd


def open_input_file(path: str | os.PathLike[str], limit: int | None = None) -> BinaryIO:
    """The regular file ``path`` opened for streaming (``rb``), for inputs too large to read whole
    (MCAP recordings): the same checks as :func:`read_input_file` (a FIFO, a device or a directory is
    an :class:`OSError` at once, never a blocking open); ``limit`` bounds the size (default: none)."""
    fd = _open_regular(path, limit if limit is not None else 1 << 62)
    return os.fdopen(fd, "rb")


def read_input_file(path: str | os.PathLike[str], limit: int | None = None) -> bytes:
    """The bytes of the regular file ``path``, at most ``limit`` (default :data:`MAX_DOCUMENT_BYTES`).

    Raises :class:`OSError` whose ``strerror`` says what went wrong: the usual open errors, "is a
    directory" / "is a FIFO (named pipe), not a regular file" (opened non-blocking, so a FIFO
    without a writer never blocks), or :class:`InputTooLarge` naming the size and the bound.
    """
    bound = MAX_DOCUMENT_BYTES if limit is None else limit
    fd = _open_regular(path, bound)
    try:
        chunks: list[bytes] = []
        total = 0
        while True:  # the file may grow after fstat: never read past the bound
            chunk = os.read(fd, min(bound + 1 - total, 1 << 20) or 1)
            if not chunk:
                break
            chunks.append(chunk)
            total += len(chunk)
            if total > bound:
                raise InputTooLarge(errno.EFBIG, f"grew past the {bound}-byte limit while being read "
                                    "(RSF_MAX_DOCUMENT_BYTES)", str(path))
        return b"".join(chunks)
    finally:
        os.close(fd)
