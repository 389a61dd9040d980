"""Every syntax fault of a malformed USDF document, each at the line where it is."""

from __future__ import annotations

import re

from lxml import etree

from robot_state_format.errors import Diagnostic
from robot_state_format.model.xml import parse_bytes

_MISMATCH_RE = re.compile(r"Opening and ending tag mismatch: (\S+) line (\d+) and (\S+)")


def find_syntax_faults(data: str | bytes, file: str, limit: int = 20) -> list[Diagnostic]:
    """Every syntax fault of a malformed document, each at the line where it is.

    libxml2 stops at the first fatal error and often reports it lines later (an unterminated
    quote is noticed at the next ``<``).  This repairs each fault it can explain (unterminated
    attribute value, mismatched end tag), records it at the right line and parses again.
    """
    raw = data.encode("utf-8", "replace") if isinstance(data, str) else bytes(data)
    if raw.startswith(b"\xef\xbb\xbf"):
        raw = raw[3:]
    raw = _DECL_BLANK.sub(lambda m: b"\n" * m.group(0).count(b"\n"), raw, count=1)
    faults: list[Diagnostic] = []
    for _ in range(limit):
        try:
            parse_bytes(raw)
            return faults
        except etree.XMLSyntaxError as exc:
            line, col = exc.position if exc.position else (exc.lineno, 0)
            msg = exc.msg or str(exc)
            offset = _offset(raw, line, col)
            repaired = None
            if "not allowed in attributes values" in msg or "AttValue" in msg:
                q = _open_quote_before(raw, offset)
                if q is not None:
                    qline = raw.count(b"\n", 0, q) + 1
                    faults.append(Diagnostic("USDF_XML_SYNTAX", "malformed XML: attribute value is not "
                                             "terminated (missing closing quote)", file, qline))
                    gt = raw.find(b">", q)
                    if gt != -1 and raw.rfind(b"\n", q, gt) == -1:
                        repaired = raw[:gt] + raw[q:q + 1] + raw[gt:]
                    else:
                        nl = raw.find(b"\n", q)
                        if nl != -1:
                            repaired = raw[:nl] + raw[q:q + 1] + b">" + raw[nl:]
            else:
                m = _MISMATCH_RE.search(msg)
                faults.append(Diagnostic("USDF_XML_SYNTAX", f"malformed XML: {msg}", file, line))
                if m is not None:
                    wrong = b"</" + m.group(3).encode()
                    at = raw.rfind(wrong, 0, offset + 1)
                    if at != -1:
                        repaired = raw[:at] + b"</" + m.group(1).encode() + raw[at + len(wrong):]
            if repaired is None or repaired == raw:
                return faults
            raw = repaired
        except (ValueError, etree.LxmlError):
            return faults
    return faults


_DECL_BLANK = re.compile(rb"<\?xml\b[^?]*\?>")


def _offset(raw: bytes, line: int, col: int) -> int:
    pos = 0
    for _ in range(max(line - 1, 0)):
        nxt = raw.find(b"\n", pos)
        if nxt == -1:
            break
        pos = nxt + 1
    return min(pos + max(col - 1, 0), len(raw))


_QUOTE_WINDOW = 1 << 16


def _open_quote_before(raw: bytes, offset: int) -> int | None:
    """Offset of the opening quote of the attribute value running into ``offset``: the last
    ``=`` + quote before it (within a bounded window, scanned once) whose quote never closes."""
    start = max(0, offset - _QUOTE_WINDOW)
    seg = raw[start:offset]
    m = None
    for m in re.finditer(rb"=\s*([\"'])", seg):  # noqa: B007 - the last match is the one wanted
        continue
    if m is None or seg.count(m.group(1), m.end()) or raw.rfind(b"<", 0, start + m.start()) == -1:
        return None
    return start + m.start(1)
