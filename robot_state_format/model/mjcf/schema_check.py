"""Every attribute of an MJCF document checked against MuJoCo's own schema (:mod:`.schema_text`).

MuJoCo refuses an attribute its schema does not list on that element ("Schema violation: unrecognized
attribute"), wherever the element is (an ``<option>``'s, an actuator's, a sensor's: old models carry
``apirate`` or ``collision``). The elements the reader checks itself (``<body>``, ``<frame>``,
``<compiler>``, ``<worldbody>``, ``<replicate>`` and what ``<default>`` holds) are left to those checks;
``<frame>`` and ``<replicate>`` (parsed apart by MuJoCo) hold what their parent holds. The numbers of a
``<camera>`` or ``<light>`` (not interpreted by the reader) are checked as MuJoCo parses them: a token
that is not a number ("bad format"), one too large for a double, too few for a position or orientation.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from functools import lru_cache

from lxml import etree

from robot_state_format.model.mjcf.document import Document
from robot_state_format.model.mjcf.schema_text import SCHEMA

__all__ = ["check_attributes"]

_NAME_COLUMN = 30
_CHECKED_ELSEWHERE = frozenset({"body", "worldbody", "frame", "compiler", "replicate"})
_TRANSPARENT = frozenset({"frame", "replicate"})
# the numbers of the elements the reader does not interpret (cameras, lights), checked as MuJoCo reads them
_UNREAD_PLACED = frozenset({"camera", "light"})
_COUNTS = {"pos": 3, "dir": 3, "quat": 4, "axisangle": 4, "xyaxes": 6, "zaxis": 3, "euler": 3}
_NUMBERS = frozenset({*_COUNTS, "fovy", "ipd", "resolution", "focal", "focalpixel", "principal", "principalpixel",
                      "sensorsize", "cutoff", "exponent", "attenuation", "ambient", "diffuse", "specular", "range",
                      "intensity", "bulbradius"})


def _number_problem(text: str, attr: str) -> str | None:
    """MuJoCo's complaint about a number attribute's text, or None (strtod: also hex, nan, inf)."""
    tokens = text.split()
    for token in tokens:
        try:
            value = float(token)
        except ValueError:
            try:
                if not token.lower().lstrip("+-").startswith("0x"):
                    raise
                value = float.fromhex(token)
            except ValueError:
                return f"bad format in attribute {attr!r}"
        if math.isinf(value) and "inf" not in token.lower():
            return f"number is too large in attribute {attr!r}"
    if attr in _COUNTS and len(tokens) < _COUNTS[attr]:
        return f"attribute {attr!r} does not have enough data"
    return None


@dataclass
class _Node:
    name: str
    recursive: bool
    attrs: set[str] = field(default_factory=set)
    children: dict[str, _Node] = field(default_factory=dict)


@lru_cache(maxsize=1)
def _tree() -> _Node:
    root = _Node("", False)
    stack: list[tuple[int, _Node]] = [(-1, root)]
    current = root
    for line in SCHEMA.splitlines():
        head = line[:_NAME_COLUMN]
        if head.strip():
            depth = (len(head) - len(head.lstrip())) // 3
            name, _, flag = head.strip().partition(" ")
            node = _Node(name.replace("(world)", ""), "(R)" in flag)
            while stack[-1][0] >= depth:
                stack.pop()
            stack[-1][1].children[node.name] = node
            stack.append((depth, node))
            current = node
        current.attrs.update(line[_NAME_COLUMN:].split())
    return root


def _walk(doc: Document, el: etree._Element, node: _Node) -> None:
    for child in el:
        if not isinstance(child.tag, str) or child.tag == "default":
            continue
        tag = str(child.tag)
        if tag in _TRANSPARENT:
            _walk(doc, child, node)
            continue
        found = node.children.get(tag)
        if found is None and tag == node.name and node.recursive:
            found = node
        if found is None and tag == "worldbody":
            found = node.children.get("body")
        if found is None:
            continue  # an element MuJoCo does not know: the reader's element checks report it
        if tag in _UNREAD_PLACED:
            for attr in _NUMBERS.intersection(str(a) for a in child.attrib):
                problem = _number_problem(str(child.get(attr)), attr)
                if problem is not None:
                    doc.report(child, "MJCF_BAD_VALUE", problem)
        if tag not in _CHECKED_ELSEWHERE:
            for attr in child.attrib:
                if attr not in found.attrs and not str(attr).startswith("{"):  # the reader's own marks
                    doc.report(child, "MJCF_UNKNOWN_ATTRIBUTE", f"unrecognized attribute {attr!r} (MuJoCo's schema)")
        _walk(doc, child, found)


def check_attributes(doc: Document) -> None:
    """Report every attribute MuJoCo's schema does not admit where it stands (``MJCF_UNKNOWN_ATTRIBUTE``)."""
    top = _tree().children.get("mujoco")
    if top is not None:
        _walk(doc, doc.root, top)


def children_of(section: str) -> list[str]:
    """The element names MuJoCo's schema admits in a top-level section (``sensor``, ``actuator``, ...)."""
    top = _tree().children.get("mujoco")
    node = top.children.get(section) if top is not None else None
    return [] if node is None else list(node.children)
