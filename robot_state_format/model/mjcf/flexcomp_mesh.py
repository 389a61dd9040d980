"""The points and elements of a ``<flexcomp type="mesh">`` (measured against MuJoCo 4.0).

The ``file`` is looked up under ``<compiler meshdir>`` (else ``assetdir``), relative to the main file's
folder, else beside the main file; a model given as text has no folder and its mesh file is refused. A
description received over the network opens it only as it opens an included file (``model.access``: refused
before any lookup when the text itself names it; from a package file, only inside that package).
Read are Wavefront OBJ (``v`` lines in order, each as the float32 MuJoCo stores; ``f`` polygons fanned
into triangles from their first vertex, negative indices counted from the end) and binary STL (vertices
merged where their float32 coordinates are equal, in order of first use); an ASCII STL is refused, as
MuJoCo refuses it, and other formats are not read (``MJCF_UNSUPPORTED``). The elements MuJoCo makes: ``dim="2"`` the triangles; ``dim="1"`` the first
edge of each triangle; ``dim="3"`` the point ``origin`` (required) is put first and a tetrahedron (origin, triangle)
kept where its volume, seen from ``origin``, is positive (at least ``mjMINVAL``).
"""

from __future__ import annotations

import struct
from collections.abc import Callable
from pathlib import Path

import numpy as np
from lxml import etree

from robot_state_format.model import access
from robot_state_format.model.mjcf.document import Document

__all__ = ["mesh_points"]

MIN_VALUE = 1e-15  # mjMINVAL


def _obj(data: bytes) -> tuple[list[list[float]], list[int]] | str:
    verts: list[list[float]] = []
    tris: list[int] = []
    for raw in data.decode("utf-8", "replace").splitlines():
        words = raw.split()
        if not words:
            continue
        try:
            if words[0] == "v":
                verts.append([float(w) for w in words[1:4]])
            elif words[0] == "f":
                ids = [int(w.split("/")[0]) for w in words[1:]]
                ids = [i - 1 if i > 0 else len(verts) + i for i in ids]
                for k in range(1, len(ids) - 1):
                    tris += [ids[0], ids[k], ids[k + 1]]
        except ValueError:
            return f"not a number in OBJ line {raw.strip()!r}"
    return verts, tris


def _stl(data: bytes) -> tuple[list[list[float]], list[int]] | str:
    corners: list[tuple[float, ...]] = []
    if len(data) >= 84 and 84 + 50 * struct.unpack_from("<I", data, 80)[0] == len(data):
        for t in range(struct.unpack_from("<I", data, 80)[0]):
            vals = struct.unpack_from("<12f", data, 84 + 50 * t)
            corners += [vals[3:6], vals[6:9], vals[9:12]]
    else:
        return "not a binary STL (MuJoCo 4.0 reads no ASCII STL)"
    index: dict[tuple[float, ...], int] = {}
    verts: list[list[float]] = []
    tris: list[int] = []
    for c in corners:
        key = tuple(float(np.float32(v)) for v in c)
        if key not in index:
            index[key] = len(verts)
            verts.append(list(key))
        tris.append(index[key])
    return verts, tris


def _path(doc: Document, file: str) -> Path | None:
    p = Path(file)
    if p.is_absolute():
        return p
    if doc.is_text:
        return None
    return (doc.meshdir if doc.meshdir is not None else Path(doc.file).parent) / p


def mesh_points(doc: Document, el: etree._Element, dim: int, origin: tuple[float, ...],
                fail: Callable[[str, str], None]) -> tuple[np.ndarray, list[int]] | None:
    """The mesh's points (origin first when ``dim`` is 3) and MuJoCo's element list, or None (reported)."""
    file = el.get("file")
    if not file:
        fail("MJCF_BAD_FLEXCOMP", "File is required")
        return None
    suffix = Path(file).suffix.lower()
    if suffix not in (".obj", ".stl"):
        fail("MJCF_UNSUPPORTED", f"<flexcomp type='mesh'> file {file!r}: only OBJ and STL meshes are read")
        return None
    referrer = doc.file_of(el)
    access.check_reference(file, referrer, el.sourceline)  # a network description: refused before any lookup
    path = _path(doc, file)
    if path is None:
        fail("MJCF_MISSING_FILE", f"<flexcomp> mesh file {file!r}: a model given as text has no folder")
        return None
    try:
        with access.uncounted():  # mesh bytes are not XML: bounded by read_input_file, not the document budget
            data = access.read_included(path, uri=file, referrer=referrer, line=el.sourceline)
    except OSError as exc:
        fail("MJCF_MISSING_FILE", f"cannot open flexcomp mesh file {file!r} ({path}): {exc.strerror or exc}")
        return None
    got = _obj(data) if suffix == ".obj" else _stl(data)
    if isinstance(got, str):
        fail("MJCF_BAD_FLEXCOMP", f"mesh file {file!r}: {got}")
        return None
    verts, tris = got
    if not verts or not tris or any(len(v) != 3 for v in verts):
        fail("MJCF_BAD_FLEXCOMP", "Vertex and face data required")
        return None
    pts = np.array(verts, dtype=np.float32).astype(float)
    if dim == 2:
        return pts, tris
    if dim == 1:
        return pts, [i for k in range(0, len(tris), 3) for i in tris[k:k + 2]]
    o = np.array(origin, dtype=float)
    pts = np.vstack([o, pts])
    element: list[int] = []
    for k in range(0, len(tris), 3):
        if max(tris[k:k + 3]) + 1 >= len(pts) or min(tris[k:k + 3]) < 0:
            continue  # an out-of-range face: left to the element check (its ids as given)
        a, b, c = (pts[i + 1] - o for i in tris[k:k + 3])
        if float(np.dot(np.cross(a, b), c)) >= MIN_VALUE:
            element += [0, tris[k] + 1, tris[k + 1] + 1, tris[k + 2] + 1]
    return pts, element
