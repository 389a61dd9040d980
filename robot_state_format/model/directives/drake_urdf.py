"""How Drake's URDF parser reads a file that urdfdom's rules read otherwise, for the URDFs a scene adds.

* ``world``: Drake knows the world without a ``<link name="world"/>``; a joint whose parent is
  ``world`` welds (or moves) its child relative to the world.  :func:`declare_world_link` adds the
  link declaration (on the root element's line: every other line keeps its number), and the
  composer maps a URDF link ``world`` onto the world.
* ``<frame name link xyz rpy/>`` children of ``<robot>``: Drake adds them as frames fixed to the link
  (:func:`urdf_frames`).
"""

from __future__ import annotations

import math
import re

from lxml import etree

from robot_state_format.model.types import Frame, Model, Source
from robot_state_format.model.xml import parse_xml
from robot_state_format.spatial import pose_to_transform

__all__ = ["declare_world_link", "urdf_frames"]

_WORLD_LINK = re.compile(rb"""<link\b[^>]*\bname\s*=\s*["']world["']""")
_WORLD_REF = re.compile(rb"""link\s*=\s*["']world["']""")
_ROBOT = re.compile(rb"<robot\b[^>]*>")


def declare_world_link(data: bytes) -> bytes:
    """``data`` with ``<link name="world"/>`` declared when a joint names it and no link does."""
    if _WORLD_LINK.search(data) or not _WORLD_REF.search(data):
        return data
    m = _ROBOT.search(data)
    if m is None or data[m.end() - 2:m.end()] == b"/>":
        return data
    return data[:m.end()] + b'<link name="world"/>' + data[m.end():]


def _vec(el: etree._Element, attr: str) -> tuple[float, float, float] | None:
    text = el.get(attr)
    if text is None:
        return (0.0, 0.0, 0.0)
    parts = text.split()
    if len(parts) != 3:
        return None
    try:
        x, y, z = (float(p) for p in parts)
    except ValueError:
        return None
    return (x, y, z) if all(math.isfinite(v) for v in (x, y, z)) else None


def urdf_frames(data: bytes, model: Model, file: str) -> list[str]:
    """Add the ``/robot/frame`` elements of a URDF (Drake's extension) to ``model.frames``; return
    the problems (a frame Drake would refuse: unknown link, bad numbers), as messages."""
    problems: list[str] = []
    root, _ = parse_xml(data, file)
    for el in root.iterchildren("frame"):
        name, link = el.get("name"), el.get("link")
        xyz, rpy = _vec(el, "xyz"), _vec(el, "rpy")
        where = f"{file}:{el.sourceline}"
        if not name or not link or link not in model.links:
            problems.append(f"{where}: <frame> needs a name and the name of a link of the model")
            continue
        if xyz is None or rpy is None:
            problems.append(f"{where}: <frame {name!r}>: xyz and rpy need three numbers each")
            continue
        model.frames[name] = Frame(name, link, pose_to_transform(xyz, rpy), Source(file, el.sourceline, "frame"))
    return problems
