"""Which reader a robot description needs: xacro, URDF or SDFormat, from its name and its root element."""

from __future__ import annotations

import re
from pathlib import Path

from robot_state_format.errors import Diagnostic, ModelError
from robot_state_format.model.directives import looks_like_directives

__all__ = ["TAG_RE", "detect_format", "looks_like_xacro", "prolog_end"]

TAG_RE = re.compile(r"<([A-Za-z_][\w:.-]*)")
_XACRO_NS_RE = re.compile(r"""\sxmlns:xacro\s*=""")


def looks_like_xacro(text: str | bytes) -> bool:
    """Whether ``text`` holds unexpanded xacro: a ``<xacro:`` element, ``${...}`` or ``$(...)``."""
    if isinstance(text, bytes):
        return b"<xacro:" in text or b"${" in text or b"$(" in text
    return "<xacro:" in text or "${" in text or "$(" in text


def _root_declares_xacro(head: str, start: int) -> bool:
    """The root element's start tag (at ``start``) declares the ``xacro`` namespace prefix."""
    end = head.find(">", start)
    return _XACRO_NS_RE.search(head, start, end if end >= 0 else len(head)) is not None


def prolog_end(head: str) -> int:
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
    """Return ``"xacro"``, ``"urdf"``, ``"sdf"`` or ``"dmd"`` from a file name and the document's content.

    A ``.dmd.yaml`` name, or YAML whose first key is ``directives:``, means Drake Model Directives.

    A ``.xacro`` name, or a ``xmlns:xacro`` declaration on the root element, means xacro; otherwise
    the root element decides: ``<robot>`` is URDF, ``<sdf>`` is SDFormat (xacro text in such a file is
    not expanded unless asked: see :func:`load_model`). Comments, processing instructions and a
    DOCTYPE before the root are skipped (a comment mentioning ``<sdf>`` does not make a URDF an
    SDFormat file).
    """
    head = text[:65536].decode("utf-8", "replace") if isinstance(text, bytes) else text[:65536]
    if path is not None and (path.endswith((".xacro", ".urdf.xacro"))):
        return "xacro"
    if looks_like_directives(head, path):
        return "dmd"
    start = prolog_end(head)
    if _root_declares_xacro(head, start):
        return "xacro"
    m = TAG_RE.match(head, start)
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
