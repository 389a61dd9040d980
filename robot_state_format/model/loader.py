"""One entry point for every robot description: detect the format and dispatch to its reader."""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from pathlib import Path

from robot_state_format.errors import Diagnostic, ModelError, ModelIOError
from robot_state_format.model.types import Model


def detect_format(text: str | bytes, path: str | None = None) -> str:
    """Return ``"xacro"``, ``"urdf"`` or ``"sdf"`` from a file name and the document's content.

    A ``.xacro`` name, or a ``xmlns:xacro`` declaration, means xacro; otherwise the first
    element decides: ``<robot>`` is URDF, ``<sdf>`` is SDFormat.
    """
    head = text[:65536].decode("utf-8", "replace") if isinstance(text, bytes) else text[:65536]
    if path is not None and (path.endswith(".xacro") or path.endswith(".urdf.xacro")):
        return "xacro"
    if "xmlns:xacro" in head:
        return "xacro"
    import re

    for m in re.finditer(r"<([A-Za-z_][\w:.-]*)", head):
        tag = m.group(1)
        if tag == "robot":
            return "urdf"
        if tag == "sdf":
            return "sdf"
        if not tag.startswith("?") and tag not in ("!--",):
            break
    if path is not None:
        suffix = Path(path).suffix.lower()
        if suffix == ".urdf":
            return "urdf"
        if suffix in (".sdf", ".world"):
            return "sdf"
    raise ModelError(Diagnostic("MODEL_UNKNOWN_FORMAT",
                                "cannot tell the format: expected a <robot> (URDF) or <sdf> root, or a .xacro file",
                                path or "<string>", 1))


def load_model(
    text: str | bytes,
    *,
    file: str = "<string>",
    fmt: str | None = None,
    xacro_args: Mapping[str, str] | None = None,
    search_paths: Sequence[str] = (),
) -> Model:
    """Read a robot description held in memory (URDF, SDFormat or xacro text)."""
    kind = fmt or detect_format(text, None if file == "<string>" else file)
    if kind == "xacro":
        return load_xacro(text, file=file, xacro_args=xacro_args, search_paths=search_paths)[1]
    if kind == "urdf":
        from robot_state_format.model.urdf import read_urdf

        return read_urdf(text, file=file)
    if kind == "sdf":
        from robot_state_format.model.sdf import read_sdf

        return read_sdf(text, file=file, search_paths=search_paths)
    raise ModelError(Diagnostic("MODEL_UNKNOWN_FORMAT", f"unknown format {kind!r}", file, None))


def load_model_file(
    path: str | os.PathLike[str],
    *,
    xacro_args: Mapping[str, str] | None = None,
    search_paths: Sequence[str] = (),
) -> Model:
    """Read a robot description file (.urdf, .sdf, .world, .xacro, or any XML of those)."""
    p = Path(path)
    try:
        data = p.read_bytes()
    except OSError as exc:
        raise ModelIOError(f"{p}: cannot read: {exc.strerror or exc}") from None
    kind = detect_format(data, str(p))
    if kind == "xacro":
        return load_xacro(data, file=str(p), xacro_args=xacro_args, search_paths=search_paths)[1]
    return load_model(data, file=str(p), fmt=kind, search_paths=search_paths)


def load_xacro(
    text: str | bytes,
    *,
    file: str = "<string>",
    xacro_args: Mapping[str, str] | None = None,
    search_paths: Sequence[str] = (),
) -> tuple[str, Model]:
    """Expand xacro ``text`` and read the result (URDF or SDFormat); return both.

    Diagnostics and element sources point into the xacro sources (the main file, an included file,
    or the macro body an element came from), not into the expanded text, wherever that is known.
    """
    from robot_state_format.errors import DiagnosticError
    from robot_state_format.model.xacro import expand_xacro_mapped

    expansion = expand_xacro_mapped(text, file=file, args=xacro_args or {}, search_paths=search_paths)
    try:
        model = load_model(expansion.text, file=file, fmt=detect_format(expansion.text), search_paths=search_paths)
    except DiagnosticError as exc:
        raise expansion.remap_error(exc) from None
    return expansion.text, expansion.remap_model(model)
