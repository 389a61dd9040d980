"""``<replicate>`` expanded as MuJoCo 4.0 expands it, bounded before anything is copied.

``<replicate count="n" offset="x y z" euler="a b c" sep="s">`` repeats its children ``n`` times; copy
``i`` (from 0) is rotated by ``euler`` scaled by ``i`` (compiler angle unit and ``eulerseq``) and
translated by ``sum(R(k euler) offset for k < i)``: each copy steps ``offset`` along the previous copy's
axes (as MuJoCo 4.0 places them; measured, test/model/mjcf/test_mjcf_features.py). Every name in
copy ``i`` gets ``s`` and ``i`` appended, ``i`` zero-padded to the digits of ``n - 1``; an inner
replicate's suffix comes first (``c-10``: inner copy 1 of outer copy 0). A copy becomes an unnamed
``<frame>`` holding the children, which places them as the replicate does without adding a body.

The expanded size is computed from the counts before any copy (a nested count bomb is refused at
once): more than :data:`~robot_state_format.limits.MAX_XML_ELEMENTS` elements after expansion is
``MJCF_TOO_LARGE``.
"""

from __future__ import annotations

import copy
from collections.abc import Callable

import numpy as np
from lxml import etree

from robot_state_format import limits
from robot_state_format.errors import Diagnostic, ModelError
from robot_state_format.model.mjcf.orient import euler_matrix, vector
from robot_state_format.model.xml import describe
from robot_state_format.spatial import matrix_to_quaternion

__all__ = ["ATTACH_SUFFIX", "expand_replicates", "expanded_size"]

# The suffix a replicate gives the names an <attach> inside it brings in (no MJCF attribute can be named so)
ATTACH_SUFFIX = "{urn:robot-state-format:mjcf}suffix"

_ATTRS = frozenset({"count", "offset", "euler", "sep"})


def _count(el: etree._Element) -> int:
    text = (el.get("count") or "").strip()
    return int(text) if text.isdigit() else 0


def expanded_size(root: etree._Element) -> int:
    """The number of elements ``root`` holds once every ``<replicate>`` is expanded (without expanding),
    walked without recursion."""
    sizes: dict[etree._Element, int] = {}
    stack: list[tuple[etree._Element, bool]] = [(root, False)]
    while stack:
        el, done = stack.pop()
        if not done:
            stack.append((el, True))
            stack.extend((c, False) for c in el if isinstance(c.tag, str))
            continue
        inner = sum(sizes.pop(c) for c in el if isinstance(c.tag, str))
        sizes[el] = _count(el) * (inner + 1) if el.tag == "replicate" else inner + 1
    return sizes[root]


def _fmt(v: float) -> str:
    return repr(float(v))


def _rename(el: etree._Element, suffix: str) -> None:
    for node in el.iter():
        if isinstance(node.tag, str) and node.get("name") is not None:
            node.set("name", str(node.get("name")) + suffix)
        if node.tag == "attach":  # the attached names get the suffix too (MuJoCo: _torso-0)
            node.set(ATTACH_SUFFIX, node.get(ATTACH_SUFFIX, "") + suffix)


def _expand_one(rep: etree._Element, file: str, angle_scale: float, eulerseq: str,
                report: list[Diagnostic], files: dict[etree._Element, str]) -> None:
    def fail(code: str, msg: str) -> None:
        report.append(Diagnostic(code, msg, file, rep.sourceline, describe(rep)))

    for attr in rep.attrib:
        if attr not in _ATTRS:
            fail("MJCF_UNKNOWN_ATTRIBUTE", f"unrecognized attribute {attr!r} (MuJoCo's schema)")
    text = rep.get("count")
    if text is None or not text.strip().isdigit() or int(text) < 1:
        fail("MJCF_BAD_VALUE", f"replicate count={text!r}: expected a positive integer")
    off = np.array(vector(rep.get("offset") or "0 0 0", 3, "offset", fail) or (0.0, 0.0, 0.0))
    eul = np.array(vector(rep.get("euler") or "0 0 0", 3, "euler", fail) or (0.0, 0.0, 0.0)) * angle_scale
    n, sep = _count(rep), rep.get("sep") or ""
    digits = len(str(max(n - 1, 0)))
    parent = rep.getparent()
    assert parent is not None
    at = parent.index(rep)
    children = [c for c in rep if isinstance(c.tag, str)]
    xi = np.eye(4)
    for i in range(n):
        frame = etree.Element("frame")
        frame.sourceline = rep.sourceline
        if i:
            xi[:3, 3] += euler_matrix(tuple(eul * (i - 1)), eulerseq) @ off
            xi[:3, :3] = euler_matrix(tuple(eul * i), eulerseq)
        q = matrix_to_quaternion(xi[:3, :3])  # (x, y, z, w)
        frame.set("pos", " ".join(_fmt(v) for v in xi[:3, 3]))
        frame.set("quat", " ".join(_fmt(v) for v in (q[3], q[0], q[1], q[2])))
        for c in children:
            dup = copy.deepcopy(c)
            _rename(dup, f"{sep}{i:0{digits}d}")
            frame.append(dup)
        parent.insert(at + i, frame)
        files[frame] = file
    parent.remove(rep)


def expand_replicates(root: etree._Element, file_of: Callable[[etree._Element], str], angle_scale: float,
                      eulerseq: str, files: dict[etree._Element, str]) -> list[Diagnostic]:
    """Expand every ``<replicate>`` below ``root`` in place (innermost first); problems as diagnostics,
    each copy's file in ``files``. Raises ``ModelError`` (``MJCF_TOO_LARGE``) before copying when the
    expansion would be too large."""
    reps = list(root.iter("replicate"))
    if not reps:
        return []
    size = expanded_size(root)
    if size > limits.MAX_XML_ELEMENTS:
        first = reps[0]
        raise ModelError(Diagnostic(
            "MJCF_TOO_LARGE", f"<replicate> would expand the model to {size} elements, more than "
            f"{limits.MAX_XML_ELEMENTS} (RSF_MAX_XML_ELEMENTS)", file_of(first), first.sourceline, describe(first)))
    out: list[Diagnostic] = []
    for rep in reversed(reps):  # document order reversed: an inner replicate before its outer one
        _expand_one(rep, file_of(rep), angle_scale, eulerseq, out, files)
    return out
