"""Read USDF ``<world_state>`` documents (docs/usdf-spec.md) into :mod:`robot_state_format.usdf.types`.

Strict by default: every fault (malformed XML, unknown element or attribute, wrong arity,
non-numeric or non-finite number, duplicate name or element, children out of the canonical
order, bad stamp, unknown parent, parent cycle) is collected as a :class:`Diagnostic` with
file, line and element, and one :class:`UsdfError` lists them all.  ``lenient=True`` accepts
more of the proposal's looseness (any child order, unknown elements) with warnings, returned in
:attr:`ReadResult.warnings`. In both modes the proposal's root ``<world>`` and a missing ``version``
(the proposal defines none: the current version is meant) are warnings, so the proposal's own
example, its XML typos mended, validates.

Speed: a model_state in the common shape is read in bulk (usdf/read_bulk.py: structure proven
by XPath counts, all numbers of a kind parsed in one pass); anything it cannot prove clean goes
through the detailed per-element readers (usdf/read_elements.py, their checks and diagnostics in
usdf/read_context.py), which alone produce diagnostics.  Syntax faults: usdf/syntax_faults.py.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

from lxml import etree

from robot_state_format import limits
from robot_state_format.errors import Diagnostic, UsdfError
from robot_state_format.model.xml import describe, parse_bytes, parse_xml
from robot_state_format.usdf.read_context import ReadContext
from robot_state_format.usdf.read_elements import SUPPORTED_MAJOR, parent_lines, read_root
from robot_state_format.usdf.resolve import parent_diagnostics
from robot_state_format.usdf.syntax_faults import find_syntax_faults
from robot_state_format.usdf.types import WorldState

__all__ = ["SUPPORTED_MAJOR", "ReadResult", "find_syntax_faults", "read_world_state", "read_world_state_file"]


@dataclass
class ReadResult:
    """What a reader returns: the ``state`` read, and the ``warnings`` met on the way (errors raise)."""

    state: WorldState
    warnings: list[Diagnostic] = field(default_factory=list)


def read_world_state_file(path: str | os.PathLike[str], *, lenient: bool = False) -> ReadResult:
    """Read a USDF file (see :func:`read_world_state`); an unreadable file is a ``USDF_IO`` error."""
    p = Path(path)
    try:
        data = limits.read_input_file(p)
    except OSError as exc:
        raise UsdfError(Diagnostic("USDF_IO", f"cannot read: {exc.strerror or exc}", str(p), None)) from None
    return read_world_state(data, file=str(p), lenient=lenient)


def read_world_state(data: str | bytes, *, file: str = "<string>", lenient: bool = False) -> ReadResult:
    """Parse a USDF document: the state and its warnings; raise :class:`UsdfError` listing every fault."""
    try:
        fast = _fast_parse(data)
        xml_warnings: list[Diagnostic] = []
        if fast is not None:
            root = fast
        else:
            root, xml_warnings = parse_xml(data, file, error_type=UsdfError, code_prefix="USDF_XML",
                                           description=False)
    except UsdfError as exc:
        if exc.code == "USDF_XML_SYNTAX":
            more = find_syntax_faults(data, file)
            if more:
                raise UsdfError(more) from None
        raise
    _check_number_count(data, root, file)
    ctx = ReadContext(file, lenient)
    ctx.warnings.extend(xml_warnings)
    # the bulk reading of fast_model relies on a tree of elements and text only
    ctx.plain = fast is not None and next(fast.iter(etree.Comment, etree.ProcessingInstruction), None) is None
    state = read_root(root, ctx)
    if not ctx.errors:
        for d in parent_diagnostics(state, file=file, lines=parent_lines(root)):
            ctx.errors.append(d)
    if ctx.errors:
        ctx.errors.sort(key=lambda d: d.line or 0)
        raise UsdfError(ctx.errors)
    return ReadResult(state, ctx.warnings)


def _check_number_count(data: str | bytes, root: etree._Element, file: str) -> None:
    """Refuse a document holding more than :data:`~robot_state_format.limits.MAX_NUMBERS_PER_DOCUMENT`
    numbers (``USDF_TOO_MANY_NUMBERS``) before any is converted.  White space bounds the count from
    above at C speed; only past the bound are the texts counted, without splitting more than a
    list's bound at a time."""
    bound = limits.MAX_NUMBERS_PER_DOCUMENT
    if isinstance(data, str):
        blanks = data.count(" ") + data.count("\n") + data.count("\t") + data.count("\r")
    else:
        blanks = data.count(b" ") + data.count(b"\n") + data.count(b"\t") + data.count(b"\r")
    if blanks + 2 * limits.MAX_XML_ELEMENTS <= bound:  # words <= blanks + text nodes
        return
    cap = limits.MAX_NUMBERS_PER_LIST + 1
    total = 0
    for el in root.iter():
        for text in (el.text, el.tail):
            if text:
                total += len(text.split(None, cap))
        if total > bound:
            raise UsdfError(Diagnostic("USDF_TOO_MANY_NUMBERS",
                                       f"the document holds more than {bound} numbers "
                                       "(RSF_MAX_NUMBERS_PER_DOCUMENT); no real state comes near",
                                       file, el.sourceline, describe(el)))


_PLAIN_DECL = b'<?xml version="1.0" encoding="UTF-8"?>'


def _fast_parse(data: str | bytes) -> etree._Element | None:
    """The common case of :func:`parse_xml` (same parser settings), or None to take the full path.

    Plain documents (UTF-8, no BOM, no NUL, the writer's declaration or none, within the size
    and element-count bounds, no DOCTYPE) parse directly with the same parser; entity references
    are looked for in C.  Anything else, and any failure, goes through ``parse_xml`` for its
    tolerance rules, its XML policy and diagnostics.
    """
    try:
        raw = data.encode("utf-8") if isinstance(data, str) else data
    except UnicodeEncodeError:  # a lone surrogate: parse_xml reports it
        return None
    if len(raw) > limits.MAX_DOCUMENT_BYTES or b"\x00" in raw or raw.count(b"<") > limits.MAX_XML_ELEMENTS:
        return None
    if raw.startswith(_PLAIN_DECL):
        after_decl = len(_PLAIN_DECL)
    elif raw.startswith(b"<world"):
        after_decl = 0
    else:
        return None
    # another "<?xml" (its '?' lies past the declaration): one-byte search first, it is much faster
    if raw.find(b"?", after_decl) != -1 and raw.find(b"<?xml", 1) != -1:
        return None
    try:
        root = parse_bytes(raw)
    except (etree.LxmlError, ValueError):
        return None
    if root is None or next(root.iter(etree.Entity), None) is not None:
        return None
    if root.getroottree().docinfo.internalDTD is not None:  # the entity policy is parse_xml's
        return None
    return root

