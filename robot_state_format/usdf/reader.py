"""Read USDF ``<world_state>`` documents (docs/usdf-spec.md) into :mod:`robot_state_format.usdf.types`.

Strict by default: every fault (malformed XML, unknown element or attribute, wrong arity,
non-numeric or non-finite number, duplicate name or element, children out of the canonical
order, bad stamp, unknown parent, parent cycle) is collected as a :class:`Diagnostic` with
file, line and element, and one :class:`UsdfError` lists them all.  ``lenient=True`` accepts
more of the proposal's looseness (any child order, unknown elements) with warnings, returned in
:attr:`ReadResult.warnings`. In both modes the proposal's root ``<world>`` and a missing ``version``
(the proposal defines none: the current version is meant) are warnings, so the proposal's own
example, its XML typos mended, validates.

Speed: a model_state in the common shape is read in bulk (:func:`_fast_model`: structure proven
by XPath counts, all numbers of a kind parsed in one pass); anything it cannot prove clean goes
through the detailed per-element readers, which alone produce diagnostics.
"""

from __future__ import annotations

import os
import re
import threading
from itertools import chain, islice, repeat
from operator import attrgetter
from dataclasses import dataclass, field
from pathlib import Path

from lxml import etree

from robot_state_format.errors import Diagnostic, Severity, UsdfError
from robot_state_format import limits, numbers
from robot_state_format.model.xml import describe, parse_xml, safe_parser
from robot_state_format.usdf.extension import extension_element
from robot_state_format.usdf.types import (
    FrameState,
    JointState,
    LinkState,
    ModelState,
    Stamp,
    WorldState,
)

SUPPORTED_MAJOR = "1"
_XML_SPACE = " \t\n\r"
MAX_DIAGNOSTICS = 200

# The number grammar of the spec (also the XSD's) is robot_state_format.numbers': no nan/inf, no
# underscores, ASCII digits.  Texts longer than this skip the inline fast paths (bounded splitting).
_FAST_TEXT = 2 * limits.MAX_NUMBERS_PER_LIST
_INT_RE = re.compile(r"[ \t\r\n]*+[+]?[0-9]++[ \t\r\n]*+")

_MODEL_SINGLE = ("parent", "pose", "twist")
_MODEL_MULTI = ("link_state", "joint_state", "model_state")
_FRAME_CHILDREN = ("parent", "pose", "twist")
_LINK_CHILDREN = ("pose", "twist", "wrench")
_JOINT_CHILDREN = ("positions", "velocities", "torques")
_POSITION = {kind: {tag: i for i, tag in enumerate(order)} for kind, order in
             (("frame", _FRAME_CHILDREN), ("link_state", _LINK_CHILDREN), ("joint_state", _JOINT_CHILDREN))}


@dataclass
class ReadResult:
    state: WorldState
    warnings: list[Diagnostic] = field(default_factory=list)


class _Ctx:
    __slots__ = ("errors", "file", "lenient", "plain", "warnings")

    def __init__(self, file: str, lenient: bool) -> None:
        self.file = file
        self.lenient = lenient
        self.plain = False  # the tree came from _fast_parse: elements and text only, no entity nodes
        self.errors: list[Diagnostic] = []
        self.warnings: list[Diagnostic] = []

    def error(self, code: str, msg: str, el: etree._Element | None) -> None:
        if len(self.errors) < MAX_DIAGNOSTICS:
            self.errors.append(Diagnostic(code, msg, self.file, _line(el), _where(el)))

    def warn(self, code: str, msg: str, el: etree._Element | None) -> None:
        self.warnings.append(Diagnostic(code, msg, self.file, _line(el), _where(el), Severity.WARNING))

    def fault(self, code: str, msg: str, el: etree._Element | None) -> None:
        """An error in strict mode, a warning in lenient mode."""
        (self.warn if self.lenient else self.error)(code, msg, el)


def _line(el: etree._Element | None) -> int | None:
    return None if el is None else el.sourceline


def _where(el: etree._Element | None) -> str | None:
    return None if el is None else describe(el)


def read_world_state(data: str | bytes, *, file: str = "<string>", lenient: bool = False) -> WorldState:
    """Parse a USDF document; raise :class:`UsdfError` listing every fault."""
    return read_world_state_ex(data, file=file, lenient=lenient).state


def read_world_state_file(path: str | os.PathLike[str], *, lenient: bool = False) -> WorldState:
    """Read a USDF file; an unreadable file is a ``USDF_IO`` error."""
    return read_world_state_file_ex(path, lenient=lenient).state


def read_world_state_file_ex(path: str | os.PathLike[str], *, lenient: bool = False) -> ReadResult:
    p = Path(path)
    try:
        data = limits.read_input_file(p)
    except OSError as exc:
        raise UsdfError(Diagnostic("USDF_IO", f"cannot read: {exc.strerror or exc}", str(p), None)) from None
    return read_world_state_ex(data, file=str(p), lenient=lenient)


def read_world_state_ex(data: str | bytes, *, file: str = "<string>", lenient: bool = False) -> ReadResult:
    """Like :func:`read_world_state`, also returning the warnings."""
    try:
        fast = _fast_parse(data)
        xml_warnings: list[Diagnostic] = []
        if fast is not None:
            root = fast
        else:
            root, xml_warnings = parse_xml(data, file, error_type=UsdfError, code_prefix="USDF_XML")
    except UsdfError as exc:
        if exc.code == "USDF_XML_SYNTAX":
            more = find_syntax_faults(data, file)
            if more:
                raise UsdfError(more) from None
        raise
    _check_number_count(data, root, file)
    ctx = _Ctx(file, lenient)
    ctx.warnings.extend(xml_warnings)
    # the bulk reading of _fast_model relies on a tree of elements and text only
    ctx.plain = fast is not None and next(fast.iter(etree.Comment, etree.ProcessingInstruction), None) is None
    state = _read_root(root, ctx)
    if not ctx.errors:
        from robot_state_format.usdf.resolve import parent_diagnostics

        for d in parent_diagnostics(state, file=file, lines=_parent_lines(root)):
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
        root = etree.fromstring(raw, safe_parser())
    except (etree.LxmlError, ValueError):
        return None
    if root is None or next(root.iter(etree.Entity), None) is not None:
        return None
    if root.getroottree().docinfo.internalDTD is not None:  # the entity policy is parse_xml's
        return None
    return root


_LOCAL = threading.local()


# ---------------------------------------------------------------------------------------------
# element readers


def _read_root(root: etree._Element, ctx: _Ctx) -> WorldState:
    tag = root.tag
    if tag == "world":  # the proposal's own example uses it: read as <world_state>, with a warning
        ctx.warn("USDF_ROOT_SPELLING", "root <world> is the proposal's spelling; read as <world_state>", root)
    elif tag != "world_state":
        ctx.error("USDF_ROOT", f"root element must be <world_state>, not <{tag}>", root)
        return WorldState(name="")
    name = _name(root, ctx, scoped_ok=True)
    version = root.get("version")
    if version is None:  # the proposal defines no version: the current one (a warning)
        ctx.warn("USDF_VERSION_MISSING", 'no version attribute: read as the current version "1.0"', root)
        version = "1.0"
    elif version.split(".")[0] != SUPPORTED_MAJOR or not re.fullmatch(r"[0-9]+\.[0-9]+", version):
        ctx.error("USDF_VERSION_UNSUPPORTED", f"version {version!r} is not supported (major 1 only)", root)
    _check_attributes(root, ("name", "version"), ctx)
    if root.text is not None and root.text.strip(_XML_SPACE):
        ctx.error("USDF_UNEXPECTED_TEXT", f"<{root.tag}> holds text {root.text.strip()[:30]!r}", root)
    state = WorldState(name=name, version=version)
    seen: dict[str, etree._Element] = {}
    index = 0
    for child in root:
        tail = child.tail
        if tail is not None and tail.strip(_XML_SPACE):
            _stray(child, ctx)
        ctag = child.tag
        if not isinstance(ctag, str):
            continue
        if ctag == "stamp":
            if state.stamp is not None:
                ctx.error("USDF_DUPLICATE_ELEMENT", "more than one <stamp>", child)
            elif index > 0:
                ctx.fault("USDF_ORDER", "<stamp> must be the first child of <world_state>", child)
            state.stamp = _read_stamp(child, ctx)
        elif ctag == "frame":
            fs = _read_frame(child, ctx)
            _unique(fs.name, child, seen, ctx, "frame or model_state")
            state.frames.append(fs)
        elif ctag == "model_state":
            ms = _read_model(child, ctx, top=True)
            _unique(ms.name, child, seen, ctx, "frame or model_state")
            state.model_states.append(ms)
        elif ctag.startswith("{"):  # a foreign namespace: an extension, kept verbatim (usdf/extension.py)
            state.extensions.append(extension_element(child))
        else:
            _unknown(child, ctx, "world_state")
        index += 1
    return state


def _read_stamp(el: etree._Element, ctx: _Ctx) -> Stamp | None:
    _check_attributes(el, ("sec", "nanosec"), ctx)
    _check_no_children(el, ctx)
    vals: list[int] = []
    for attr, upper in (("sec", None), ("nanosec", 10**9)):
        text = el.get(attr)
        if text is None:
            if attr == "sec":
                ctx.error("USDF_BAD_STAMP", "<stamp> needs a sec attribute", el)
                return None
            text = "0"
        if not _INT_RE.fullmatch(text) or len(text.strip(_XML_SPACE)) > 30:
            ctx.error("USDF_BAD_STAMP", f"{attr}={text!r} is not a non-negative integer", el)
            return None
        v = int(text)
        if upper is not None and v >= upper:
            ctx.error("USDF_BAD_STAMP", f"nanosec={v} must be below 1000000000", el)
            return None
        vals.append(v)
    return Stamp(vals[0], vals[1])


def _read_leaves(el: etree._Element, ctx: _Ctx, obj: FrameState | LinkState | JointState,
                 order: tuple[str, ...], arity: int | None, kind: str) -> None:
    """Read the leaf children of a named container into ``obj``'s same-named fields.

    Each child may appear once, in ``order``; ``parent`` holds a name, the rest numbers
    (``arity`` of them, or any number when None).
    """
    last = -1
    positions = _POSITION[kind]
    _own_checks(el, ctx)
    for child in el:
        tail = child.tail
        if tail is not None and tail.strip(_XML_SPACE):
            _stray(child, ctx)
        ctag = child.tag
        pos = positions.get(ctag)
        if pos is None:
            if isinstance(ctag, str):
                _unknown(child, ctx, kind)
            continue
        if pos > last:  # beyond every earlier child: neither out of order nor a duplicate
            last = pos
        else:
            if pos < last:
                last = _order(child, pos, last, order, ctx)
            if getattr(obj, ctag) is not None:
                ctx.error("USDF_DUPLICATE_ELEMENT", f"more than one <{ctag}>", child)
        if ctag == "parent":
            setattr(obj, ctag, _read_parent(child, ctx))
            continue
        # _vector, inlined for the common case (same checks, same result)
        if len(child) or child.keys():
            _leaf_checks(child, ctx)
        text = child.text
        if text is None:
            text = ""
        if len(text) <= _FAST_TEXT and text.isascii() and "_" not in text:
            try:
                vals = tuple(map(float, text.split()))
            except ValueError:
                pass
            else:
                total = sum(vals)
                if (total - total == 0.0 and (arity is None or len(vals) == arity)
                        and (0.0 not in vals or not numbers.may_underflow(text))):
                    setattr(obj, ctag, vals)
                    continue
        setattr(obj, ctag, _vector_slow(child, ctx, arity, text))


def _read_frame(el: etree._Element, ctx: _Ctx) -> FrameState:
    fs = FrameState(name=_name(el, ctx, scoped_ok=False))
    _read_leaves(el, ctx, fs, _FRAME_CHILDREN, 6, "frame")
    return fs


def _read_model(el: etree._Element, ctx: _Ctx, *, top: bool) -> ModelState:
    if ctx.plain:
        fast = _fast_model(el, top)
        if fast is not None:
            return fast
    name = _name(el, ctx, scoped_ok=False)
    ms = ModelState(name=name)
    links: dict[str, etree._Element] = {}
    joints: dict[str, etree._Element] = {}
    models: dict[str, etree._Element] = {}
    last = -1
    order = _MODEL_SINGLE + ("*",)
    _own_checks(el, ctx)
    for child in el:
        tail = child.tail
        if tail is not None and tail.strip(_XML_SPACE):
            _stray(child, ctx)
        ctag = child.tag
        if not isinstance(ctag, str):
            continue
        if ctag == "link_state":
            last = 3  # the last canonical position: never out of order
            ls = LinkState(name=_name(child, ctx, scoped_ok=True))
            _read_leaves(child, ctx, ls, _LINK_CHILDREN, 6, "link_state")
            if ls.name in links:
                _unique(ls.name, child, links, ctx, "link_state")
            else:
                links[ls.name] = child
            ms.link_states.append(ls)
        elif ctag == "joint_state":
            last = 3
            js = _read_joint(child, ctx)
            if js.name in joints:
                _unique(js.name, child, joints, ctx, "joint_state")
            else:
                joints[js.name] = child
            ms.joint_states.append(js)
        elif ctag == "model_state":
            last = 3
            nested = _read_model(child, ctx, top=False)
            _unique(nested.name, child, models, ctx, "model_state")
            ms.model_states.append(nested)
        elif ctag == "parent":
            last = _order(child, 0, last, order, ctx)
            if not top:
                ctx.error("USDF_NESTED_PARENT",
                          "a nested model_state has no <parent>: its pose is relative to the enclosing model",
                          child)
            if ms.parent is not None:
                ctx.error("USDF_DUPLICATE_ELEMENT", "more than one <parent>", child)
            ms.parent = _read_parent(child, ctx)
        elif ctag == "pose":
            last = _order(child, 1, last, order, ctx)
            if ms.pose is not None:
                ctx.error("USDF_DUPLICATE_ELEMENT", "more than one <pose>", child)
            ms.pose = _vector(child, ctx, 6)  # type: ignore[assignment]
        elif ctag == "twist":
            last = _order(child, 2, last, order, ctx)
            if ms.twist is not None:
                ctx.error("USDF_DUPLICATE_ELEMENT", "more than one <twist>", child)
            ms.twist = _vector(child, ctx, 6)  # type: ignore[assignment]
        else:
            _unknown(child, ctx, "model_state")
    return ms


def _ordered_subsets(order: tuple[str, ...]) -> dict[tuple[str, ...], tuple[int, ...]]:
    """Every valid child sequence of a container (canonical order, each at most once) → the
    positions of its tags in ``order``."""
    out: dict[tuple[str, ...], tuple[int, ...]] = {}
    for mask in range(1 << len(order)):
        idx = tuple(i for i in range(len(order)) if mask >> i & 1)
        out[tuple(order[i] for i in idx)] = idx
    return out


_LINK_LAYOUTS = _ordered_subsets(_LINK_CHILDREN)
_JOINT_LAYOUTS = _ordered_subsets(_JOINT_CHILDREN)
_MODEL_HEAD = {"parent": 0, "pose": 1, "twist": 2}
_TAG = attrgetter("tag")
_TEXT = attrgetter("text")


class _XPaths:
    """Compiled XPath queries of the fast path (one set per thread, like the parser)."""

    def __init__(self) -> None:
        x = etree.XPath
        self.links = x("link_state")
        self.joints = x("joint_state")
        self.link_names = x("link_state/@name", smart_strings=False)
        self.joint_names = x("joint_state/@name", smart_strings=False)
        self.link_leaves = x("link_state/*")
        self.joint_leaves = x("joint_state/*")
        self.elements = x("count(.//*)")
        self.attributes = x("count(.//@*)")
        self.loose_text = x("text() | link_state/text() | joint_state/text()", smart_strings=False)


def _xpaths() -> _XPaths:
    xp = getattr(_LOCAL, "xpaths", None)
    if xp is None:
        xp = _LOCAL.xpaths = _XPaths()
    return xp


def _plain_names(names: list[str]) -> bool:
    """Every name non-empty, without surrounding white space, and unique."""
    return ("" not in names and len(set(names)) == len(names)
            and list(map(str.strip, names, repeat(_XML_SPACE, len(names)))) == names)


def _bulk_vectors(texts: list[str | None]) -> tuple[list[float], list[int]] | None:
    """All numbers of ``texts`` and how many each holds, when every token is in the spec grammar
    (the test of :func:`_vector`: ASCII, no '_', float() accepts it, finite); None otherwise."""
    if None in texts:
        texts = ["" if t is None else t for t in texts]
    if texts and max(map(len, texts)) > _FAST_TEXT:  # type: ignore[arg-type]
        return None
    joined = "".join(texts)  # type: ignore[arg-type]
    if not joined.isascii() or "_" in joined:
        return None
    splits = list(map(str.split, texts))  # type: ignore[arg-type]
    try:
        vals = list(map(float, chain.from_iterable(splits)))
    except ValueError:
        return None
    total = sum(vals)
    if total - total != 0.0:
        return None
    if 0.0 in vals and numbers.may_underflow(joined):  # the detailed path warns, or finds none
        flat = list(chain.from_iterable(splits))
        if numbers.zero_underflows(flat, vals):
            return None
    return vals, list(map(len, splits))


def _columns(containers: list[etree._Element], leaves: list[etree._Element],
             layouts: dict[tuple[str, ...], tuple[int, ...]], nfields: int,
             vectors: list[tuple[float, ...]]) -> list[list[object]] | None:
    """One list per field (None where a container lacks it), or None when a container's
    children are not a valid sequence (``layouts``)."""
    n = len(containers)
    tags = list(map(_TAG, leaves))
    counts = list(map(len, containers))
    k = counts[0] if n else 0
    columns: list[list[object]] = [[None] * n for _ in range(nfields)]
    if counts.count(k) == n and tags == tags[:k] * n:  # every container alike (the common case)
        idx = layouts.get(tuple(tags[:k]))
        if idx is None:
            return None
        for i, f in enumerate(idx):
            columns[f] = vectors[i::k]  # type: ignore[assignment]
        return columns
    at = 0
    for j, c in enumerate(counts):
        idx = layouts.get(tuple(tags[at:at + c]))
        if idx is None:
            return None
        for f in idx:
            columns[f][j] = vectors[at]
            at += 1
    return columns


def _fast_model(el: etree._Element, top: bool) -> ModelState | None:
    """A model_state in the common shape (parent?, pose?, twist?, then link_state and joint_state
    elements holding plain leaves) read in bulk, or None when the detailed path must decide.

    Returns a state only when the detailed path would report nothing and build the same state.
    """
    name = el.get("name")
    if (name is None or len(el.keys()) != 1 or not name or name != name.strip(_XML_SPACE) or "::" in name
            or name == "world"):
        return None
    text = el.text
    if text is not None and text.strip(_XML_SPACE):
        return None
    ms = ModelState(name=name)
    last = -1
    head = 0
    for child in el:  # the leaves before the first link_state or joint_state
        tag = child.tag
        if tag == "link_state" or tag == "joint_state":
            break
        tail = child.tail
        if tail is not None and tail.strip(_XML_SPACE):
            return None
        pos = _MODEL_HEAD.get(tag) if isinstance(tag, str) else None
        if pos is None or pos <= last or len(child) or child.keys():
            return None
        last = pos
        head += 1
        if pos == 0:
            if not top:
                return None
            ms.parent = (child.text or "").strip(_XML_SPACE) or "world"
        else:
            got = _bulk_vectors([child.text])
            if got is None or got[1][0] != 6:
                return None
            if pos == 1:
                ms.pose = tuple(got[0])  # type: ignore[assignment]
            else:
                ms.twist = tuple(got[0])  # type: ignore[assignment]
    xp = _xpaths()
    links = xp.links(el)
    joints = xp.joints(el)
    if len(el) != head + len(links) + len(joints):  # something else, or a leaf after a container
        return None
    if not links and not joints:
        return ms
    link_names = xp.link_names(el)
    joint_names = xp.joint_names(el)
    link_leaves = xp.link_leaves(el)
    joint_leaves = xp.joint_leaves(el)
    # each container has a name and nothing else, leaves have neither attributes nor children,
    # and no text lies between elements
    if (len(link_names) != len(links) or len(joint_names) != len(joints)
            or xp.attributes(el) != 1 + len(links) + len(joints)
            or xp.elements(el) != head + len(links) + len(joints) + len(link_leaves) + len(joint_leaves)
            or "".join(xp.loose_text(el)).strip(_XML_SPACE)
            or not _plain_names(link_names) or not _plain_names(joint_names)):
        return None
    if links:
        got = _bulk_vectors(list(map(_TEXT, link_leaves)))
        if got is None or got[1].count(6) != len(link_leaves):
            return None
        sixes = list(zip(*[iter(got[0])] * 6))
        cols = _columns(links, link_leaves, _LINK_LAYOUTS, 3, sixes)
        if cols is None:
            return None
        ms.link_states = list(map(LinkState, link_names, *cols))
    if joints:
        got = _bulk_vectors(list(map(_TEXT, joint_leaves)))
        if got is None:
            return None
        vals, lens = got
        k = lens[0] if lens else 0
        if k and lens.count(k) == len(lens):  # one size for all (one DOF each, say)
            vecs = list(zip(*[iter(vals)] * k))
        else:
            vecs = list(map(tuple, map(islice, repeat(iter(vals), len(lens)), lens)))
        cols = _columns(joints, joint_leaves, _JOINT_LAYOUTS, 3, vecs)
        if cols is None:
            return None
        _, vel, torq = cols
        for v, t in zip(vel, torq):
            if v is not None and t is not None and len(v) != len(t):  # type: ignore[arg-type]
                return None
        ms.joint_states = list(map(JointState, joint_names, *cols))
    return ms


def _read_link(el: etree._Element, ctx: _Ctx) -> LinkState:
    ls = LinkState(name=_name(el, ctx, scoped_ok=True))
    _read_leaves(el, ctx, ls, _LINK_CHILDREN, 6, "link_state")
    return ls


def _read_joint(el: etree._Element, ctx: _Ctx) -> JointState:
    js = JointState(name=_name(el, ctx, scoped_ok=True))
    _read_leaves(el, ctx, js, _JOINT_CHILDREN, None, "joint_state")
    if js.velocities is not None and js.torques is not None and len(js.velocities) != len(js.torques):
        ctx.error("USDF_DOF_MISMATCH",
                  f"{len(js.velocities)} velocities but {len(js.torques)} torques (one each per DOF)", el)
    return js


# ---------------------------------------------------------------------------------------------
# leaves and checks


def _read_parent(el: etree._Element, ctx: _Ctx) -> str:
    if len(el) or el.keys():
        _leaf_checks(el, ctx)
    text = (el.text or "").strip(_XML_SPACE)
    return text or "world"


def _vector(el: etree._Element, ctx: _Ctx, arity: int | None) -> tuple[float, ...] | None:
    if len(el) or el.keys():
        _leaf_checks(el, ctx)
    text = el.text
    if text is None:
        text = ""
    # Fast path: ASCII without '_' that float() accepts and that sums finite is exactly the
    # spec grammar (float() alone would also take nan/inf, '1_0' and non-ASCII digits).
    if len(text) <= _FAST_TEXT and text.isascii() and "_" not in text:
        try:
            vals = tuple(map(float, text.split()))
        except ValueError:
            vals = None
        if vals is not None:
            total = sum(vals)
            if (total - total == 0.0 and (arity is None or len(vals) == arity)
                    and (0.0 not in vals or not numbers.may_underflow(text))):
                return vals
    return _vector_slow(el, ctx, arity, text)


def _vector_slow(el: etree._Element, ctx: _Ctx, arity: int | None, text: str) -> tuple[float, ...] | None:
    """:func:`robot_state_format.numbers.parse_numbers`, its refusals as diagnostics."""
    try:
        words = numbers.split_bounded(text)
        if arity is not None and len(words) != arity:
            ctx.error("USDF_ARITY", f"<{el.tag}> needs {arity} numbers, got {len(words)}", el)
            return None
        got = numbers.parse_words(words)
    except numbers.NumberError as exc:
        if exc.kind == numbers.TOO_MANY:
            ctx.error("USDF_ARITY", f"<{el.tag}> holds {exc}", el)
        elif exc.kind in (numbers.NON_FINITE, numbers.OVERFLOW):
            ctx.error("USDF_NON_FINITE", f"<{el.tag}> holds a value that is not finite: {exc}", el)
        else:
            ctx.error("USDF_NOT_A_NUMBER", f"<{el.tag}> holds non-numbers: {exc}", el)
        return None
    if got.underflows:
        ctx.warn("USDF_NUMBER_UNDERFLOW", f"<{el.tag}>: {', '.join(got.underflows[:5])} underflow(s) to 0.0", el)
    return got.values


def _name(el: etree._Element, ctx: _Ctx, *, scoped_ok: bool) -> str:
    name = el.get("name")
    if name is None:
        ctx.error("USDF_MISSING_NAME", f"<{el.tag}> needs a name attribute", el)
        return ""
    stripped = name.strip(_XML_SPACE)
    if not stripped or name != stripped:
        ctx.error("USDF_BAD_NAME", f"name {name!r} is empty or has surrounding white space", el)
    elif scoped_ok:  # the root, link_state, joint_state
        pass
    elif "::" in name:
        ctx.error("USDF_BAD_NAME", f"name {name!r} must not contain '::' (reserved for scoping)", el)
    elif name == "world":  # frame, model_state
        ctx.error("USDF_BAD_NAME", "'world' is reserved for the absolute inertial frame", el)
    return name


def _unique(name: str, el: etree._Element, seen: dict[str, etree._Element], ctx: _Ctx, what: str) -> None:
    if name in seen:
        ctx.error("USDF_DUPLICATE_NAME",
                  f"duplicate {what} name {name!r} (first on line {seen[name].sourceline})", el)
    else:
        seen[name] = el


def _order(el: etree._Element, pos: int, last: int, order: tuple[str, ...], ctx: _Ctx) -> int:
    if pos < last:
        ctx.fault("USDF_ORDER", f"<{el.tag}> must come before <{order[last]}> (canonical order: "
                  f"{', '.join(order)})", el)
        return last
    return pos


def _unknown(el: etree._Element, ctx: _Ctx, parent: str) -> None:
    ctx.fault("USDF_UNKNOWN_ELEMENT", f"unknown element <{el.tag}> in <{parent}>", el)


def _check_attributes(el: etree._Element, allowed: tuple[str, ...], ctx: _Ctx) -> None:
    for key in el.attrib:
        if key not in allowed:
            ctx.fault("USDF_UNKNOWN_ATTRIBUTE", f"unknown attribute {key!r} on <{el.tag}>", el)


def _own_checks(el: etree._Element, ctx: _Ctx) -> None:
    """A named container: only a name attribute, no text of its own."""
    if len(el.keys()) != 1:
        _check_attributes(el, ("name",), ctx)
    text = el.text
    if text is not None and text.strip(_XML_SPACE):
        ctx.error("USDF_UNEXPECTED_TEXT", f"<{el.tag}> holds text {text.strip()[:30]!r}", el)


def _stray(child: etree._Element, ctx: _Ctx) -> None:
    parent = child.getparent()
    ctx.error("USDF_UNEXPECTED_TEXT", f"text {(child.tail or '').strip()[:30]!r} after <{child.tag}>", parent)


def _leaf_checks(el: etree._Element, ctx: _Ctx) -> None:
    """A vector or parent element: no attributes, no child elements."""
    _check_attributes(el, (), ctx)
    _check_no_children(el, ctx)


def _check_no_children(el: etree._Element, ctx: _Ctx) -> None:
    for child in el:
        if isinstance(child.tag, str):
            ctx.error("USDF_UNKNOWN_ELEMENT", f"<{el.tag}> holds text only, not <{child.tag}>", child)


def _parent_lines(root: etree._Element) -> dict[str, int]:
    """``frame:NAME`` / ``model_state:NAME`` → source line, for parent diagnostics."""
    out: dict[str, int] = {}
    for child in root:
        if child.tag in ("frame", "model_state"):
            out.setdefault(f"{child.tag}:{child.get('name')}", child.sourceline or 0)
    return out


# ---------------------------------------------------------------------------------------------
# locating every syntax fault of a malformed document

_MISMATCH_RE = re.compile(r"Opening and ending tag mismatch: (\S+) line (\d+) and (\S+)")


def _syntax_parser() -> etree.XMLParser:
    return safe_parser()


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
            etree.fromstring(raw, _syntax_parser())
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


_DECL_BLANK = re.compile(rb"<\?xml\b[^?]*+\?>")


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
    for m in re.finditer(rb"=\s*+([\"'])", seg):
        pass
    if m is None or seg.count(m.group(1), m.end()) or raw.rfind(b"<", 0, start + m.start()) == -1:
        return None
    return start + m.start(1)
