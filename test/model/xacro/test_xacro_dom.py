"""model/xacro/dom.py against xacro's own node moves: the same tree, and look-ups that do not rescan
a parent's children from the start for each call (xacro's are quadratic in the calls side by side)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any
from xml.dom import minidom

import pytest

from robot_state_format.model.xacro.dom import POSITIONS, remove_previous_comments, replace_node

xacro = pytest.importorskip("xacro", reason="xacro is not installed (pip install xacro)")


class CountingList(minidom.NodeList):
    """A parent's children that count how many entries their look-ups pass over."""

    scanned = 0

    def index(self, value: Any, start: int = 0, stop: int = 2**62) -> int:
        at = list.index(self, value, start, stop)
        CountingList.scanned += at - start + 1
        return at

    def remove(self, value: Any) -> None:
        CountingList.scanned += list.index(self, value) + 1
        list.remove(self, value)


def _calls_side_by_side(n: int) -> tuple[minidom.Document, list[Any]]:
    """A parent holding n calls, each after a comment (kept or dropped as xacro does) or a blank."""
    parts = []
    for i in range(n):
        parts.append(f"<!-- c{i} -->" if i % 3 == 0 else "\n  " if i % 3 == 1 else "\n\n")
        parts.append(f'<call i="{i}"/>')
    doc = minidom.parseString(f"<robot>{''.join(parts)}<tail/></robot>")
    root = doc.documentElement
    root.childNodes = CountingList(root.childNodes)
    return doc, [c for c in root.childNodes if c.nodeType == c.ELEMENT_NODE and c.tagName == "call"]


def _expand(n: int, remove_comments: Callable[[Any], None], replace: Callable[..., None]) -> tuple[str, int]:
    """Each call replaced by a body of two links, as xacro's handle_macro_call does: comments first,
    then the body's children put in place of the call."""
    doc, calls = _calls_side_by_side(n)
    CountingList.scanned = 0
    for call in calls:
        i = call.getAttribute("i")
        body = minidom.parseString(f'<body><link name="a{i}"/>\n<link name="b{i}"/></body>').documentElement
        remove_comments(call)
        replace(call, by=body, content_only=True)
    POSITIONS.clear()
    return doc.toxml(), CountingList.scanned


def _ours(node: Any) -> None:
    remove_previous_comments(node, xacro._empty_text_node)


def test_the_moves_make_xacros_tree() -> None:
    theirs, _ = _expand(60, xacro.remove_previous_comments, xacro.replace_node)
    ours, _ = _expand(60, _ours, replace_node)
    assert ours == theirs
    assert "c0" not in ours and "c3" not in ours  # a comment right before a call is dropped (xacro's rule)
    assert ours.count("<link") == 120


def test_calls_side_by_side_are_looked_up_near_the_last_move() -> None:
    n = 2000
    _, theirs = _expand(n, xacro.remove_previous_comments, xacro.replace_node)
    _, ours = _expand(n, _ours, replace_node)
    assert theirs > n * n  # xacro's moves scan the children from the start: about 4 n^2 / 2 entries
    assert ours < 20 * n  # ours pass a few entries per call


def test_a_stale_hint_still_finds_the_node() -> None:
    doc = minidom.parseString("<r><a/><b/><c/><d/></r>")
    kids = doc.documentElement.childNodes
    POSITIONS.mark(kids, 3)  # the last move was near the end, the node is near the start
    try:
        assert POSITIONS.index(kids, kids[0]) == 0
        with pytest.raises(ValueError):
            POSITIONS.index(kids, doc.createElement("absent"))
    finally:
        POSITIONS.clear()
