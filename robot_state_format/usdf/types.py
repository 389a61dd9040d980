"""USDF world_state types: plain dataclasses mirroring the XML tree (docs/usdf-spec.md).

Every field but ``name`` is optional: ``None`` means *absent* (unknown), never zero.
Vectors are tuples of Python floats: ``pose`` is ``(x, y, z, roll, pitch, yaw)``,
``twist`` is ``(vx, vy, vz, wx, wy, wz)`` and ``wrench`` is ``(fx, fy, fz, tx, ty, tz)``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import NamedTuple

USDF_VERSION = "1.0"
"""The version this implementation writes (``<world_state version="1.0">``)."""

WORLD_FRAME = "world"
"""The reserved parent name of the absolute inertial frame."""

Vec6 = tuple[float, float, float, float, float, float]


class Stamp(NamedTuple):
    """A time stamp: integer seconds and nanoseconds (``0 <= nanosec < 10**9``), exact."""

    sec: int
    nanosec: int = 0

    def to_seconds(self) -> float:
        return self.sec + self.nanosec * 1e-9


@dataclass
class FrameState:
    name: str
    parent: str | None = None  # None: the world
    pose: Vec6 | None = None
    twist: Vec6 | None = None


@dataclass
class LinkState:
    name: str
    pose: Vec6 | None = None  # relative to the enclosing model_state's frame
    twist: Vec6 | None = None
    wrench: Vec6 | None = None


@dataclass
class JointState:
    name: str
    positions: tuple[float, ...] | None = None
    velocities: tuple[float, ...] | None = None
    torques: tuple[float, ...] | None = None


@dataclass
class ModelState:
    name: str
    parent: str | None = None  # top level: None means the world; nested: must be None
    pose: Vec6 | None = None
    twist: Vec6 | None = None
    link_states: list[LinkState] = field(default_factory=list)
    joint_states: list[JointState] = field(default_factory=list)
    model_states: list[ModelState] = field(default_factory=list)

    def link(self, name: str) -> LinkState | None:
        for ls in self.link_states:
            if ls.name == name:
                return ls
        return None

    def joint(self, name: str) -> JointState | None:
        for js in self.joint_states:
            if js.name == name:
                return js
        return None

    def model(self, name: str) -> ModelState | None:
        for ms in self.model_states:
            if ms.name == name:
                return ms
        return None


@dataclass(frozen=True)
class ExtensionElement:
    """A child of ``<world_state>`` in a foreign XML namespace (docs/usdf-spec.md, "Extensions").

    Readers that do not know ``namespace`` ignore it; this reader keeps it verbatim so that the
    writer writes it back: ``xml`` is the element serialised on its own (namespace declarations
    included, no tail), ``tag`` its local name.
    """

    namespace: str
    tag: str
    xml: str


@dataclass
class WorldState:
    name: str
    version: str = USDF_VERSION
    stamp: Stamp | None = None
    frames: list[FrameState] = field(default_factory=list)
    model_states: list[ModelState] = field(default_factory=list)
    extensions: list[ExtensionElement] = field(default_factory=list)

    def extension(self, namespace: str, tag: str | None = None) -> ExtensionElement | None:
        """The first extension element of ``namespace`` (and local name ``tag``), or None."""
        for e in self.extensions:
            if e.namespace == namespace and (tag is None or e.tag == tag):
                return e
        return None

    def frame(self, name: str) -> FrameState | None:
        for f in self.frames:
            if f.name == name:
                return f
        return None

    def model(self, name: str) -> ModelState | None:
        """A top-level model_state by name, or a nested one by scoped name ``outer::inner``."""
        parts = name.split("::")
        found: ModelState | None = None
        candidates = self.model_states
        for part in parts:
            found = next((m for m in candidates if m.name == part), None)
            if found is None:
                return None
            candidates = found.model_states
        return found
