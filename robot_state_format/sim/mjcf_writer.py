"""An MJCF document for MuJoCo generated from the project's :class:`Model` (docs/simulation.md).

MuJoCo reads neither SDFormat nor this package's resolved frames, and its URDF importer renames
planar joints and fixes every root; generating the MJCF from the Model keeps every link a body
named as the link (``robot_a::link1`` in worlds) and every joint named as the joint, so the state
maps by name in both directions.  The mapping is recorded in :class:`MjcfLayout`.

* A body per link, placed at its zero-configuration pose relative to its parent link; the joint
  sits in the child body at the joint frame's origin (``X_CJ``), axes turned into the body frame.
* revolute/continuous → hinge, prismatic → slide, ball → ball, floating → free (the body is moved
  to the top level: MuJoCo allows free joints there only), planar → ``NAME__x``/``NAME__y`` slides
  and ``NAME__yaw`` hinge, universal/revolute2 → ``NAME__1``/``NAME__2`` hinges; screw joints
  are refused (MuJoCo has none).
* Floating bases: a root link gets a free joint ``<link>__free`` when it floats — SDFormat models
  that are not static, URDF robots only when asked (``floating_base=True``; a URDF root is
  fixed, as MuJoCo's own importer and robot_state_publisher treat it).
* Mimic joints → ``<equality><joint>`` constraints ``follower = offset + multiplier * leader``.
* Inertials as given (bodies without one get MuJoCo's lower bounds); primitive collision shapes
  (box, sphere, cylinder, capsule, ellipsoid, plane) as geoms; meshes are left out (reported).
  Geoms of static models (the ground) collide with the others; robots do not collide with
  themselves nor with each other.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from xml.sax.saxutils import quoteattr

import numpy as np

from robot_state_format.errors import ConversionError
from robot_state_format.kinematics.tree import planar_basis
from robot_state_format.model.types import SCOPE, WORLD, Geometry, Inertial, Joint, JointType, Model
from robot_state_format.sim.mapping import FloatArray
from robot_state_format.spatial import Transform, matrix_to_quaternion

DEFAULT_DT = 0.002
"""MuJoCo's default time step (s)."""

FREE_SUFFIX = "__free"

MIN_MASS = 1e-6
"""The generated MJCF's ``boundmass`` (kg): MuJoCo raises every body's mass to it (no inertial: mass 0)."""
MIN_INERTIA = 1e-9
"""The generated MJCF's ``boundinertia`` (kg m²): MuJoCo raises every principal moment to it."""


@dataclass
class MappedJoint:
    """How one moving model joint maps onto MuJoCo joints."""

    name: str  # model-relative joint name
    type: JointType
    mj_names: list[str]  # MuJoCo joint names, in the order of the joint's coordinates
    r_cj: np.ndarray  # rotation of the joint frame in the child body frame (ball: conjugation)
    t_cj: np.ndarray  # its origin in the child body frame
    free_a: Transform | None = None  # floating: X_world_body = A @ M(q) @ B
    free_b: Transform | None = None


@dataclass
class FreeRoot:
    """A root link with a free joint (a floating base)."""

    link: str
    mj_name: str


@dataclass
class MjcfLayout:
    xml: str
    joints: list[MappedJoint]
    free_roots: list[FreeRoot]
    bodies: list[str]  # link names, MuJoCo body i + 1
    notes: list[str] = field(default_factory=list)


def _f(x: float) -> str:
    return repr(float(x))


def _vec(v: np.ndarray | tuple[float, ...] | list[float]) -> str:
    return " ".join(_f(x) for x in v)


def _posquat(x: Transform) -> str:
    qx, qy, qz, qw = matrix_to_quaternion(np.asarray(x)[:3, :3])
    return f'pos="{_vec(np.asarray(x)[:3, 3])}" quat="{_vec((qw, qx, qy, qz))}"'


def _is_static(model: Model, link: str) -> bool:
    parts = link.split(SCOPE)
    paths = [""] + [SCOPE.join(parts[:k]) for k in range(1, len(parts))]
    return any(model.models[p].static for p in paths if p in model.models)


def floating_roots(model: Model, floating_base: bool | None = None) -> list[str]:
    """Root links that get a free joint (see the module docstring)."""
    roots = [r for r in model.root_links() if r != WORLD and not _is_static(model, r)]
    if floating_base is None:
        floating_base = model.format != "urdf"
    return roots if floating_base else []


def build_mjcf(model: Model, *, dt: float = DEFAULT_DT, floating_base: bool | None = None) -> MjcfLayout:
    """The MJCF text of ``model`` and its joint mapping (``ConversionError`` on what MuJoCo cannot do)."""
    if not (dt > 0):
        raise ConversionError(f"time step {dt!r} must be positive")
    free = set(floating_roots(model, floating_base))
    default_axis = (1.0, 0.0, 0.0) if model.format == "urdf" else (0.0, 0.0, 1.0)  # a joint without <axis>
    children: dict[str, list[Joint]] = {}
    for j in model.joints.values():
        children.setdefault(j.parent, []).append(j)
    notes: list[str] = []
    mapped: list[MappedJoint] = []
    free_roots: list[FreeRoot] = []
    bodies: list[str] = []
    lines: list[str] = []
    top, lifted = _top_bodies(model, children, free)

    def body(top_link: str, top_x: Transform, top_ind: str, top_pj: Joint | None, top_at_top: bool) -> None:
        """The body of ``top_link`` and every body below it, depth first with a stack of its own (a
        chain of a thousand joints is a valid model; MuJoCo says itself where its depth limit is)."""
        stack: list[tuple[str, Transform, str, Joint | None, bool] | str] = [
            (top_link, top_x, top_ind, top_pj, top_at_top)]
        while stack:
            item = stack.pop()
            if isinstance(item, str):
                lines.append(item)  # a closing tag
                continue
            link, x, ind, pj, at_top = item
            open_body(link, x, ind, pj, at_top)
            stack.append(f"{ind}</body>")
            for cj in reversed(children.get(link, [])):
                if cj.name not in lifted:
                    stack.append((cj.child, np.asarray(cj.origin) @ np.asarray(cj.child_offset), ind + "  ", cj, False))

    def open_body(link: str, x: Transform, ind: str, pj: Joint | None, at_top: bool) -> None:
        bodies.append(link)
        lines.append(f"{ind}<body name={quoteattr(link)} {_posquat(x)}>")
        inner = ind + "  "
        if link in free:
            lines.append(f"{inner}<freejoint name={quoteattr(link + FREE_SUFFIX)}/>")
            free_roots.append(FreeRoot(link, link + FREE_SUFFIX))
        if pj is not None:
            joint_lines, mj = _joint_xml(pj, inner, x if at_top else None, default_axis)
            lines.extend(joint_lines)
            if mj is not None:
                mapped.append(mj)
        lk = model.links[link]
        lines.append(_inertial_xml(link, lk.inertial, inner, notes))
        static = _is_static(model, link)  # static models (the ground) collide with the rest
        welded = _welded(model, free, welded_cache, link)
        for k, shape in enumerate(lk.collisions):
            g = shape.geometry
            kind = g.kind
            size = _geom_size(g, welded)
            if size is None:
                notes.append(f"link {link!r}: collision {k} ({kind}) left out of the MuJoCo model")
                continue
            bits = ' contype="1" conaffinity="1"' if static else ' contype="2" conaffinity="1"'
            lines.append(f'{inner}<geom type="{kind}" size="{_vec(size)}" {_posquat(shape.origin)}{bits}/>')

    welded_cache: dict[str, bool] = {}

    for link, x, pj in top:
        body(link, x, "    ", pj, pj is not None and pj.type is JointType.FLOATING)
    eq = _mimic_equalities(model, mapped, dt)
    doc = [f"<mujoco model={quoteattr(model.name)}>",
           f'  <compiler angle="radian" autolimits="true" inertiafromgeom="false" boundmass="{_f(MIN_MASS)}" '
           f'boundinertia="{_f(MIN_INERTIA)}" balanceinertia="true"/>',
           f'  <option timestep="{_f(dt)}" gravity="0 0 -9.81"/>',
           "  <worldbody>", *lines, "  </worldbody>"]
    if eq:
        doc += ["  <equality>", *eq, "  </equality>"]
    doc.append("</mujoco>")
    return MjcfLayout("\n".join(doc) + "\n", mapped, free_roots, bodies, notes)


def _top_bodies(model: Model, children: dict[str, list[Joint]], free: set[str]
                ) -> tuple[list[tuple[str, Transform, Joint | None]], set[str]]:
    """The top-level bodies (link, X_world_body, parent joint) and the floating joints lifted to the top level."""
    world = np.asarray(model.pose, dtype=float)
    top: list[tuple[str, Transform, Joint | None]] = []  # (link, X_world_body, parent joint)
    for r in model.root_links():
        if r == WORLD:
            continue
        top.append((r, world @ np.asarray(model.links[r].pose), None))
    for j in children.get(WORLD, []):
        top.append((j.child, world @ np.asarray(j.origin) @ np.asarray(j.child_offset), j))
    # floating joints below a welded link are lifted to the top level
    lifted: set[str] = set()

    def lift(parent: str, x_parent: Transform) -> None:
        for j in children.get(parent, []):
            xc = x_parent @ np.asarray(j.origin) @ np.asarray(j.child_offset)
            if j.type is JointType.FLOATING:
                top.append((j.child, xc, j))
                lifted.add(j.name)
            elif j.type is JointType.FIXED:
                lift(j.child, xc)

    for link, x, pj in top:
        if pj is None and link not in free:
            lift(link, x)
    return top, lifted


def _welded(model: Model, free: set[str], welded_cache: dict[str, bool], first: str) -> bool:
    """Fixed to the world through fixed joints only (up the chain with a loop, not recursion)."""
    path: list[str] = []
    link = first
    while True:
        if link in welded_cache:
            res = welded_cache[link]
            break
        pj = None if link in free else model.parent_joint(link)
        if link in free or (pj is not None and pj.type is not JointType.FIXED):
            res = False
            break
        path.append(link)
        if pj is None or pj.parent == WORLD or pj.parent in path:
            res = True
            break
        link = pj.parent
    for done in path:
        welded_cache[done] = res
    return res


def _mimic_equalities(model: Model, mapped: list[MappedJoint], dt: float) -> list[str]:
    """One ``<equality><joint>`` per mimic coupling (``ConversionError`` for one MuJoCo cannot couple)."""
    eq: list[str] = []
    names_of = {m.name: m.mj_names for m in mapped}
    for j in model.joints.values():
        for mim in j.mimic:
            leader = model.joints.get(mim.joint)
            if leader is None or j.name not in names_of or mim.joint not in names_of:
                raise ConversionError(f"joint {j.name!r}: mimics {mim.joint!r}, which MuJoCo cannot couple")
            fol = names_of[j.name][min(mim.dof, len(names_of[j.name]) - 1)]
            lead = names_of[mim.joint][min(mim.leader_dof, len(names_of[mim.joint]) - 1)]
            # as stiff as MuJoCo keeps stable (time constant 2 dt, impedance near 1): still soft
            eq.append(f'    <joint joint1={quoteattr(fol)} joint2={quoteattr(lead)} '
                      f'polycoef="{_f(mim.offset)} {_f(mim.multiplier)} 0 0 0" solref="{_f(2 * dt)} 1" '
                      'solimp="0.9999 0.9999 0.001 0.5 2"/>')
    return eq


def _joint_xml(j: Joint, ind: str, x_world_body: Transform | None,
               default: tuple[float, float, float]) -> tuple[list[str], MappedJoint | None]:
    """The MuJoCo joints of ``j`` (none for fixed and gearbox joints) and how they map onto it."""
    if j.type is JointType.FIXED:
        return [], None
    if j.type is JointType.SCREW:
        raise ConversionError(f"joint {j.name!r}: screw joints have no MuJoCo equivalent")
    if j.type is JointType.GEARBOX:
        return [], None
    x_cj = np.linalg.inv(np.asarray(j.child_offset, dtype=float))
    r, t = x_cj[:3, :3], x_cj[:3, 3]
    ax = np.asarray(j.axis if j.axis is not None else default, dtype=float)
    ax = ax / np.linalg.norm(ax)
    dyn = j.dynamics
    extra = ""
    if dyn is not None:
        if dyn.damping:
            extra += f' damping="{_f(dyn.damping)}"'
        if dyn.friction:
            extra += f' frictionloss="{_f(dyn.friction)}"'
    lim = j.limits
    rng = ""
    if (j.type in (JointType.REVOLUTE, JointType.PRISMATIC) and lim is not None and lim.lower is not None
            and lim.upper is not None and lim.upper > lim.lower):
        rng = f' limited="true" range="{_f(lim.lower)} {_f(lim.upper)}"'
    pos = f'pos="{_vec(t)}"'
    names: list[str]
    out: list[str] = []
    if j.type in (JointType.REVOLUTE, JointType.CONTINUOUS, JointType.PRISMATIC):
        kind = "slide" if j.type is JointType.PRISMATIC else "hinge"
        names = [j.name]
        out.append(f'{ind}<joint name={quoteattr(j.name)} type="{kind}" {pos} axis="{_vec(r @ ax)}"{rng}{extra}/>')
    elif j.type in (JointType.UNIVERSAL, JointType.REVOLUTE2):
        a2 = np.asarray(j.axis2 if j.axis2 is not None else (0.0, 0.0, 1.0), dtype=float)
        a2 = a2 / np.linalg.norm(a2)
        names = [j.name + "__1", j.name + "__2"]
        for n, a in zip(names, (ax, a2), strict=True):
            out.append(f'{ind}<joint name={quoteattr(n)} type="hinge" {pos} axis="{_vec(r @ a)}"{extra}/>')
    elif j.type is JointType.PLANAR:
        n_ = np.asarray(j.axis if j.axis is not None else (0.0, 0.0, 1.0), dtype=float)
        n_ = n_ / np.linalg.norm(n_)
        e1, e2 = planar_basis(n_)
        names = [j.name + "__x", j.name + "__y", j.name + "__yaw"]
        for n, a, kind in zip(names, (e1, e2, n_), ("slide", "slide", "hinge"), strict=True):
            out.append(f'{ind}<joint name={quoteattr(n)} type="{kind}" {pos} axis="{_vec(r @ a)}"{extra}/>')
    elif j.type is JointType.BALL:
        names = [j.name]
        out.append(f'{ind}<joint name={quoteattr(j.name)} type="ball" {pos}{extra}/>')
    elif j.type is JointType.FLOATING:
        names = [j.name]
        out.append(f"{ind}<freejoint name={quoteattr(j.name)}/>")
    else:  # pragma: no cover - every moving type is handled above
        raise ConversionError(f"joint {j.name!r}: type {j.type.value} is not supported")
    mj = MappedJoint(j.name, j.type, names, r.copy(), t.copy())
    if j.type is JointType.FLOATING:
        if x_world_body is None:
            raise ConversionError(f"floating joint {j.name!r}: its parent {j.parent!r} moves; MuJoCo has free "
                                  "joints at the top level only")
        mj.free_b = np.asarray(j.child_offset, dtype=float)
        mj.free_a = x_world_body @ np.linalg.inv(mj.free_b)  # X_world_P @ origin
    return out, mj


def _inertial_xml(link: str, ine: Inertial | None, inner: str, notes: list[str]) -> str:
    """The ``<inertial>`` of one body (MuJoCo's lower bounds where the link has none or a singular one)."""
    if ine is None or not ine.mass > 0:  # explicit: MuJoCo alone would put the
        # bounded mass at the body's offset from its parent, not at its origin
        return f'{inner}<inertial pos="0 0 0" mass="{_f(MIN_MASS)}" diaginertia="{_vec([MIN_INERTIA] * 3)}"/>'
    ro = np.asarray(ine.origin, dtype=float)
    ixx, ixy, ixz, iyy, iyz, izz = ine.inertia
    i_c = np.array([[ixx, ixy, ixz], [ixy, iyy, iyz], [ixz, iyz, izz]], dtype=float)
    i_l = ro[:3, :3] @ i_c @ ro[:3, :3].T
    if np.linalg.eigvalsh(i_l).min() > 0:
        full = (i_l[0, 0], i_l[1, 1], i_l[2, 2], i_l[0, 1], i_l[0, 2], i_l[1, 2])
        return f'{inner}<inertial pos="{_vec(ro[:3, 3])}" mass="{_f(ine.mass)}" fullinertia="{_vec(full)}"/>'
    # singular (e.g. all zero): principal axes, moments raised to MuJoCo's bound
    x, eig = principal_inertia(ine)
    notes.append(f"link {link!r}: singular inertia, principal moments raised to {MIN_INERTIA!r}")
    return f'{inner}<inertial {_posquat(x)} mass="{_f(ine.mass)}" diaginertia="{_vec(np.maximum(eig, MIN_INERTIA))}"/>'


def _geom_size(g: Geometry, welded: bool) -> list[float] | None:
    """MuJoCo's ``size`` of a collision shape, None for one MuJoCo cannot take (meshes, a plane that moves)."""
    kind = g.kind
    if kind == "box" and g.size is not None:
        return [s / 2 for s in g.size]
    if kind == "sphere" and g.radius is not None:
        return [g.radius]
    if kind in ("cylinder", "capsule") and g.radius is not None and g.length is not None:
        return [g.radius, g.length / 2]
    if kind == "ellipsoid" and g.radii is not None:
        return list(g.radii)
    if kind == "plane" and welded:
        return [0.0, 0.0, 1.0]
    return None


def principal_inertia(ine: Inertial) -> tuple[FloatArray, FloatArray]:
    """The principal frame (in the link frame) and principal moments of ``ine``."""
    ro = np.asarray(ine.origin, dtype=float)
    ixx, ixy, ixz, iyy, iyz, izz = ine.inertia
    i_l = ro[:3, :3] @ np.array([[ixx, ixy, ixz], [ixy, iyy, iyz], [ixz, iyz, izz]], dtype=float) @ ro[:3, :3].T
    eig, vec = np.linalg.eigh(i_l)
    if np.linalg.det(vec) < 0:
        vec[:, 0] = -vec[:, 0]
    x = np.eye(4)
    x[:3, :3] = vec
    x[:3, 3] = ro[:3, 3]
    return x, eig


def mujoco_inertial(ine: Inertial | None) -> tuple[float, FloatArray | None, FloatArray]:
    """``(mass, X_link_principal, principal moments)`` of a link as MuJoCo compiles the generated
    MJCF (:mod:`~robot_state_format.sim.mjcf_writer`: ``boundmass``, ``boundinertia``, ``balanceinertia``):
    no inertial or no positive mass → ``MIN_MASS`` with moments ``MIN_INERTIA`` at the link origin;
    mass below ``MIN_MASS`` raised to it; principal moments below ``MIN_INERTIA`` raised to it,
    then, if they break the triangle inequality, all set to their mean.  ``X`` is None when the
    inertia is used as given (only the mass, if at all, changed)."""
    if ine is None or not ine.mass > 0:
        return MIN_MASS, np.eye(4), np.full(3, MIN_INERTIA)
    x, eig = principal_inertia(ine)
    moments = np.maximum(eig, MIN_INERTIA)
    a, b, c = np.sort(moments)
    if a + b < c:
        moments = np.full(3, moments.mean())
    changed = not np.array_equal(moments, eig)
    return max(ine.mass, MIN_MASS), (x if changed else None), moments
