"""Low-level SDFormat element helpers: diagnostics collection, tags, numbers, poses, geometry."""

from __future__ import annotations

import math
import re

import numpy as np
from lxml import etree

from robot_state_format import numbers
from robot_state_format.errors import Diagnostic, Severity
from robot_state_format.model.inertia import valid_mass_matrix
from robot_state_format.model.types import Geometry, Inertial, Material, Source
from robot_state_format.model.xml import DRAKE_NS, describe
from robot_state_format.spatial import (
    Transform,
    from_rotation_translation,
    pose_to_transform,
    quaternion_to_matrix,
)

Version = tuple[int, int]

_NON_FINITE = ("inf", "infinity", "nan")  # words libsdformat reads in a joint limit


class Report:
    """Collects every diagnostic of one read (all files of an include tree)."""

    def __init__(self) -> None:
        self.diagnostics: list[Diagnostic] = []

    def add(self, code: str, message: str, file: str, el: etree._Element | None,
            severity: Severity = Severity.ERROR, element: str | None = None) -> None:
        line = el.sourceline if el is not None else None
        elem = element if element is not None else (describe_el(el) if el is not None else None)
        self.diagnostics.append(Diagnostic(code, message, file, line, elem, severity))

    def error(self, code: str, message: str, file: str, el: etree._Element | None = None) -> None:
        self.add(code, message, file, el)

    def warn(self, code: str, message: str, file: str, el: etree._Element | None = None) -> None:
        self.add(code, message, file, el, Severity.WARNING)

    def error_at(self, code: str, message: str, src: Source) -> None:
        self.diagnostics.append(Diagnostic(code, message, src.file, src.line, src.element))

    def warn_at(self, code: str, message: str, src: Source) -> None:
        self.diagnostics.append(Diagnostic(code, message, src.file, src.line, src.element, Severity.WARNING))

    @property
    def errors(self) -> list[Diagnostic]:
        return [d for d in self.diagnostics if d.severity is Severity.ERROR]

    @property
    def warnings(self) -> list[Diagnostic]:
        return [d for d in self.diagnostics if d.severity is Severity.WARNING]


def tag(el: etree._Element) -> str:
    """Element name with a ``drake:`` prefix for Drake's namespace, ``""`` for comments/PIs."""
    if not isinstance(el.tag, str):
        return ""
    q = etree.QName(el)
    if q.namespace == DRAKE_NS:
        return f"drake:{q.localname}"
    if q.namespace:
        prefix = el.prefix or "ns"
        return f"{prefix}:{q.localname}"
    return str(q.localname)


def describe_el(el: etree._Element) -> str:
    t = tag(el)
    if not t:
        return describe(el)
    name = el.get("name")
    return f"{t}[name={name}]" if name is not None else t


def source(el: etree._Element, file: str) -> Source:
    return Source(file, el.sourceline, describe_el(el))


def children(el: etree._Element, name: str | None = None) -> list[etree._Element]:
    return [c for c in el if isinstance(c.tag, str) and (name is None or tag(c) == name)]


def child(el: etree._Element, name: str) -> etree._Element | None:
    for c in el:
        if isinstance(c.tag, str) and tag(c) == name:
            return c
    return None


def text_of(el: etree._Element | None) -> str | None:
    if el is None:
        return None
    return (el.text or "").strip()


def parse_version(text: str | None) -> Version | None:
    if text is None:
        return None
    m = re.fullmatch(r"\s*([0-9]{1,9})\.([0-9]{1,9})\s*", text)
    if m is None:
        return None
    return (int(m.group(1)), int(m.group(2)))


def libsdformat_reads_version(text: str) -> bool:
    """Whether libsdformat 12 loads a file whose ``version`` is ``text`` it does not know (as 1.9):
    the version before a ``-`` or ``+`` suffix is empty, or its first three ``.``-separated parts
    (a trailing empty one aside) each start as an integer (``std::stoi``); otherwise it aborts with
    ``std::invalid_argument`` (``inf``, ``nan``, ``abc``, ``.5``), a refusal. Measured with ``sdf_ref``."""
    core = re.split(r"[-+]", text, maxsplit=1)[0]
    if not core:
        return True
    parts = core.split(".")[:3]
    if len(parts) > 1 and parts[-1] == "":
        parts.pop()
    return all(re.match(r"\s*[+-]?[0-9]", p) for p in parts)


class ValueParser:
    """Numbers and vectors from element text, reporting bad values instead of raising."""

    def __init__(self, report: Report, file: str) -> None:
        self.report = report
        self.file = file

    def floats(self, el: etree._Element, text: str | None, count: int | None, what: str,
               allow_infinite: bool = False) -> list[float] | None:
        """The numbers of ``text`` in libsdformat's dialect of :mod:`robot_state_format.numbers`; an
        error (``SDF_BAD_VALUE``) and None when one is not a number, underflows or overflows a double
        (libsdformat refuses ``1e-400`` and ``1e400``), is not finite (``allow_infinite``: +-inf and
        nan are read, as libsdformat reads joint limits; nan with a warning, ``SDF_NAN_VALUE``), or
        the count is wrong. A vector3 with more values reads the first three with a warning, as
        libsdformat does."""
        try:
            words = numbers.split_bounded(text or "")
            if count == 3 and len(words) > 3:
                self.report.warn("SDF_EXTRA_VALUES", f"{what}: expected 3 numbers, got {len(words)}; the first "
                                 "three are read (as libsdformat does)", self.file, el)
                words = words[:3]
            if count is not None and len(words) != count:
                self.report.error("SDF_BAD_VALUE", f"{what}: expected {count} numbers, got {len(words)}",
                                  self.file, el)
                return None
            if allow_infinite and any(w.lstrip("+-").lower() in _NON_FINITE for w in words):
                finite = [w for w in words if w.lstrip("+-").lower() not in _NON_FINITE]
                numbers.parse_words(finite, sdformat=True)  # the others still follow the grammar
                got = numbers.Numbers(tuple(float(w) for w in words))
                if any(math.isnan(v) for v in got.values):
                    self.report.warn("SDF_NAN_VALUE", f"{what}: {(text or '').strip()!r} is not a number; read as "
                                     "no bound (libsdformat loads it)", self.file, el)
            else:
                got = numbers.parse_words(words, sdformat=True)
        except numbers.NumberError as exc:
            self.report.error("SDF_BAD_VALUE", f"{what}: {exc}", self.file, el)
            return None
        return list(got.values)

    def float_child(self, parent: etree._Element, name: str, default: float | None,
                    allow_infinite: bool = False) -> float | None:
        el = child(parent, name)
        if el is None or not (el.text or "").strip():  # an empty value is the default (libsdformat)
            return default
        vals = self.floats(el, el.text, 1, f"<{name}>", allow_infinite)
        return vals[0] if vals else default

    def vec3_child(self, parent: etree._Element, name: str,
                   default: tuple[float, float, float] | None) -> tuple[float, float, float] | None:
        el = child(parent, name)
        if el is None or not (el.text or "").strip():
            return default
        vals = self.floats(el, el.text, 3, f"<{name}>")
        return (vals[0], vals[1], vals[2]) if vals else default

    def bool_child(self, parent: etree._Element, name: str, default: bool) -> bool:
        el = child(parent, name)
        if el is None:
            return default
        return self.boolean(el, el.text, default, f"<{name}>")

    def boolean(self, el: etree._Element, text: str | None, default: bool, what: str) -> bool:
        t = (text or "").strip().lower()
        if t in ("1", "true"):
            return True
        if t in ("0", "false"):
            return False
        self.report.error("SDF_BAD_VALUE", f"{what}: {text!r} is not a boolean", self.file, el)
        return default

    def pose(self, el: etree._Element | None) -> Transform:
        """A ``<pose>`` value (euler rpy, optionally in degrees, or quat_xyzw) as a 4x4."""
        if el is None:
            return np.eye(4)
        fmt = (el.get("rotation_format") or "euler_rpy").strip()
        degrees = self.boolean(el, el.get("degrees"), False, "degrees") if el.get("degrees") else False
        text = el.text or ""
        if not text.strip():
            return np.eye(4)
        if fmt == "quat_xyzw":
            vals = self.floats(el, text, 7, "<pose>")
            if vals is None:
                return np.eye(4)
            q = np.array(vals[3:7])
            n = float(np.linalg.norm(q))
            if n < 1e-12:
                self.report.error("SDF_BAD_VALUE", "<pose>: zero quaternion", self.file, el)
                return np.eye(4)
            return from_rotation_translation(quaternion_to_matrix([float(v) for v in q / n]), vals[:3])
        if fmt != "euler_rpy":
            self.report.error("SDF_BAD_VALUE", f"<pose>: unknown rotation_format {fmt!r}", self.file, el)
            return np.eye(4)
        vals = self.floats(el, text, 6, "<pose>")
        if vals is None:
            return np.eye(4)
        rpy = vals[3:6]
        if degrees:
            rpy = [math.radians(v) for v in rpy]
        return pose_to_transform(vals[:3], rpy)

    def geometry(self, el: etree._Element) -> Geometry:
        """Parse a ``<geometry>`` element (standard shapes and drake:capsule / drake:ellipsoid)."""
        shapes = children(el)
        if not shapes:
            self.report.error("SDF_BAD_GEOMETRY", "<geometry> has no shape", self.file, el)
            return Geometry("other")
        g = shapes[0]
        kind = tag(g)
        if kind == "box":
            size = self.vec3_child(g, "size", (1.0, 1.0, 1.0))
            return Geometry("box", size=size)
        if kind == "sphere":
            return Geometry("sphere", radius=self.float_child(g, "radius", 1.0))
        if kind == "cylinder":
            return Geometry("cylinder", radius=self.float_child(g, "radius", 1.0),
                            length=self.float_child(g, "length", 1.0))
        if kind in ("capsule", "drake:capsule"):
            return Geometry("capsule", radius=self._either(g, "radius", 0.5), length=self._either(g, "length", 1.0))
        if kind == "ellipsoid":
            radii = self.vec3_child(g, "radii", (1.0, 1.0, 1.0))
            return Geometry("ellipsoid", radii=radii)
        if kind == "drake:ellipsoid":
            return Geometry("ellipsoid", radii=(self._either(g, "a", 1.0), self._either(g, "b", 1.0),
                                                self._either(g, "c", 1.0)))
        if kind == "mesh":
            uri = text_of(child(g, "uri")) or ""
            scale = self.vec3_child(g, "scale", None)
            return Geometry("mesh", filename=uri, scale=scale)
        if kind == "plane":
            plane = self.floats(g, text_of(child(g, "size")) or "1 1", 2, "<plane><size>") or [1.0, 1.0]
            return Geometry("plane", size=tuple(plane))
        return Geometry("other")

    def _either(self, el: etree._Element, name: str, default: float) -> float:
        """A number from ``<name>`` or ``<drake:name>`` (Drake writes both)."""
        for n in (name, f"drake:{name}"):
            if child(el, n) is not None:
                v = self.float_child(el, n, default)
                return default if v is None else v
        return default

    def material(self, el: etree._Element | None) -> Material | None:
        if el is None:
            return None
        # every colour's value (3 or 4 numbers in [0, 1]) is checked with the specification (spec_check)
        for name in ("diffuse", "ambient"):
            c = child(el, name)
            if c is not None and (c.text or "").strip():
                vals = self.floats(c, c.text, None, f"<{name}>")
                if vals and len(vals) in (3, 4):
                    rgba = (vals[0], vals[1], vals[2], vals[3] if len(vals) == 4 else 1.0)
                    return Material(rgba=rgba)
        script = child(el, "script")
        if script is not None:
            return Material(name=text_of(child(script, "name")))
        return Material()

    def inertial(self, el: etree._Element) -> Inertial:
        mass = self.float_child(el, "mass", 1.0) or 0.0
        inertia = child(el, "inertia")
        defaults = (1.0, 0.0, 0.0, 1.0, 0.0, 1.0)
        vals = list(defaults)
        if inertia is not None:
            names = ("ixx", "ixy", "ixz", "iyy", "iyz", "izz")
            vals = [self.float_child(inertia, n, d) or 0.0 for n, d in zip(names, defaults)]
        six = (vals[0], vals[1], vals[2], vals[3], vals[4], vals[5])
        if not valid_mass_matrix(mass, six):
            self.report.error("SDF_INVALID_INERTIA", f"invalid inertia (mass {mass}, ixx ixy ixz iyy iyz izz "
                              f"{' '.join(f'{v:g}' for v in six)}): the mass must not be negative and the moments "
                              "must be positive semi-definite and satisfy the triangle inequality (libsdformat "
                              "refuses it)", self.file, el)
        return Inertial(mass=mass, origin=self.pose(child(el, "pose")), inertia=six)
