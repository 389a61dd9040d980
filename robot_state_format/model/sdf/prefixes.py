"""Undeclared namespace prefixes (``drake:``) of SDFormat documents, found by linear scans."""

from __future__ import annotations

import re

from robot_state_format.model.xml import DRAKE_NS

# Possessive quantifiers and one white-space run per '<': linear on any input (no backtracking).
_PREFIX_RE = re.compile(rb"<[\s/]*([A-Za-z_][\w.-]*):[A-Za-z_]")
_XMLNS_RE = re.compile(rb"xmlns:([A-Za-z_][\w.-]*)\s*=")
_ATTR_PREFIX_RE = re.compile(rb"\s([A-Za-z_][\w.-]*):[A-Za-z_][\w.-]*\s*=\s*[\"']")


def declare_prefixes(raw: bytes) -> tuple[bytes, list[str]]:
    """libsdformat accepts undeclared prefixes (``drake:``); declare them on the root element."""
    used = {m.group(1) for m in _PREFIX_RE.finditer(raw)} | {m.group(1) for m in _ATTR_PREFIX_RE.finditer(raw)}
    used -= {b"xml", b"xmlns"}
    declared = {m.group(1) for m in _XMLNS_RE.finditer(raw)}
    missing = sorted(used - declared)
    if not missing:
        return raw, []
    m = re.search(rb"<\s*sdf\b", raw)
    if m is None:
        return raw, []
    decl = b"".join(
        b" xmlns:" + p + b'="' + (DRAKE_NS.encode() if p == b"drake" else b"urn:undeclared:" + p) + b'"'
        for p in missing)
    return raw[: m.end()] + decl + raw[m.end():], [p.decode() for p in missing]
