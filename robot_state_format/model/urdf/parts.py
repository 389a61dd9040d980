"""Pieces of the URDF reader (:mod:`robot_state_format.model.urdf.reader`): the joint-type tables, the
``<origin>`` transform, the naming helpers of its messages, and the text-level preparation of a
document before parsing.

urdfdom's XML parser (TinyXML2) knows no namespaces: prefixes used without a declaration are declared
here (``drake:`` as Drake's namespace, any other as a placeholder) so that lxml can parse what urdfdom
loads; each is a warning.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable

from lxml import etree

from robot_state_format import numbers
from robot_state_format.errors import Diagnostic, Severity
from robot_state_format.model.detect import blank_comments
from robot_state_format.model.types import JointType, Model, Shape
from robot_state_format.model.xml import DRAKE_NS, encode_text

_D = "{" + DRAKE_NS + "}"
_ROBOT_TAG_RE = re.compile(rb"<robot\b")
_DRAKE_RE = re.compile(rb"drake")  # a regular expression finds it faster than bytes.find
# Prefixes are found from their ':' (see _used_prefixes): a pattern starting with a literal is searched
# at C speed, one starting with '<' or \s is tried at every '<' or blank.  A prefixed element is
# <p:name followed by space, / or >; a prefixed attribute is \sp:name = " (its prefix read backwards).
_PREFIX_COLON_RE = re.compile(rb":(?=[A-Za-z_])")  # a ':' a name follows: an element's or attribute's prefix ends
_NAME_RE = re.compile(rb"[A-Za-z_][\w.-]*")
_LOCAL_NAME_END_RE = re.compile(rb"[A-Za-z_][\w.-]*[\s/>]")  # a prefixed element's local name, then its end
_ATTRIBUTE_COLON_RE = re.compile(rb":[A-Za-z_][\w.-]*\s*=\s*[\"']")
_NAME_CHARS = b"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.-"
_NAME_START = frozenset(b"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ_")
_BLANKS = frozenset(b" \t\n\r\x0b\x0c")
_DECL_ENCODING_RE = re.compile(rb"""<\?xml\b[^?]*?encoding\s*=\s*(["'])([^"']*)\1""")


JOINT_TYPES: dict[str, JointType] = {
    "revolute": JointType.REVOLUTE, "continuous": JointType.CONTINUOUS,
    "prismatic": JointType.PRISMATIC, "fixed": JointType.FIXED,
    "floating": JointType.FLOATING, "planar": JointType.PLANAR,
}
DRAKE_JOINT_TYPES: dict[str, JointType] = {
    "ball": JointType.BALL, "planar": JointType.PLANAR,
    "screw": JointType.SCREW, "universal": JointType.UNIVERSAL,
}
# joint types whose <limit> lower/upper bound the motion (lower > upper is an error only for these)
_BOUNDED_TYPES = frozenset({JointType.REVOLUTE, JointType.PRISMATIC, JointType.SCREW})
_AXIS_TYPES = frozenset({JointType.REVOLUTE, JointType.CONTINUOUS, JointType.PRISMATIC,
                         JointType.SCREW, JointType.PLANAR})


def inertial_children(el: etree._Element) -> tuple[etree._Element | None, etree._Element | None,
                                                      etree._Element | None]:
    """The ``<origin>``, ``<mass>`` and ``<inertia>`` of an ``<inertial>`` (the last of each; None where absent)."""
    origin_el = mass_el = inertia_el = None
    for c in el:
        tag = c.tag
        if tag == "origin":
            origin_el = c
        elif tag == "mass":
            mass_el = c
        elif tag == "inertia":
            inertia_el = c
    return origin_el, mass_el, inertia_el


def plain_vec3(text: str) -> tuple[float, float, float] | None:
    """The fast path of the reader's ``vec3``: three finite numbers of the grammar, none
    underflowing, else None (the checked path then explains)."""
    p = text.split() if len(text) < 400 else []
    if len(p) == 3 and text.isascii() and "_" not in text:
        try:
            x, y, z = float(p[0]), float(p[1]), float(p[2])
        except ValueError:
            return None
        # all finite (an overflowing sum takes the slow path), no underflow
        if math.isfinite(x + y + z) and ((x and y and z) or not numbers.may_underflow(text)):
            return (x, y, z)
    return None


def link_materials(model: Model, refs: dict[str, list[tuple[Shape, etree._Element]]],
                   material_els: list[etree._Element], warn: Callable[[str, str, etree._Element], None]) -> None:
    """Point each visual naming a material at its definition, as urdfdom does: the robot-level one, else
    the first visual's (in document order) that gives it a color or texture (a later visual of that name
    takes it, its own color too); warn about a name not defined by then and about robot-level materials
    never used."""
    used: set[str] = set()
    for mname, shapes in refs.items():
        top = model.materials.get(mname)
        for shape, mel in shapes:
            if top is not None:
                shape.material = top
                used.add(mname)
            elif shape.material is not None and (shape.material.rgba is not None or shape.material.texture):
                top = shape.material  # urdfdom keeps the first definition under its name
            elif shape.material is not None:
                warn("URDF_UNDEFINED_MATERIAL", f"material {mname!r} is not defined", mel)
    for el in material_els:
        mname = el.get("name")
        if mname and mname not in used and model.materials.get(mname) is not None:
            warn("URDF_UNUSED_MATERIAL", f"material {mname!r} is never used", el)


def _tag_name(tag: str) -> str:
    """``{drake-ns}joint`` → ``drake:joint``; other tags unchanged."""
    if tag.startswith(_D):
        return "drake:" + tag[len(_D):]
    return tag


def describe(el: etree._Element) -> str:
    """``tag[name=value]`` for messages, with ``drake:`` for Drake's namespace."""
    tag = el.tag
    if not isinstance(tag, str):
        return "comment"
    if tag.startswith(_D):
        tag = "drake:" + tag[len(_D):]
    name = el.get("name")
    return f"{tag}[name={name}]" if name is not None else tag


def prepare_urdf_bytes(text: str | bytes, file: str) -> tuple[bytes, list[Diagnostic], bool]:
    """The bytes to parse (a ``str`` encoded as UTF-8, undeclared prefixes declared), the warnings, and
    whether those bytes mention ``drake`` at all (else no Drake extension needs looking for)."""
    if isinstance(text, str):
        raw = encode_text(text, file)
        # the text is already decoded: a declared encoding (e.g. ISO-8859-1) no longer applies
        m = _DECL_ENCODING_RE.search(raw, 0, 512)
        if m is not None:
            raw = raw[:m.start(2)] + b"utf-8" + raw[m.end(2):]
    else:
        raw = bytes(text)
    pre: list[Diagnostic] = []
    drake = _DRAKE_RE.search(raw) is not None  # declarations added below hold "drake" only if raw does
    if drake and b"drake:" in raw and b"xmlns:drake" not in raw:
        m = _ROBOT_TAG_RE.search(raw)
        if m is not None:
            raw = raw[:m.end()] + b' xmlns:drake="' + DRAKE_NS.encode() + b'"' + raw[m.end():]
            pre.append(Diagnostic("URDF_UNDECLARED_DRAKE_NAMESPACE",
                                  "the drake: prefix is used but not declared; assumed " + DRAKE_NS,
                                  file, raw.count(b"\n", 0, m.start()) + 1, "robot", Severity.WARNING))
    raw = _declare_prefixes(raw, file, pre)
    return raw, pre, drake


def _declare_prefixes(raw: bytes, file: str, pre: list[Diagnostic]) -> bytes:
    """Declare on ``<robot>`` every element/attribute prefix the document uses without declaring it
    (urdfdom's XML parser knows no namespaces and ignores such elements: ``<xacro:property>`` left
    in a URDF, ``<gazebo:...>``); each is a warning."""
    if b":" not in raw:
        return raw
    used = {p for p in _used_prefixes(blank_comments(raw)) if p not in (b"xml", b"xmlns")}
    missing = sorted(p for p in used if b"xmlns:" + p not in raw)
    m = _ROBOT_TAG_RE.search(raw) if missing else None
    if m is None:
        return raw
    line = raw.count(b"\n", 0, m.start()) + 1
    decl = b"".join(b' xmlns:' + p + b'="urn:undeclared:' + p + b'"' for p in missing)
    for p in missing:
        pre.append(Diagnostic("URDF_UNDECLARED_PREFIX", f"the namespace prefix {p.decode()}: is used but not "
                              "declared; its elements are not URDF and are kept as extensions", file, line,
                              "robot", Severity.WARNING))
    return raw[:m.end()] + decl + raw[m.end():]


def _used_prefixes(raw: bytes) -> set[bytes]:
    """The prefixes of ``<p:name`` elements and of `` p:name="..."`` attributes (a blank before the
    attribute's prefix), each found in time linear in ``len(raw)``: one scan finds every ':' that a
    name follows (few in a document), each then looked at backwards no further than the last one."""
    used: set[bytes] = set()
    lo = 0  # end of the last prefixed attribute
    prev = 0  # just after the last candidate ':'
    for m in _PREFIX_COLON_RE.finditer(raw):
        colon = m.start()
        lt = raw.rfind(b"<", prev, colon)  # an element's prefix: '<' then a name, up to this ':'
        if lt >= 0 and _NAME_RE.fullmatch(raw, lt + 1, colon) and _LOCAL_NAME_END_RE.match(raw, colon + 1):
            used.add(raw[lt + 1:colon])
        a = _ATTRIBUTE_COLON_RE.match(raw, colon)
        if a is not None:
            head = raw[lo:colon].rstrip(_NAME_CHARS)  # what precedes the prefix (since the last match)
            start = lo + len(head)
            if start < colon and head and head[-1] in _BLANKS and raw[start] in _NAME_START:
                used.add(raw[start:colon])
            lo = a.end()
        prev = colon + 1
    return used


def strip_default_namespace(root: etree._Element) -> None:
    """Documents declaring a default namespace (``<robot xmlns="...">``): drop it from tags."""
    ns = root.tag[1:].split("}", 1)[0]
    prefix = "{" + ns + "}"
    for el in root.iter():
        tag = el.tag
        if isinstance(tag, str) and tag.startswith(prefix):
            el.tag = tag[len(prefix):]
