"""Naming, listing and rotating USDF restart files (no rclpy).

A restart file is named ``<model>_<kind>_<stamp>[_<n>].usdf`` where ``<model>`` is the model
name made safe for a file name, ``<kind>`` is ``restart`` (an explicit save) or ``checkpoint``
(periodic), ``<stamp>`` is the snapshot's UTC stamp ``YYYYMMDDTHHMMSS.nnnnnnnnnZ`` and ``_<n>``
makes the name unique when two files share a stamp.  Names come from untrusted input (a model
name in a message), so :func:`safe_name` keeps only ``[A-Za-z0-9._-]`` and
:func:`restart_file_path` checks that the final path is a direct child of ``output_dir``.
"""

from __future__ import annotations

import datetime as _dt
import os
import re
import unicodedata
from dataclasses import dataclass
from pathlib import Path

from robot_state_format.errors import RobotStateFormatError
from robot_state_format.lazy_modules import lazy_module

hashlib = lazy_module("hashlib")  # OpenSSL's libcrypto: ~3.5 MB of a node's memory, loaded when a digest is made

SUFFIX = ".usdf"
KINDS = ("restart", "checkpoint")
MAX_NAME = 64
"""Longest sanitised model name (the whole file name stays far below the usual 255 limit)."""

_UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")
_NAME_RE = re.compile(
    r"^(?P<model>.+)_(?P<kind>restart|checkpoint)_(?P<stamp>\d{8}T\d{6}\.\d{9}Z|\d+\.\d{9})"
    r"(?:_(?P<n>\d+))?\.usdf$"
)
_RESERVED = {"con", "prn", "aux", "nul", *(f"com{i}" for i in range(10)), *(f"lpt{i}" for i in range(10))}


class UnsafePathError(RobotStateFormatError):
    """A file name built from untrusted input would leave its output directory."""


def safe_name(name: str, *, default: str = "model", max_len: int = MAX_NAME) -> str:
    """A file-name component from an untrusted name: ASCII ``[A-Za-z0-9._-]`` only, no leading dot.

    Non-ASCII letters are reduced to their ASCII base where one exists (``é`` → ``e``); every
    other run of unsafe characters (``/``, ``\\``, spaces, NUL, ``::``) becomes ``_``.  A name
    that had to be shortened or lost all its characters gets a short hash of the original, so
    different untrusted names stay distinct.
    """
    text = unicodedata.normalize("NFKD", str(name)).encode("ascii", "ignore").decode("ascii")
    text = _UNSAFE.sub("_", text)
    text = re.sub(r"\.{2,}", "_", text)  # no '..' anywhere
    text = text.strip("._-")
    lossy = text != name
    if not text:
        text = default
        lossy = bool(name)
    if text.lower().split(".")[0] in _RESERVED:
        text = f"{text}_"
    if len(text) > max_len or (lossy and len(text) + 9 > max_len):
        text = text[: max_len - 9].rstrip("._-") or default
        lossy = True
    if lossy and name:
        digest = hashlib.sha256(str(name).encode("utf-8", "surrogatepass")).hexdigest()[:8]
        text = f"{text}-{digest}"
    return text


def format_stamp(sec: int, nanosec: int = 0) -> str:
    """``YYYYMMDDTHHMMSS.nnnnnnnnnZ`` (UTC) for a ROS time; plain ``sec.nnnnnnnnn`` when out of range."""
    sec = int(sec)
    nanosec = int(nanosec)
    sec += nanosec // 1_000_000_000
    nanosec %= 1_000_000_000
    if sec < 0:
        sec, nanosec = 0, 0
    try:
        t = _dt.datetime.fromtimestamp(sec, tz=_dt.timezone.utc)
    except (OverflowError, OSError, ValueError):
        return f"{sec}.{nanosec:09d}"
    return f"{t:%Y%m%dT%H%M%S}.{nanosec:09d}Z"


def parse_stamp(text: str) -> int:
    """Nanoseconds since the epoch from :func:`format_stamp` output."""
    if text.endswith("Z"):
        whole, frac = text[:-1].split(".")
        t = _dt.datetime.strptime(whole, "%Y%m%dT%H%M%S").replace(tzinfo=_dt.timezone.utc)
        return int(t.timestamp()) * 1_000_000_000 + int(frac)
    whole, frac = text.split(".")
    return int(whole) * 1_000_000_000 + int(frac)


@dataclass(frozen=True, order=True)
class RestartFileName:
    """The parts of a restart file's name; ordering is by stamp, then the uniqueness counter."""

    stamp_ns: int
    n: int
    model: str
    kind: str
    path: Path


def parse_name(path: str | os.PathLike[str]) -> RestartFileName | None:
    """The parts of a file name written by this module, or ``None`` for any other name."""
    p = Path(path)
    m = _NAME_RE.match(p.name)
    if m is None:
        return None
    try:
        stamp = parse_stamp(m.group("stamp"))
    except ValueError:
        return None
    return RestartFileName(stamp, int(m.group("n") or 0), m.group("model"), m.group("kind"), p)


def _inside(directory: Path, path: Path) -> bool:
    return path.parent == directory and path.name not in ("", ".", "..")


def restart_file_path(
    output_dir: str | os.PathLike[str],
    model_name: str,
    sec: int,
    nanosec: int = 0,
    *,
    kind: str = "restart",
) -> Path:
    """A fresh path in ``output_dir`` for a restart file of ``model_name`` at the given stamp.

    The path does not exist yet (a counter is appended on a clash) and is always a direct child
    of ``output_dir`` (resolved); :class:`UnsafePathError` otherwise — which the sanitising makes
    unreachable, the check stays as the last line of defence.
    """
    if kind not in KINDS:
        raise ValueError(f"kind must be one of {KINDS}, not {kind!r}")
    directory = Path(output_dir).resolve()
    base = f"{safe_name(model_name)}_{kind}_{format_stamp(sec, nanosec)}"
    n = 0
    while True:
        name = f"{base}{SUFFIX}" if n == 0 else f"{base}_{n}{SUFFIX}"
        candidate = (directory / name).resolve()
        if not _inside(directory, candidate):
            raise UnsafePathError(f"{name!r} would leave {directory}")
        if not candidate.exists() and not candidate.is_symlink():
            return candidate
        n += 1


def list_restart_files(
    directory: str | os.PathLike[str], *, kind: str | None = None, model: str | None = None
) -> list[RestartFileName]:
    """Restart files in ``directory`` (oldest first), optionally of one kind and one (raw) model name."""
    d = Path(directory)
    try:
        entries = list(d.iterdir())
    except OSError:
        return []
    want_model = safe_name(model) if model is not None else None
    out = []
    for p in entries:
        parsed = parse_name(p)
        if parsed is None or not p.is_file():
            continue
        if kind is not None and parsed.kind != kind:
            continue
        if want_model is not None and parsed.model != want_model:
            continue
        out.append(parsed)
    return sorted(out)


def rotate(
    directory: str | os.PathLike[str], keep_last: int, *, kind: str = "checkpoint", model: str | None = None
) -> list[Path]:
    """Delete all but the newest ``keep_last`` files of ``kind`` (0 keeps all); return the removed paths."""
    if keep_last <= 0:
        return []
    files = list_restart_files(directory, kind=kind, model=model)
    removed = []
    for f in files[: max(0, len(files) - keep_last)]:
        try:
            f.path.unlink()
            removed.append(f.path)
        except FileNotFoundError:
            pass
    return removed


def recording_directory(base: str | os.PathLike[str], model: str, stamp_ns: int) -> Path:
    """A new recording directory under ``base``: ``<model>_recording_<stamp>``, with ``_1``, ``_2``, ...
    appended while the name is taken (the directory itself is not created)."""
    sec, nsec = divmod(stamp_ns, 1_000_000_000)
    stem = f"{safe_name(model)}_recording_{format_stamp(sec, nsec)}"
    directory = Path(base) / stem
    n = 1
    while directory.exists():
        directory = Path(base) / f"{stem}_{n}"
        n += 1
    return directory
