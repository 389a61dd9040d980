"""The Model: one resolved, format-neutral description of a robot (or a world of robots).

Both the URDF and the SDFormat readers produce a :class:`Model`; the kinematics, the nodes
and the USDF code only ever see this type.  Readers resolve every format-specific frame rule,
so the Model holds plain transforms:

* Names are *model-relative*: a URDF link is ``"link1"``; an SDFormat link of the single
  top-level model ``robot`` is ``"link1"``, one of its nested model ``inner`` is
  ``"inner::link1"``.  For a ``<world>`` file the root is the world and names start at each
  top-level model: ``"robot_a::link1"``.  :meth:`Model.scoped` gives the fully scoped
  name used by ``frames --json`` (``robot::link1``, ``outer::inner::link``).
* The *root frame* of a Model is the model frame of the single top-level model, or the world
  frame for a ``<world>`` file.  ``Model.pose`` is ``X_world_root`` (identity for worlds).
* Joint kinematics (valid for URDF and SDFormat alike), with P the parent link frame,
  J the joint frame and C the child link frame::

      X_PC(q) = joint.origin @ motion(q) @ joint.child_offset

  ``origin`` is ``X_PJ`` at the zero configuration, ``child_offset`` is ``X_JC``
  (identity for URDF, where the joint frame is the child link frame), and ``motion(q)`` moves
  along/about ``axis`` (and ``axis2``), unit vectors expressed in J.
  A joint whose parent is :data:`WORLD` is posed in the *root frame* of the Model.
* Links that are the child of no tree joint are *root links*; they sit at ``Link.pose``
  (their zero-configuration pose in the root frame). For every other link ``Link.pose`` is
  also the zero-configuration pose in the root frame, kept consistent by the readers.
* Joints that would close a kinematic loop, and gearbox joints, are not tree edges: they go to
  ``Model.constraints`` (never dropped), with a warning from the reader.

Degrees of freedom and position layout per joint type (shared with kinematics and USDF):

=========== ==== ==== ==========================================================
type        nq   nv   positions
=========== ==== ==== ==========================================================
fixed       0    0
revolute    1    1    angle (rad) about axis
continuous  1    1    angle (rad) about axis
prismatic   1    1    displacement (m) along axis
screw       1    1    angle (rad) about axis; translation = pitch * angle / (2 pi)
universal   2    2    angle about axis, then angle about axis2
revolute2   2    2    angle about axis, then angle about axis2
planar      3    3    x, y in the plane normal to axis, then yaw about axis
ball        4    3    quaternion x, y, z, w
floating    7    6    x, y, z, then quaternion x, y, z, w; velocities linear, angular
gearbox     0    0    (a constraint between two joints' rates, not a tree edge)
=========== ==== ==== ==========================================================
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from enum import Enum

import numpy as np

from robot_state_format.errors import Diagnostic
from robot_state_format.spatial import Transform

WORLD = "world"
"""Name of the world frame, usable as a joint parent/child or a frame's ``attached_to``."""

SCOPE = "::"


class JointType(str, Enum):
    FIXED = "fixed"
    REVOLUTE = "revolute"
    CONTINUOUS = "continuous"
    PRISMATIC = "prismatic"
    SCREW = "screw"
    UNIVERSAL = "universal"
    REVOLUTE2 = "revolute2"
    PLANAR = "planar"
    BALL = "ball"
    FLOATING = "floating"
    GEARBOX = "gearbox"

    @property
    def nq(self) -> int:
        """Number of position values."""
        return _NQ[self]

    @property
    def nv(self) -> int:
        """Number of velocity (and effort) values."""
        return _NV[self]


_NQ = {
    JointType.FIXED: 0, JointType.REVOLUTE: 1, JointType.CONTINUOUS: 1, JointType.PRISMATIC: 1,
    JointType.SCREW: 1, JointType.UNIVERSAL: 2, JointType.REVOLUTE2: 2, JointType.PLANAR: 3,
    JointType.BALL: 4, JointType.FLOATING: 7, JointType.GEARBOX: 0,
}
_NV = {
    JointType.FIXED: 0, JointType.REVOLUTE: 1, JointType.CONTINUOUS: 1, JointType.PRISMATIC: 1,
    JointType.SCREW: 1, JointType.UNIVERSAL: 2, JointType.REVOLUTE2: 2, JointType.PLANAR: 3,
    JointType.BALL: 3, JointType.FLOATING: 6, JointType.GEARBOX: 0,
}


@dataclass(frozen=True)
class Source:
    """Where an entity was declared: for error messages that name file, line and element."""

    file: str = "<string>"
    line: int | None = None
    element: str | None = None


@dataclass
class Limits:
    lower: float | None = None
    upper: float | None = None
    effort: float | None = None
    velocity: float | None = None


@dataclass
class Dynamics:
    damping: float = 0.0
    friction: float = 0.0


@dataclass
class Calibration:
    rising: float | None = None
    falling: float | None = None


@dataclass
class SafetyController:
    soft_lower_limit: float = 0.0
    soft_upper_limit: float = 0.0
    k_position: float = 0.0
    k_velocity: float = 0.0


@dataclass
class Mimic:
    """``follower[dof] = multiplier * leader[leader_dof] + offset``."""

    joint: str  # model-relative name of the leader joint
    multiplier: float = 1.0
    offset: float = 0.0
    dof: int = 0  # which position of the follower (0 = axis, 1 = axis2)
    leader_dof: int = 0


@dataclass
class Geometry:
    """``kind`` is one of box, cylinder, sphere, mesh, capsule, ellipsoid, plane, other.

    ``size`` (box, plane), ``radius``, ``length``, ``radii`` (ellipsoid), ``filename`` and
    ``scale`` (mesh) are filled as the kind needs.
    """

    kind: str
    size: tuple[float, ...] | None = None
    radius: float | None = None
    length: float | None = None
    radii: tuple[float, float, float] | None = None
    filename: str | None = None
    scale: tuple[float, float, float] | None = None


@dataclass
class Material:
    name: str | None = None
    rgba: tuple[float, float, float, float] | None = None
    texture: str | None = None


@dataclass
class Shape:
    """A visual or collision: geometry placed at ``origin`` (X_link_shape)."""

    geometry: Geometry
    origin: Transform = field(default_factory=lambda: np.eye(4))
    name: str | None = None
    material: Material | None = None
    source: Source = field(default_factory=Source)


@dataclass
class Inertial:
    mass: float = 0.0
    origin: Transform = field(default_factory=lambda: np.eye(4))  # X_link_com
    # ixx, ixy, ixz, iyy, iyz, izz about the COM, in the inertial frame
    inertia: tuple[float, float, float, float, float, float] = (0.0, 0.0, 0.0, 0.0, 0.0, 0.0)


@dataclass
class Extension:
    """Extension data kept verbatim (e.g. Drake's proximity properties): element tag + XML."""

    tag: str
    xml: str
    owner: str | None = None  # the link/joint/model it belongs to, if any
    source: Source = field(default_factory=Source)


@dataclass
class Link:
    name: str
    pose: Transform = field(default_factory=lambda: np.eye(4))  # zero-config pose in root frame
    inertial: Inertial | None = None
    visuals: list[Shape] = field(default_factory=list)
    collisions: list[Shape] = field(default_factory=list)
    source: Source = field(default_factory=Source)


@dataclass
class Joint:
    name: str
    type: JointType
    parent: str  # link name or WORLD
    child: str  # link name (or WORLD for SDFormat joints to the world, then a constraint)
    origin: Transform = field(default_factory=lambda: np.eye(4))  # X_PJ at zero configuration
    child_offset: Transform = field(default_factory=lambda: np.eye(4))  # X_JC
    axis: tuple[float, float, float] | None = None  # unit, in joint frame J
    axis2: tuple[float, float, float] | None = None
    limits: Limits | None = None
    limits2: Limits | None = None
    dynamics: Dynamics | None = None
    dynamics2: Dynamics | None = None
    mimic: list[Mimic] = field(default_factory=list)
    calibration: Calibration | None = None
    safety_controller: SafetyController | None = None
    screw_pitch: float = 0.0  # metres of translation per revolution (2 pi rad), screw joints
    gearbox_ratio: float | None = None  # gearbox joints
    gearbox_reference_body: str | None = None
    source: Source = field(default_factory=Source)

    @property
    def nq(self) -> int:
        return self.type.nq

    @property
    def nv(self) -> int:
        return self.type.nv

    @property
    def is_moving(self) -> bool:
        return self.type.nq > 0


@dataclass
class Frame:
    """An explicit frame fixed to a link (or WORLD): ``pose`` is X_attached_frame."""

    name: str
    attached_to: str
    pose: Transform = field(default_factory=lambda: np.eye(4))
    source: Source = field(default_factory=Source)


@dataclass
class ModelFrame:
    """A (nested or top-level) model's frame, fixed to a link (its canonical link) or WORLD.

    ``name`` is model-relative: ``""`` for the single top-level model of a model file,
    ``"inner"`` for a nested one, ``"robot_a"`` for a top-level model of a world.
    ``pose`` is X_attached_model; ``static`` is the SDFormat flag.
    """

    name: str
    attached_to: str
    pose: Transform = field(default_factory=lambda: np.eye(4))
    canonical_link: str | None = None
    static: bool = False
    source: Source = field(default_factory=Source)


@dataclass
class Model:
    name: str
    format: str  # "urdf", "sdf" or "dmd" (Drake Model Directives: a world of models)
    is_world: bool = False
    pose: Transform = field(default_factory=lambda: np.eye(4))  # X_world_root
    links: dict[str, Link] = field(default_factory=dict)
    joints: dict[str, Joint] = field(default_factory=dict)  # tree joints only
    constraints: dict[str, Joint] = field(default_factory=dict)  # loop-closing and gearbox
    frames: dict[str, Frame] = field(default_factory=dict)
    models: dict[str, ModelFrame] = field(default_factory=dict)
    materials: dict[str, Material] = field(default_factory=dict)
    extensions: list[Extension] = field(default_factory=list)
    warnings: list[Diagnostic] = field(default_factory=list)
    source_file: str = "<string>"
    version: str | None = None  # SDFormat version, or None for URDF
    urdf_version: tuple[int, int] | None = None  # a URDF's declared <robot version>, None: not declared
    root_source: Source | None = None  # the root element (<robot>)
    # joint -> positions of the model's default configuration where it is not zero (Drake model
    # directives' default_joint_positions); the zero configuration stays the kinematic reference
    default_positions: dict[str, list[float]] = field(default_factory=dict)

    def scoped(self, name: str) -> str:
        """Fully scoped name (``robot::link1``) of a model-relative name.

        For a world the model-relative names already start at the top-level model.
        ``""`` (the top-level model itself) gives the model's own name.
        """
        if self.is_world:
            return name
        if not name:
            return self.name
        return f"{self.name}{SCOPE}{name}"

    def root_links(self) -> list[str]:
        """Links that are the child of no tree joint, in declaration order."""
        children = {j.child for j in self.joints.values()}
        return [n for n in self.links if n not in children]

    def moving_joints(self) -> Iterator[Joint]:
        return (j for j in self.joints.values() if j.is_moving)

    def child_joints(self, link: str) -> list[Joint]:
        return [j for j in self.joints.values() if j.parent == link]

    def parent_joint(self, link: str) -> Joint | None:
        for j in self.joints.values():
            if j.child == link:
                return j
        return None
