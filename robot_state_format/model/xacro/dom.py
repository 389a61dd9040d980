"""Linear node moves for xacro's minidom documents.

xacro puts the result of each macro call, include or block in place with ``insertBefore`` once per
inserted node, and before each macro call moves one shared empty text node next to the call
(``remove_previous_comments``). minidom's ``insertBefore`` and ``removeChild`` look the node up in the
parent's list of children each time, from its start: expanding N elements into one parent costs O(N²)
(a macro calling itself twice per level took 5 s for 2 000 links; 7 000 calls of one macro side by
side took 1.3 s). :func:`replace_node` and :func:`remove_previous_comments` make the same changes,
looking each node up from where the last change in that list was made: xacro works through a parent's
children in order, so the look-up is short.
"""

from __future__ import annotations

from typing import Any
from xml.dom import Node, minidom

__all__ = ["Positions", "remove_previous_comments", "replace_node"]


class Positions:
    """Where the last change was made in each list of children (a hint: a look-up that misses it
    searches the whole list, so a stale hint costs time, never correctness)."""

    def __init__(self) -> None:
        self._last: dict[int, int] = {}

    def index(self, kids: list[Any], node: Any) -> int:
        start = self._last.get(id(kids), 0)
        try:
            at = kids.index(node, max(0, start - 2))
        except ValueError:
            at = kids.index(node)  # ValueError when absent, as minidom's own look-up
        self._last[id(kids)] = at
        return at

    def mark(self, kids: list[Any], at: int) -> None:
        self._last[id(kids)] = at

    def clear(self) -> None:
        self._last.clear()


POSITIONS = Positions()  # the expansion clears it when it ends (xacro runs one expansion at a time)


def _detach(child: Any) -> None:
    """Remove ``child`` from its parent, as minidom's ``removeChild``."""
    parent = child.parentNode
    kids = parent.childNodes
    del kids[POSITIONS.index(kids, child)]
    before, after = child.previousSibling, child.nextSibling
    if after is not None:
        after.previousSibling = before
    if before is not None:
        before.nextSibling = after
    if child.nodeType in minidom._nodeTypes_with_children:  # type: ignore[attr-defined]
        minidom._clear_id_cache(parent)  # type: ignore[attr-defined]
    child.parentNode = child.previousSibling = child.nextSibling = None


def _insert_before(parent: Any, child: Any, ref: Any) -> None:
    """Put ``child`` (a text or comment node) before ``ref`` in ``parent``, as minidom's ``insertBefore``."""
    if child.parentNode is not None:
        _detach(child)
    kids = parent.childNodes
    at = POSITIONS.index(kids, ref)
    kids.insert(at, child)
    POSITIONS.mark(kids, at + 1)
    before = ref.previousSibling
    child.nextSibling, child.previousSibling, ref.previousSibling = ref, before, child
    if before is not None:
        before.nextSibling = child
    child.parentNode = parent


def remove_previous_comments(node: Any, empty: Any) -> None:
    """xacro's ``remove_previous_comments``: drop the comments right before ``node`` (across one blank
    line at most), else move xacro's one ``empty`` text node before ``node``'s next sibling (so a
    later call does not take the comments before it)."""
    following = node.nextSibling
    previous = node.previousSibling
    while previous:
        if previous.nodeType == Node.TEXT_NODE and previous.data.isspace() and previous.data.count("\n") <= 1:
            previous = previous.previousSibling
        if previous and previous.nodeType == Node.COMMENT_NODE:
            comment, previous = previous, previous.previousSibling
            _detach(comment)
        else:
            if following and empty is not following:
                parent = node.parentNode
                if parent.nodeType == Node.ELEMENT_NODE:
                    _insert_before(parent, empty, following)
                else:  # minidom's checks and errors (a document holds no text)
                    parent.insertBefore(empty, following)
            return


def replace_node(node: Any, by: Any, content_only: bool = False) -> None:
    """Replace ``node`` in its parent by ``by`` (a node or a list of nodes), or by their children
    when ``content_only``; ``by=None`` removes ``node`` (xacro's ``xmlutils.replace_node``)."""
    parent = node.parentNode
    docs = [] if by is None else by if isinstance(by, list) else [by]
    new: list[Any] = []
    for doc in docs:
        new.extend(doc.childNodes if content_only else [doc])
    allowed = parent._child_node_types
    if any(n.nodeType not in allowed or n is node or n is parent for n in new):
        for n in new:  # what minidom refuses or treats specially: its own checks and errors
            parent.insertBefore(n, node)
        parent.removeChild(node)
        return
    for doc in docs:  # detach what moves from where it was
        if content_only:
            for c in doc.childNodes:
                c.parentNode = c.previousSibling = c.nextSibling = None
            doc.childNodes[:] = []
        elif doc.parentNode is not None:
            _detach(doc)
    minidom._clear_id_cache(parent)  # type: ignore[attr-defined]
    kids = parent.childNodes
    index = POSITIONS.index(kids, node)
    kids[index:index + 1] = new
    POSITIONS.mark(kids, index + len(new))
    before, after = node.previousSibling, node.nextSibling
    for n in new:
        n.parentNode = parent
        n.previousSibling = before
        if before is not None:
            before.nextSibling = n
        before = n
    if before is not None:
        before.nextSibling = after
    if after is not None:
        after.previousSibling = before
    node.parentNode = node.previousSibling = node.nextSibling = None
