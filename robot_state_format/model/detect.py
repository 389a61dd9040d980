"""Which reader a robot description needs: xacro, URDF, SDFormat, MJCF or Drake Model Directives, from its name and
its root element (its first key for directives)."""

from __future__ import annotations

import re
from pathlib import Path
from typing import AnyStr

from robot_state_format.errors import Diagnostic, ModelError

__all__ = ["DIRECTIVES_SUFFIX", "TAG_RE", "blank_comments", "detect_format", "first_xacro_mark",
           "looks_like_directives", "looks_like_xacro", "prolog_end", "without_xacro_declaration"]

TAG_RE = re.compile(r"<([A-Za-z_][\w:.-]*)")
DIRECTIVES_SUFFIX = ".dmd.yaml"  # Drake Model Directives
_XACRO_NS_RE = re.compile(r"""\sxmlns:xacro\s*=""")
# starts only at the first blank of a run and never backtracks: linear on any input
_XACRO_DECLARATION_RE = re.compile(r"""(?<!\s)\s+xmlns:xacro\s*=\s*(["'])[^"']*\1""")


def looks_like_directives(text: str | bytes, path: str | None = None) -> bool:
    """A ``.dmd.yaml`` file, or a YAML document whose first key is ``directives:``."""
    if path is not None and path.endswith(DIRECTIVES_SUFFIX):
        return True
    head = text[:4096].decode("utf-8", "replace") if isinstance(text, bytes) else text[:4096]
    for line in head.splitlines():
        s = line.strip()
        if not s or s.startswith("#") or s == "---":
            continue
        return s.startswith("directives:")
    return False


def blank_comments(text: AnyStr) -> AnyStr:
    """``text`` with the content of every XML comment and CDATA section blanked (line breaks kept): every
    other character stays at its position, so a search in the result finds only markup and text outside
    them, at its place (xacro evaluates neither). Linear in ``len(text)``; an unterminated one is blanked
    to the end."""
    if isinstance(text, str):
        pairs, nl, blank = (("<!--", "-->"), ("<![CDATA[", "]]>")), "\n", " "
    else:
        pairs, nl, blank = ((b"<!--", b"-->"), (b"<![CDATA[", b"]]>")), b"\n", b" "
    nxt = [text.find(opening) for opening, _ in pairs]
    if max(nxt) < 0:
        return text
    parts = []
    last = 0
    while True:
        found = [(i, k) for k, i in enumerate(nxt) if i >= 0]
        if not found:
            break
        i, k = min(found)
        opening, closing = pairs[k]
        end = text.find(closing, i + len(opening))
        stop = len(text) if end < 0 else end + len(closing)
        parts.append(text[last:i])
        parts.append(nl.join(blank * len(line) for line in text[i:stop].split(nl)))
        last = stop
        if end < 0:
            break
        nxt = [j if j >= stop else text.find(o, stop) for j, (o, _) in zip(nxt, pairs, strict=True)]
    parts.append(text[last:])
    return text[:0].join(parts)


_MARKS = ("<xacro:", "${", "$(")


def first_xacro_mark(text: str | bytes) -> int:
    """Index of the first ``<xacro:`` element, ``${...}`` or ``$(...)`` outside comments and CDATA; -1 if none."""
    if isinstance(text, str):
        found = [i for i in (text.find(m) for m in _MARKS) if i >= 0]
        if not found:
            return -1
        text = blank_comments(text)
        found = [i for i in (text.find(m) for m in _MARKS) if i >= 0]
    else:
        found = [i for i in (text.find(m.encode()) for m in _MARKS) if i >= 0]
        if not found:
            return -1
        text = blank_comments(text)
        found = [i for i in (text.find(m.encode()) for m in _MARKS) if i >= 0]
    return min(found, default=-1)


def looks_like_xacro(text: str | bytes) -> bool:
    """Whether ``text`` holds unexpanded xacro: a ``<xacro:`` element, ``${...}`` or ``$(...)`` outside
    comments and CDATA sections (which xacro leaves alone; text in a comment is not read by URDF readers)."""
    return first_xacro_mark(text) >= 0


def without_xacro_declaration(text: str) -> str:
    """``text`` without its first ``xmlns:xacro="..."`` declaration and the blanks before it, as xacro's
    output of a document with nothing to expand; line breaks among those blanks stay, so every line stays
    where it was (the declaration on a line of its own included)."""
    return _XACRO_DECLARATION_RE.sub(lambda m: "\n" * m.group(0).count("\n"), text, count=1)


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


def detect_format(text: str | bytes, path: str | None = None, *, name: str | None = None) -> str:
    """Return ``"xacro"``, ``"urdf"``, ``"sdf"``, ``"mjcf"`` or ``"dmd"`` from a file name and the document's content.

    A ``.dmd.yaml`` name, or YAML whose first key is ``directives:``, means Drake Model Directives.

    A ``.xacro`` name, or a ``xmlns:xacro`` declaration on the root element, means xacro; otherwise
    the root element decides: ``<robot>`` is URDF, ``<sdf>`` is SDFormat, ``<mujoco>`` is MJCF (xacro text in such a file is
    not expanded unless asked: see :func:`load_model`). Comments, processing instructions and a
    DOCTYPE before the root are skipped (a comment mentioning ``<sdf>`` does not make a URDF an
    SDFormat file).

    ``name`` names the text in the refusal of a document of no known format when ``path`` is not given
    (``<robot_description>``, an expansion of ``FILE.xacro``); the default is ``<string>``.
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
        if tag == "mujoco":
            return "mjcf"
    if path is not None:
        suffix = Path(path).suffix.lower()
        if suffix == ".urdf":
            return "urdf"
        if suffix in (".sdf", ".world"):
            return "sdf"
    raise ModelError(Diagnostic("MODEL_UNKNOWN_FORMAT",
                                "cannot tell the format: expected a <robot> (URDF), <sdf> or <mujoco> (MJCF) root, "
                                "or a .xacro file",
                                path or name or "<string>", 1))
