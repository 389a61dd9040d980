"""MJCF ``<geom>`` and ``<inertial>`` as the Model's shapes and inertials.

Every geom is a visual; a geom that collides (``contype`` or ``conaffinity`` non-zero, MuJoCo's
default) is a collision as well. MuJoCo sizes are half sizes: a box ``size`` is half its
extents, a capsule's or cylinder's second size is half its length; ``fromto`` places a capsule,
cylinder, box or ellipsoid along a segment. A mesh geom names a ``<mesh>`` asset, whose file is
looked up under ``<compiler meshdir>`` (or ``assetdir``); a missing file does not matter to the
kinematics and is not an error here. A sphere, capsule, cylinder, ellipsoid or box that names a mesh is
fitted to it by MuJoCo (its ``size`` ignored; the fit needs the mesh's vertices, which the reader does
not read): its shape here is that mesh, with the warning ``MJCF_FITTED_PRIMITIVE``. A body without ``<inertial>`` gets no inertial: MuJoCo
derives one from its geoms, which this reader does not (docs/models.md).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import numpy as np
from lxml import etree

from robot_state_format.model.mjcf.document import Document
from robot_state_format.model.mjcf.orient import pose, vector, zaxis_matrix
from robot_state_format.model.types import Geometry, Inertial, Shape, Source
from robot_state_format.model.xml import describe
from robot_state_format.spatial import Transform

__all__ = ["element_pose", "inertial", "mesh_files", "shape"]

_GEOM_TYPES = frozenset({"plane", "hfield", "sphere", "capsule", "ellipsoid", "cylinder", "box", "mesh", "sdf"})
_FITTED = frozenset({"sphere", "capsule", "cylinder", "ellipsoid", "box"})  # fitted to a mesh they name
_KINDS = {"sphere": "sphere", "box": "box", "capsule": "capsule", "cylinder": "cylinder",
          "ellipsoid": "ellipsoid", "plane": "plane", "mesh": "mesh"}


def mesh_files(doc: Document) -> dict[str, tuple[str, tuple[float, float, float] | None]]:
    """Mesh asset name → (file path, scale)."""
    out: dict[str, tuple[str, tuple[float, float, float] | None]] = {}
    for asset in doc.root.iterchildren("asset"):
        for mesh in asset.iterchildren("mesh"):
            file = mesh.get("file")
            cls = mesh.get("class", "main")
            name = mesh.get("name") or (Path(file).stem if file else None)
            if name is None:
                continue
            scale_text = doc.lookup(mesh, cls, "scale")
            scale = None
            if scale_text is not None:
                v = vector(scale_text, 3, "scale", _reporter(doc, mesh))
                scale = (v[0], v[1], v[2]) if v is not None else None
            path = ""
            if file is not None:
                p = Path(file)
                if not p.is_absolute():
                    base = doc.meshdir if doc.meshdir is not None else Path(doc.file_of(mesh)).parent
                    p = base / p
                path = str(p)
            out[name] = (path, scale)
    return out


def _reporter(doc: Document, el: etree._Element) -> Callable[[str, str], None]:
    def fail(code: str, msg: str) -> None:
        doc.report(el, code, msg)
    return fail


def shape(doc: Document, el: etree._Element, cls: str, x_link_frame: Transform,
          meshes: dict[str, tuple[str, tuple[float, float, float] | None]]) -> tuple[Shape, bool]:
    """The geom as a Shape in its link's frame, and whether it collides."""

    def get(a: str) -> str | None:
        return doc.lookup(el, cls, a)

    def fail(code: str, msg: str) -> None:
        doc.report(el, code, msg)

    gtype = get("type") or "sphere"
    if gtype not in _GEOM_TYPES:
        fail("MJCF_BAD_VALUE", f"invalid keyword: {gtype!r} (a geom type is one of {', '.join(sorted(_GEOM_TYPES))})")
    size = vector(get("size") or "0", None, "size", fail) or (0.0,)
    if len(size) > 3:
        fail("MJCF_BAD_VALUE", "attribute 'size' has too much data")
    size = tuple(size[:3]) + (0.0,) * (3 - len(size[:3]))
    fromto_text = get("fromto")
    x = x_link_frame @ pose(get, lambda a: el.get(a) is not None, doc.angle_scale, doc.eulerseq, fail)
    length = 2.0 * size[1]
    mesh_ref = get("mesh")
    if mesh_ref is not None and gtype in _FITTED:
        # MuJoCo fits the primitive to the mesh (size ignored): shown as the mesh itself
        doc.report(el, "MJCF_FITTED_PRIMITIVE", f"a {gtype} fitted to mesh {mesh_ref!r} by MuJoCo: its shape "
                   "here is the mesh (the fitted size needs the mesh's vertices)", warning=True)
        if fromto_text is not None:
            fail("MJCF_FROMTO", "fromto cannot be used with mesh geom")
        gtype = "mesh"
    if fromto_text is not None and gtype in ("capsule", "cylinder", "box", "ellipsoid"):
        found = fromto_frame(fromto_text, fail)
        if found is not None:
            local, length = found
            x = x_link_frame @ local
            if length < 1e-15:
                fail("MJCF_BAD_VALUE", "fromto points too close in geom")
            # MuJoCo: a box's or ellipsoid's fromto makes both cross-section half sizes the first size
            size = (size[0], size[0] if gtype in ("box", "ellipsoid") else length / 2.0, length / 2.0)
    _check_size(gtype, size, fail)
    kind = _KINDS.get(gtype, "other")
    geo = Geometry(kind)
    if kind == "sphere":
        geo.radius = size[0]
    elif kind == "box":
        geo.size = (2 * size[0], 2 * size[1], 2 * size[2])
    elif kind in ("capsule", "cylinder"):
        geo.radius, geo.length = size[0], length
    elif kind == "ellipsoid":
        geo.radii = (size[0], size[1], size[2])
    elif kind == "plane":
        geo.size = (2 * size[0], 2 * size[1])
    elif kind == "mesh":
        if mesh_ref is None or mesh_ref not in meshes:
            fail("MJCF_UNKNOWN_MESH", f"mesh {mesh_ref!r} is not a <mesh> asset")
        else:
            geo.filename, geo.scale = meshes[mesh_ref]
    contype = get("contype") or "1"
    conaffinity = get("conaffinity") or "1"
    collides = contype.strip() != "0" or conaffinity.strip() != "0"
    return Shape(geo, x, el.get("name"), None, Source(doc.file_of(el), el.sourceline, describe(el))), collides


_POSITIVE = {"sphere": 1, "capsule": 2, "cylinder": 2, "box": 3, "ellipsoid": 3}  # sizes that must be > 0


def _check_size(gtype: str, size: tuple[float, ...], fail: Callable[[str, str], None]) -> None:
    """MuJoCo's refusals of a geom's sizes (a plane needs its third, the grid spacing)."""
    if gtype == "plane":
        if not size[2] > 0:
            fail("MJCF_BAD_VALUE", "plane size(3) must be positive")
        return
    for k in range(_POSITIVE.get(gtype, 0)):
        if not size[k] > 0:
            fail("MJCF_BAD_VALUE", f"size {k} must be positive in geom")
            return


def inertial(doc: Document, el: etree._Element) -> Inertial:

    def fail(code: str, msg: str) -> None:
        doc.report(el, code, msg)

    if el.get("pos") is None:
        fail("MJCF_BAD_VALUE", "required attribute missing: 'pos'")
    x = pose(el.get, lambda a: el.get(a) is not None, doc.angle_scale, doc.eulerseq, fail)
    mass_v = vector(el.get("mass") or "", 1, "mass", fail) if el.get("mass") is not None else None
    if mass_v is None and el.get("mass") is None:
        fail("MJCF_BAD_VALUE", "<inertial> needs a mass")
    mass = mass_v[0] if mass_v else 0.0
    inertia = (0.0, 0.0, 0.0, 0.0, 0.0, 0.0)
    diag, full = el.get("diaginertia"), el.get("fullinertia")
    if diag is not None:
        d = vector(diag, 3, "diaginertia", fail)
        if d is not None:
            inertia = (d[0], 0.0, 0.0, d[1], 0.0, d[2])
    elif full is not None:
        f = vector(full, 6, "fullinertia", fail)  # MuJoCo's order: ixx iyy izz ixy ixz iyz
        if f is not None:
            inertia = (f[0], f[3], f[4], f[1], f[5], f[2])
    return Inertial(mass, x, inertia)


def element_pose(doc: Document, el: etree._Element) -> Transform:
    """X_parent_element of an element without default class (body, frame): its own attributes."""

    def own(a: str) -> str | None:
        v = el.get(a)
        return None if v is None else str(v)

    return pose(own, lambda a: el.get(a) is not None, doc.angle_scale, doc.eulerseq, _reporter(doc, el))


def fromto_frame(text: str, fail: Callable[[str, str], None]) -> tuple[Transform, float] | None:
    """The frame a ``fromto`` gives a capsule, cylinder, box or ellipsoid (at the midpoint, z from "to" to
    "from", as MuJoCo orients it) and the distance between the points; None when the text is refused
    (reported through ``fail``)."""
    ft = vector(text, 6, "fromto", fail)
    if ft is None:
        return None
    a, b = np.array(ft[:3]), np.array(ft[3:])
    x = np.eye(4)
    x[:3, 3] = (a + b) / 2.0
    rot = zaxis_matrix(tuple(a - b))
    if rot is not None:
        x[:3, :3] = rot
    return x, float(np.linalg.norm(b - a))
