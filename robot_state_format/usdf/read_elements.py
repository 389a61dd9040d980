"""The detailed USDF element readers: every fault becomes a diagnostic (usdf/read_context.py);
plain model_states take the bulk path first (usdf/read_bulk.py)."""

from __future__ import annotations

import re
from typing import cast

from lxml import etree

from robot_state_format import numbers
from robot_state_format.usdf.extension import extension_element
from robot_state_format.usdf.read_bulk import fast_model
from robot_state_format.usdf.read_context import (
    CHILD_POSITION,
    FAST_TEXT,
    FRAME_CHILDREN,
    JOINT_CHILDREN,
    LINK_CHILDREN,
    MODEL_SINGLE,
    XML_SPACE,
    ReadContext,
    check_attributes,
    check_no_children,
    check_order,
    check_unique,
    leaf_checks,
    own_checks,
    read_name,
    read_parent,
    read_vector,
    read_vector_slow,
    stray_text,
    unknown_element,
)
from robot_state_format.usdf.types import (
    FrameState,
    JointState,
    LinkState,
    ModelState,
    Stamp,
    Vec6,
    WorldState,
)

SUPPORTED_MAJOR = "1"
MAX_SEC_DIGITS = 30
"""The longest ``<stamp sec=...>`` read (and ``--stamp`` taken): beyond any clock, bounded conversion."""
_INT_RE = re.compile(r"[ \t\r\n]*[+]?[0-9]+[ \t\r\n]*")


def read_root(root: etree._Element, ctx: ReadContext) -> WorldState:
    tag = root.tag
    if tag == "world":  # the proposal's own example uses it: read as <world_state>, with a warning
        ctx.warn("USDF_ROOT_SPELLING", "root <world> is the proposal's spelling; read as <world_state>", root)
    elif tag != "world_state":
        ctx.error("USDF_ROOT", f"root element must be <world_state>, not <{tag}>", root)
        return WorldState(name="")
    name = read_name(root, ctx, scoped_ok=True)
    version = root.get("version")
    if version is None:  # the proposal defines no version: the current one (a warning)
        ctx.warn("USDF_VERSION_MISSING", 'no version attribute: read as the current version "1.0"', root)
        version = "1.0"
    elif version.split(".")[0] != SUPPORTED_MAJOR or not re.fullmatch(r"[0-9]+\.[0-9]+", version):
        ctx.error("USDF_VERSION_UNSUPPORTED", f"version {version!r} is not supported (major 1 only)", root)
    check_attributes(root, ("name", "version"), ctx)
    if root.text is not None and root.text.strip(XML_SPACE):
        ctx.error("USDF_UNEXPECTED_TEXT", f"<{root.tag}> holds text {root.text.strip()[:30]!r}", root)
    state = WorldState(name=name, version=version)
    seen: dict[str, etree._Element] = {}
    index = 0
    for child in root:
        tail = child.tail
        if tail is not None and tail.strip(XML_SPACE):
            stray_text(child, ctx)
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
            check_unique(fs.name, child, seen, ctx, "frame or model_state")
            state.frames.append(fs)
        elif ctag == "model_state":
            ms = _read_model(child, ctx, top=True)
            check_unique(ms.name, child, seen, ctx, "frame or model_state")
            state.model_states.append(ms)
        elif ctag.startswith("{"):  # a foreign namespace: an extension, kept verbatim (usdf/extension.py)
            state.extensions.append(extension_element(child))
        else:
            unknown_element(child, ctx, "world_state")
        index += 1
    return state


def _read_stamp(el: etree._Element, ctx: ReadContext) -> Stamp | None:
    check_attributes(el, ("sec", "nanosec"), ctx)
    check_no_children(el, ctx)
    vals: list[int] = []
    for attr, upper in (("sec", None), ("nanosec", 10**9)):
        text = el.get(attr)
        if text is None:
            if attr == "sec":
                ctx.error("USDF_BAD_STAMP", "<stamp> needs a sec attribute", el)
                return None
            text = "0"
        if not _INT_RE.fullmatch(text) or len(text.strip(XML_SPACE)) > MAX_SEC_DIGITS:
            ctx.error("USDF_BAD_STAMP", f"{attr}={text!r} is not a non-negative integer", el)
            return None
        v = int(text)
        if upper is not None and v >= upper:
            ctx.error("USDF_BAD_STAMP", f"nanosec={v} must be below 1000000000", el)
            return None
        vals.append(v)
    return Stamp(vals[0], vals[1])


def _read_leaves(el: etree._Element, ctx: ReadContext, obj: FrameState | LinkState | JointState,
                 order: tuple[str, ...], arity: int | None, kind: str) -> None:
    """Read the leaf children of a named container into ``obj``'s same-named fields.

    Each child may appear once, in ``order``; ``parent`` holds a name, the rest numbers
    (``arity`` of them, or any number when None).
    """
    last = -1
    positions = CHILD_POSITION[kind]
    own_checks(el, ctx)
    for child in el:
        tail = child.tail
        if tail is not None and tail.strip(XML_SPACE):
            stray_text(child, ctx)
        ctag = child.tag
        pos = positions.get(ctag)
        if pos is None:
            if isinstance(ctag, str):
                unknown_element(child, ctx, kind)
            continue
        if pos > last:  # beyond every earlier child: neither out of order nor a duplicate
            last = pos
        else:
            if pos < last:
                last = check_order(child, pos, last, order, ctx)
            if getattr(obj, ctag) is not None:
                ctx.error("USDF_DUPLICATE_ELEMENT", f"more than one <{ctag}>", child)
        if ctag == "parent":
            setattr(obj, ctag, read_parent(child, ctx))
            continue
        # read_vector, inlined for the common case (same checks, same result)
        if len(child) or child.keys():
            leaf_checks(child, ctx)
        text = child.text
        if text is None:
            text = ""
        if len(text) <= FAST_TEXT and text.isascii() and "_" not in text:
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
        setattr(obj, ctag, read_vector_slow(child, ctx, arity, text))


def _read_frame(el: etree._Element, ctx: ReadContext) -> FrameState:
    fs = FrameState(name=read_name(el, ctx, scoped_ok=False))
    _read_leaves(el, ctx, fs, FRAME_CHILDREN, 6, "frame")
    return fs


def _read_model(el: etree._Element, ctx: ReadContext, *, top: bool) -> ModelState:
    if ctx.plain:
        fast = fast_model(el, top)
        if fast is not None:
            return fast
    name = read_name(el, ctx, scoped_ok=False)
    ms = ModelState(name=name)
    links: dict[str, etree._Element] = {}
    joints: dict[str, etree._Element] = {}
    models: dict[str, etree._Element] = {}
    last = -1
    order = MODEL_SINGLE + ("*",)
    own_checks(el, ctx)
    for child in el:
        tail = child.tail
        if tail is not None and tail.strip(XML_SPACE):
            stray_text(child, ctx)
        ctag = child.tag
        if not isinstance(ctag, str):
            continue
        if ctag == "link_state":
            last = 3  # the last canonical position: never out of order
            ls = LinkState(name=read_name(child, ctx, scoped_ok=True))
            _read_leaves(child, ctx, ls, LINK_CHILDREN, 6, "link_state")
            if ls.name in links:
                check_unique(ls.name, child, links, ctx, "link_state")
            else:
                links[ls.name] = child
            ms.link_states.append(ls)
        elif ctag == "joint_state":
            last = 3
            js = _read_joint(child, ctx)
            if js.name in joints:
                check_unique(js.name, child, joints, ctx, "joint_state")
            else:
                joints[js.name] = child
            ms.joint_states.append(js)
        elif ctag == "model_state":
            last = 3
            nested = _read_model(child, ctx, top=False)
            check_unique(nested.name, child, models, ctx, "model_state")
            ms.model_states.append(nested)
        elif ctag == "parent":
            last = check_order(child, 0, last, order, ctx)
            if not top:
                ctx.error("USDF_NESTED_PARENT",
                          "a nested model_state has no <parent>: its pose is relative to the enclosing model",
                          child)
            if ms.parent is not None:
                ctx.error("USDF_DUPLICATE_ELEMENT", "more than one <parent>", child)
            ms.parent = read_parent(child, ctx)
        elif ctag == "pose":
            last = check_order(child, 1, last, order, ctx)
            if ms.pose is not None:
                ctx.error("USDF_DUPLICATE_ELEMENT", "more than one <pose>", child)
            ms.pose = cast("Vec6 | None", read_vector(child, ctx, 6))  # six numbers or None
        elif ctag == "twist":
            last = check_order(child, 2, last, order, ctx)
            if ms.twist is not None:
                ctx.error("USDF_DUPLICATE_ELEMENT", "more than one <twist>", child)
            ms.twist = cast("Vec6 | None", read_vector(child, ctx, 6))
        else:
            unknown_element(child, ctx, "model_state")
    return ms



def _read_link(el: etree._Element, ctx: ReadContext) -> LinkState:
    ls = LinkState(name=read_name(el, ctx, scoped_ok=True))
    _read_leaves(el, ctx, ls, LINK_CHILDREN, 6, "link_state")
    return ls


def _read_joint(el: etree._Element, ctx: ReadContext) -> JointState:
    js = JointState(name=read_name(el, ctx, scoped_ok=True))
    _read_leaves(el, ctx, js, JOINT_CHILDREN, None, "joint_state")
    if js.velocities is not None and js.torques is not None and len(js.velocities) != len(js.torques):
        ctx.error("USDF_DOF_MISMATCH",
                  f"{len(js.velocities)} velocities but {len(js.torques)} torques (one each per DOF)", el)
    return js



def parent_lines(root: etree._Element) -> dict[str, int]:
    """``frame:NAME`` / ``model_state:NAME`` → source line, for parent diagnostics."""
    out: dict[str, int] = {}
    for child in root:
        if child.tag in ("frame", "model_state"):
            out.setdefault(f"{child.tag}:{child.get('name')}", child.sourceline or 0)
    return out
