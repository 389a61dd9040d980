"""Every element of an SDFormat document against the specification's element descriptions (data).

libsdformat 12 converts a document of any version it knows (1.0 to 1.8) to 1.9 and reads it against
the 1.9 descriptions; a newer or unknown version is read as 1.9 unconverted. So does this check: the
descriptions of 1.9 (``spec/sdf_1_9.json``, generated from libsdformat's ``sdf/1.9/*.sdf`` by
``conformance/sdf_spec_generate.py``) decide, element by element, as libsdformat's ``readXml`` does:

* an attribute's value of its type (:mod:`.spec_values`), a required attribute present
  (``SDF_BAD_VALUE``, ``SDF_MISSING_ATTRIBUTE``; an empty required ``name``: ``SDF_EMPTY_NAME``);
* an element's value of its type, within ``min``/``max`` (``SDF_BAD_VALUE``, ``SDF_VALUE_OUT_OF_RANGE``);
* a required child (``required="1"`` or ``"+"``) present — libsdformat refuses only a joint's (other
  than a ball joint's; ``SDF_JOINT_MISSING_PARENT``/``_CHILD``), elsewhere it adds the default;
* children the description does not know: elements with a namespace prefix are custom and skipped,
  the children of a ``copy_data`` element (``<plugin>``) are copied, not checked, and others are
  logged by libsdformat, not refused: a warning ``SDF_UNKNOWN_ELEMENT`` (``SDF_UNKNOWN_ATTRIBUTE``)
  when the document declares 1.9 itself, where no conversion could have moved or renamed them, and
  where the declared version's descriptions (``spec/sdf_<version>.json``) do not know them either;
  a deprecated element (``required="-1"``) is a warning ``SDF_DEPRECATED_ELEMENT``;
* ``<include><experimental:params>``, libsdformat 12's edits of an included model (:mod:`.include_params`);
* and one refusal the conversion of older documents creates (:func:`_conversion_refusals`).

The descriptions are read once per process, on the first SDFormat document (never for URDF).
"""

from __future__ import annotations

import functools
import json
from dataclasses import dataclass, field
from pathlib import Path

from lxml import etree

from robot_state_format.model.sdf import spec_values
from robot_state_format.model.sdf.elements import Report, Version
from robot_state_format.model.sdf.include_params import check_params, is_params

CHECK_VERSION: Version = (1, 9)  # libsdformat 12 converts every document to it
SPEC_DIR = Path(__file__).resolve().parent / "spec"
SHIPPED: tuple[Version, ...] = ((1, 0), (1, 2), (1, 3), (1, 4), (1, 5), (1, 6), (1, 7), (1, 8), (1, 9))


@dataclass
class Node:
    """One element description: its name, value type, ``required``, bounds, attributes, children."""

    name: str
    type: str | None
    required: str
    low: float | None
    high: float | None
    copy_data: bool
    attributes: dict[str, tuple[str, str, float | None, float | None]]
    children: dict[str, tuple[int, str]] = field(default_factory=dict)
    required_children: list[str] = field(default_factory=list)


class Description:
    """The element descriptions of one version, as a table of :class:`Node` (index = node id)."""

    def __init__(self, data: dict[str, object]) -> None:
        self.version = str(data["version"])
        raw = data["nodes"]
        assert isinstance(raw, list)
        self.nodes: list[Node] = []
        for name, kind, required, low, high, copy, attrs, kids in raw:
            node = Node(name, kind, required, low, high, copy, {k: tuple(v) for k, v in attrs.items()})
            for idx, req in kids:
                node.children.setdefault(raw[idx][0], (idx, req))
            self.nodes.append(node)
        for node in self.nodes:
            node.required_children = [n for n, (_, req) in node.children.items() if req in ("1", "+")]
        root = data["root"]
        assert isinstance(root, int)
        self.root = root
        self.children_by_name: dict[str, set[str]] = {}
        for node in self.nodes:
            self.children_by_name.setdefault(node.name, set()).update(node.children)


@functools.cache
def description(version: Version) -> Description | None:
    """The shipped descriptions of ``version`` (read once per process), None when none is shipped."""
    if version not in SHIPPED:
        return None
    name = f"sdf_{version[0]}_{version[1]}.json"
    text = (SPEC_DIR / name).read_text(encoding="utf-8")  # package data (setup.py)
    return Description(json.loads(text))


def _custom(el: etree._Element) -> bool:
    """A namespaced element (``drake:joint``, ``gz:...``): custom, libsdformat keeps it unread."""
    name = str(el.tag)
    return "}" in name or ":" in name


class Checker:
    """Walks one document (an ``<sdf>`` root) against the 1.9 descriptions."""

    def __init__(self, report: Report, file: str, declared: Version | None) -> None:
        self.report = report
        self.file = file
        self.spec = description(CHECK_VERSION)
        self.errors = 0
        # unknown elements are warned about only where no conversion could explain them
        self.declared = description(declared) if declared is not None and declared < CHECK_VERSION else None
        self.warn_unknown = declared == CHECK_VERSION or self.declared is not None

    def check(self, root: etree._Element) -> int:
        """Check the document; returns the number of errors reported."""
        if self.spec is None:
            return 0
        old = self.declared.root if self.declared is not None else None
        self._element(root, self.spec.root, old, top=True)
        return self.errors

    def _error(self, code: str, message: str, el: etree._Element) -> None:
        self.errors += 1
        self.report.error(code, message, self.file, el)

    def _element(self, el: etree._Element, idx: int, old: int | None, top: bool = False) -> None:
        assert self.spec is not None
        node = self.spec.nodes[idx]
        self._attributes(el, node, old, top)
        if node.type is not None:
            self._value(el, node)
        if node.copy_data:
            return
        seen: set[str] = set()
        for c in el:
            if el.tag == "include" and is_params(c):
                self.errors += check_params(c, self.spec.children_by_name, self.report, self.file)
            if not isinstance(c.tag, str) or _custom(c):
                continue
            name = c.tag
            seen.add(name)
            got = node.children.get(name)
            old_child = self._old_child(old, name)
            if got is None:
                if self.warn_unknown and (old is None or old_child is None):
                    self.report.warn("SDF_UNKNOWN_ELEMENT", f"<{name}> is not an element of <{el.tag}> in SDFormat "
                                     "1.9; ignored (libsdformat logs it)", self.file, c)
                continue
            if got[1] == "-1":
                self.report.warn("SDF_DEPRECATED_ELEMENT", f"<{name}> is deprecated in SDFormat 1.9", self.file, c)
            self._element(c, got[0], old_child)
        if el.tag == "joint" and (el.get("type") or "").strip() != "ball":
            for name in node.required_children:
                if name not in seen:
                    code = f"SDF_JOINT_MISSING_{name.upper()}" if name in ("parent", "child") else "SDF_MISSING_ELEMENT"
                    self._error(code, f"<joint> has no <{name}> (required)", el)

    def _old_child(self, old: int | None, name: str) -> int | None:
        if old is None or self.declared is None:
            return None
        got = self.declared.nodes[old].children.get(name)
        return got[0] if got is not None else None

    def _attributes(self, el: etree._Element, node: Node, old: int | None, top: bool) -> None:
        for key, text in el.attrib.items():
            if "}" in key or ":" in key or key.startswith("xmlns") or (top and key == "version"):
                continue
            desc = node.attributes.get(key)
            if desc is None:
                if self.warn_unknown and (old is None or self.declared is None
                                          or key not in self.declared.nodes[old].attributes):
                    self.report.warn("SDF_UNKNOWN_ATTRIBUTE", f"{key!r} is not an attribute of <{el.tag}> in "
                                     "SDFormat 1.9; ignored (libsdformat logs it)", self.file, el)
                continue
            kind, required, low, high = desc
            if key == "name" and required == "1" and not text.strip():
                self._error("SDF_EMPTY_NAME", f"<{el.tag}> has an empty name", el)
                continue
            try:
                value = spec_values.parse(kind, text, required == "1")
            except spec_values.BadValue as exc:
                self._error("SDF_BAD_VALUE", f"attribute {key}={text!r} {exc} (type {kind})", el)
                continue
            self._bounds(el, f"attribute {key}", value, low, high)
        for key, (_, required, _, _) in node.attributes.items():
            if required == "1" and key not in el.attrib:
                self._error("SDF_MISSING_ATTRIBUTE", f"<{el.tag}> has no {key} attribute (required)", el)

    def _value(self, el: etree._Element, node: Node) -> None:
        assert node.type is not None
        text = el.text or ""
        try:
            value = spec_values.parse(node.type, text, node.required == "1", el.get("rotation_format"))
        except spec_values.BadValue as exc:
            shown = text.strip() if len(text.strip()) <= 60 else text.strip()[:57] + "..."
            self._error("SDF_BAD_VALUE", f"<{el.tag}> {shown!r} {exc} (type {node.type}; libsdformat refuses "
                        "it)", el)
            return
        self._bounds(el, f"<{el.tag}>", value, node.low, node.high)

    def _bounds(self, el: etree._Element, what: str, value: float | None, low: float | None,
                high: float | None) -> None:
        if value is None:
            return
        if (low is not None and value < low) or (high is not None and value > high):
            span = f"[{'' if low is None else f'{low:g}'}, {'' if high is None else f'{high:g}'}]"
            self._error("SDF_VALUE_OUT_OF_RANGE", f"{what} {value:g} is outside {span}", el)


def _conversion_refusals(root: etree._Element, report: Report, file: str, declared: Version | None) -> int:
    """What libsdformat 12's conversion makes of a 1.2-1.4 joint axis without ``<xyz>``: the 1.5
    conversion (``1.5/1_4.convert``) adds ``use_parent_model_frame`` to the ``axis``/``axis2`` of the
    joints of a top-level model (``sdf/model/joint``, ``sdf/world/model/joint``), the 1.7 conversion
    (``1.7/1_6.convert``) maps it to ``xyz/@expressed_in`` — creating an ``<xyz>`` without a value, which
    1.9 refuses (``xyz`` is required). Measured with ``sdf_ref``; 1.0 documents are not converted so."""
    if declared is None or not (1, 2) <= declared <= (1, 4):
        return 0
    errors = 0
    for joint in root.xpath("model/joint | world/model/joint"):
        for axis in joint:
            if axis.tag in ("axis", "axis2") and axis.find("xyz") is None:
                errors += 1
                report.error("SDF_MISSING_ELEMENT", f"<{axis.tag}> has no <xyz>: libsdformat's conversion of "
                             f"SDFormat {declared[0]}.{declared[1]} to 1.9 leaves an empty <xyz> here and refuses "
                             "it", file, axis)
    return errors


def check_document(root: etree._Element, report: Report, file: str, declared: Version | None) -> int:
    """Check ``root`` (``<sdf>``) against the specification; the number of errors reported.
    ``declared``: the document's own version (None when it was read as 1.9 without being one)."""
    return Checker(report, file, declared).check(root) + _conversion_refusals(root, report, file, declared)


__all__ = ["CHECK_VERSION", "Description", "check_document", "description"]
