"""How Drake's URDF parser reads a file that urdfdom's rules read otherwise, for the URDFs a scene adds.

* ``world``: Drake knows the world without a ``<link name="world"/>``; a joint whose parent is
  ``world`` welds (or moves) its child relative to the world.  :func:`declare_world_link` adds the
  link declaration (on the root element's line: every other line keeps its number), and the
  composer maps a URDF link ``world`` onto the world.
* ``<frame name link xyz rpy/>`` children of ``<robot>``: Drake adds them as frames fixed to the link
  (:func:`urdf_frames`).
* ``<limit>`` (:func:`drake_limits`): every attribute is optional in Drake (urdfdom needs ``effort``
  and ``velocity``, and a ``<limit>`` on every revolute and prismatic joint): ``lower``/``upper``
  default to -inf/+inf, ``velocity`` to +inf, and ``effort`` 0 (or absent) means no effort limit. A
  continuous joint with a ``<limit lower upper>`` is a limited revolute joint in Drake. Drake aborts
  on ``lower > upper`` and on a negative ``velocity``: refused. The file is rewritten so that the
  URDF reader's urdfdom rules accept it (attributes added inside the existing start tags, a missing
  ``<limit/>`` added on the joint's line: every line keeps its number), and the joints' limits are
  then set to Drake's (:func:`apply_drake_limits`).
"""

from __future__ import annotations

import math
import re

from lxml import etree

from robot_state_format.model.types import Frame, JointType, Limits, Model, Source
from robot_state_format.model.urdf.parts import prepare_urdf_bytes
from robot_state_format.model.xml import parse_xml
from robot_state_format.spatial import pose_to_transform

__all__ = ["apply_drake_limits", "declare_world_link", "drake_limits", "urdf_frames"]

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
    root, _ = parse_xml(prepare_urdf_bytes(data, file)[0], file)  # undeclared prefixes, as the URDF reader
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


# start tags of <joint> and <limit> (no namespace prefix), skipping comments and CDATA sections
_TAGS = re.compile(rb"<!--.*?-->|<!\[CDATA\[.*?\]\]>|<(joint|limit)\b([^>]*?)(/?)>", re.S)
_BOUNDED = ("revolute", "prismatic")
_PLACEHOLDER = {"lower": "-1e300", "upper": "1e300", "effort": "0", "velocity": "0"}


def _drake_number(el: etree._Element, attr: str, default: float) -> float | str:
    """Drake's reading of a limit attribute: one finite number (surrounding spaces allowed), else why not."""
    text = el.get(attr)
    if text is None:
        return default
    try:
        value = float(text.strip()) if len(text.split()) == 1 else math.nan
    except ValueError:
        value = math.nan
    if not math.isfinite(value):
        return f"Expected single value for attribute {attr!r} got {text!r}"
    return value


def drake_limits(data: bytes, file: str) -> tuple[bytes, dict[str, tuple[str, Limits]], list[str]]:
    """The URDF made acceptable to urdfdom's rules where Drake's are laxer, Drake's limits by joint name
    (with the joint's type), and the problems Drake refuses (``file:line: message``)."""
    root, _ = parse_xml(prepare_urdf_bytes(data, file)[0], file)  # its elements are data's, in data's order
    limits: dict[str, tuple[str, Limits]] = {}
    problems: list[str] = []
    edits: dict[int, bytes] = {}  # index of a start tag among joints and limits -> what to insert in it
    tagged = list(root.iter("joint", "limit"))
    for k, el in enumerate(tagged):
        if el.tag != "joint" or el.getparent() is not root:
            continue
        jtype, name = el.get("type"), el.get("name")
        lim = el.find("limit")
        if jtype not in (*_BOUNDED, "continuous") or name is None or (lim is None and jtype == "continuous"):
            continue
        values = {a: _drake_number(lim, a, d) if lim is not None else d for a, d in
                  (("lower", -math.inf), ("upper", math.inf), ("effort", 0.0), ("velocity", math.inf))}
        bad = [v for v in values.values() if isinstance(v, str)]
        where = f"{file}:{(lim if lim is not None else el).sourceline}"
        if bad:
            problems.append(f"{where}: {bad[0]} (Drake's URDF parser)")
            continue
        lo, up, eff, vel = (float(values[a]) for a in ("lower", "upper", "effort", "velocity"))
        if lo > up:
            problems.append(f"{where}: joint {name!r}: limit lower {lo} is greater than upper {up} (Drake aborts)")
            continue
        if vel < 0:
            problems.append(f"{where}: joint {name!r}: negative velocity limit {vel} (Drake aborts)")
            continue
        limits[name] = (jtype, Limits(lo if math.isfinite(lo) else None, up if math.isfinite(up) else None,
                                      abs(eff) if eff != 0 else None, vel if math.isfinite(vel) else None))
        if lim is None:
            edits[k] = b'<limit lower="-1e300" upper="1e300" effort="0" velocity="0"/>'
        else:
            missing = [a for a in _PLACEHOLDER if lim.get(a) is None and (a in ("effort", "velocity") or
                                                                         jtype in _BOUNDED)]
            if missing:
                edits[tagged.index(lim)] = b"".join(f' {a}="{_PLACEHOLDER[a]}"'.encode() for a in missing)
    if not edits:
        return data, limits, problems
    matches = [m for m in _TAGS.finditer(data) if m.group(1) is not None]
    if len(matches) != len(tagged) or any(m.group(1).decode() != e.tag for m, e in zip(matches, tagged)):
        return data, limits, problems  # markup the scan cannot follow: the file as it is
    out, last = [], 0
    for k in sorted(edits):
        m = matches[k]
        if m.group(1) == b"joint":
            if m.group(3):  # <joint .../>: nothing to add into
                continue
            cut = m.end()
        else:
            cut = m.end(2)
        out += [data[last:cut], edits[k]]
        last = cut
    out.append(data[last:])
    return b"".join(out), limits, problems


def apply_drake_limits(model: Model, limits: dict[str, tuple[str, Limits]]) -> None:
    """Set the joints' limits to Drake's (a continuous joint with finite bounds becomes revolute)."""
    for name, (jtype, lim) in limits.items():
        joint = model.joints.get(name)
        if joint is None:
            continue
        if jtype == "continuous":
            if lim.lower is None and lim.upper is None:
                joint.limits = Limits(None, None, lim.effort, lim.velocity)
                continue
            joint.type = JointType.REVOLUTE
        joint.limits = lim
