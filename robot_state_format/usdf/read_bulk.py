"""The bulk path of the USDF reader: a model_state in the common shape read in one pass
(structure proven by XPath counts, all numbers of a kind parsed together).  It returns a state only
when the detailed readers (usdf/read_elements.py) would report nothing and build the same state."""

from __future__ import annotations

import threading
from itertools import chain, islice, repeat
from operator import attrgetter
from typing import cast

from lxml import etree

from robot_state_format import numbers
from robot_state_format.usdf.read_context import FAST_TEXT, JOINT_CHILDREN, LINK_CHILDREN, XML_SPACE
from robot_state_format.usdf.types import JointState, LinkState, ModelState, Vec6

_LOCAL = threading.local()


def _ordered_subsets(order: tuple[str, ...]) -> dict[tuple[str, ...], tuple[int, ...]]:
    """Every valid child sequence of a container (canonical order, each at most once) → the
    positions of its tags in ``order``."""
    out: dict[tuple[str, ...], tuple[int, ...]] = {}
    for mask in range(1 << len(order)):
        idx = tuple(i for i in range(len(order)) if mask >> i & 1)
        out[tuple(order[i] for i in idx)] = idx
    return out


_LINK_LAYOUTS = _ordered_subsets(LINK_CHILDREN)
_JOINT_LAYOUTS = _ordered_subsets(JOINT_CHILDREN)
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
            and list(map(str.strip, names, repeat(XML_SPACE, len(names)))) == names)


def _bulk_vectors(texts: list[str | None]) -> tuple[list[float], list[int]] | None:
    """All numbers of ``texts`` and how many each holds, when every token is in the spec grammar
    (the test of :func:`read_vector`: ASCII, no '_', float() accepts it, finite); None otherwise."""
    strs = ["" if t is None else t for t in texts] if None in texts else cast("list[str]", texts)
    if strs and max(map(len, strs)) > FAST_TEXT:
        return None
    joined = "".join(strs)
    if not joined.isascii() or "_" in joined:
        return None
    splits = list(map(str.split, strs))
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
             vectors: list[tuple[float, ...]]) -> list[list[tuple[float, ...] | None]] | None:
    """One list per field (None where a container lacks it), or None when a container's
    children are not a valid sequence (``layouts``)."""
    n = len(containers)
    tags = list(map(_TAG, leaves))
    counts = list(map(len, containers))
    k = counts[0] if n else 0
    columns: list[list[tuple[float, ...] | None]] = [[None] * n for _ in range(nfields)]
    if counts.count(k) == n and tags == tags[:k] * n:  # every container alike (the common case)
        idx = layouts.get(tuple(tags[:k]))
        if idx is None:
            return None
        for i, f in enumerate(idx):
            columns[f] = cast("list[tuple[float, ...] | None]", vectors[i::k])
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


def fast_model(el: etree._Element, top: bool) -> ModelState | None:  # noqa: C901 (complexity 23): to be split, issue 38
    """A model_state in the common shape (parent?, pose?, twist?, then link_state and joint_state
    elements holding plain leaves) read in bulk, or None when the detailed path must decide.

    Returns a state only when the detailed path would report nothing and build the same state.
    """
    name = el.get("name")
    if (name is None or len(el.keys()) != 1 or not name or name != name.strip(XML_SPACE) or "::" in name
            or name == "world"):
        return None
    text = el.text
    if text is not None and text.strip(XML_SPACE):
        return None
    ms = ModelState(name=name)
    last = -1
    head = 0
    for child in el:  # the leaves before the first link_state or joint_state
        tag = child.tag
        if tag == "link_state" or tag == "joint_state":
            break
        tail = child.tail
        if tail is not None and tail.strip(XML_SPACE):
            return None
        pos = _MODEL_HEAD.get(tag) if isinstance(tag, str) else None
        if pos is None or pos <= last or len(child) or child.keys():
            return None
        last = pos
        head += 1
        if pos == 0:
            if not top:
                return None
            ms.parent = (child.text or "").strip(XML_SPACE) or "world"
        else:
            got = _bulk_vectors([child.text])
            if got is None or got[1][0] != 6:
                return None
            if pos == 1:
                ms.pose = cast(Vec6, tuple(got[0]))  # six numbers: checked above
            else:
                ms.twist = cast(Vec6, tuple(got[0]))
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
            or "".join(xp.loose_text(el)).strip(XML_SPACE)
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
            if v is not None and t is not None and len(v) != len(t):
                return None
        ms.joint_states = list(map(JointState, joint_names, *cols))
    return ms

