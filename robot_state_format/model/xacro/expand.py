"""xacro expansion through the ``xacro`` package, without ROS.

``$(find pkg)`` and ``package://pkg/...`` include paths resolve through
:mod:`robot_state_format.model.packages` (ament index of ``AMENT_PREFIX_PATH``, then
``ROS_PACKAGE_PATH``).  The main document and every included file are first checked by
:func:`~robot_state_format.model.xml.parse_xml` (entities and network off).  Every failure
is a :class:`~robot_state_format.errors.ModelError` with a ``XACRO_`` code (or
``MODEL_PACKAGE_NOT_FOUND``); xacro's own warnings are logged.
"""

from __future__ import annotations

import base64
import contextlib
import dataclasses
import io
import logging
import os
import re
import stat
import threading
import xml.parsers.expat
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from lxml import etree

from robot_state_format import limits
from robot_state_format.errors import (
    Diagnostic,
    DiagnosticError,
    ModelError,
    ModelIOError,
    RobotStateFormatError,
    Severity,
)
from robot_state_format.lazy_modules import lazy_module, optional_module
from robot_state_format.limits import read_input_file, shown_path
from robot_state_format.model.detect import looks_like_xacro, without_xacro_declaration
from robot_state_format.model.packages import NOT_FOUND_HOW, PACKAGE_URI, find_package
from robot_state_format.model.types import Model
from robot_state_format.model.xacro.bounded_child import (
    ChildEntry,
    ChildFailed,
    ChildLimits,
    Confinement,
    run_child,
)
from robot_state_format.model.xacro.dom import POSITIONS, remove_previous_comments, replace_node
from robot_state_format.model.xml import encode_text, parse_xml, safe_parser, start_lines, tolerate

# xacro and yaml cost ~60 ms to import: their code runs when a xacro document is first expanded
# (optional: only xacro documents need it; without it they fail with one line naming what to install)
xacro: Any = optional_module("xacro")  # xacro is untyped; its module globals are patched below
_substitution_args: Any = optional_module("xacro.substitution_args")
yaml: Any = lazy_module("yaml")
DEPTH_SHARE = 200  # see _patched: an element this many macro calls deep costs about twice one at the top
CALL_COST = 8  # a macro call's own work, in elements (besides its arguments' and its body's: 10 in all)
_LOCK = threading.Lock()  # xacro keeps its state in module globals
_log = logging.getLogger("robot_state_format.model.xacro")  # the package's name, as docs/models.md says


class _PackageNotFound(Exception):
    def __init__(self, name: str) -> None:
        super().__init__(name)
        self.name = name


def _refuse_past_budget(every: list[tuple[str, int]], before: int) -> int:
    """The elements of the documents read so far (``before``) and of one more (``every``: file and line
    of each). Documents holding more elements than an expansion may process are refused before xacro
    parses them: every element outside a macro body or a false condition is processed, and xacro's parse
    alone (minidom, 20-30 us an element) would spend the time the bound is there to save."""
    held = before + len(every)
    if held > limits.MAX_XACRO_ELEMENTS:
        past = every[max(0, limits.MAX_XACRO_ELEMENTS - before)]
        raise ModelError(Diagnostic("XACRO_TOO_LARGE", f"the xacro documents hold more than "
                                    f"{limits.MAX_XACRO_ELEMENTS} elements, more than an expansion may process "
                                    "(RSF_MAX_XACRO_ELEMENTS)", past[0], past[1] or None))
    return held


class _IncludeUnreadable(OSError):
    """An included file that cannot be read (an ``OSError``, so xacro skips it when ``optional``)."""

    def __init__(self, path: str, reason: str) -> None:
        super().__init__(reason)
        self.path, self.reason = path, reason


@contextlib.contextmanager
def _patched(xacro: Any, extra: Sequence[str], file: str, stderr: io.StringIO,
             table: list[tuple[str, int]], warnings: list[Diagnostic], main: int = 0) -> Iterator[None]:
    """Route xacro's package look-ups and file parsing through this package (``main``: the elements of
    the main document, to which those of each included file are added)."""
    sa = _substitution_args
    saved_eval_find, saved_find_fn = sa._eval_find, sa._eval_dict.get("find")
    saved_spec, saved_parse = xacro.abs_filename_spec, xacro.parse
    saved_eval_all, saved_replace = xacro.eval_all, xacro.replace_node
    saved_remove_comments, saved_call = xacro.remove_previous_comments, xacro.handle_macro_call
    # elements xacro may process (a macro bomb stops here), in 1/DEPTH_SHARE of an element: a name look-up walks
    # one scope per macro call the element is nested in, so an element DEPTH_SHARE calls deep counts twice; a
    # call (its body cloned, two scopes made, its arguments read) costs as much as CALL_COST elements
    budget = [limits.MAX_XACRO_ELEMENTS * DEPTH_SHARE]
    held = [main]  # elements of the documents read

    def spend(cost: int) -> None:
        budget[0] -= cost
        if budget[0] < 0:
            raise ModelError(Diagnostic("XACRO_TOO_LARGE", f"the expansion processes more than "
                                        f"{limits.MAX_XACRO_ELEMENTS} elements (RSF_MAX_XACRO_ELEMENTS; a macro "
                                        f"call counts {CALL_COST + 2}, an element nested in N calls 1 + "
                                        f"N/{DEPTH_SHARE}); a macro calling itself more than once per level?",
                                        file, None))

    def eval_all(node: Any, macros: Any, symbols: Any) -> Any:
        spend(DEPTH_SHARE + getattr(macros, "depth", 0))
        return saved_eval_all(node, macros, symbols)

    def handle_macro_call(node: Any, macros: Any, symbols: Any) -> Any:
        if node.tagName.startswith("xacro:"):
            spend(CALL_COST * DEPTH_SHARE)
        return saved_call(node, macros, symbols)

    def eval_find(pkg: str) -> str:
        share = find_package(pkg, extra)
        if share is None:
            raise _PackageNotFound(pkg)
        return str(share)

    def abs_filename_spec(spec: str) -> str:
        if spec.startswith(PACKAGE_URI):
            name, _, rel = spec[len(PACKAGE_URI):].partition("/")
            spec = os.path.join(eval_find(name), rel)
        path = str(saved_spec(spec))
        try:  # xacro opens it itself (load_yaml): the input gate's checks, without reading
            st = os.stat(path)
        except OSError:
            return path  # missing: xacro reports it
        if not stat.S_ISREG(st.st_mode) or st.st_size > limits.MAX_DOCUMENT_BYTES:
            why = "not a regular file" if not stat.S_ISREG(st.st_mode) else \
                f"{st.st_size} bytes, over the {limits.MAX_DOCUMENT_BYTES}-byte limit (RSF_MAX_DOCUMENT_BYTES)"
            raise ModelError(Diagnostic("XACRO_INCLUDE", f"cannot read {path}: {why}", file, None))
        return path

    def parse(inp: Any, filename: str | None = None) -> Any:
        if inp is None and filename is not None:
            path = os.path.join(xacro.root_dir, filename)
            try:
                data = read_input_file(path)
            except OSError as exc:  # as xacro's own parse: an optional include is then skipped
                raise xacro.XacroException(exc=_IncludeUnreadable(path, exc.strerror or str(exc))) from None
            warnings.extend(parse_xml(data, path).warnings)
            every: list[tuple[str, int]] = []
            annotated = _annotate(_cleaned(data, path), path, table, every)
            held[0] = _refuse_past_budget(every, held[0])
            doc = saved_parse(annotated, filename)
            _tag_lines(doc, every)
            return doc
        return saved_parse(inp, filename)

    sa._eval_find = eval_find
    sa._eval_dict["find"] = eval_find
    xacro.abs_filename_spec = abs_filename_spec
    xacro.parse = parse
    xacro.eval_all = eval_all
    xacro.handle_macro_call = handle_macro_call
    xacro.replace_node = replace_node
    xacro.remove_previous_comments = lambda node: remove_previous_comments(node, xacro._empty_text_node)
    try:
        with contextlib.redirect_stderr(stderr), contextlib.redirect_stdout(stderr):
            yield
    finally:
        sa._eval_find, xacro.abs_filename_spec, xacro.parse = saved_eval_find, saved_spec, saved_parse
        xacro.eval_all, xacro.replace_node = saved_eval_all, saved_replace
        xacro.remove_previous_comments, xacro.handle_macro_call = saved_remove_comments, saved_call
        POSITIONS.clear()
        if saved_find_fn is not None:
            sa._eval_dict["find"] = saved_find_fn


SOURCE_ATTRIBUTE = "_rsf_src"  # marks each element during expansion with its source line (then removed)
_SOURCE_ATTRIBUTE_RE = re.compile(r'\s_rsf_src="([0-9]+)"')
_XACRO_NS_MARK = "xacro"
_LINE_REF_RE = re.compile(r"\(line ([0-9]+)\)")


def _annotate(text: str, file: str, table: list[tuple[str, int]],
              every: list[tuple[str, int]] | None = None) -> str:
    """``text`` with every element outside the xacro namespace marked by an index into ``table``,
    where ``(file, line)`` of that element is appended; ``every`` gets ``(file, line)`` of each
    element (xacro ones too) in document order. Unparsable text is returned unmarked."""
    raw = text.encode("utf-8")
    try:
        root = etree.fromstring(raw, safe_parser(keep_cdata=True))  # xacro leaves CDATA alone
    except etree.LxmlError:
        return text
    start_lines(root, raw)  # an element's line is where its start tag begins
    for el in root.iter():
        if not isinstance(el.tag, str):
            continue
        if every is not None:
            every.append((file, int(el.sourceline or 0)))
        if _XACRO_NS_MARK in (etree.QName(el).namespace or ""):
            continue
        if el.sourceline is not None:
            table.append((file, int(el.sourceline)))
            el.set(SOURCE_ATTRIBUTE, str(len(table) - 1))
    return str(etree.tostring(root, encoding="unicode"))


_LINE_KEY = "rsf_source_line"


class _KeepLine:
    """minidom user-data handler: a clone (xacro clones macro bodies and blocks) keeps the source line."""

    def handle(self, operation: int, key: str, data: Any, src: Any, dst: Any) -> None:
        if dst is not None:
            dst.setUserData(key, data, self)


def _tag_lines(doc: Any, every: list[tuple[str, int]]) -> None:
    """Attach ``(file, line)`` to each element of the minidom ``doc`` parsed from the annotated text
    (same elements, same order as ``every``), so an error can name the element that failed."""
    root = getattr(doc, "documentElement", None)
    if root is None:
        return
    elements = [root, *root.getElementsByTagName("*")]
    if len(elements) != len(every):
        return
    keep = _KeepLine()
    for el, where in zip(elements, every):
        if where[1] > 0:
            el.setUserData(_LINE_KEY, where, keep)


def _failing_element(exc: BaseException) -> tuple[str, int] | None:
    """``(file, line)`` of the element xacro was evaluating when ``exc`` was raised: the innermost
    ``eval_all`` (or macro call) frame of the traceback holds it (a text node: its element)."""
    found = None
    tb = exc.__traceback__
    while tb is not None:
        frame = tb.tb_frame
        if frame.f_code.co_name in ("eval_all", "handle_macro_call", "process_include", "grab_property",
                                    "grab_macro") and "xacro" in frame.f_code.co_filename:
            node = frame.f_locals.get("node", frame.f_locals.get("elt"))
            while node is not None and getattr(node, "nodeType", None) != 1:  # text, comment: the element
                node = getattr(node, "parentNode", None)
            where = node.getUserData(_LINE_KEY) if node is not None and hasattr(node, "getUserData") else None
            if where is not None:
                found = where
        tb = tb.tb_next
    return found


_EXPRESSION_RE = re.compile(r"when evaluating expression '(.*?)'(?:;|$)")


def _expression_site(msg: str, at: tuple[str, int | None], main: str, main_text: str
                     ) -> tuple[tuple[str, int | None], str]:
    """Point at the line that holds the failing expression (xacro evaluates properties lazily, so the
    element being expanded may only use it): the first ``when evaluating expression 'X'`` of the
    message, searched as ``${X}`` in the file of the element, then in the main file; used only when
    it is on exactly one line. The element's own line is kept in the message."""
    m = _EXPRESSION_RE.search(msg)
    if m is None or at[1] is None:
        return at, msg
    needle = "${" + m.group(1) + "}"
    for path in dict.fromkeys((at[0], main)):
        try:
            text = main_text if path == main else read_input_file(path).decode("utf-8", "replace")
        except OSError:
            continue
        hits = [i for i, line in enumerate(text.splitlines(), start=1) if needle in line]
        if len(hits) == 1:
            if (path, hits[0]) == at:
                return at, msg
            where = f"line {at[1]}" if path == at[0] else f"{at[0]}:{at[1]}"
            return (path, hits[0]), f"{msg} (used by the element at {where})"
        if hits:
            break
    return at, msg


@dataclass
class XacroExpansion:
    """An expanded xacro document and where its elements came from.

    ``lines`` maps a line of ``text`` (1-based) to the ``(file, line)`` of the element that starts
    there in the xacro source: the main file, an included file, or the body of the macro that
    produced it. Elements that xacro builds itself (``xacro:element``) have no entry.
    """

    text: str
    file: str
    lines: dict[int, tuple[str, int]] = field(default_factory=dict)
    #: tolerance warnings of the xacro sources (``XML_BAD_VERSION``, ``XML_TRAILING_NUL``, ...), already
    #: naming the source file and line. Empty when ``text`` is the source passed through unchanged
    #: (the reader of ``text`` then finds and reports them itself).
    warnings: list[Diagnostic] = field(default_factory=list)

    def remap(self, d: Diagnostic) -> Diagnostic:
        """``d`` pointing into the xacro source instead of the expanded text, where known."""
        if d.file != self.file or d.line is None or not self.lines:
            return d
        where = self.lines.get(d.line)
        if where is None:
            return dataclasses.replace(d, message=f"{d.message} [line {d.line} of the xacro expansion]")

        def other(m: re.Match[str]) -> str:  # "(line N)" in a message names another element's line
            at = self.lines.get(int(m.group(1)))
            if at is None:
                return m.group(0)
            return f"(line {at[1]})" if at[0] == where[0] else f"({at[0]}:{at[1]})"

        return dataclasses.replace(d, file=where[0], line=where[1], message=_LINE_REF_RE.sub(other, d.message))

    def remap_error(self, exc: DiagnosticError) -> DiagnosticError:
        return type(exc)([self.remap(d) for d in exc.diagnostics])

    def remap_model(self, model: Model) -> Model:
        """Diagnostics and element sources of ``model`` (read from ``text``) pointed at the source."""
        model.warnings = [self.remap(d) for d in model.warnings]
        for table in (model.links, model.joints, model.frames, model.models):
            for item in table.values():
                src = item.source
                d = self.remap(Diagnostic("", "", src.file, src.line, src.element))
                if (d.file, d.line) != (src.file, src.line):
                    item.source = dataclasses.replace(src, file=d.file, line=d.line)
        return model


def expand_xacro(text: str | bytes, *, file: str = "<string>", args: Mapping[str, str] | None = None,
                 search_paths: Sequence[str] = ()) -> str:
    """Expand xacro ``text`` (from ``file``, which anchors relative includes) with ``name:=value`` args."""
    return expand_xacro_mapped(text, file=file, args=args, search_paths=search_paths).text


def expand_xacro_mapped(text: str | bytes, *, file: str = "<string>", args: Mapping[str, str] | None = None,
                        search_paths: Sequence[str] = (), confinement: Confinement | None = None) -> XacroExpansion:
    """:func:`expand_xacro`, also telling where each line of the result came from in the sources.

    xacro runs code (``${...}`` is Python's ``eval``): the expansion runs in a child process bounded by
    the ``RSF_MAX_XACRO_*`` limits (:mod:`robot_state_format.limits`); a limit hit is a
    :class:`~robot_state_format.errors.ModelError` ``XACRO_LIMIT`` naming it. With ``confinement``
    (an untrusted document) the child also has no environment and may only read under
    ``confinement.readable`` (:mod:`robot_state_format.model.xacro.bounded_child`).
    """
    if not looks_like_xacro(text):  # nothing to evaluate: no child needed
        return expand_in_process(text, file=file, args=args, search_paths=search_paths)
    request = {"file": file, "args": {str(k): str(v) for k, v in (args or {}).items()},
               "search_paths": [str(p) for p in search_paths], "limits": _limit_values()}
    if isinstance(text, bytes):
        request["bytes"] = base64.b64encode(text).decode("ascii")
    else:
        request["text"] = text
    bounds = ChildLimits(limits.MAX_XACRO_CPU_SECONDS, limits.MAX_XACRO_MEMORY_BYTES, limits.MAX_XACRO_SECONDS,
                         2 * limits.MAX_DOCUMENT_BYTES + (4 << 20))
    try:
        reply = run_child(serve_expansion, request, bounds, entry=_ENTRY, confinement=confinement)
    except ChildFailed as exc:
        raise ModelError(Diagnostic(*_limit_message(exc), file, None)) from None
    return _expansion_from(reply, file)


def expand_in_process(text: str | bytes, *, file: str = "<string>", args: Mapping[str, str] | None = None,
                      search_paths: Sequence[str] = (), xacro_log: list[str] | None = None) -> XacroExpansion:
    """:func:`expand_xacro_mapped` in this process, without the limits: only for trusted documents.
    xacro's own warnings are logged, or appended to ``xacro_log``."""
    _, warnings = parse_xml(text, file)  # well-formed, no entities; raises ModelError with the line
    source = text.decode("utf-8", "replace") if isinstance(text, bytes) else text
    if not looks_like_xacro(source):
        # e.g. a URDF generated by xacro that kept xmlns:xacro: drop the declaration (as xacro does)
        # and keep everything else, line numbers included
        return XacroExpansion(without_xacro_declaration(source), file)
    # minidom refuses what parse_xml tolerates (a NUL, a declaration that is not first or a second
    # one, version 0.0): expand the repaired text, whose lines are those of the source
    source = _cleaned(text, file)
    warnings = list(warnings)
    stderr = io.StringIO()
    mappings = {str(k): str(v) for k, v in (args or {}).items()}
    table: list[tuple[str, int]] = []
    every: list[tuple[str, int]] = []
    plain = source
    source = _annotate(source, file, table, every)  # the cleaning above kept every line where it was
    _refuse_past_budget(every, 0)
    with _LOCK:
        saved_root = xacro.root_dir
        try:
            with _patched(xacro, search_paths, file, stderr, table, warnings, len(every)):
                xacro.init_stacks(None if file == "<string>" else os.path.abspath(file))
                xacro.root_dir = os.curdir
                doc = xacro.parse(source)
                _tag_lines(doc, every)
                xacro.process_doc(doc, mappings=mappings)
                out = str(doc.toprettyxml(indent="  "))  # as the xacro command writes it
        except DiagnosticError as exc:  # e.g. an include that cannot be read: at the xacro:include line
            where = _failing_element(exc)
            first = exc.diagnostics[0]
            if where is None or first.line is not None:
                raise
            raise type(exc)([dataclasses.replace(first, file=where[0], line=where[1]),
                             *exc.diagnostics[1:]]) from None
        except RobotStateFormatError:
            raise
        except xml.parsers.expat.ExpatError as exc:
            raise ModelError(Diagnostic("XACRO_SYNTAX", f"malformed XML: {exc}", file,
                                        getattr(exc, "lineno", None))) from None
        except Exception as exc:  # noqa: BLE001 xacro raises XacroException, NameError, KeyError, ... from user code
            raise ModelError(_failure(exc, file, plain)) from None
        finally:
            xacro.root_dir = saved_root
            xacro.filestack = None
            xacro.macrostack = None
    for line in stderr.getvalue().splitlines():
        if line.strip() and xacro_log is not None:
            xacro_log.append(line.strip())
        elif line.strip():
            _log.warning("%s: xacro: %s", file, line.strip())
    expansion = _strip_marks(out, file, table)
    expansion.warnings = warnings
    return expansion


def _failure(exc: Exception, file: str, plain: str) -> Diagnostic:
    """The diagnostic of an exception an expansion of ``file`` (its text ``plain``) raised: a package
    ``$(find)`` did not find, an undefined argument, or xacro's (or the document's code's) own error, at
    the element that failed."""
    cause = getattr(exc, "exc", None)  # xacro wraps what an expression raised
    at: tuple[str, int | None] = _failing_element(exc) or (file, None)
    if isinstance(cause, _IncludeUnreadable):
        return Diagnostic("XACRO_INCLUDE", f"cannot read included file {cause.path}: {cause.reason}", at[0], at[1])
    missing = next((e for e in (exc, cause) if isinstance(e, _PackageNotFound)), None)
    if missing is not None:
        return Diagnostic("MODEL_PACKAGE_NOT_FOUND", f"$(find {missing.name}): package {missing.name!r} "
                          f"{NOT_FOUND_HOW}", at[0], at[1])
    arg = next((e for e in (cause, exc) if isinstance(e, _substitution_args.ArgException)), None)
    if arg is not None:
        return Diagnostic("XACRO_UNDEFINED_ARG", f"undefined xacro argument {arg} (pass it as {arg}:=VALUE)",
                          at[0], at[1])
    msg = "xacro: " + re.sub(r"\s*\n\s*", "; ", str(exc).strip() or type(exc).__name__)
    at, msg = _expression_site(msg, at, file, plain)
    return Diagnostic("XACRO_ERROR", msg, at[0], at[1])


_ENTRY = ChildEntry(__name__, "serve_expansion", "prepare_child")  # serve_expansion, defined below
_LIMITS = ("MAX_DOCUMENT_BYTES", "MAX_XML_ELEMENTS", "MAX_NUMBERS_PER_LIST", "MAX_XACRO_ELEMENTS")


def _limit_values() -> dict[str, int]:
    return {name: int(getattr(limits, name)) for name in _LIMITS}


def _limit_message(exc: ChildFailed) -> tuple[str, str]:
    what = "expanding the xacro document"
    bounds = {  # the bound a child hit: its code and what it says, the variable that sets it named
        "cpu": ("XACRO_LIMIT", f"used more than the CPU-time limit of {limits.MAX_XACRO_CPU_SECONDS} s "
                "(RSF_MAX_XACRO_CPU_SECONDS)"),
        "memory": ("XACRO_LIMIT", f"needed more than the memory limit of {limits.MAX_XACRO_MEMORY_BYTES >> 20} MiB "
                   "(RSF_MAX_XACRO_MEMORY_BYTES)"),
        "wall": ("XACRO_LIMIT", f"took longer than the time limit of {limits.MAX_XACRO_SECONDS:g} s "
                 "(RSF_MAX_XACRO_SECONDS)"),
        "output": ("XACRO_LIMIT", f"gave more than the output-size limit of {limits.MAX_DOCUMENT_BYTES} bytes "
                   "(RSF_MAX_DOCUMENT_BYTES)"),
        "interrupted": ("XACRO_ERROR", "was stopped: the process is stopping"),
        "recursion": ("XACRO_TOO_LARGE", "nests deeper than Python's recursion limit (a macro calling itself?)"),
    }
    code, text = bounds.get(exc.limit or "", ("XACRO_ERROR", f"failed: {exc.detail or exc.limit}"))
    return code, f"{what} {text}"


def prepare_child() -> None:
    """Import what :func:`serve_expansion` needs (the child is confined afterwards: no more imports)."""
    if _PREPARED:
        return
    yaml.safe_load  # noqa: B018 - xacro.load_yaml imports it when called
    expand_in_process(_WARM_UP, file="<warm-up>", xacro_log=[])  # every module an expansion imports lazily
    _PREPARED.append(True)


_PREPARED: list[bool] = []  # prepare_child ran in this process


_WARM_UP = ('<robot xmlns:xacro="http://www.ros.org/wiki/xacro" name="w"><xacro:arg name="a" default="1"/>'
            '<xacro:property name="p" value="${2*pi}"/><xacro:macro name="m" params="n *b"><link name="${n}">'
            '<xacro:insert_block name="b"/></link></xacro:macro><xacro:m n="l$(arg a)"><visual/></xacro:m>'
            '<xacro:if value="${p &gt; 1}"><link name="${\'x\' + str(p)}"/></xacro:if>'
            '<xacro:element xacro:name="link" name="e"/></robot>')


def _root_cause(exc: BaseException) -> BaseException | None:
    """A MemoryError or RecursionError anywhere in the chain of ``exc`` (xacro wraps what it catches)."""
    seen: set[int] = set()
    todo: list[BaseException | None] = [exc]
    while todo:
        e = todo.pop()
        if e is None or id(e) in seen:
            continue
        seen.add(id(e))
        if isinstance(e, (MemoryError, RecursionError)):
            return e
        inner = getattr(e, "exc", None)
        todo.extend([e.__cause__, e.__context__, inner if isinstance(inner, BaseException) else None])
    return None


def _diagnostic_dict(d: Diagnostic) -> dict[str, Any]:
    return {"code": d.code, "message": d.message, "file": d.file, "line": d.line, "element": d.element,
            "severity": d.severity.value}


def serve_expansion(request: dict[str, Any]) -> dict[str, Any]:
    """The child's side of :func:`expand_xacro_mapped`: the expansion, or the error, as JSON data."""
    for name, value in request["limits"].items():
        setattr(limits, name, int(value))
    text: str | bytes = base64.b64decode(request["bytes"]) if "bytes" in request else str(request["text"])
    log: list[str] = []
    try:
        expansion = expand_in_process(text, file=request["file"], args=request["args"],
                                      search_paths=request["search_paths"], xacro_log=log)
    except (DiagnosticError, ModelIOError) as exc:
        cause = _root_cause(exc)
        if cause is not None:
            return {"limit": "memory" if isinstance(cause, MemoryError) else "recursion"}
        diagnostics = exc.diagnostics if isinstance(exc, DiagnosticError) else []
        return {"error": type(exc).__name__, "message": str(exc),
                "diagnostics": [_diagnostic_dict(d) for d in diagnostics]}
    if len(expansion.text) > limits.MAX_DOCUMENT_BYTES:
        return {"limit": "output"}
    return {"text": expansion.text, "file": expansion.file, "lines": [[k, f, n] for k, (f, n) in expansion.lines.items()],
            "warnings": [_diagnostic_dict(d) for d in expansion.warnings], "log": log}


def _diagnostic_from(raw: Any) -> Diagnostic:
    """A diagnostic of the child's reply (data from a child that may have run hostile code: checked)."""
    if not isinstance(raw, dict):
        raise ValueError("not an object")
    line, element = raw.get("line"), raw.get("element")
    return Diagnostic(str(raw["code"]), str(raw["message"]), str(raw["file"]),
                      line if isinstance(line, int) and not isinstance(line, bool) else None,
                      element if isinstance(element, str) else None, Severity(str(raw["severity"])))


def _expansion_from(reply: dict[str, Any], file: str) -> XacroExpansion:
    try:
        if "error" in reply:
            diagnostics = [_diagnostic_from(d) for d in reply["diagnostics"]]
            if reply["error"] == "ModelIOError" or not diagnostics:
                raise ModelIOError(str(reply["message"]))
            raise ModelError(diagnostics)
        lines = {int(k): (str(f), int(n)) for k, f, n in reply["lines"]}
        expansion = XacroExpansion(str(reply["text"]), file, lines, [_diagnostic_from(d) for d in reply["warnings"]])
        log = [str(line) for line in reply.get("log", [])]
    except (KeyError, TypeError, ValueError) as exc:
        raise ModelError(Diagnostic("XACRO_ERROR", f"expanding the xacro document gave a malformed answer ({exc})",
                                    file, None)) from None
    for line in log[:100]:
        if line.strip():
            _log.warning("%s: xacro: %s", file, line.strip()[:500])
    return expansion


def _cleaned(text: str | bytes, file: str) -> str:
    """``text`` with the defects :func:`~robot_state_format.model.xml.tolerate` repairs removed
    (declarations blanked, cut at a NUL, decoded per the declaration); every line stays in place."""
    raw = encode_text(text, file) if isinstance(text, str) else bytes(text)
    cleaned, _ = tolerate(raw, file, decoded=isinstance(text, str))
    return cleaned.decode("utf-8", "replace").rstrip(" \t\r\n")


def _strip_marks(out: str, file: str, table: list[tuple[str, int]]) -> XacroExpansion:
    """Read the marks back (expanded line → source), then remove them; lines do not move."""
    lines: dict[int, tuple[str, int]] = {}
    for lineno, line in enumerate(out.splitlines(), start=1):
        m = _SOURCE_ATTRIBUTE_RE.search(line)
        if m is not None and int(m.group(1)) < len(table):
            lines[lineno] = table[int(m.group(1))]
    return XacroExpansion(_SOURCE_ATTRIBUTE_RE.sub("", out), file, lines)



def expand_xacro_file(path: str | os.PathLike[str], *, args: Mapping[str, str] | None = None,
                      search_paths: Sequence[str] = ()) -> str:
    """Expand the xacro file at ``path``; relative includes resolve against its directory."""
    p = Path(path)
    try:
        data = read_input_file(p)
    except OSError as exc:
        raise ModelIOError(f"{shown_path(p)}: cannot read: {exc.strerror or exc}") from None
    return expand_xacro(data, file=str(p), args=args, search_paths=search_paths)


