"""The markup MuJoCo's XML parser (TinyXML2) reads and lxml refuses, repaired for an MJCF file.

MuJoCo loads (measured with the ``mujoco`` 4.0 wheel, ``test/model/mjcf/test_mjcf_tinyxml.py``):

* attributes with no space between them (``name="a"pos="1 0 0"``);
* a comment holding ``--`` or ending ``--->`` (the comment ends at the first ``-->``);
* a bare ``&`` or ``<`` in an attribute value, and an entity reference XML does not define (``&foo;``),
  both kept as written.

Real models carry them (MyoSuite's ``myoelbow_1dof6muscles_1dofSoftexo_sim2.xml``, ``myolegs_osl.xml``,
MJX Safety Gym's ``point.xml``). Only a document lxml refuses is repaired (so a well-formed one is parsed
as it is), line for line (every line keeps its number), and each repair kind is a warning naming its first
line. A document with a ``<!DOCTYPE`` is never repaired (its entities are the XML policy's).
"""

from __future__ import annotations

import re

from robot_state_format.errors import Diagnostic, ModelError, Severity
from robot_state_format.model.xml import ParsedXml, parse_xml

_ENTITY = re.compile(rb"&(amp|lt|gt|quot|apos|#[0-9]+|#x[0-9A-Fa-f]+);")
_NAME_START = re.compile(rb"[A-Za-z_:]")

_WHAT = {
    "attribute_space": "attributes with no space between them",
    "comment_dashes": "'--' inside a comment",
    "attribute_markup": "a bare '&' or '<' (or an undefined entity) in an attribute value",
}


def _repair(raw: bytes) -> tuple[bytes, dict[str, int]]:
    """``raw`` with the TinyXML2 tolerances written as XML; {kind: first line} of each repair made."""
    out = bytearray()
    first: dict[str, int] = {}
    i, n, line = 0, len(raw), 1
    while i < n:
        c = raw[i:i + 1]
        if raw.startswith(b"<!--", i):
            end = raw.find(b"-->", i + 4)
            if end < 0:
                return raw, {}
            body = raw[i + 4:end]
            if b"-" in body and (b"--" in body or body.endswith(b"-")):
                first.setdefault("comment_dashes", line)
                body = body.replace(b"-", b" ")
            out += b"<!--" + body + b"-->"
            line += body.count(b"\n")
            i = end + 3
        elif raw.startswith(b"<![CDATA[", i) or raw.startswith(b"<?", i):
            end = raw.find(b"]]>" if raw[i + 1:i + 2] == b"!" else b"?>", i)
            if end < 0:
                return raw, {}
            end += 3 if raw[i + 1:i + 2] == b"!" else 2
            out += raw[i:end]
            line += raw.count(b"\n", i, end)
            i = end
        elif c == b"<" and raw[i + 1:i + 2] not in (b"!",):
            i, line = _tag(raw, i, out, line, first)
            if i < 0:
                return raw, {}
        else:
            if c == b"\n":
                line += 1
            out += c
            i += 1
    return bytes(out), first


def _tag(raw: bytes, i: int, out: bytearray, line: int, first: dict[str, int]) -> tuple[int, int]:
    """Copy the tag at ``i`` into ``out``, repaired (each repair's first line into ``first``); (index after
    it, line), index -1 when unterminated."""
    n = len(raw)
    out += raw[i:i + 1]
    i += 1
    while i < n:
        c = raw[i:i + 1]
        if c == b">":
            out += c
            return i + 1, line
        if c in (b'"', b"'"):
            end = raw.find(c, i + 1)
            if end < 0:
                return -1, line
            value = raw[i + 1:end]
            fixed = _ENTITY.sub(lambda m: b"\x00" + m.group(0)[1:], value)
            if b"&" in fixed or b"<" in fixed:
                first.setdefault("attribute_markup", line)
                fixed = fixed.replace(b"&", b"&amp;").replace(b"<", b"&lt;")
            out += c + fixed.replace(b"\x00", b"&") + c
            line += value.count(b"\n")
            i = end + 1
            if _NAME_START.match(raw, i):
                first.setdefault("attribute_space", line)
                out += b" "
            continue
        if c == b"\n":
            line += 1
        out += c
        i += 1
    return -1, line


def parse_mjcf_xml(data: bytes | str, file: str) -> ParsedXml:
    """:func:`~robot_state_format.model.xml.parse_xml`, and when it refuses the document as malformed, the
    document with MuJoCo's (TinyXML2's) tolerances repaired, with a warning for each kind (module text)."""
    try:
        return parse_xml(data, file, code_prefix="XML")
    except ModelError as exc:
        if exc.code not in ("XML_SYNTAX", "XML_ENTITY"):
            raise
        raw = data.encode("utf-8") if isinstance(data, str) else bytes(data)
        if b"<!DOCTYPE" in raw or b"<!ENTITY" in raw:
            raise
        fixed, first = _repair(raw)
        if not first:
            raise
        try:
            root, warnings = parse_xml(fixed, file, code_prefix="XML")
        except ModelError:
            raise exc from None
    notes = [Diagnostic("MJCF_XML_TOLERATED", f"{_WHAT[k]}: read as MuJoCo (TinyXML2) reads it; lxml and "
                        "other XML tools refuse it", file, ln, None, Severity.WARNING) for k, ln in first.items()]
    return ParsedXml(root, [*warnings, *notes])
