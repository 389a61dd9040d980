"""The context of one USDF read (diagnostics with file, line and element) and the per-element checks
and leaf readers shared by the detailed element readers (usdf/read_elements.py)."""

from __future__ import annotations

from lxml import etree

from robot_state_format import limits, numbers
from robot_state_format.errors import Diagnostic, Severity
from robot_state_format.model.xml import describe

XML_SPACE = " \t\n\r"
MAX_DIAGNOSTICS = 200

# The number grammar of the spec (also the XSD's) is robot_state_format.numbers': no nan/inf, no
# underscores, ASCII digits.  Texts longer than this skip the inline fast paths (bounded splitting).
FAST_TEXT = 2 * limits.MAX_NUMBERS_PER_LIST

MODEL_SINGLE = ("parent", "pose", "twist")
FRAME_CHILDREN = ("parent", "pose", "twist")
LINK_CHILDREN = ("pose", "twist", "wrench")
JOINT_CHILDREN = ("positions", "velocities", "torques")
CHILD_POSITION = {kind: {tag: i for i, tag in enumerate(order)} for kind, order in
             (("frame", FRAME_CHILDREN), ("link_state", LINK_CHILDREN), ("joint_state", JOINT_CHILDREN))}


class ReadContext:
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



def read_parent(el: etree._Element, ctx: ReadContext) -> str:
    if len(el) or el.keys():
        leaf_checks(el, ctx)
    text = (el.text or "").strip(XML_SPACE)
    return text or "world"


def read_vector(el: etree._Element, ctx: ReadContext, arity: int | None) -> tuple[float, ...] | None:
    if len(el) or el.keys():
        leaf_checks(el, ctx)
    text = el.text
    if text is None:
        text = ""
    # Fast path: ASCII without '_' that float() accepts and that sums finite is exactly the
    # spec grammar (float() alone would also take nan/inf, '1_0' and non-ASCII digits).
    if len(text) <= FAST_TEXT and text.isascii() and "_" not in text:
        try:
            vals = tuple(map(float, text.split()))
        except ValueError:
            vals = None
        if vals is not None:
            total = sum(vals)
            if (total - total == 0.0 and (arity is None or len(vals) == arity)
                    and (0.0 not in vals or not numbers.may_underflow(text))):
                return vals
    return read_vector_slow(el, ctx, arity, text)


def read_vector_slow(el: etree._Element, ctx: ReadContext, arity: int | None, text: str) -> tuple[float, ...] | None:
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


def read_name(el: etree._Element, ctx: ReadContext, *, scoped_ok: bool) -> str:
    name: str | None = el.get("name")
    if name is None:
        ctx.error("USDF_MISSING_NAME", f"<{el.tag}> needs a name attribute", el)
        return ""
    stripped = name.strip(XML_SPACE)
    if not stripped or name != stripped:
        ctx.error("USDF_BAD_NAME", f"name {name!r} is empty or has surrounding white space", el)
    elif scoped_ok:  # the root, link_state, joint_state
        pass
    elif "::" in name:
        ctx.error("USDF_BAD_NAME", f"name {name!r} must not contain '::' (reserved for scoping)", el)
    elif name == "world":  # frame, model_state
        ctx.error("USDF_BAD_NAME", "'world' is reserved for the absolute inertial frame", el)
    return name


def check_unique(name: str, el: etree._Element, seen: dict[str, etree._Element], ctx: ReadContext, what: str) -> None:
    if name in seen:
        ctx.error("USDF_DUPLICATE_NAME",
                  f"duplicate {what} name {name!r} (first on line {seen[name].sourceline})", el)
    else:
        seen[name] = el


def check_order(el: etree._Element, pos: int, last: int, order: tuple[str, ...], ctx: ReadContext) -> int:
    if pos < last:
        ctx.fault("USDF_ORDER", f"<{el.tag}> must come before <{order[last]}> (canonical order: "
                  f"{', '.join(order)})", el)
        return last
    return pos


def unknown_element(el: etree._Element, ctx: ReadContext, parent: str) -> None:
    ctx.fault("USDF_UNKNOWN_ELEMENT", f"unknown element <{el.tag}> in <{parent}>", el)


def check_attributes(el: etree._Element, allowed: tuple[str, ...], ctx: ReadContext) -> None:
    for key in el.attrib:
        if key not in allowed:
            ctx.fault("USDF_UNKNOWN_ATTRIBUTE", f"unknown attribute {key!r} on <{el.tag}>", el)


def own_checks(el: etree._Element, ctx: ReadContext) -> None:
    """A named container: only a name attribute, no text of its own."""
    if len(el.keys()) != 1:
        check_attributes(el, ("name",), ctx)
    text = el.text
    if text is not None and text.strip(XML_SPACE):
        ctx.error("USDF_UNEXPECTED_TEXT", f"<{el.tag}> holds text {text.strip()[:30]!r}", el)


def stray_text(child: etree._Element, ctx: ReadContext) -> None:
    parent = child.getparent()
    ctx.error("USDF_UNEXPECTED_TEXT", f"text {(child.tail or '').strip()[:30]!r} after <{child.tag}>", parent)


def leaf_checks(el: etree._Element, ctx: ReadContext) -> None:
    """A vector or parent element: no attributes, no child elements."""
    check_attributes(el, (), ctx)
    check_no_children(el, ctx)


def check_no_children(el: etree._Element, ctx: ReadContext) -> None:
    for child in el:
        if isinstance(child.tag, str):
            ctx.error("USDF_UNKNOWN_ELEMENT", f"<{el.tag}> holds text only, not <{child.tag}>", child)
