"""Intermediate representation of an SDFormat document after per-version normalisation.

Every version's defaults are made explicit while parsing (1.4's joint-relative-to-child,
1.5/1.6's ``frame`` attribute and ``use_parent_model_frame``, 1.7+'s ``relative_to``), so
the frame graph code works on one uniform, 1.8-style structure of scopes (models and the
world) holding links, joints, frames and nested scopes.  References are kept as written
(scope-relative names such as ``inner::link`` or ``__model__``) and resolved later.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Union

import numpy as np

from robot_state_format.model.types import (
    Dynamics,
    Extension,
    Inertial,
    JointType,
    Limits,
    Shape,
    Source,
)
from robot_state_format.spatial import Transform

MODEL_FRAME = "__model__"


@dataclass
class ShapeIR:
    shape: Shape
    rel: str | None = None  # None: the link frame


@dataclass
class LinkIR:
    name: str
    source: Source
    pose: Transform = field(default_factory=lambda: np.eye(4))
    rel: str = MODEL_FRAME
    inertial: Inertial | None = None
    visuals: list[ShapeIR] = field(default_factory=list)
    collisions: list[ShapeIR] = field(default_factory=list)
    kind: str = "link"


@dataclass
class AxisIR:
    xyz: tuple[float, float, float]
    expressed_in: str | None = None  # None: the joint frame
    limits: Limits | None = None
    dynamics: Dynamics | None = None
    source: Source = field(default_factory=Source)


@dataclass
class MimicIR:
    joint: str  # scope-relative name of the leader
    multiplier: float = 1.0
    offset: float = 0.0
    dof: int = 0
    leader_dof: int = 0
    source: Source = field(default_factory=Source)


@dataclass
class JointIR:
    name: str
    type: JointType
    parent: str
    child: str
    source: Source
    pose: Transform = field(default_factory=lambda: np.eye(4))
    rel: str | None = None  # None: the child frame as named in <child>
    axis: AxisIR | None = None
    axis2: AxisIR | None = None
    mimic: list[MimicIR] = field(default_factory=list)
    screw_pitch: float = 0.0
    gearbox_ratio: float | None = None
    gearbox_reference_body: str | None = None
    kind: str = "joint"


@dataclass
class FrameIR:
    name: str
    source: Source
    pose: Transform = field(default_factory=lambda: np.eye(4))
    rel: str | None = None  # None: the attached_to frame
    attached_to: str = MODEL_FRAME
    placement: str | None = None  # merged-include proxy frames keep the include's placement frame
    kind: str = "frame"


Item = Union[LinkIR, JointIR, FrameIR, "Scope"]


@dataclass
class Scope:
    """A ``<model>`` (top-level or nested) or the ``<world>``."""

    name: str
    version: tuple[int, int]
    file: str
    source: Source
    is_world: bool = False
    pose: Transform = field(default_factory=lambda: np.eye(4))
    rel: str | None = None  # in the parent scope; None: the parent's model frame (or the world)
    placement: str | None = None  # in this scope
    canonical: str | None = None
    static: bool = False
    items: list[Item] = field(default_factory=list)
    extensions: list[Extension] = field(default_factory=list)
    parent: Scope | None = None
    kind: str = "model"
    # filled by finalize(): full key of this scope's frame and the prefix of its members
    key: str = ""
    prefix: str = ""
    local: dict[str, Item] = field(default_factory=dict)
    accepted: list[Item] = field(default_factory=list)  # members with valid, non-duplicate names

    def links(self) -> list[LinkIR]:
        return [i for i in self.items if isinstance(i, LinkIR)]

    def joints(self) -> list[JointIR]:
        return [i for i in self.items if isinstance(i, JointIR)]

    def frames(self) -> list[FrameIR]:
        return [i for i in self.items if isinstance(i, FrameIR)]

    def models(self) -> list[Scope]:
        return [i for i in self.items if isinstance(i, Scope)]

    def walk(self) -> list[Scope]:
        """This scope and every nested scope, depth first in declaration order."""
        out = [self]
        for m in self.models():
            out.extend(m.walk())
        return out
