"""Safe XML parsing shared by every reader (URDF, SDFormat, USDF).

Entities, DTD loading and network access are off; sizes are bounded.  Real-world robot
descriptions that urdfdom/libsdformat accept are tolerated with a warning:
``<?xml version="0.0"?>`` (or any version other than 1.0), trailing NUL bytes, and an XML
declaration that is not at the very start (leading blank lines, a BOM, or a comment before it).
Every failure is a :class:`~robot_state_format.errors.ModelError` (or the ``error_type`` given)
naming file and line; lxml's own exceptions never escape.
"""

from __future__ import annotations

import re

from lxml import etree

from robot_state_format.errors import DiagnosticError, Diagnostic, ModelError, Severity

MAX_DOCUMENT_BYTES = 64 * 1024 * 1024

_DECL_RE = re.compile(rb"<\?xml\b[^?]*\?>")
_VERSION_RE = re.compile(rb"""version\s*=\s*(["'])([^"']*)\1""")


def _parser() -> etree.XMLParser:
    return etree.XMLParser(
        resolve_entities=False,
        no_network=True,
        load_dtd=False,
        dtd_validation=False,
        huge_tree=False,
        remove_comments=False,
        remove_pis=False,
    )


def describe(element: etree._Element) -> str:
    """``tag[name=value]`` for error messages."""
    tag = element.tag if isinstance(element.tag, str) else "comment"
    name = element.get("name")
    return f"{tag}[name={name}]" if name is not None else str(tag)


def parse_xml(
    data: bytes | str,
    file: str = "<string>",
    *,
    error_type: type[DiagnosticError] = ModelError,
    code_prefix: str = "XML",
) -> tuple[etree._Element, list[Diagnostic]]:
    """Parse ``data`` into an element tree; return the root and tolerance warnings."""
    warnings: list[Diagnostic] = []
    raw = data.encode("utf-8") if isinstance(data, str) else bytes(data)
    if len(raw) > MAX_DOCUMENT_BYTES:
        raise error_type(Diagnostic(f"{code_prefix}_TOO_LARGE",
                                    f"document is {len(raw)} bytes, over the {MAX_DOCUMENT_BYTES} limit",
                                    file, None))
    if raw.startswith(b"\xef\xbb\xbf"):
        raw = raw[3:]
    stripped = raw.rstrip(b"\x00 \t\r\n")
    if b"\x00" in raw[len(stripped):]:
        warnings.append(Diagnostic(f"{code_prefix}_TRAILING_NUL", "trailing NUL byte(s) ignored",
                                   file, raw.count(b"\n", 0, len(stripped)) + 1, None, Severity.WARNING))
        raw = stripped
    if b"\x00" in raw:
        line = raw.count(b"\n", 0, raw.index(b"\x00")) + 1
        raise error_type(Diagnostic(f"{code_prefix}_SYNTAX", "NUL byte inside the document", file, line))

    m = _DECL_RE.search(raw)
    if m is not None:
        decl_line = raw.count(b"\n", 0, m.start()) + 1
        if m.start() != 0:
            warnings.append(Diagnostic(f"{code_prefix}_MISPLACED_DECLARATION",
                                       "XML declaration is not at the start of the document; ignored",
                                       file, decl_line, None, Severity.WARNING))
        vm = _VERSION_RE.search(m.group(0))
        if vm is not None and vm.group(2) not in (b"1.0", b"1.1"):
            warnings.append(Diagnostic(f"{code_prefix}_BAD_VERSION",
                                       f"XML declaration version {vm.group(2).decode(errors='replace')!r} "
                                       "is not 1.0; read as 1.0",
                                       file, decl_line, None, Severity.WARNING))
        encoding = re.search(rb"""encoding\s*=\s*(["'])([^"']*)\1""", m.group(0))
        # Blank out the declaration but keep its newlines so line numbers stay true.
        blank = b"\n" * m.group(0).count(b"\n")
        raw = raw[: m.start()] + blank + raw[m.end():]
        if encoding is not None and encoding.group(2).lower() not in (b"utf-8", b"utf8", b"ascii", b"us-ascii"):
            try:
                raw = raw.decode(encoding.group(2).decode()).encode("utf-8")
            except (LookupError, UnicodeDecodeError) as exc:
                raise error_type(Diagnostic(f"{code_prefix}_ENCODING", f"cannot decode document: {exc}",
                                            file, decl_line)) from None
    try:
        root = etree.fromstring(raw, _parser())
    except etree.XMLSyntaxError as exc:
        err_line: int | None = exc.position[0] if exc.position else getattr(exc, "lineno", None)
        msg = exc.msg if getattr(exc, "msg", None) else str(exc)
        raise error_type(Diagnostic(f"{code_prefix}_SYNTAX", f"malformed XML: {msg}", file, err_line)) from None
    except (ValueError, etree.LxmlError) as exc:
        raise error_type(Diagnostic(f"{code_prefix}_SYNTAX", f"malformed XML: {exc}", file, None)) from None
    if root is None:
        raise error_type(Diagnostic(f"{code_prefix}_EMPTY", "empty document", file, None))
    # Entities are not resolved; an unresolved entity reference is an error, not silent loss.
    for node in root.iter(etree.Entity):
        if isinstance(node, etree._Entity):
            raise error_type(Diagnostic(f"{code_prefix}_ENTITY",
                                        f"entity reference &{node.name}; is not allowed",
                                        file, node.sourceline))
    # Entities are off: a document that declares any (libxml2 would still expand internal ones
    # inside attribute values) or references one is refused, never silently altered.
    dtd = root.getroottree().docinfo.internalDTD
    if dtd is not None:
        declared = [e.name for e in dtd.iterentities()]
        if declared:
            decl = re.search(rb"<!ENTITY", raw)
            decl_at = raw.count(b"\n", 0, decl.start()) + 1 if decl else 1
            raise error_type(Diagnostic(f"{code_prefix}_ENTITY",
                                        f"entity declarations are not allowed: {', '.join(declared)}",
                                        file, decl_at))
    return root, warnings
