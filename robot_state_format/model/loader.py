"""One entry point for every robot description: detect the format and dispatch to its reader."""

from __future__ import annotations

import os
import re
from collections.abc import Mapping, Sequence
from pathlib import Path

from robot_state_format.errors import Diagnostic, ModelError, ModelIOError, Severity
from robot_state_format.limits import read_input_file
from robot_state_format.model.types import Model


_TAG_RE = re.compile(r"<([A-Za-z_][\w:.-]*)")
_XACRO_NS_RE = re.compile(r"""\sxmlns:xacro\s*=""")
_XACRO_HINT = ("expand it first (`xacro FILE > out.urdf`), name it .xacro, declare xmlns:xacro on its root "
               "element, or pass --xacro (load_model_file(..., xacro=True))")


def looks_like_xacro(text: str | bytes) -> bool:
    """Whether ``text`` holds unexpanded xacro: a ``<xacro:`` element, ``${...}`` or ``$(...)``."""
    if isinstance(text, bytes):
        return b"<xacro:" in text or b"${" in text or b"$(" in text
    return "<xacro:" in text or "${" in text or "$(" in text


def _root_declares_xacro(head: str, start: int) -> bool:
    """The root element's start tag (at ``start``) declares the ``xacro`` namespace prefix."""
    end = head.find(">", start)
    return _XACRO_NS_RE.search(head, start, end if end >= 0 else len(head)) is not None


def _prolog_end(head: str) -> int:
    """Index of the root element's ``<`` in ``head``: comments, processing instructions (the XML
    declaration among them), a DOCTYPE (with its internal subset) and stray text before the root
    are skipped. ``len(head)`` when there is none in ``head``."""
    i = 0
    n = len(head)
    while i < n:
        i = head.find("<", i)
        if i < 0:
            return n
        if head.startswith("<!--", i):
            end = head.find("-->", i + 4)
            if end < 0:
                return n
            i = end + 3
        elif head.startswith("<?", i):
            end = head.find("?>", i + 2)
            if end < 0:
                return n
            i = end + 2
        elif head.startswith("<!", i):  # <!DOCTYPE name ... [internal subset]>
            close = head.find(">", i)
            bracket = head.find("[", i, close if close >= 0 else n)  # never past this declaration
            if 0 <= bracket < close or (close < 0 and bracket >= 0):
                end = head.find("]", bracket)
                close = head.find(">", end) if end >= 0 else -1
            if close < 0:
                return n
            i = close + 1
        else:
            return i
    return n


def detect_format(text: str | bytes, path: str | None = None) -> str:
    """Return ``"xacro"``, ``"urdf"`` or ``"sdf"`` from a file name and the document's content.

    A ``.xacro`` name, or a ``xmlns:xacro`` declaration on the root element, means xacro; otherwise
    the root element decides: ``<robot>`` is URDF, ``<sdf>`` is SDFormat (xacro text in such a file is
    not expanded unless asked: see :func:`load_model`). Comments, processing instructions and a
    DOCTYPE before the root are skipped (a comment mentioning ``<sdf>`` does not make a URDF an
    SDFormat file).
    """
    head = text[:65536].decode("utf-8", "replace") if isinstance(text, bytes) else text[:65536]
    if path is not None and (path.endswith(".xacro") or path.endswith(".urdf.xacro")):
        return "xacro"
    start = _prolog_end(head)
    if _root_declares_xacro(head, start):
        return "xacro"
    m = _TAG_RE.match(head, start)
    if m is not None:
        tag = m.group(1)
        if tag == "robot":
            return "urdf"
        if tag == "sdf":
            return "sdf"
    if path is not None:
        suffix = Path(path).suffix.lower()
        if suffix == ".urdf":
            return "urdf"
        if suffix in (".sdf", ".world"):
            return "sdf"
    raise ModelError(Diagnostic("MODEL_UNKNOWN_FORMAT",
                                "cannot tell the format: expected a <robot> (URDF) or <sdf> root, or a .xacro file",
                                path or "<string>", 1))


def load_model(
    text: str | bytes,
    *,
    file: str = "<string>",
    fmt: str | None = None,
    xacro_args: Mapping[str, str] | None = None,
    search_paths: Sequence[str] = (),
    xacro: bool = False,
) -> Model:
    """Read a robot description held in memory (URDF, SDFormat or xacro text).

    xacro is expanded for a ``.xacro`` file, a root element declaring ``xmlns:xacro``, or when
    ``xacro`` is true. Otherwise unexpanded xacro (``${...}``, ``$(...)``, ``<xacro:...>``) is read as
    it stands, as urdfdom reads it: when that makes the document invalid, the first error
    (``XACRO_UNEXPANDED``) says it looks like xacro and how to expand it; when it does not, the
    same code is a warning.
    """
    kind = "xacro" if xacro else fmt or detect_format(text, None if file == "<string>" else file)
    if kind == "xacro":
        return load_xacro(text, file=file, xacro_args=xacro_args, search_paths=search_paths)[1]
    if kind == "urdf":
        from robot_state_format.model.urdf import read_urdf

        if not looks_like_xacro(text):
            return read_urdf(text, file=file)
        try:
            model = read_urdf(text, file=file)
        except ModelError as exc:
            raise ModelError([_unexpanded(text, file, Severity.ERROR)] + exc.diagnostics) from None
        model.warnings.insert(0, _unexpanded(text, file, Severity.WARNING))
        return model
    if kind == "sdf":
        from robot_state_format.model.sdf import read_sdf

        return read_sdf(text, file=file, search_paths=search_paths)
    raise ModelError(Diagnostic("MODEL_UNKNOWN_FORMAT", f"unknown format {kind!r}", file, None))


def _declare_xacro(text: str | bytes) -> str | bytes:
    """Declare the xacro namespace on the root element when ``xacro:`` is used without it (the
    ``xacro`` command accepts that; an XML parser with namespaces does not). Lines are unchanged."""
    head: str = text.decode("utf-8", "replace") if isinstance(text, bytes) else text
    if "xacro:" not in head or "xmlns:xacro" in head:
        return text
    m = _TAG_RE.match(head, _prolog_end(head))
    if m is None:
        return text
    out = head[:m.end()] + ' xmlns:xacro="http://www.ros.org/wiki/xacro"' + head[m.end():]
    return out.encode("utf-8") if isinstance(text, bytes) else out


def _unexpanded(text: str | bytes, file: str, severity: Severity) -> Diagnostic:
    data = text.encode("utf-8", "replace") if isinstance(text, str) else text
    at = min((i for i in (data.find(b"<xacro:"), data.find(b"${"), data.find(b"$(")) if i >= 0), default=0)
    line = data.count(b"\n", 0, at) + 1
    snippet = data[at:at + 40].split(b"\n")[0].decode("utf-8", "replace")
    return Diagnostic("XACRO_UNEXPANDED", f"this looks like unexpanded xacro ({snippet!r}), read as plain "
                      f"URDF; {_XACRO_HINT}", file, line, None, severity)


def load_model_file(
    path: str | os.PathLike[str],
    *,
    xacro_args: Mapping[str, str] | None = None,
    search_paths: Sequence[str] = (),
    xacro: bool = False,
) -> Model:
    """Read a robot description file (.urdf, .sdf, .world, .xacro, or any XML of those); ``xacro``
    expands xacro whatever the file's name and content (see :func:`load_model`)."""
    p = Path(path)
    try:
        data = read_input_file(p)
    except OSError as exc:
        raise ModelIOError(f"{p}: cannot read: {exc.strerror or exc}") from None
    kind = "xacro" if xacro else detect_format(data, str(p))
    if kind == "xacro":
        return load_xacro(data, file=str(p), xacro_args=xacro_args, search_paths=search_paths)[1]
    return load_model(data, file=str(p), fmt=kind, search_paths=search_paths)


def load_xacro(
    text: str | bytes,
    *,
    file: str = "<string>",
    xacro_args: Mapping[str, str] | None = None,
    search_paths: Sequence[str] = (),
) -> tuple[str, Model]:
    """Expand xacro ``text`` and read the result (URDF or SDFormat); return both.

    Diagnostics and element sources point into the xacro sources (the main file, an included file,
    or the macro body an element came from), not into the expanded text, wherever that is known.
    The tolerance warnings of the xacro sources themselves (``XML_BAD_VERSION``,
    ``XML_TRAILING_NUL``, ...) come first in ``model.warnings`` (and with the errors).
    """
    from robot_state_format.errors import DiagnosticError
    from robot_state_format.model.xacro import expand_xacro_mapped

    expansion = expand_xacro_mapped(_declare_xacro(text), file=file, args=xacro_args or {},
                                    search_paths=search_paths)
    try:
        model = load_model(expansion.text, file=file, fmt=detect_format(expansion.text), search_paths=search_paths)
    except DiagnosticError as exc:
        remapped = expansion.remap_error(exc)
        if expansion.warnings:
            remapped = type(remapped)(remapped.diagnostics + expansion.warnings)
        raise remapped from None
    model = expansion.remap_model(model)
    model.warnings[:0] = expansion.warnings
    return expansion.text, model
