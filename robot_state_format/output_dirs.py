"""Output directories of every command and node (restart files, recordings, ``-o``/``--out`` of the
command line): created with their parents when missing, as rosbag2 and loggers do; refused only when
they cannot be created."""

from __future__ import annotations

from pathlib import Path


def ensure_directory(path: Path, what: str) -> tuple[bool, str | None]:
    """Make ``path`` (with its parents) if it is missing.

    Returns ``(created, error)``: ``created`` is True when the directory was made now (the caller
    logs it); ``error`` is the reason it cannot be used (an existing non-directory, a read-only
    parent, a full disk...), or None.
    """
    if path.is_dir():
        return False, None
    if path.exists() or path.is_symlink():
        return False, f"{what} {str(path)!r} exists and is not a directory"
    try:
        path.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        return False, f"{what} {str(path)!r} does not exist and cannot be created: {exc.strerror or exc}"
    if not path.is_dir():  # raced with something that is not a directory
        return False, f"{what} {str(path)!r} is not a directory"
    return True, None


def ensure_parent(path: str | Path) -> str | None:
    """Make the folder an output file ``path`` goes in (with its parents) if it is missing, as
    :func:`ensure_directory` does; the reason it cannot be used (naming ``path``), or None."""
    parent = Path(path).parent
    if str(parent) in ("", "."):
        return None
    problem = ensure_directory(parent, "output folder")[1]
    return None if problem is None else f"{path}: {problem}"
