"""Triangles for every visual: primitives built here, meshes read with trimesh (viser's own dependency).

A mesh file is found by the readers' rules (:func:`robot_state_format.model.sdf.include.resolve_uri`):
``package://`` through the ament index and ``ROS_PACKAGE_PATH``, ``model://`` and relative names through
the search paths (``--search-path``, ``GZ_SIM_RESOURCE_PATH``, ``SDF_PATH``, ...), a relative name
first next to the file that declares it, ``file://`` and absolute paths as they are. A mesh that is not
found or that trimesh cannot read (a DAE without pycollada, a damaged file) is a warning and a
placeholder (a small magenta box at the visual's origin), never a failure. Files are read through
:func:`robot_state_format.limits.read_input_file` (regular files only, size bounded).
"""

from __future__ import annotations

import io
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

from robot_state_format.lazy_modules import optional_module
from robot_state_format.limits import read_input_file
from robot_state_format.model.sdf.include import resolve_uri
from robot_state_format.model.types import Geometry, Shape

trimesh = optional_module("trimesh")

__all__ = ["MESH_BYTES", "PLACEHOLDER_SIZE", "Triangles", "resolve_mesh", "triangles"]

MESH_BYTES = 256 << 20  # the largest mesh file read
PLACEHOLDER_SIZE = 0.05  # m, the edge of the box shown for a mesh that cannot be shown
SEGMENTS = 32


@dataclass
class Triangles:
    vertices: NDArray[np.float32]  # (V, 3) in the visual's frame, scale applied
    faces: NDArray[np.uint32]  # (F, 3)
    placeholder: bool = False


def resolve_mesh(filename: str, declared_in: str, search_paths: Sequence[str] = ()) -> Path | None:
    """The file a mesh names, by the readers' rules, or None when it is not found."""
    base = Path(declared_in).parent if declared_in and not declared_in.startswith("<") else None
    try:
        return resolve_uri(filename, base, search_paths)
    except (OSError, ValueError):
        return None


def _mesh(geo: Geometry) -> Triangles:
    if geo.kind == "box" and geo.size is not None:
        return _from(trimesh.creation.box(extents=[float(v) for v in geo.size[:3]]))
    if geo.kind == "sphere" and geo.radius is not None:
        return _from(trimesh.creation.icosphere(subdivisions=3, radius=float(geo.radius)))
    if geo.kind == "cylinder" and geo.radius is not None and geo.length is not None:
        return _from(trimesh.creation.cylinder(radius=float(geo.radius), height=float(geo.length), sections=SEGMENTS))
    if geo.kind == "capsule" and geo.radius is not None and geo.length is not None:
        return _from(trimesh.creation.capsule(height=float(geo.length), radius=float(geo.radius),
                                              count=[SEGMENTS, SEGMENTS]))
    if geo.kind == "ellipsoid" and geo.radii is not None:
        t = _from(trimesh.creation.icosphere(subdivisions=3, radius=1.0))
        t.vertices = (t.vertices * np.asarray(geo.radii, dtype=np.float32)).astype(np.float32)
        return t
    if geo.kind == "plane" and geo.size is not None:
        return _from(trimesh.creation.box(extents=[float(geo.size[0]), float(geo.size[1]), 1e-3]))
    raise ValueError(f"no triangles for a {geo.kind} geometry")


def _from(mesh: Any) -> Triangles:
    vertices = np.asarray(mesh.vertices, dtype=np.float32).reshape(-1, 3)
    faces = np.asarray(mesh.faces, dtype=np.uint32).reshape(-1, 3)
    return Triangles(vertices, faces)


def placeholder() -> Triangles:
    t = _from(trimesh.creation.box(extents=[PLACEHOLDER_SIZE] * 3))
    t.placeholder = True
    return t


def _read_mesh(path: Path, scale: tuple[float, float, float] | None) -> Triangles:
    data = read_input_file(path, limit=MESH_BYTES)
    loaded = trimesh.load(io.BytesIO(data), file_type=path.suffix.lstrip(".").lower(), force="mesh")
    t = _from(loaded)
    if len(t.faces) == 0:
        raise ValueError("no triangles in the file")
    if scale is not None:
        t.vertices = (t.vertices * np.asarray(scale, dtype=np.float32)).astype(np.float32)
    return t


def triangles(shape: Shape, mesh_path: Path | None, warnings: list[str], where: str, *,
              network: bool = False) -> Triangles:
    """The triangles of a visual in its own frame; a placeholder (and a warning naming ``where`` and the
    file) for a mesh that cannot be shown, or a geometry without a shape (``other``, missing sizes).
    ``network``: the model came over the network; a mesh without a path was not looked up (not a
    ``package://`` file inside its package), and why a mesh was not read is said without the loader's
    words (they may quote the file)."""
    geo = shape.geometry
    if geo.kind != "mesh":
        try:
            return _mesh(geo)
        except ValueError as exc:
            warnings.append(f"{where}: {exc}: shown as a placeholder")
            return placeholder()
    if mesh_path is None:
        why = ("not opened: a description received over the network opens only package:// meshes inside their "
               "package" if network else "not found")
        warnings.append(f"{where}: mesh {geo.filename!r} {why}: shown as a placeholder")
        return placeholder()
    try:
        return _read_mesh(mesh_path, geo.scale)
    except Exception as exc:  # noqa: BLE001 any mesh the loaders cannot read is shown as a placeholder
        why = exc.strerror if isinstance(exc, OSError) and exc.strerror else (
            type(exc).__name__ if network else str(exc) or type(exc).__name__)
        warnings.append(f"{where}: mesh {str(mesh_path)!r} not read ({why}): shown as a placeholder")
        return placeholder()
