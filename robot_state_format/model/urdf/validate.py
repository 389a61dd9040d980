"""Structural validation of a URDF model, and the zero-configuration link poses.

Every rule has its own stable code.  Codes of the URDF reader (all ``URDF_``). urdfdom's verdict is
the rule (docs/models.md): an error found inside an ``<inertial>``, ``<visual>``, ``<collision>`` or
robot-level ``<material>`` is a warning and the element is dropped, as urdfdom drops it; the graph
and mimic faults urdfdom loads are warnings (a loop constraint, ignored links, an ignored mimic);
URDF_LIMIT_ORDER is an error from URDF version 1.2 only.

========================== ======= ==================================================================
code                       level   meaning
========================== ======= ==================================================================
URDF_NOT_ROBOT             error   the root element is not ``<robot>``
URDF_MISSING_NAME          error   robot, link, joint or robot-level material without a name
URDF_DUPLICATE_LINK        error   two links with one name
URDF_DUPLICATE_JOINT       error   two joints (``joint`` or ``drake:joint``) with one name
URDF_DUPLICATE_MATERIAL    error   two robot-level materials with one name
URDF_EMPTY_MATERIAL        error   robot-level material with neither color nor texture element
URDF_MISSING_ATTRIBUTE     error   a required attribute is absent (mass value, inertia ixx..., box size,
                                   limit effort/velocity, mimic joint, parent/child link, ...)
URDF_BAD_NUMBER            error   an attribute is not a finite number
URDF_BAD_VECTOR            error   a vector attribute has the wrong number of values
URDF_BAD_ORIGIN            error   origin with both rpy and quat_xyzw
URDF_BAD_QUATERNION        error   origin quat_xyzw of zero length
URDF_MISSING_MASS          error   ``<inertial>`` without ``<mass>``
URDF_MISSING_INERTIA       error   ``<inertial>`` without ``<inertia>``
URDF_NEGATIVE_MASS         error   mass below zero
URDF_MISSING_GEOMETRY      error   visual/collision without geometry, or an empty ``<geometry>``
URDF_UNKNOWN_GEOMETRY      error   a geometry other than box/cylinder/sphere/mesh/capsule/ellipsoid
URDF_BAD_GEOMETRY          error   negative size/radius/length, non-positive ellipsoid half-axis
URDF_MISSING_JOINT_TYPE    error   joint without type
URDF_BAD_JOINT_TYPE        error   unknown joint type (drake:joint: ball, planar, screw, universal)
URDF_MISSING_PARENT        error   joint without ``<parent>``
URDF_MISSING_CHILD         error   joint without ``<child>``
URDF_UNKNOWN_LINK          error   joint parent or child names no link
URDF_SELF_JOINT            error   joint whose parent and child are the same link
URDF_MULTIPLE_PARENTS      warning a link is the child of two joints (a kinematic loop); names both joints
URDF_NO_LINKS              error   the robot has no link
URDF_NO_ROOT               error   every link has a parent joint (the joints form a cycle)
URDF_MULTIPLE_ROOTS        error   more than one link has no parent joint; a link whose parent is a
                                   ``drake:joint`` counts as one (urdfdom does not read drake:joint)
URDF_CYCLE                 warning links unreachable from the root (they form a cycle of joints)
URDF_ZERO_AXIS             warning axis xyz of zero length
URDF_MISSING_LIMIT         error   revolute or prismatic joint without ``<limit>``
URDF_LIMIT_ORDER           error   limit lower greater than upper (revolute, prismatic, screw joints)
URDF_MISSING_SCREW_PITCH   error   drake screw joint without ``drake:screw_thread_pitch``
URDF_MIMIC_UNKNOWN_JOINT   warning mimic names no joint
URDF_MIMIC_CYCLE           warning mimic chain that comes back to itself (incl. a joint mimicking itself)
URDF_MIMIC_JOINT_TYPE      warning mimic follower or leader that is not a one-degree-of-freedom joint
URDF_ZERO_RANGE_LIMIT      warning revolute/prismatic joint with lower == upper (both finite numbers)
URDF_LIMIT_IGNORED         warning lower > upper on a joint type whose lower/upper bound no motion (continuous...)
URDF_UNUSED_MATERIAL       warning robot-level material that no visual uses
URDF_UNDEFINED_MATERIAL    warning visual material naming no robot-level material, without color
URDF_EMPTY_DYNAMICS        error   ``<dynamics>`` with neither damping nor friction (urdfdom refuses it)
URDF_EXTRA_GEOMETRY        warning ``<geometry>`` with more than one shape (the first is used)
URDF_DUPLICATE_INERTIAL    warning link with two ``<inertial>`` (the first is used)
URDF_COLOR_RANGE           warning rgba outside [0, 1]
URDF_EMPTY_TEXTURE         warning ``<texture>`` without filename (ignored, as urdfdom does)
URDF_MIMIC_IGNORED         warning mimic on a fixed joint (dropped)
URDF_VERSION               error   robot version not ``x.y`` or not 1.0, 1.1, 1.2 (urdfdom refuses it)
URDF_UNDECLARED_DRAKE_NAMESPACE warning ``drake:`` prefix without its xmlns declaration
========================== ======= ==================================================================
"""

from __future__ import annotations

import numpy as np
from lxml import etree

from robot_state_format.errors import Diagnostic, ModelError, Severity
from robot_state_format.model.types import Joint, JointType, Model, Source
from robot_state_format.model.xml import describe

_STILL = (JointType.FIXED, JointType.GEARBOX)  # no degree of freedom
_ONE_DOF = (JointType.REVOLUTE, JointType.CONTINUOUS, JointType.PRISMATIC, JointType.SCREW)


def _diag(code: str, message: str, src: Source) -> Diagnostic:
    return Diagnostic(code, message, src.file, src.line, src.element)


def _warn(code: str, message: str, src: Source) -> Diagnostic:
    return Diagnostic(code, message, src.file, src.line, src.element, Severity.WARNING)


def validate_urdf_model(model: Model, diags: list[Diagnostic], root: etree._Element, *, drake: bool = True) -> None:  # noqa: C901 (complexity 27): to be split, issue 38
    """Check the link/joint graph and the mimic relations; fill ``Link.pose`` when it is a tree.

    ``drake=False``: the document mentions no Drake extension (no ``drake:joint`` to refuse)."""
    links = model.links
    joints = model.joints
    if not links:
        diags.append(Diagnostic("URDF_NO_LINKS", "the robot has no <link>", model.source_file,
                                root.sourceline, describe(root)))
        return

    parent_joint: dict[str, Joint] = {}
    children: dict[str, list[Joint]] = {}
    tree_ok = True
    loops: list[Joint] = []
    for j in joints.values():
        bad = False
        if j.parent and j.parent not in links:
            diags.append(_diag("URDF_UNKNOWN_LINK", f"joint {j.name!r}: parent link {j.parent!r} does not exist",
                               j.source))
            bad = True
        if j.child and j.child not in links:
            diags.append(_diag("URDF_UNKNOWN_LINK", f"joint {j.name!r}: child link {j.child!r} does not exist",
                               j.source))
            bad = True
        if j.parent and j.parent == j.child:
            diags.append(_diag("URDF_SELF_JOINT", f"joint {j.name!r} connects link {j.child!r} to itself",
                               j.source))
            bad = True
        if not j.parent or not j.child:
            bad = True
        if j.child in links and j.child != j.parent:
            first = parent_joint.get(j.child)
            if first is not None and not bad:  # urdfdom loads it; the later joint closes a loop
                diags.append(_warn(
                    "URDF_MULTIPLE_PARENTS",
                    f"link {j.child!r} is the child of both joint {first.name!r} and joint {j.name!r}: "
                    f"a kinematic loop (URDF allows only trees); joint {j.name!r} is kept as a loop "
                    "constraint, outside the tree", j.source))
                loops.append(j)
                continue
            parent_joint[j.child] = j
        if bad:
            tree_ok = False
            continue
        children.setdefault(j.parent, []).append(j)

    for j in loops:
        del joints[j.name]
        model.constraints[j.name] = j
    roots = [n for n in links if n not in parent_joint]
    if not roots:
        diags.append(Diagnostic("URDF_NO_ROOT", "no root link: every link is the child of a joint "
                                "(the joints form a cycle)", model.source_file, root.sourceline, describe(root)))
        tree_ok = False
    elif len(roots) > 1:
        names = ", ".join(repr(r) for r in roots)
        diags.append(Diagnostic("URDF_MULTIPLE_ROOTS", f"more than one root link: {names} "
                                "(each is the child of no joint)", model.source_file,
                                links[roots[1]].source.line, links[roots[1]].source.element))
        tree_ok = False

    if drake:
        _refuse_drake_joints(model, parent_joint, diags)
    _validate_mimic(model, diags)

    # zero-configuration poses, depth by depth from the root (one stacked product per depth)
    if roots:
        root_name = roots[0]
        seen = {root_name}
        level = [root_name]
        at = {root_name: 0}  # index in `poses`; the joint reaching the link at index i is reached[i - 1]
        reached: list[Joint] = []
        steps: list[tuple[int, int, list[int]]] = []  # (lo, stop, parent indices) of each depth
        while level:
            lo = len(reached) + 1
            parents: list[int] = []
            for name in level:
                for j in children.get(name, ()):
                    if j.child not in seen:
                        seen.add(j.child)
                        parents.append(at[name])
                        reached.append(j)
            level = [j.child for j in reached[lo - 1:]]
            for child in level:
                at[child] = len(at)
            if parents:
                steps.append((lo, len(at), parents))
        if reached:
            origins = np.array([j.origin for j in reached])
            poses = np.empty((len(at), 4, 4))
            poses[0] = links[root_name].pose
            for lo, stop, parents in steps:
                poses[lo:stop] = poses[parents] @ origins[lo - 1:stop - 1]
            views = list(poses)
            for j, pose in zip(reached, views[1:]):
                links[j.child].pose = pose
        if tree_ok and len(seen) != len(links):  # urdfdom loads it; nothing places these links
            lost = [n for n in links if n not in seen]
            diags.append(_warn("URDF_CYCLE", "links " + ", ".join(repr(n) for n in lost)
                               + " cannot be reached from the root link: their joints form a cycle; "
                               "they and their joints are ignored", links[lost[0]].source))
            for n in lost:
                del links[n]
            for name in [k for k, j in joints.items() if j.child not in seen or j.parent not in seen]:
                del joints[name]


def _refuse_drake_joints(model: Model, parent_joint: dict[str, Joint], diags: list[Diagnostic]) -> None:
    """urdfdom does not read ``<drake:joint>``: a link whose parent joint is one is a root link there,
    beside the robot's root, and urdfdom refuses the file ("Two root links found"); so do we."""
    def is_drake(j: Joint) -> bool:
        return (j.source.element or "").startswith("drake:joint")

    drake_parents = [(child, j) for child, j in parent_joint.items() if is_drake(j)]
    if not drake_parents:  # the common case: nothing to refuse
        return
    urdf_children = {j.child for j in (*model.joints.values(), *model.constraints.values()) if not is_drake(j)}
    drake = [(child, j) for child, j in drake_parents if child not in urdf_children]
    if drake:
        links = ", ".join(f"{child!r} (drake:joint {j.name!r})" for child, j in drake)
        diags.append(_diag(
            "URDF_MULTIPLE_ROOTS",
            f"urdfdom does not read <drake:joint>, so these links are root links beside the robot's root "
            f"and the file is refused: {links}; connect them with a URDF <joint>, or write the model as "
            "SDFormat for ball, universal and screw joints", drake[0][1].source))


def _validate_mimic(model: Model, diags: list[Diagnostic]) -> None:
    joints = model.joints
    leader_of: dict[str, str] = {}
    for j in joints.values():
        if not j.mimic:
            continue
        for m in j.mimic:
            leader = joints.get(m.joint)
            if leader is None:  # urdfdom does not check the leader: the mimic is ignored
                diags.append(_warn("URDF_MIMIC_UNKNOWN_JOINT", f"joint {j.name!r} mimics {m.joint!r}, which is "
                                   "not a joint; the mimic is ignored", j.source))
                j.mimic = []
                break
            nq = 0 if j.type in _STILL else 1 if j.type in _ONE_DOF else 2  # j.nq, without hashing the type
            if nq == 0:
                diags.append(Diagnostic(
                    "URDF_MIMIC_IGNORED", f"{j.type.value} joint {j.name!r} cannot move; its mimic of "
                    f"{m.joint!r} is ignored", j.source.file, j.source.line, j.source.element, Severity.WARNING))
                j.mimic = []
                break
            if nq != 1 or leader.type not in _ONE_DOF:
                bad = j if nq != 1 else leader
                diags.append(_warn("URDF_MIMIC_JOINT_TYPE",
                                   f"joint {j.name!r} mimics {m.joint!r}, but {bad.type.value} joint "
                                   f"{bad.name!r} does not have exactly one degree of freedom; the mimic is "
                                   "ignored", j.source))
                j.mimic = []
                break
            leader_of[j.name] = m.joint
    reported: set[str] = set()
    for start in leader_of:
        if start in reported:
            continue
        path: list[str] = []
        on_path: set[str] = set()
        cur: str | None = start
        while cur is not None and cur in leader_of and cur not in on_path:
            path.append(cur)
            on_path.add(cur)
            cur = leader_of[cur]
        if cur is not None and cur in on_path:
            cycle = path[path.index(cur):]
            if not reported.intersection(cycle):
                first = joints[cycle[0]]
                ring = " -> ".join(repr(n) for n in cycle + [cycle[0]])
                diags.append(_warn("URDF_MIMIC_CYCLE", f"mimic joints form a cycle: {ring}; these mimics are "
                                   "ignored (the joints move independently)", first.source))
                for n in cycle:
                    joints[n].mimic = []
            reported.update(cycle)


def mimic_leader(model: Model, name: str) -> tuple[str, float, float]:
    """Resolve a mimic chain: ``(independent joint, multiplier, offset)`` with
    ``q[name] = multiplier * q[independent] + offset``. A joint without mimic gives ``(name, 1, 0)``.
    The model must be valid (no mimic cycles).
    """
    mult, off = 1.0, 0.0
    cur = model.joints.get(name)
    for _ in range(len(model.joints) + 1):
        if cur is None:
            break
        if not cur.mimic:
            return cur.name, mult, off
        m = cur.mimic[0]
        # q_cur = m.multiplier * q_leader + m.offset; q_name = mult * q_cur + off
        off = mult * m.offset + off
        mult = mult * m.multiplier
        cur = model.joints.get(m.joint)
    raise ModelError(Diagnostic("URDF_MIMIC_CYCLE", f"mimic chain of joint {name!r} does not end in a joint "
                                "that mimics none", model.source_file))
