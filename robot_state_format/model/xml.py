"""Safe XML parsing shared by every reader (URDF, SDFormat, USDF).

Entities, DTD loading and network access are off; sizes are bounded.  Real-world robot
descriptions that urdfdom/libsdformat accept are tolerated with a warning (:func:`tolerate`):
``<?xml version="0.0"?>`` (or any version other than 1.0), a NUL byte (the document ends there, as
urdfdom reads it), an XML declaration that is not at the very start (leading blank lines, a BOM, or a
comment before it), a second XML declaration and, in robot descriptions, markup after the root
element that TinyXML2 reads (:mod:`~robot_state_format.model.xml_trailing`; a ``<?...?>`` inside or after
the root is refused, as TinyXML2 refuses it) and bytes that are not UTF-8
(TinyXML2, under urdfdom and libsdformat, does not check UTF-8: a name holding byte 0xFF loads there).
Each such byte is read as the Latin-1 character of the same value (0xFF is U+00FF ``ÿ``), a defined,
one-to-one reading of each byte: the name then goes to TF and USDF as that character, in UTF-8
(docs/models.md). A UTF-16 or UTF-32 document is refused (urdfdom and libsdformat read bytes, so they
refuse it too) with an ``XML_ENCODING`` error naming the encoding.
Every failure is a :class:`~robot_state_format.errors.ModelError` (or the ``error_type`` given)
naming file and line; lxml's own exceptions never escape.
"""

from __future__ import annotations

import codecs
import re
import threading
from typing import NamedTuple

from lxml import etree

from robot_state_format import limits
from robot_state_format.errors import Diagnostic, DiagnosticError, ModelError, Severity
from robot_state_format.model import access
from robot_state_format.model.detect import blank_comments
from robot_state_format.model.xml_trailing import tail_loads

__all__ = [
    "DRAKE_NS",
    "MAX_DOCUMENT_BYTES",
    "SAFE_PARSER_OPTIONS",
    "ParsedXml",
    "check_element_count",
    "check_entities",
    "check_size",
    "describe",
    "encode_text",
    "parse_bytes",
    "parse_xml",
    "safe_parser",
    "tolerate",
]

# libxml2's errors about an entity or a reference to one (etree.ErrorTypes): each is an ``{prefix}_ENTITY``
_ENTITY_ERRORS = frozenset(getattr(etree.ErrorTypes, name) for name in (
    "ERR_UNDECLARED_ENTITY", "WAR_UNDECLARED_ENTITY", "ERR_UNPARSED_ENTITY", "ERR_ENTITY_IS_EXTERNAL",
    "ERR_ENTITY_IS_PARAMETER", "ERR_ENTITY_LOOP", "ERR_ENTITY_BOUNDARY", "ERR_ENTITY_CHAR_ERROR",
    "ERR_ENTITY_PE_INTERNAL", "ERR_ENTITY_NOT_STARTED", "ERR_ENTITY_NOT_FINISHED", "ERR_ENTITY_PROCESSING",
    "ERR_EXT_ENTITY_STANDALONE", "ERR_REDECL_PREDEF_ENTITY", "ERR_ENTITYREF_AT_EOF", "ERR_ENTITYREF_IN_PROLOG",
    "ERR_ENTITYREF_IN_EPILOG", "ERR_ENTITYREF_IN_DTD", "ERR_ENTITYREF_NO_NAME", "ERR_ENTITYREF_SEMICOL_MISSING",
    "ERR_PEREF_AT_EOF", "ERR_PEREF_IN_PROLOG", "ERR_PEREF_IN_EPILOG", "ERR_PEREF_IN_INT_SUBSET",
    "ERR_PEREF_NO_NAME", "ERR_PEREF_SEMICOL_MISSING") if hasattr(etree.ErrorTypes, name))

DRAKE_NS = "http://drake.mit.edu"  # Drake's XML namespace (``drake:``), in URDF and SDFormat

# The bound in force when this module was imported; limits.MAX_DOCUMENT_BYTES is read at each call.
MAX_DOCUMENT_BYTES = limits.MAX_DOCUMENT_BYTES

# Matched only at a "<?xml" found by str.find: [^?]*+ stops at the next '?', so scans never overlap.
_DECL_RE = re.compile(rb"<\?xml(?=[\s?])[^?]*\?>")  # not <?xml-stylesheet ...?>
_ENCODING_RE = re.compile(rb"""encoding\s*=\s*(["'])([^"']*)\1""")
_VERSION_RE = re.compile(rb"""version\s*=\s*(["'])([^"']*)\1""")
_LOCAL = threading.local()
_BOMS = ((b"\x00\x00\xfe\xff", "UTF-32 (big-endian)"), (b"\xff\xfe\x00\x00", "UTF-32 (little-endian)"),
         (b"\xfe\xff", "UTF-16 (big-endian)"), (b"\xff\xfe", "UTF-16 (little-endian)"))
_WIDE_STARTS = ((b"<\x00\x00\x00", "UTF-32 (little-endian, no byte-order mark)"),
                (b"\x00\x00\x00<", "UTF-32 (big-endian, no byte-order mark)"),
                (b"<\x00", "UTF-16 (little-endian, no byte-order mark)"),
                (b"\x00<", "UTF-16 (big-endian, no byte-order mark)"))
BYTE_ERRORS = "rsf-latin1-bytes"
"""The codec error handler that reads each byte a UTF-8 decoder refuses as the Latin-1 character of
the same value (registered on import): ``b"w\\xff".decode("utf-8", BYTE_ERRORS) == "wÿ"``."""


def _latin1_bytes(exc: UnicodeError) -> tuple[str, int]:
    if isinstance(exc, UnicodeDecodeError):
        return bytes(exc.object[exc.start:exc.end]).decode("latin-1"), exc.end
    raise exc


codecs.register_error(BYTE_ERRORS, _latin1_bytes)


SAFE_PARSER_OPTIONS: dict[str, bool] = {
    "resolve_entities": False,  # an entity stays an entity node: check_entities reports it
    "no_network": True,
    "load_dtd": False,
    "huge_tree": False,  # libxml2's own bounds: depth 256, text node 10 MB, no entity amplification
}
"""The one safe lxml configuration: :func:`safe_parser` and the streaming element count use it."""


def _new_parser(keep_cdata: bool) -> etree.XMLParser:
    return etree.XMLParser(dtd_validation=False, remove_comments=False, remove_pis=False,
                           strip_cdata=not keep_cdata, **SAFE_PARSER_OPTIONS)


def safe_parser(*, keep_cdata: bool = False) -> etree.XMLParser:
    """The one parser configuration of every reader (one instance per thread: lxml parsers are not
    shared between threads): entities unresolved, no DTD, no network, libxml2's size bounds.

    Use it wherever lxml parses: ``etree.fromstring(data, safe_parser())``, ``etree.parse(path,
    safe_parser())`` or :func:`parse_bytes`; readers that report diagnostics use :func:`parse_xml`.
    ``keep_cdata``: CDATA sections stay CDATA when the tree is written out again (a document
    rewritten for xacro, which leaves their content alone).
    """
    name = "cdata_parser" if keep_cdata else "parser"
    parser = getattr(_LOCAL, name, None)
    if parser is None:
        parser = _new_parser(keep_cdata)
        setattr(_LOCAL, name, parser)
    return parser


# libxml2 before 2.12 (Ubuntu 22.04's 2.9.13 under lxml 4.8; Ubuntu 24.04's python3-lxml uses 2.9.14) takes
# quadratic time on a comment holding many "--" (an error: XML 1.0 section 2.5) while it keeps the comment: 32 000
# took 4 s, 200 000 minutes.  With comments removed the same error is found in linear time, so there a document
# that may hold such a comment (:func:`_suspect_comments`) is checked that way first.
_OLD_LIBXML2 = etree.LIBXML_VERSION < (2, 12)


def _comment_free_parser() -> etree.XMLParser:
    parser = getattr(_LOCAL, "comment_free", None)
    if parser is None:
        parser = _LOCAL.comment_free = etree.XMLParser(remove_comments=True, **SAFE_PARSER_OPTIONS)
    return parser


def _suspect_comments(data: bytes) -> bool:
    """Whether some comment may hold a "--" (each well-formed one has one "<!--", one "-->" and no other "--")."""
    opens, closes = data.count(b"<!--"), data.count(b"-->")
    return opens != closes or data.count(b"--") > opens + closes


def parse_bytes(data: bytes, *, base_url: str | None = None) -> etree._Element:
    """``data`` (bytes: the XML declaration names the encoding) parsed with :func:`safe_parser`; lxml's
    own errors (``etree.XMLSyntaxError``) propagate, for callers that report them themselves (see
    :func:`parse_xml` for a reader's checks, tolerances and diagnostics)."""
    if _OLD_LIBXML2 and _suspect_comments(data):
        etree.fromstring(data, _comment_free_parser(), base_url=base_url)  # raises the comment's error, quickly
    return etree.fromstring(data, safe_parser(), base_url=base_url)


def check_size(raw: bytes | str, file: str = "<string>", *, error_type: type[DiagnosticError] = ModelError,
               code_prefix: str = "XML") -> None:
    """Refuse a document over :data:`~robot_state_format.limits.MAX_DOCUMENT_BYTES`
    (``{code_prefix}_TOO_LARGE``)."""
    if len(raw) > limits.MAX_DOCUMENT_BYTES:
        raise error_type(Diagnostic(f"{code_prefix}_TOO_LARGE",
                                    f"document is {len(raw)} bytes, over the {limits.MAX_DOCUMENT_BYTES}-byte "
                                    "limit (RSF_MAX_DOCUMENT_BYTES)", file, None))


def check_element_count(raw: bytes, file: str = "<string>", *, error_type: type[DiagnosticError] = ModelError,
                        code_prefix: str = "XML") -> None:
    """Refuse a document of more than :data:`~robot_state_format.limits.MAX_XML_ELEMENTS` elements
    (``{code_prefix}_TOO_MANY_ELEMENTS``, naming the first element past the bound and its line)
    before any tree is built.  Each element starts with ``<``, so a document with fewer ``<`` than
    the bound passes at C speed; otherwise the elements are counted by a streaming parse that keeps
    no tree and stops at the bound."""
    bound = limits.MAX_XML_ELEMENTS
    if len(raw) <= bound or raw.count(b"<") <= bound:
        return
    parser = etree.XMLPullParser(events=("end",), remove_comments=True, remove_pis=True, **SAFE_PARSER_OPTIONS)
    seen = 0
    step = 1 << 16
    try:
        for at in range(0, len(raw), step):
            parser.feed(raw[at:at + step])
            for _, el in parser.read_events():
                seen += 1
                if seen > bound:
                    raise error_type(Diagnostic(
                        f"{code_prefix}_TOO_MANY_ELEMENTS",
                        f"the document holds more than {bound} elements (RSF_MAX_XML_ELEMENTS); "
                        "no real model or state comes near", file, el.sourceline, describe(el)))
                el.clear()  # keep no tree: drop what was read
                parent = el.getparent()
                if parent is not None:
                    parent.remove(el)
        parser.close()
    except (etree.LxmlError, ValueError):
        return  # malformed: the real parse reports it, with its line


def describe(element: etree._Element) -> str:
    """``tag[name=value]`` for error messages."""
    tag = element.tag if isinstance(element.tag, str) else "comment"
    name = element.get("name")
    return f"{tag}[name={name}]" if name is not None else str(tag)


class ParsedXml(NamedTuple):
    """A parsed document: its ``root`` element and the tolerance ``warnings`` of reading it."""

    root: etree._Element
    warnings: list[Diagnostic]


def parse_xml(
    data: bytes | str,
    file: str = "<string>",
    *,
    error_type: type[DiagnosticError] = ModelError,
    code_prefix: str = "XML",
    description: bool = True,
) -> ParsedXml:
    """Parse ``data`` into an element tree; return the root and tolerance warnings (:class:`ParsedXml`).

    ``description``: a robot description (urdfdom's, libsdformat's and MuJoCo's TinyXML2 tolerances: bytes
    that are not UTF-8, markup after the root; a ``<?...?>`` inside or after the root refused; the tree
    counted toward the bounds of everything a description expands to, :mod:`.access`). False for a strict
    format (USDF: ``error_type=UsdfError, code_prefix="USDF_XML"``)."""
    is_text = isinstance(data, str)
    raw = encode_text(data, file, error_type=error_type, code_prefix=code_prefix) if isinstance(data, str) \
        else bytes(data)
    if description and b"<?" in raw:
        _refuse_late_declarations(raw, file, error_type)
    raw, warnings = tolerate(raw, file, error_type=error_type, code_prefix=code_prefix, decoded=is_text,
                             description=description)
    try:
        check_element_count(raw, file, error_type=error_type, code_prefix=code_prefix)
        try:
            root = parse_bytes(raw)
        except etree.XMLSyntaxError as exc:
            root = _root_before_trailing_markup(raw, exc, file, code_prefix, warnings) if description else None
            if root is None:
                raise
    except etree.XMLSyntaxError as exc:
        err_line: int | None = exc.position[0] if exc.position else getattr(exc, "lineno", None)
        msg = exc.msg if getattr(exc, "msg", None) else str(exc)
        # an entity libxml2 stopped at (external, undefined, a loop, amplification) is the entity policy's
        kind = "ENTITY" if b"<!ENTITY" in raw or exc.code in _ENTITY_ERRORS else "SYNTAX"
        raise error_type([Diagnostic(f"{code_prefix}_{kind}", f"malformed XML: {msg}", file, err_line)]
                         + [w for w in warnings if w.code == f"{code_prefix}_TRAILING_NUL"]) from None
    except (ValueError, etree.LxmlError) as exc:
        raise error_type(Diagnostic(f"{code_prefix}_SYNTAX", f"malformed XML: {exc}", file, None)) from None
    if root is None:
        raise error_type(Diagnostic(f"{code_prefix}_EMPTY", "empty document", file, None))
    check_entities(root, raw, file, error_type=error_type, code_prefix=code_prefix)
    if description and b"<?" in raw:
        _refuse_late_instructions(root, file, error_type)
    if description:
        access.count_tree(root, file)  # a robot description: all its files together are bounded
    start_lines(root, raw)
    return ParsedXml(root, warnings)


_START_TAG_RE = re.compile(rb"<(?![!?/])")
_PI_RE = re.compile(rb"<\?.*?\?>", re.DOTALL)
_MULTILINE_TAG_RE = re.compile(rb"<[^!?/<>][^<>]*\n")  # no "<" in a tag: each try ends at the next one (linear)


def start_lines(root: etree._Element, raw: bytes) -> None:
    """Set each element's ``sourceline`` to the line its start tag begins on (libxml2 gives the line of
    the ``>`` that ends it, lines further down for a start tag written over several lines), as an editor
    and TinyXML2 (urdfdom's, libsdformat's and MuJoCo's parser) count. Linear in ``len(raw)``; left as
    libxml2 gave them if the start tags found in ``raw`` do not match the tree's elements."""
    if _MULTILINE_TAG_RE.search(raw) is None:  # the common case: every start tag on one line
        return
    # no start tag hides in a comment, CDATA or a processing instruction (blanked, well-formed: each ends),
    # nor in an attribute value or text (no "<" there)
    text = _PI_RE.sub(lambda m: re.sub(rb"[^\n]", b" ", m.group(0)), blank_comments(raw))
    line, last = 1, 0
    found: list[tuple[etree._Element, int]] = []
    starts = _START_TAG_RE.finditer(text)
    for el in root.iter(etree.Element):
        m = next(starts, None)
        if m is None:
            return
        p = m.start()
        qname = (f"{el.prefix}:" if el.prefix else "") + etree.QName(el).localname
        if not text.startswith(qname.encode(), p + 1):
            return
        line += text.count(b"\n", last, p)
        last = p
        found.append((el, line))
    for el, start in found:
        if el.sourceline is not None and start < el.sourceline:
            el.sourceline = start


def _refuse_late_declarations(raw: bytes, file: str, error_type: type[DiagnosticError]) -> None:
    """TinyXML2 reads every ``<?...?>`` as a declaration, allowed only before every other node: urdfdom,
    libsdformat, MuJoCo and Drake refuse one that follows a comment or a DOCTYPE before the root
    (measured with ``check_urdf``); blanks before it are fine. Linear: one pass over the prolog."""
    i, after = raw.startswith(b"\xef\xbb\xbf") * 3, ""
    while True:
        j = raw.find(b"<", i)
        if j < 0:
            return
        if raw.startswith(b"<?", j):
            if after:
                raise error_type(Diagnostic(
                    "XML_SYNTAX", f"malformed XML: a <?...?> declaration after {after} (urdfdom and libsdformat, "
                    "through TinyXML2, accept declarations only before every other node)", file,
                    raw.count(b"\n", 0, j) + 1))
            end, step = raw.find(b"?>", j + 2), 2
        elif raw.startswith(b"<!--", j):
            after = after or "a comment"
            end, step = raw.find(b"-->", j + 4), 3
        elif raw.startswith(b"<!", j):
            after = after or "a <!...> declaration"
            end, step = j + 2, 0
        else:
            return  # the root element (what follows it: _refuse_late_instructions)
        if end < 0:
            return  # unterminated: the parser reports it
        i = end + step


def _refuse_late_instructions(root: etree._Element, file: str, error_type: type[DiagnosticError]) -> None:
    """TinyXML2 reads ``<?...?>`` as a declaration, allowed only before the first element: urdfdom and
    libsdformat refuse one inside or after the root element (measured), so a robot description does too."""
    for where, nodes in (("inside", root.iter(etree.PI)), ("after", root.itersiblings(etree.PI))):
        node = next(nodes, None)
        if node is not None:
            raise error_type(Diagnostic("XML_SYNTAX", f"malformed XML: <?{node.target} ...?> {where} the root element "
                                        "(urdfdom and libsdformat, through TinyXML2, accept one only before it)",
                                        file, node.sourceline))


def _root_before_trailing_markup(raw: bytes, exc: etree.XMLSyntaxError, file: str, code_prefix: str,
                                 warnings: list[Diagnostic]) -> etree._Element | None:
    """A robot description whose root element is followed by markup TinyXML2 loads (urdfdom and
    libsdformat then read the first root; :mod:`xml_trailing`): the root, with an ``XML_TRAILING_CONTENT``
    warning; ``None`` when the error is another one or TinyXML2 would refuse the rest too."""
    if exc.code != etree.ErrorTypes.ERR_DOCUMENT_END or not exc.position:  # "Extra content at the end ..."
        return None
    line, column = exc.position
    start = 0
    for _ in range(line - 1):
        start = raw.find(b"\n", start) + 1
        if start == 0:
            return None
    cut = start + column - 1
    if not 0 < cut <= len(raw) or not tail_loads(raw[cut:]):
        return None
    try:
        root = parse_bytes(raw[:cut])
    except etree.XMLSyntaxError:
        return None
    warnings.append(Diagnostic(f"{code_prefix}_TRAILING_CONTENT", "markup after the root element is ignored, as "
                               "urdfdom and libsdformat (TinyXML2) ignore it", file, line, None, Severity.WARNING))
    return root


def check_entities(root: etree._Element, raw: bytes, file: str = "<string>", *,
                   error_type: type[DiagnosticError] = ModelError, code_prefix: str = "XML") -> None:
    """The entity policy of every format: an entity reference or an entity declaration (libxml2
    would still expand internal ones inside attribute values) is refused, never silently altered."""
    # Entities are not resolved; an unresolved entity reference is an error, not silent loss.
    # (Each reference is written with '&': without one there is none, and the tree need not be walked.)
    for node in root.iter(etree.Entity) if b"&" in raw else ():
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
            decl = raw.find(b"<!ENTITY")
            decl_at = raw.count(b"\n", 0, decl) + 1 if decl >= 0 else 1
            raise error_type(Diagnostic(f"{code_prefix}_ENTITY",
                                        f"entity declarations are not allowed: {', '.join(declared)}",
                                        file, decl_at))


def encode_text(text: str, file: str = "<string>", *, error_type: type[DiagnosticError] = ModelError,
                code_prefix: str = "XML") -> bytes:
    """``text`` as UTF-8; a character UTF-8 cannot hold (a lone surrogate such as ``"\\ud800"``) is a
    ``{code_prefix}_ENCODING`` error naming its line, never a ``UnicodeEncodeError``."""
    try:
        return text.encode("utf-8")
    except UnicodeEncodeError as exc:
        line = text.count("\n", 0, exc.start) + 1
        col = exc.start - (text.rfind("\n", 0, exc.start) + 1) + 1
        raise error_type(Diagnostic(f"{code_prefix}_ENCODING",
                                    f"character U+{ord(text[exc.start]):04X} at column {col} cannot be "
                                    "encoded as UTF-8 (a lone surrogate)", file, line)) from None


def _declarations(raw: bytes) -> list[re.Match[bytes]]:
    """Every ``<?xml ...?>`` declaration outside comments, in one linear pass (each byte is looked
    at a bounded number of times whatever the input: no regular expression spans comments)."""
    out: list[re.Match[bytes]] = []
    pos = 0
    n = len(raw)
    next_comment = raw.find(b"<!--")
    next_decl = raw.find(b"<?xml")
    while pos < n and next_decl >= 0:
        if 0 <= next_comment < next_decl:
            end = raw.find(b"-->", next_comment + 4)
            if end < 0:
                break  # an unterminated comment runs to the end: the parser reports it
            pos = end + 3
            next_comment = raw.find(b"<!--", pos)
            if next_decl < pos:
                next_decl = raw.find(b"<?xml", pos)
            continue
        m = _DECL_RE.match(raw, next_decl)
        if m is not None:
            out.append(m)
            pos = m.end()
        else:
            pos = next_decl + 5
        next_decl = raw.find(b"<?xml", pos)
        if 0 <= next_comment < pos:
            next_comment = raw.find(b"<!--", pos)
    return out


def tolerate(raw: bytes, file: str = "<string>", *, error_type: type[DiagnosticError] = ModelError,
             code_prefix: str = "XML", decoded: bool = False, description: bool = True
             ) -> tuple[bytes, list[Diagnostic]]:
    """The document bytes with the defects urdfdom tolerates repaired, and a warning for each.

    * a UTF-8 BOM is dropped; a UTF-16 or UTF-32 document (with or without a BOM) is refused
      (``ENCODING``, line 1, naming the encoding);
    * the document ends at its first NUL byte, as urdfdom (a C string) reads it
      (``TRAILING_NUL``; whatever follows the NUL is ignored);
    * XML declarations are blanked (their newlines kept, so lines stay true): one that is not at the
      start (``MISPLACED_DECLARATION``), any further one (``DUPLICATE_DECLARATION``), a version other
      than 1.0/1.1 (``BAD_VERSION``); the first declaration's encoding is applied (result: UTF-8)
      unless ``decoded`` (``raw`` was encoded from text already decoded);
    * robot descriptions only (``description``; USDF is strict UTF-8): bytes that are not
      UTF-8 are read as Latin-1 characters (``INVALID_UTF8``, the line of the first).
    """
    warnings: list[Diagnostic] = []
    check_size(raw, file, error_type=error_type, code_prefix=code_prefix)
    for marks in (_BOMS, _WIDE_STARTS):
        for mark, encoding_name in marks:
            if raw.startswith(mark):
                raise error_type(Diagnostic(
                    f"{code_prefix}_ENCODING", f"the document is {encoding_name}; it must be UTF-8 (urdfdom and "
                    "libsdformat read UTF-8 only): convert it, e.g. "
                    f"iconv -f {encoding_name.split()[0]} -t UTF-8", file, 1))
    if raw.startswith(b"\xef\xbb\xbf"):
        raw = raw[3:]
    nul = raw.find(b"\x00")
    if nul >= 0:
        rest = raw[nul:]
        head = raw[:nul]
        if rest.strip(b"\x00 \t\r\n"):
            line = head.count(b"\n") + 1
            msg = (f"the document ends at the NUL byte on line {line}, as urdfdom reads it; "
                   f"the {len(rest) - 1} bytes after it are ignored")
        else:
            line = head.rstrip(b" \t\r\n").count(b"\n") + 1
            msg = "trailing NUL byte(s) ignored"
        warnings.append(Diagnostic(f"{code_prefix}_TRAILING_NUL", msg, file, line, None, Severity.WARNING))
        raw = head

    decls = _declarations(raw)  # a declaration quoted inside a comment is just text
    encoding = None
    first_line = decl_line = 1
    counted = 0  # lines are counted incrementally: each byte once, however many declarations
    for i, m in enumerate(decls):
        decl_line += raw.count(b"\n", counted, m.start())
        counted = m.start()
        if i == 0:
            first_line = decl_line
        else:
            warnings.append(Diagnostic(f"{code_prefix}_DUPLICATE_DECLARATION",
                                       f"another XML declaration (the first is on line {first_line}); ignored",
                                       file, decl_line, None, Severity.WARNING))
            continue
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
        em = _ENCODING_RE.search(m.group(0))
        if em is not None and not decoded:
            encoding = (em.group(2), decl_line)
    if decls:
        # Blank out the declarations but keep their newlines so line numbers stay true.
        parts = []
        pos = 0
        for m in decls:
            parts.append(raw[pos:m.start()])
            parts.append(b"\n" * m.group(0).count(b"\n"))
            pos = m.end()
        parts.append(raw[pos:])
        raw = b"".join(parts)
    if encoding is not None and encoding[0].lower() not in (b"utf-8", b"utf8", b"ascii", b"us-ascii"):
        try:
            raw = raw.decode(encoding[0].decode()).encode("utf-8")
        except (LookupError, UnicodeDecodeError, UnicodeEncodeError) as exc:
            raise error_type(Diagnostic(f"{code_prefix}_ENCODING", f"cannot decode document: {exc}",
                                        file, encoding[1])) from None
    elif description and not decoded and not raw.isascii():
        raw = _bytes_as_latin1(raw, file, warnings)
    return raw, warnings


def _bytes_as_latin1(raw: bytes, file: str, warnings: list[Diagnostic]) -> bytes:
    """``raw`` with every byte that is not UTF-8 read as its Latin-1 character (an ``XML_INVALID_UTF8``
    warning names the line of the first and how many there are)."""
    try:
        raw.decode("utf-8")
        return raw
    except UnicodeDecodeError as exc:
        first, line = raw[exc.start], raw.count(b"\n", 0, exc.start) + 1
    text = raw.decode("utf-8", BYTE_ERRORS)
    fixed = text.encode("utf-8")
    n = len(fixed) - len(raw)  # each such byte (0x80-0xFF) grows by one byte in UTF-8
    warnings.append(Diagnostic(
        "XML_INVALID_UTF8", f"{n} byte(s) that are not UTF-8 (the first 0x{first:02X}), read as the Latin-1 "
        f"characters of the same values (0x{first:02X} is {chr(first)!r}), as urdfdom loads them (TinyXML2 "
        "does not check UTF-8); names holding "
        "them go to TF and USDF as those characters, in UTF-8", file, line, None, Severity.WARNING))
    return fixed
