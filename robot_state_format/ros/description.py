"""The robot description of a node: exactly one of a description text or a model file, xacro expanded.

Shared by the nodes that take the ``robot_description`` / ``model_file`` / ``xacro_args`` parameters.

A description *text* (the ``robot_description`` parameter, or a message on the ``robot_description``
topic) comes from whoever can set a parameter or publish on the DDS domain: it is data. xacro in it
(``${...}`` is Python's ``eval``) is refused unless the node was started with
``allow_xacro_descriptions:=true`` (:class:`XacroPolicy`); even then it is expanded in a confined child
process (:mod:`robot_state_format.model.xacro.bounded_child`): no environment, read access only under the
``xacro_include_paths``, no process creation or network, CPU/memory/time/output bounds. The
``model_file`` the node was started with is the user's own file: expanded as the ``xacro`` command
would, under the same bounds. A ``model_file`` set later (a ``SetParameters`` call from anyone on the
domain) names a file on the node's disk chosen by a stranger: it is read as data
(:func:`load_peer_model_file`), its xacro refused or expanded confined like a description text, and no
error about it quotes the file.
"""

from __future__ import annotations

import contextlib
import os
import shlex
import threading
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Generic, TypeVar

from robot_state_format import limits
from robot_state_format.errors import DiagnosticError, ModelIOError, RobotStateFormatError, error_text
from robot_state_format.lazy_modules import MissingDependencyError
from robot_state_format.limits import read_input_file, shown_path
from robot_state_format.model import access
from robot_state_format.model.detect import looks_like_xacro
from robot_state_format.model.loader import detect_format, load_model, load_xacro
from robot_state_format.model.types import Model
from robot_state_format.model.xacro.args import parse_xacro_args as xacro_args_from_words
from robot_state_format.model.xacro.child_control import Confinement
from robot_state_format.model.xml import BYTE_ERRORS
from robot_state_format.recording.writer import RecordingError, RecordingFormatError

T = TypeVar("T")


class DescriptionConfigError(RobotStateFormatError):
    """The description parameters are not usable (none or both given, xacro arguments that do not parse)."""


class DescriptionRefused(RobotStateFormatError):
    """A description that is not read: xacro while not allowed (``kind`` "xacro"), over the size bound
    (``kind`` "size"), or a peer's model file that cannot be read (``kind`` "file") or is not a model
    (``kind`` "error")."""

    def __init__(self, kind: str, message: str) -> None:
        super().__init__(message)
        self.kind = kind


def refusal_kind(exc: BaseException) -> str:
    """A short key for throttling warnings about a refused description: ``xacro``, ``size`` or ``error``."""
    return exc.kind if isinstance(exc, DescriptionRefused) else "error"


DESCRIPTION_FILES = ("package", "any")


@dataclass(frozen=True)
class XacroPolicy:
    """How a description text is read: whether xacro in it is expanded (``allow``), what that expansion may
    read (``include_paths``), and which files its references may open (``files``: ``"package"``, only
    ``package://`` files inside packages on the node's package path; ``"any"``, whatever they name)."""

    allow: bool = False
    include_paths: tuple[str, ...] = ()
    files: str = "package"

    @staticmethod
    def from_params(allow: bool, include_paths: str, files: str = "package") -> XacroPolicy:
        """From the parameters ``allow_xacro_descriptions``, ``xacro_include_paths`` (``os.pathsep``-separated)
        and ``description_files``."""
        paths = tuple(os.path.abspath(os.path.expanduser(p)) for p in include_paths.split(os.pathsep) if p.strip())
        if files not in DESCRIPTION_FILES:
            raise DescriptionConfigError(f"description_files: {files!r} is not one of {', '.join(DESCRIPTION_FILES)}")
        return XacroPolicy(bool(allow), paths, files)


@dataclass
class LoadedDescription:
    """A robot description read and expanded: the text published on ``robot_description``."""

    text: str
    model: Model
    source: str


def xacro_args_from_text(text: str) -> dict[str, str]:
    """``"a:=1 b:=two"`` → ``{"a": "1", "b": "two"}`` (shell quoting allowed); at most
    ``RSF_MAX_XACRO_ARGS_CHARS`` characters (a peer may set it: shell splitting takes quadratic time)."""
    if len(text) > limits.MAX_XACRO_ARGS_CHARS:
        raise DescriptionConfigError(f"xacro_args: {len(text)} characters, over the {limits.MAX_XACRO_ARGS_CHARS}-"
                                     "character limit (RSF_MAX_XACRO_ARGS_CHARS); not read")
    try:
        return xacro_args_from_words(shlex.split(text))
    except ValueError as exc:
        raise DescriptionConfigError(f"xacro_args: {exc}") from None


class InBackground(Generic[T]):
    """Run ``work(text)`` off the executor, newest text first: :meth:`submit` returns at once; a text
    submitted while one is being worked on replaces any waiting one. ``deliver(text, result, error)`` is
    called from the worker thread (a daemon: it never holds the process at exit); what it raises is
    dropped (e.g. the node is already gone)."""

    def __init__(self, work: Callable[[str], T],
                 deliver: Callable[[str, T | None, BaseException | None], None]) -> None:
        self._work = work
        self._deliver = deliver
        self._lock = threading.Lock()
        self._next: str | None = None
        self._busy = False

    def submit(self, text: str) -> None:
        with self._lock:
            self._next = text
            if self._busy:
                return
            self._busy = True
        threading.Thread(target=self._run, name="rsf-description", daemon=True).start()

    def _run(self) -> None:
        while True:
            with self._lock:
                text, self._next = self._next, None
                if text is None:
                    self._busy = False
                    return
            result: T | None = None
            error: BaseException | None = None
            try:
                result = self._work(text)
            except Exception as exc:  # noqa: BLE001 reported through deliver: the node survives any reader error
                error = exc
            with contextlib.suppress(Exception):  # nothing left to tell (the node is shutting down)
                self._deliver(text, result, error)


def read_description_text(text: str, xacro_args: str, policy: XacroPolicy,
                          source: str = "robot_description") -> LoadedDescription:
    """A description received as a parameter or on a topic (``source`` names which), read as data.

    Raises :class:`DescriptionRefused` for a text over ``RSF_MAX_DOCUMENT_BYTES`` (before any parsing)
    or holding xacro (declared namespace and ``<xacro:``, ``${`` or ``$(`` outside comments) while
    ``policy.allow`` is false, and the readers' errors for a description that does not parse.

    The files its references open (``add_model``, ``<include>``...) are restricted by ``policy.files``
    and no diagnostic quotes what was read from one (:func:`~robot_state_format.model.access.network_description`).
    """
    file = f"<{source}>"
    with access.network_description(text, file, any_file=policy.files == "any"):
        loaded = _read_text(text, xacro_args, policy, source, file)
        loaded.model.warnings[:] = access.withhold(loaded.model.warnings)
        return loaded


def _read_text(text: str, xacro_args: str, policy: XacroPolicy, source: str, file: str) -> LoadedDescription:
    size = len(text.encode("utf-8", "surrogatepass"))
    if size > limits.MAX_DOCUMENT_BYTES:
        raise DescriptionRefused("size", f"{source}: [XML_TOO_LARGE] {size} bytes, over the "
                                 f"{limits.MAX_DOCUMENT_BYTES}-byte limit (RSF_MAX_DOCUMENT_BYTES); not read")
    if detect_format(text, file) == "xacro" and looks_like_xacro(text):
        if not policy.allow:
            raise DescriptionRefused(
                "xacro", f"{source} holds xacro, which runs code (${{...}} is Python's eval) and is never evaluated in "
                "a description received as a parameter or on a topic unless the node is started with "
                "allow_xacro_descriptions:=true; publish the expanded URDF (xacro FILE) or use model_file")
        args = xacro_args_from_text(xacro_args)
        if policy.include_paths:
            access.note_files_read("xacro_include_paths")  # what the expansion read may reach its errors
        expanded, model = load_xacro(text, file=file, xacro_args=args, search_paths=policy.include_paths,
                                     confinement=Confinement(policy.include_paths))
        return LoadedDescription(expanded, model, source)
    # no xacro to evaluate: a declared xacro namespace alone is dropped (as xacro does), nothing runs
    return LoadedDescription(text, load_model(text, file=file), source)


# diagnostics whose message is the project's own words (a limit), never text of the document
_OWN_MESSAGES = frozenset({"XACRO_LIMIT", "XACRO_TOO_LARGE"})


def without_content(exc: BaseException) -> str:
    """What went wrong reading a peer's model file, without a word of the file (or of a file it reads):
    ``FILE:LINE: [CODE]`` of the first errors, or the exception's type."""
    if isinstance(exc, DescriptionRefused | DescriptionConfigError):
        return str(exc)  # the project's own words (and xacro_args, which the peer sent)
    if not isinstance(exc, DiagnosticError):
        return type(exc).__name__
    found = exc.errors or exc.diagnostics
    lines = [(f"{d.file}:{d.line}" if d.line is not None else d.file) + f": [{d.code}]"
             + (f" {d.message}" if d.code in _OWN_MESSAGES else "") for d in found[:3]]
    return "; ".join(lines) + (f" (+{len(found) - 3} more)" if len(found) > 3 else "")


def file_error_text(exc: BaseException, *, peer: bool) -> str:
    """What went wrong reading a file a parameter names: the reader's whole error for the user's own path
    (the value the node started with), only ``FILE:LINE: [CODE]`` (:func:`without_content`) for a path set
    on the running node, which a stranger may have chosen to learn what a file of the node's disk holds."""
    if not peer:
        return error_text(exc)
    if isinstance(exc, RecordingFormatError):  # its message quotes what the MCAP reader found instead
        return "not an MCAP recording (RecordingFormatError: details withheld)"
    if isinstance(exc, RecordingError | MissingDependencyError):
        return str(exc)  # the project's words (what to install) and the OS's reason, nothing read from the file
    if isinstance(exc, DiagnosticError) and all(d.code == "USDF_IO" for d in exc.diagnostics):
        return error_text(exc)  # "cannot read: is a FIFO (named pipe)...": the OS's reason, before any read
    return without_content(exc)


def withheld(path: str | os.PathLike[str], parameter: str) -> str:
    """The answer about a file a stranger may have named that does not fit: its path, and where the details are."""
    return (f"{shown_path(path)} does not fit (details withheld: {parameter} was set on the running node and "
            "may name any file; the command line shows them: `robot-state-format state validate` for a restart "
            "file, `robot-state-format replay` for a recording)")


def load_peer_model_file(model_file: str, xacro_args: str, policy: XacroPolicy) -> LoadedDescription:
    """A ``model_file`` set on the running node (not the one it was started with): the path comes from
    a peer, so the file is read as data.

    A xacro file (``${...}``, ``$(...)`` or ``<xacro:`` in a xacro document) is refused unless
    ``policy.allow``; then it is expanded confined as a description text is (no environment: ``$(env)``
    and ``$(optenv)`` see nothing; read access only under ``policy.include_paths`` and the file's own
    directory). Every failure is a :class:`DescriptionRefused` naming the path and, for a document that
    does not read, the file, line and code of its errors: never their message, which may quote the file.
    """
    path = Path(model_file).expanduser().absolute()
    where = f"model_file {shown_path(path)!r} (set at runtime: read as data)"
    try:
        data = read_input_file(path)
    except OSError as exc:
        raise DescriptionRefused("file", f"{where}: cannot read: {exc.strerror or type(exc).__name__}") from None
    try:
        if detect_format(data, str(path)) == "xacro":
            if looks_like_xacro(data) and not policy.allow:
                raise DescriptionRefused(
                    "xacro", f"{where} is xacro, which runs code (${{...}} is Python's eval) and is never evaluated "
                    "in a model_file set on the running node unless the node is started with "
                    "allow_xacro_descriptions:=true; give it at start, or set the expanded URDF")
            readable = (*policy.include_paths, str(path.parent))
            text, model = load_xacro(data, file=str(path), xacro_args=xacro_args_from_text(xacro_args),
                                     search_paths=policy.include_paths, confinement=Confinement(readable))
            return LoadedDescription(text, model, str(path))
        text = data.decode("utf-8", BYTE_ERRORS)
        return LoadedDescription(text, load_model(text, file=str(path)), str(path))
    except DescriptionRefused:
        raise
    except Exception as exc:  # noqa: BLE001 the readers' errors, the child's: reported without the file's text
        raise DescriptionRefused("error", f"{where}: not read: {without_content(exc)}") from None


def load_description(description: str, model_file: str, xacro_args: str,
                     policy: XacroPolicy | None = None, *, own_model_file: str | None = None) -> LoadedDescription:
    """Read exactly one of a description text (see :func:`read_description_text`) or a model file (xacro
    expanded, bounded).

    ``own_model_file`` is the ``model_file`` the node was started with (the user's own); a different
    ``model_file`` is a peer's, read by :func:`load_peer_model_file` under ``policy``. None (the
    default): ``model_file`` is the user's own (start-up, command line).

    Raises :class:`DescriptionConfigError` for none or both given, :class:`~robot_state_format.errors.ModelIOError`
    for a file that cannot be read, :class:`DescriptionRefused`, and the readers' errors for a description
    that does not parse.
    """
    if bool(description.strip()) == bool(model_file.strip()):
        raise DescriptionConfigError(
            "give exactly one of the parameters robot_description (URDF, SDFormat or xacro text) or "
            "model_file (path to a .urdf, .sdf, .world or .xacro file)"
            + ("; both are set" if description.strip() else "; neither is set"))
    args = xacro_args_from_text(xacro_args)
    if model_file.strip() and own_model_file is not None and model_file.strip() != own_model_file.strip():
        return load_peer_model_file(model_file.strip(), xacro_args, policy or XacroPolicy())
    if model_file.strip():
        path = Path(model_file).expanduser()
        try:
            data = read_input_file(path)
        except OSError as exc:
            what = "is a directory, expected a model file" if isinstance(exc, IsADirectoryError) else \
                f"cannot read: {exc.strerror or exc}"  # never path.is_dir(): it raises on a name too long
            raise ModelIOError(f"model_file {shown_path(path)!r}: {what}") from None
        if detect_format(data, str(path)) == "xacro":
            text, model = load_xacro(data, file=str(path), xacro_args=args)
            return LoadedDescription(text, model, str(path))
        text = data.decode("utf-8", BYTE_ERRORS)  # as the CLI reads it (model/xml.py)
        return LoadedDescription(text, load_model(text, file=str(path)), str(path))
    return read_description_text(description, xacro_args, policy or XacroPolicy())


__all__ = [
    "DESCRIPTION_FILES",
    "DescriptionConfigError",
    "DescriptionRefused",
    "InBackground",
    "LoadedDescription",
    "XacroPolicy",
    "file_error_text",
    "load_description",
    "load_peer_model_file",
    "read_description_text",
    "refusal_kind",
    "withheld",
    "without_content",
    "xacro_args_from_text",
]
