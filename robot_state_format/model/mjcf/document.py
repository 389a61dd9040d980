"""An MJCF document made ready to read: ``<include>`` expanded, ``<compiler>`` settings, ``<default>`` classes.

* ``<include file="..."/>`` is replaced by the children of the included file's root element, whatever
  its name (``<mujoco>``, the older ``<mujocoinclude>``, any other: MuJoCo 4.0 reads them all alike),
  recursively; the path is looked up relative to the main file's directory first, then beside the file
  holding the ``<include>`` (MuJoCo's order), at most
  :data:`~robot_state_format.limits.MAX_SDF_INCLUDES` files; a file included twice is refused (MuJoCo
  refuses it too). Diagnostics name the file an element came from.
* ``<compiler>``: ``angle`` (``degree`` by default!), ``eulerseq`` (``xyz``), ``autolimits`` (true), ``alignfree`` (false),
  ``meshdir``/``assetdir`` (where mesh files are looked up); ``coordinate="global"`` is refused, as
  MuJoCo refuses it.
* ``<default>`` classes: the top-level one is ``main``; a nested class inherits its parent's values,
  element by element and attribute by attribute. An element takes its own ``class``, else the
  ``childclass`` of the nearest enclosing body or frame, else ``main``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path

from lxml import etree

from robot_state_format import limits
from robot_state_format.errors import Diagnostic, ModelError, Severity
from robot_state_format.model import access
from robot_state_format.model.mjcf.replicate import expand_replicates
from robot_state_format.model.mjcf.schema import COMPILER_ATTRS, DEFAULT_CHILDREN
from robot_state_format.model.mjcf.tinyxml import parse_mjcf_xml
from robot_state_format.model.xml import describe

__all__ = ["Document", "load_document"]

MAIN = "main"
_ORIENTATION = ("quat", "axisangle", "euler", "xyaxes", "zaxis")


@dataclass
class Document:
    root: etree._Element
    file: str
    angle_scale: float = math.pi / 180.0
    eulerseq: str = "xyz"
    autolimits: bool = True
    alignfree: bool = False
    meshdir: Path | None = None
    defaults: dict[str, dict[str, dict[str, str]]] = field(default_factory=dict)  # class -> tag -> attrs
    files: dict[etree._Element, str] = field(default_factory=dict)  # included elements -> their file
    diagnostics: list[Diagnostic] = field(default_factory=list)

    @property
    def is_text(self) -> bool:
        """Read from a text, not a file (``<string>``, ``<robot_description>``...): it has no folder."""
        return self.file.startswith("<")

    def file_of(self, el: etree._Element) -> str:
        node: etree._Element | None = el
        while node is not None:
            f = self.files.get(node)
            if f is not None:
                return f
            node = node.getparent()
        return self.file

    def report(self, el: etree._Element | None, code: str, message: str, *, warning: bool = False) -> None:
        self.diagnostics.append(Diagnostic(
            code, message, self.file if el is None else self.file_of(el), None if el is None else el.sourceline,
            None if el is None else describe(el), Severity.WARNING if warning else Severity.ERROR))

    def raise_errors(self) -> None:
        errors = [d for d in self.diagnostics if d.severity is Severity.ERROR]
        if errors:
            raise ModelError(errors + [d for d in self.diagnostics if d.severity is Severity.WARNING])

    def lookup(self, el: etree._Element, cls: str, attr: str) -> str | None:
        """``attr`` of ``el``: its own value, else the one of its default class ``cls``."""
        v = el.get(attr)
        if v is not None:
            return str(v)
        return self.defaults.get(cls, {}).get(str(el.tag), {}).get(attr)


def _find_include(name: str, main_dir: Path, including_dir: Path) -> Path:
    """Where MuJoCo finds ``<include file=name>``: relative to the main file's folder first, then beside the
    file holding the ``<include>`` (an absolute path as is)."""
    first = (main_dir / name).resolve()
    if first.is_file() or including_dir == main_dir:
        return first
    second = (including_dir / name).resolve()
    return second if second.is_file() else first


def _expand_includes(doc: Document, el: etree._Element, main_dir: Path, including_dir: Path, seen: set[Path],
                     depth: int) -> None:
    for child in list(el):
        if not isinstance(child.tag, str):
            continue
        if child.tag != "include":
            _expand_includes(doc, child, main_dir, including_dir, seen, depth)
            continue
        name = child.get("file")
        if name is None:
            doc.report(child, "MJCF_INCLUDE", "<include> needs a file attribute")
            el.remove(child)
            continue
        referrer = doc.file_of(child)
        access.check_reference(name, referrer, child.sourceline)  # before any lookup
        path = _find_include(name, main_dir, including_dir)
        if path in seen:
            doc.report(child, "MJCF_INCLUDE", f"file {name!r} is included more than once (MuJoCo refuses "
                       "repeated includes)")
            el.remove(child)
            continue
        if len(seen) >= limits.MAX_SDF_INCLUDES:
            doc.report(child, "MJCF_INCLUDE", f"more than {limits.MAX_SDF_INCLUDES} included files "
                       "(RSF_MAX_SDF_INCLUDES)")
            el.remove(child)
            continue
        seen.add(path)
        try:
            data = access.read_included(path, uri=name, referrer=referrer, line=child.sourceline)
        except (access.FileRefused, access.ExpansionTooLarge):
            raise
        except (OSError, ModelError) as exc:
            doc.report(child, "MJCF_INCLUDE", f"cannot read included file {name!r} ({path}): "
                       f"{getattr(exc, 'strerror', None) or exc}")
            el.remove(child)
            continue
        sub, warnings = parse_mjcf_xml(data, str(path))
        doc.diagnostics.extend(warnings)
        # MuJoCo inserts the children of the included file's root, whatever the root is called
        # (<mujoco>, the older <mujocoinclude>, or any other)
        doc.files[sub] = str(path)  # errors inside name the included file; its own includes are referenced from it
        _expand_includes(doc, sub, main_dir, path.parent, seen, depth + 1)
        at = el.index(child)
        el.remove(child)
        for k, grand in enumerate(list(sub)):
            if isinstance(grand.tag, str):
                doc.files[grand] = str(path)
            el.insert(at + k, grand)


def _compiler(doc: Document, base: Path) -> None:
    for comp in doc.root.iterchildren("compiler"):
        for attr in comp.attrib:
            if attr not in COMPILER_ATTRS:
                doc.report(comp, "MJCF_UNKNOWN_ATTRIBUTE", f"unrecognized attribute {attr!r} (MuJoCo's schema)")
        angle = comp.get("angle")
        if angle is not None:
            if angle not in ("degree", "radian"):
                doc.report(comp, "MJCF_BAD_VALUE", f"angle={angle!r}: expected degree or radian")
            else:
                doc.angle_scale = math.pi / 180.0 if angle == "degree" else 1.0
        seq = comp.get("eulerseq")
        if seq is not None:
            if len(seq) != 3 or any(c not in "xyzXYZ" for c in seq):
                doc.report(comp, "MJCF_BAD_VALUE", f"eulerseq={seq!r}: expected three of x y z X Y Z")
            else:
                doc.eulerseq = seq
        auto = comp.get("autolimits")
        if auto is not None:
            if auto not in ("true", "false"):
                doc.report(comp, "MJCF_BAD_VALUE", f"autolimits={auto!r}: expected true or false")
            else:
                doc.autolimits = auto == "true"
        align = comp.get("alignfree")
        if align is not None:
            if align not in ("true", "false"):
                doc.report(comp, "MJCF_BAD_VALUE", f"alignfree={align!r}: expected true or false")
            else:
                doc.alignfree = align == "true"
        if comp.get("coordinate", "local") != "local":
            doc.report(comp, "MJCF_GLOBAL_COORDINATES", "global coordinates are no longer supported by MuJoCo "
                       "(convert the model with MuJoCo 2.3.3 or older)")
        assetdir, meshdir = comp.get("assetdir"), comp.get("meshdir")
        chosen = meshdir if meshdir is not None else assetdir
        if chosen is not None:
            doc.meshdir = base / chosen


def _defaults(doc: Document, el: etree._Element, parent: str | None, top: bool) -> None:
    for attr in el.attrib:
        if attr != "class":
            doc.report(el, "MJCF_UNKNOWN_ATTRIBUTE", f"unrecognized attribute {attr!r} (MuJoCo's schema)")
    cls = el.get("class")
    if cls is None:
        if not top:
            doc.report(el, "MJCF_DEFAULT", "a nested <default> needs a class attribute")
            return
        cls = MAIN
    if cls in doc.defaults and not (top and cls == MAIN):
        doc.report(el, "MJCF_DEFAULT", f"repeated default class name {cls!r}")
        return
    table: dict[str, dict[str, str]] = {tag: dict(v) for tag, v in doc.defaults.get(parent, {}).items()} \
        if parent is not None else doc.defaults.get(MAIN, {})
    doc.defaults[cls] = table
    nested = []
    for child in el:
        if not isinstance(child.tag, str):
            continue
        if child.tag == "default":
            nested.append(child)  # after this class's own values, which it inherits
            continue
        allowed = DEFAULT_CHILDREN.get(child.tag)
        if allowed is None:
            doc.report(child, "MJCF_UNKNOWN_ELEMENT", f"unrecognized element <{child.tag}> in <default>")
            continue
        for attr in child.attrib:
            if attr not in allowed:
                doc.report(child, "MJCF_UNKNOWN_ATTRIBUTE", f"unrecognized attribute {attr!r} (MuJoCo's schema)")
        values = table.setdefault(str(child.tag), {})
        if any(a in child.attrib for a in _ORIENTATION):  # a class's orientation replaces its parent's
            for a in _ORIENTATION:
                values.pop(a, None)
        values.update({str(k): str(v) for k, v in child.attrib.items()})
    for child in nested:
        _defaults(doc, child, cls, False)


def load_document(data: bytes | str, file: str) -> Document:
    """Parse and prepare ``data`` (the main file ``file``): includes, compiler, defaults."""
    root, warnings = parse_mjcf_xml(data, file)
    doc = Document(root, file)
    doc.diagnostics.extend(warnings)
    if root.tag != "mujoco":
        raise ModelError(Diagnostic("MJCF_ROOT", f"the root element is <{root.tag}>, MJCF needs <mujoco>", file,
                                    root.sourceline, describe(root)))
    base = Path(file).parent if file != "<string>" else Path.cwd()
    _expand_includes(doc, root, base, base, set(), 0)
    _compiler(doc, base)
    doc.diagnostics.extend(expand_replicates(root, doc.file_of, doc.angle_scale, doc.eulerseq, doc.files))
    doc.defaults[MAIN] = {}
    for d in root.iterchildren("default"):
        _defaults(doc, d, None, True)
    return doc
