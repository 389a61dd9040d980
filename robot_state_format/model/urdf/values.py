"""The URDF reader's values: diagnostics (strict, or lenient where urdfdom drops an element), numbers,
vectors and ``<origin>`` transforms, read with urdfdom's grammar (:mod:`robot_state_format.numbers`).

:class:`ValueReader` is the base of the element reader in :mod:`robot_state_format.model.urdf.reader`.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import TypeVar

import numpy as np
from lxml import etree

from robot_state_format import numbers
from robot_state_format.errors import Diagnostic, Severity
from robot_state_format.model.types import Source
from robot_state_format.model.urdf.parts import _tag_name, describe, plain_vec3
from robot_state_format.spatial import Transform, quaternion_to_matrix, xyz_rpy_to_transform

_IDENTITY = np.eye(4)
_IDENTITY.flags.writeable = False  # shared: only ever copied
_ZERO3 = (0.0, 0.0, 0.0)
_new = object.__new__
_T = TypeVar("_T")


class ValueReader:
    """Diagnostics and values of one URDF document (collects problems instead of stopping at the first)."""

    def __init__(self, file: str, drake: bool = True) -> None:
        self.file = file
        self.drake = drake  # the document mentions drake: at all (skips namespace checks when not)
        self.diags: list[Diagnostic] = []
        self.version = (1, 0)
        self._lenient: etree._Element | None = None  # inside an element urdfdom drops when it cannot read it
        self._dropped = False
        # <origin> xyz/rpy texts read without a diagnostic -> their transform (robots repeat them)
        self._origins: dict[tuple[str | None, str | None], Transform] = {}
        self._vec3s: dict[str, tuple[float, float, float]] = {}  # vec3 fast-path texts -> values

    # -- diagnostics -------------------------------------------------------------------------
    def error(self, code: str, message: str, el: etree._Element) -> None:
        if self._lenient is not None:  # urdfdom logs it and ignores the element: a warning
            self._dropped = True
            self.warn(code, f"{message}; this <{_tag_name(self._lenient.tag)}> is ignored (as urdfdom does)", el)
            return
        self.diags.append(Diagnostic(code, message, self.file, el.sourceline, describe(el)))

    def lenient(self, el: etree._Element, read: Callable[..., _T], *args: object) -> _T | None:
        """``read(*args)`` with its errors as warnings; ``None`` (the element dropped) if there were any."""
        outer = self._lenient
        self._lenient = outer if outer is not None else el
        self._dropped = False
        try:
            result = read(*args)
        finally:
            dropped, self._lenient = self._dropped, outer
        if outer is None:
            self._dropped = False
        return None if dropped else result

    def warn(self, code: str, message: str, el: etree._Element) -> None:
        self.diags.append(Diagnostic(code, message, self.file, el.sourceline, describe(el),
                                     Severity.WARNING))

    def source(self, el: etree._Element) -> Source:
        # Source is a frozen dataclass; filling its __dict__ directly halves the cost of building
        # one per link, joint and shape (equal and hashable like one made by Source(...)).
        src = _new(Source)
        d = src.__dict__
        d["file"] = self.file
        d["line"] = el.sourceline
        d["element"] = describe(el)
        return src

    def source_as(self, el: etree._Element, element: str) -> Source:
        """:meth:`source` with the element's description (``describe(el)``) already known."""
        src = _new(Source)
        d = src.__dict__
        d["file"] = self.file
        d["line"] = el.sourceline
        d["element"] = element
        return src

    # -- values ------------------------------------------------------------------------------
    def number(self, el: etree._Element, attr: str, default: float | None = None,
               required: bool = False) -> float | None:
        text = el.get(attr)
        if text is None:
            if required:
                self.error("URDF_MISSING_ATTRIBUTE", f"<{_tag_name(el.tag)}> needs attribute '{attr}'", el)
            return default
        # one plain finite number, no white space around it: read without a diagnostic
        value = numbers.plain_float(text) if text.strip() == text else None
        if value is not None:
            return value
        try:
            value, under = numbers.parse_number(text, trailing_space=False)  # as urdfdom
        except numbers.NumberError as exc:
            self.error("URDF_BAD_NUMBER", f"attribute {attr}={text!r}: {exc}", el)
            return default
        if under:
            self.warn("URDF_NUMBER_UNDERFLOW", f"attribute {attr}={text!r} underflows to 0.0", el)
        return value

    def vector(self, el: etree._Element, attr: str, n: int, default: tuple[float, ...] | None = None,
               required: bool = False, allow_one: bool = False) -> tuple[float, ...] | None:
        text = el.get(attr)
        if text is None:
            if required:
                self.error("URDF_MISSING_ATTRIBUTE", f"<{_tag_name(el.tag)}> needs attribute '{attr}'", el)
            return default
        try:
            parts = numbers.split_bounded(text)
        except numbers.NumberError as exc:
            self.error("URDF_BAD_VECTOR", f"attribute {attr}: {exc}", el)
            return default
        if allow_one and len(parts) == 1:
            parts = parts * n
        if len(parts) != n:
            self.error("URDF_BAD_VECTOR", f"attribute {attr}={text!r} needs {n} numbers, found {len(parts)}", el)
            return default
        try:
            got = numbers.parse_words(parts)
        except numbers.NumberError as exc:
            self.error("URDF_BAD_NUMBER", f"attribute {attr}={text!r}: {exc}", el)
            return default
        if got.underflows:
            self.warn("URDF_NUMBER_UNDERFLOW", f"attribute {attr}={text!r}: {', '.join(got.underflows)} "
                      "underflow(s) to 0.0", el)
        return got.values

    def vec3(self, el: etree._Element, attr: str, default: tuple[float, ...] | None) -> tuple[float, ...] | None:
        """Fast path of :meth:`vector` for three finite numbers."""
        return self.vec3_text(el, attr, el.get(attr), default)

    def vec3_text(self, el: etree._Element, attr: str, text: str | None,
                  default: tuple[float, ...] | None) -> tuple[float, ...] | None:
        """:meth:`vec3` of ``text``, the value of ``el``'s attribute ``attr`` (already read)."""
        if text is None:
            return default
        hit = self._vec3s.get(text)  # a text read before on the fast path
        if hit is None:
            hit = plain_vec3(text)
            if hit is None:  # not three plain finite numbers: the checked path explains
                before = len(self.diags)
                got = self.vector(el, attr, 3, default)
                if got is not None and len(self.diags) == before:  # read silently: the same text reads the same
                    self._vec3s[text] = (got[0], got[1], got[2])
                return got
            self._vec3s[text] = hit
        return hit

    def origin(self, o: etree._Element | None) -> Transform:
        """X_parent_frame from an ``<origin>`` element (identity when ``o`` is None)."""
        if o is None:
            return _IDENTITY.copy()
        get = o.get
        key = (get("xyz"), get("rpy"))
        cached = self._origins.get(key)
        if cached is not None and get("quat_xyzw") is None:  # the same text read before, silently
            return cached.copy()
        before = len(self.diags)
        xyz = self.vec3(o, "xyz", _ZERO3)
        assert xyz is not None
        if get("quat_xyzw") is not None:
            return self._quat_origin(o, xyz)
        rpy = self.vec3(o, "rpy", _ZERO3)
        assert rpy is not None
        t = xyz_rpy_to_transform(xyz[0], xyz[1], xyz[2], rpy[0], rpy[1], rpy[2])
        if len(self.diags) == before:  # read without a diagnostic: the same text reads the same
            self._origins[key] = t  # shared with this first reader until the read ends (nothing there mutates it)
        return t

    def _quat_origin(self, o: etree._Element, xyz: tuple[float, ...]) -> Transform:
        t = _IDENTITY.copy()
        t[:3, 3] = xyz
        if o.get("rpy") is not None:  # urdfdom reads rpy
            self.warn("URDF_BAD_ORIGIN", "origin has both rpy and quat_xyzw; quat_xyzw is ignored", o)
            rpy = self.vec3(o, "rpy", _ZERO3)
            assert rpy is not None
            return xyz_rpy_to_transform(xyz[0], xyz[1], xyz[2], rpy[0], rpy[1], rpy[2])
        q = self.vector(o, "quat_xyzw", 4)
        if q is not None:
            norm = math.sqrt(sum(v * v for v in q))
            if norm < 1e-12:
                self.warn("URDF_BAD_QUATERNION", "origin quaternion quat_xyzw is zero; read as no rotation", o)
            else:
                t[:3, :3] = quaternion_to_matrix([v / norm for v in q])
        return t


__all__ = ["ValueReader"]
