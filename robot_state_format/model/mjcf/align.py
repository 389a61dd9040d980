"""``<freejoint align="true">`` (and ``<compiler alignfree="true">``): MuJoCo moves such a body's frame onto
its inertial frame, so the free joint's value, the body's pose and everything inside it are expressed
there.

MuJoCo 4.0 aligns a body whose only joint is free and that has no child bodies: ``align="true"`` on a
``<freejoint>``, or ``align`` absent (or ``auto``) with ``<compiler alignfree="true">`` (a ``<joint
type="free">`` follows the compiler). The inertial frame is the ``<inertial>`` element's pose (its
principal axes when ``fullinertia`` is given), else the only geom's frame, else the principal frame
of the geoms' combined inertia (primitive shapes; masses from ``mass`` or ``density`` times volume), as
MuJoCo computes it from the geoms. Principal axes are ordered by decreasing moment, as MuJoCo orders
them, and made right-handed.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np
from lxml import etree

from robot_state_format.model.mjcf.document import Document
from robot_state_format.model.mjcf.orient import pose, vector
from robot_state_format.model.mjcf.shapes import element_pose, fromto_frame
from robot_state_format.spatial import Transform

__all__ = ["aligned", "inertial_frame"]

_BODIES = ("body", "replicate", "attach", "flexcomp")


def aligned(doc: Document, el: etree._Element, joints: list[tuple[etree._Element, str, Transform]]) -> bool:
    """Whether MuJoCo aligns this body's frame with its inertial frame."""
    if len(joints) != 1:
        return False
    j, cls, _ = joints[0]
    if j.tag == "freejoint":
        flag = j.get("align", "auto")
        if flag not in ("auto", "true", "false"):
            return False
        want = doc.alignfree if flag == "auto" else flag == "true"
    else:
        want = (doc.lookup(j, cls, "type") or "hinge") == "free" and doc.alignfree
    return want and not any(_has_child_body(c) for c in el)


def _has_child_body(el: etree._Element) -> bool:
    if el.tag in _BODIES:
        return True
    return el.tag == "frame" and any(_has_child_body(c) for c in el)


def _quat_mul(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Hamilton product of (w, x, y, z) quaternions."""
    w1, x1, y1, z1 = a
    w2, x2, y2, z2 = b
    return np.array([w1 * w2 - x1 * x2 - y1 * y2 - z1 * z2, w1 * x2 + x1 * w2 + y1 * z2 - z1 * y2,
                     w1 * y2 - x1 * z2 + y1 * w2 + z1 * x2, w1 * z2 + x1 * y2 - y1 * x2 + z1 * w2])


def _quat_matrix(q: np.ndarray) -> np.ndarray:
    w, x, y, z = q / np.linalg.norm(q)
    return np.array([[1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y)],
                     [2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x)],
                     [2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)]])


def _principal(inertia: np.ndarray) -> np.ndarray:
    """The principal axes MuJoCo's compiler finds (``mju_eig3``): cyclic Jacobi rotations accumulated as a
    quaternion, each zeroing the largest off-diagonal term until it is below 1e-14, then the moments sorted
    in decreasing order by quarter turns; the sign and order of the axes are that procedure's, which
    alignment depends on. Each rotation's half-angle sine is taken as ``|t| c / sqrt(2 (1 + c))`` (exact
    for small angles, where ``sqrt((1 - c) / 2)`` loses every digit): with it the result equals the
    ``mujoco`` 4.0 wheel's ``mju_eig3`` within 2e-15 on random inertias (``test_mjcf_align.py``)."""
    eps = 1e-14
    quat = np.array([1.0, 0.0, 0.0, 0.0])
    values = np.diag(inertia).copy()
    for _ in range(500):
        r = _quat_matrix(quat)
        d = r.T @ inertia @ r
        values = np.diag(d).copy()
        off = [abs(d[0, 1]), abs(d[0, 2]), abs(d[1, 2])]
        if off[0] > off[1] and off[0] > off[2]:
            row, col, axis = 0, 1, 2
        elif off[1] > off[2]:
            row, col, axis = 0, 2, 1
        else:
            row, col, axis = 1, 2, 0
        if abs(d[row, col]) < eps:
            break
        tau = (d[col, col] - d[row, row]) / (2 * d[row, col])
        t = 1.0 / (tau + math.sqrt(1 + tau * tau)) if tau >= 0 else -1.0 / (-tau + math.sqrt(1 + tau * tau))
        c = 1.0 / math.sqrt(1 + t * t)
        half = abs(t) * c / math.sqrt(2.0 * (1.0 + c))
        step = np.zeros(4)
        step[axis + 1] = -half if tau >= 0 else half
        if axis == 1:
            step[axis + 1] = -step[axis + 1]
        step[0] = math.sqrt(1.0 - step[axis + 1] ** 2)
        quat = _quat_mul(quat, step / np.linalg.norm(step))
        quat /= np.linalg.norm(quat)
    for j in range(3):
        lead = j % 2
        if values[lead] + eps < values[lead + 1]:
            values[lead], values[lead + 1] = values[lead + 1], values[lead]
            turn = np.zeros(4)
            turn[0] = turn[(lead + 2) % 3 + 1] = 0.707106781186548  # MuJoCo's rounding of sqrt(1/2)
            quat = _quat_mul(quat, turn)
            quat /= np.linalg.norm(quat)
    return _quat_matrix(quat)


def _geom_frame(doc: Document, el: etree._Element, cls: str) -> tuple[Transform, list[float]]:
    """A geom's frame in its parent (``fromto`` included) and its sizes (half lengths)."""

    def get(a: str) -> str | None:
        return doc.lookup(el, cls, a)

    def fail(code: str, msg: str) -> None:
        doc.report(el, code, msg)

    gtype = get("type") or "sphere"
    size = list(vector(get("size") or "0", None, "size", fail) or (0.0,)) + [0.0, 0.0]
    x = pose(get, lambda a: el.get(a) is not None, doc.angle_scale, doc.eulerseq, fail)
    ft = get("fromto")
    if ft is not None and gtype in ("capsule", "cylinder", "box", "ellipsoid"):
        found = fromto_frame(ft, fail)
        if found is not None:
            x, length = found
            if gtype in ("capsule", "cylinder"):
                size[1] = length / 2.0
            else:  # a box's or ellipsoid's cross-section takes the first size twice (MuJoCo)
                size[1], size[2] = size[0], length / 2.0
    return x, size[:3]


def _geoms(doc: Document, el: etree._Element, cls: str, x: Transform,
           out: list[tuple[etree._Element, str, Transform]]) -> None:
    for child in el:
        if child.tag == "geom":
            out.append((child, child.get("class") or cls, x))
        elif child.tag == "frame":
            _geoms(doc, child, child.get("childclass") or cls, x @ element_pose(doc, child), out)


def _geom_mass(doc: Document, el: etree._Element, cls: str) -> tuple[Transform, float, np.ndarray] | None:
    """(frame in the body, mass, inertia about its centre in its frame) of a primitive geom, or None."""
    if _names_mesh(doc, el, cls):  # MuJoCo centres a mesh on its own inertial frame: needs its vertices
        return None
    x, (a, b, c) = _geom_frame(doc, el, cls)
    gtype = doc.lookup(el, cls, "type") or "sphere"
    if gtype == "sphere":
        vol, i = 4.0 / 3.0 * math.pi * a ** 3, [0.4 * a * a] * 3
    elif gtype == "box":
        vol, i = 8 * a * b * c, [(b * b + c * c) / 3, (a * a + c * c) / 3, (a * a + b * b) / 3]
    elif gtype == "ellipsoid":
        vol, i = 4.0 / 3.0 * math.pi * a * b * c, [(b * b + c * c) / 5, (a * a + c * c) / 5, (a * a + b * b) / 5]
    elif gtype == "cylinder":
        vol = math.pi * a * a * 2 * b
        i = [(3 * a * a + 4 * b * b) / 12] * 2 + [a * a / 2]
    elif gtype == "capsule":  # a cylinder of length 2b and two hemispheres, about the centre
        cyl, sph = math.pi * a * a * 2 * b, 4.0 / 3.0 * math.pi * a ** 3
        vol = cyl + sph
        h = 2 * b
        side = cyl * (3 * a * a + h * h) / 12 + sph * (0.4 * a * a + h * h / 4 + 3 * h * a / 8)
        i = [side / vol, side / vol, (cyl * a * a / 2 + sph * 0.4 * a * a) / vol]
    else:
        return None
    fail = _fail(doc, el)
    mass_text, dens_text = doc.lookup(el, cls, "mass"), doc.lookup(el, cls, "density")
    if mass_text is not None:
        mv = vector(mass_text, 1, "mass", fail)
        mass = mv[0] if mv else 0.0
    else:
        dv = vector(dens_text, 1, "density", fail) if dens_text is not None else (1000.0,)
        mass = (dv[0] if dv else 1000.0) * vol
    return x, mass, mass * np.diag(i)


def _names_mesh(doc: Document, el: etree._Element, cls: str) -> bool:
    """A mesh geom, or a primitive MuJoCo fits to a mesh: its frame moves to the mesh's inertial frame."""
    return doc.lookup(el, cls, "type") == "mesh" or doc.lookup(el, cls, "mesh") is not None


def _fail(doc: Document, el: etree._Element) -> Callable[[str, str], None]:
    def fail(code: str, msg: str) -> None:
        doc.report(el, code, msg)
    return fail


def inertial_frame(doc: Document, el: etree._Element, cls: str) -> Transform | None:
    """X_body_inertial as MuJoCo computes it for alignment, or None when it cannot be told (reported)."""
    for child in el.iterchildren("inertial"):
        fail = _fail(doc, child)
        own = child  # bound for the closures below

        def explicit(a: str, c: etree._Element = own) -> bool:
            return c.get(a) is not None

        x = pose(own.get, explicit, doc.angle_scale, doc.eulerseq, fail)
        full = child.get("fullinertia")
        if full is not None:
            f = vector(full, 6, "fullinertia", fail)
            if f is not None:
                x[:3, :3] = _principal(np.array([[f[0], f[3], f[4]], [f[3], f[1], f[5]], [f[4], f[5], f[2]]]))
        return x
    geoms: list[tuple[etree._Element, str, Transform]] = []
    _geoms(doc, el, cls, np.eye(4), geoms)
    if len(geoms) == 1 and not _names_mesh(doc, *geoms[0][:2]):
        g, gcls, xf = geoms[0]
        return xf @ _geom_frame(doc, g, gcls)[0]
    parts = []
    for g, gcls, xf in geoms:
        found = _geom_mass(doc, g, gcls)
        if found is None:
            doc.report(g, "MJCF_ALIGN_NOT_READ", "the inertial frame of this body's geoms (a mesh, a primitive "
                       "fitted to one, or a capsule among several) is not computed: <freejoint align> is not "
                       "applied", warning=True)
            return None
        parts.append((xf @ found[0], found[1], found[2]))
    total = sum(m for _, m, _ in parts)
    if not parts or total <= 0:
        return None
    com = sum(m * x[:3, 3] for x, m, _ in parts) / total
    inertia = np.zeros((3, 3))
    for x, m, i in parts:
        r, d = x[:3, :3], x[:3, 3] - com
        inertia += r @ i @ r.T + m * (float(d @ d) * np.eye(3) - np.outer(d, d))
    out = np.eye(4)
    out[:3, :3], out[:3, 3] = _principal(inertia), com
    return out
