"""One entry point for every robot description: detect the format and dispatch to its reader."""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, NamedTuple

import numpy as np

from robot_state_format.errors import Diagnostic, DiagnosticError, ModelError, ModelIOError, Severity
from robot_state_format.lazy_modules import lazy_module
from robot_state_format.limits import read_input_file, shown_path
from robot_state_format.model import access
from robot_state_format.model.detect import (
    TAG_RE,
    detect_format,
    first_xacro_mark,
    looks_like_xacro,
    prolog_end,
    without_xacro_declaration,
)
from robot_state_format.model.types import WORLD, Joint, Model, Source
from robot_state_format.model.urdf import gazebo
from robot_state_format.model.urdf.reader import read_urdf
from robot_state_format.model.xml import parse_xml

if TYPE_CHECKING:
    from robot_state_format.model.xacro.child_control import Confinement

_SDF = lazy_module("robot_state_format.model.sdf")  # imported by the first SDFormat document (~45 ms)
# imported by the first xacro document (~20 ms: subprocess, tempfile, json, minidom), not by every start-up
_XACRO = lazy_module("robot_state_format.model.xacro.expand")
_MJCF = lazy_module("robot_state_format.model.mjcf")  # by the first MJCF document
_DMD = lazy_module("robot_state_format.model.directives")  # by the first Model Directives scene

__all__ = ["GAZEBO_REFUSES", "GazeboRefusal", "XacroLoad", "detect_format", "gazebo_refusals", "load_model", "load_model_file", "load_xacro", "looks_like_xacro"]

_XACRO_HINT = ("expand it first (`xacro FILE > out.urdf`), name it .xacro, declare xmlns:xacro on its root "
               "element, or pass --xacro (load_model_file(..., xacro=True))")


def load_model(
    text: str | bytes,
    *,
    file: str = "<string>",
    fmt: str | None = None,
    xacro_args: Mapping[str, str] | None = None,
    search_paths: Sequence[str] = (),
    xacro: bool = False,
) -> Model:
    """Read a robot description held in memory (URDF, SDFormat, MJCF or xacro text).

    xacro is expanded for a ``.xacro`` file, a root element declaring ``xmlns:xacro``, or when
    ``xacro`` is true. Otherwise unexpanded xacro (``${...}``, ``$(...)``, ``<xacro:...>``) is read as
    it stands, as urdfdom reads it: when that makes the document invalid, the first error
    (``XACRO_UNEXPANDED``) says it looks like xacro and how to expand it; when it does not, the
    same code is a warning.

    The document and every file it includes or adds are bounded together (``RSF_MAX_EXPANDED_*``,
    ``RSF_MAX_LINKS``: :mod:`~robot_state_format.model.access`).
    """
    with access.expanded_document() as outermost:
        if outermost:
            access.count_bytes(len(text), file)
        with np.errstate(over="ignore", invalid="ignore", divide="ignore"):  # overflow: MODEL_NON_FINITE_POSE
            model = _load_model(text, file=file, fmt=fmt, xacro_args=xacro_args, search_paths=search_paths,
                                xacro=xacro)
            _refuse_non_finite(model)
        return model


def _refuse_non_finite(model: Model) -> None:
    """Every pose the model places at its zero configuration is finite (composed along its joints from
    its roots, with a stack: no recursion), else ``MODEL_NON_FINITE_POSE`` naming the first one (values
    near 1e308 overflow once composed). ``check``, ``frames``, ``fk`` and the nodes refuse alike."""
    def bad(what: str, name: str, source: Source | None) -> ModelError:
        src = source or Source(model.source_file)
        return ModelError(Diagnostic("MODEL_NON_FINITE_POSE", f"{what} {name!r}: its pose is not finite at the zero "
                                     "configuration (values this large overflow once composed)",
                                     src.file, src.line, src.element))

    children: dict[str, list[Joint]] = {}
    for j in model.joints.values():
        if not (np.isfinite(j.origin).all() and np.isfinite(j.child_offset).all()):
            raise bad("joint", j.name, j.source)
        children.setdefault(j.parent, []).append(j)
    for kind, items in (("link", model.links), ("frame", model.frames), ("model", model.models)):
        for name, item in items.items():
            if not np.isfinite(item.pose).all():
                raise bad(kind, name, item.source)
    if not np.isfinite(model.pose).all():
        raise bad("model", model.name, model.root_source)
    todo = [(WORLD, np.eye(4))] + [(r, np.asarray(model.links[r].pose)) for r in model.root_links()]
    seen: set[str] = set()
    while todo:
        link, x = todo.pop()
        if link in seen:
            continue
        seen.add(link)
        for j in children.get(link, ()):
            xc = x @ j.origin @ j.child_offset
            if not np.isfinite(xc).all():
                raise bad("link", j.child, model.links[j.child].source if j.child in model.links else j.source)
            todo.append((j.child, xc))


def _load_model(text: str | bytes, *, file: str, fmt: str | None, xacro_args: Mapping[str, str] | None,
                search_paths: Sequence[str], xacro: bool) -> Model:
    kind = "xacro" if xacro else fmt or detect_format(text, None if file == "<string>" else file)
    if kind == "xacro":
        return load_xacro(text, file=file, xacro_args=xacro_args, search_paths=search_paths).model
    if kind == "urdf":
        if not looks_like_xacro(text):
            return _gazebo_warnings(read_urdf(text, file=file))
        try:
            model = read_urdf(text, file=file)
        except ModelError as exc:
            raise ModelError([_unexpanded(text, file, Severity.ERROR)] + exc.diagnostics) from None
        model.warnings.insert(0, _unexpanded(text, file, Severity.WARNING))
        return _gazebo_warnings(model)
    if kind == "sdf":
        sdf_model: Model = _SDF.read_sdf(text, file=file, search_paths=search_paths)
        return sdf_model
    if kind == "mjcf":
        mjcf_model: Model = _MJCF.read_mjcf(text, file=file)
        return mjcf_model
    if kind == "dmd":
        dmd_model: Model = _DMD.read_directives(
            text, file=file, search_paths=search_paths,
            load_file=lambda p, data: load_model(data, file=str(p), search_paths=search_paths))
        return dmd_model
    raise ModelError(Diagnostic("MODEL_UNKNOWN_FORMAT", f"unknown format {kind!r}", file, None))


GAZEBO_REFUSES = "libsdformat 12 (Gazebo) refuses this URDF: "


@dataclass(frozen=True)
class GazeboRefusal(Diagnostic):
    """A warning on a URDF (or expanded xacro) model: libsdformat 12's URDF conversion (Gazebo) refuses it
    (its message starts with :data:`GAZEBO_REFUSES`)."""


def _gazebo_warnings(model: Model) -> Model:
    """A plain URDF keeps urdfdom's verdict; what libsdformat's URDF conversion (Gazebo) refuses is a
    warning naming it (``check --gazebo`` then gives libsdformat's verdict; docs/sdformat.md)."""
    model.warnings.extend(GazeboRefusal(r.code, GAZEBO_REFUSES + r.message,
                                        r.source.file, r.source.line, r.source.element, Severity.WARNING)
                          for r in gazebo.refusals(model))
    return model


def gazebo_refusals(model: Model) -> list[Diagnostic]:
    """The warnings of a URDF (or expanded xacro) model that say libsdformat 12 (Gazebo) refuses it
    (:class:`GazeboRefusal`): libsdformat's verdict on the file is "refused" exactly when this list is not empty."""
    return [d for d in model.warnings if isinstance(d, GazeboRefusal)]


def _declare_xacro(text: str | bytes) -> str | bytes:
    """Declare the xacro namespace on the root element when ``xacro:`` is used without it (the
    ``xacro`` command accepts that; an XML parser with namespaces does not). Lines are unchanged."""
    head: str = text.decode("utf-8", "replace") if isinstance(text, bytes) else text
    if "xacro:" not in head or "xmlns:xacro" in head:
        return text
    m = TAG_RE.match(head, prolog_end(head))
    if m is None:
        return text
    out = head[:m.end()] + ' xmlns:xacro="http://www.ros.org/wiki/xacro"' + head[m.end():]
    return out.encode("utf-8") if isinstance(text, bytes) else out


def _unexpanded(text: str | bytes, file: str, severity: Severity) -> Diagnostic:
    data = text.encode("utf-8", "replace") if isinstance(text, str) else text
    at = max(first_xacro_mark(data), 0)
    line = data.count(b"\n", 0, at) + 1
    snippet = data[at:at + 40].split(b"\n")[0].decode("utf-8", "replace")
    return Diagnostic("XACRO_UNEXPANDED", f"this looks like unexpanded xacro ({snippet!r}), read as plain "
                      f"URDF; {_XACRO_HINT}", file, line, None, severity)


def load_model_file(
    path: str | os.PathLike[str],
    *,
    xacro_args: Mapping[str, str] | None = None,
    search_paths: Sequence[str] = (),
    xacro: bool = False,
) -> Model:
    """Read a robot description file (.urdf, .sdf, .world, .xacro, MJCF, or any XML of those, or Drake
    Model Directives .dmd.yaml); ``xacro``
    expands xacro whatever the file's name and content (see :func:`load_model`)."""
    p = Path(path)
    try:
        data = read_input_file(p)
    except OSError as exc:
        raise ModelIOError(f"{shown_path(p)}: cannot read: {exc.strerror or exc}") from None
    kind = "xacro" if xacro else detect_format(data, str(p))
    if kind == "xacro":
        return load_xacro(data, file=str(p), xacro_args=xacro_args, search_paths=search_paths).model
    return load_model(data, file=str(p), fmt=kind, search_paths=search_paths)


class XacroLoad(NamedTuple):
    """An expanded xacro document: the expanded ``text`` and the ``model`` read from it."""

    text: str
    model: Model


def load_xacro(
    text: str | bytes,
    *,
    file: str = "<string>",
    xacro_args: Mapping[str, str] | None = None,
    search_paths: Sequence[str] = (),
    confinement: Confinement | None = None,
) -> XacroLoad:
    """Expand xacro ``text`` and read the result (URDF or SDFormat); return both (:class:`XacroLoad`).

    The expansion runs in a bounded child process (``RSF_MAX_XACRO_*``); ``confinement`` for a document
    that is not trusted (see :func:`~robot_state_format.model.xacro.expand_xacro_mapped`).

    Diagnostics and element sources point into the xacro sources (the main file, an included file,
    or the macro body an element came from), not into the expanded text, wherever that is known.
    The tolerance warnings of the xacro sources themselves (``XML_BAD_VERSION``,
    ``XML_TRAILING_NUL``, ...) come first in ``model.warnings`` (and with the errors).
    """
    if not looks_like_xacro(text):
        # nothing to evaluate (e.g. a URDF written by xacro, which keeps xmlns:xacro): what the expansion gives,
        # the declaration dropped and every line kept, without loading the expansion machinery (15-20 ms of a
        # node's start, panda). The expansion's check first (the document well-formed as given, its errors
        # those of the original bytes): a second parse, at load time only.
        parse_xml(text, file)
        plain = without_xacro_declaration(text.decode("utf-8", "replace") if isinstance(text, bytes) else text)
        return XacroLoad(plain, load_model(plain, file=file, fmt=detect_format(plain, name=file), search_paths=search_paths))
    expansion = _XACRO.expand_xacro_mapped(_declare_xacro(text), file=file, args=xacro_args or {},
                                          search_paths=search_paths, confinement=confinement)
    try:
        model = load_model(expansion.text, file=file, fmt=detect_format(expansion.text, name=file),
                           search_paths=search_paths)
    except DiagnosticError as exc:
        remapped = expansion.remap_error(exc)
        if expansion.warnings:
            remapped = type(remapped)(remapped.diagnostics + expansion.warnings)
        raise remapped from None
    model = expansion.remap_model(model)
    model.warnings[:0] = expansion.warnings
    return XacroLoad(expansion.text, model)
