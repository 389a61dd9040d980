"""Drake's Model Directives schema, read from the YAML node tree as Drake's YAML loader reads it.

* ``directives:`` (the only top-level key) holds a list; each entry has exactly one of
  ``add_model``, ``add_model_instance``, ``add_frame``, ``add_weld``, ``add_directives``,
  ``add_collision_filter_group``.  Unknown keys are errors, as in Drake.
* A transform (``X_PF``, ``X_PC``, ``default_free_body_pose`` values) has ``base_frame``
  (optional string), ``translation`` (three numbers, default zero) and ``rotation``: untagged
  (or ``!Identity {}``) the identity, ``!Rpy { deg: [r, p, y] }`` (degrees, fixed axes,
  R = Rz·Ry·Rx; default zeros) or ``!AngleAxis { angle_deg: a, axis: [x, y, z] }`` (axis
  normalised; defaults 0 and +z).  Random values (``!Uniform``, ``!Gaussian``...) are refused:
  Drake's directives need deterministic transforms.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from robot_state_format.errors import Diagnostic, ModelError
from robot_state_format.model.directives.yaml_nodes import YNode
from robot_state_format.numbers import NumberError, parse_number
from robot_state_format.spatial import Transform, axis_angle_to_matrix, rpy_to_matrix

__all__ = ["AddDirectives", "AddFrame", "AddModel", "AddModelInstance", "AddWeld", "Directive", "Pose",
           "read_schema"]

KINDS = ("add_model", "add_model_instance", "add_frame", "add_weld", "add_directives", "add_collision_filter_group")


@dataclass
class Pose:
    """A deterministic ``schema::Transform``: ``X`` (4x4) and its optional ``base_frame``."""

    X: Transform
    base_frame: str | None
    line: int


@dataclass
class Directive:
    kind: str
    line: int


@dataclass
class AddModel(Directive):
    name: str = ""
    file: str = ""
    file_line: int = 0
    default_joint_positions: dict[str, tuple[list[float], int]] = field(default_factory=dict)
    default_free_body_pose: dict[str, Pose] = field(default_factory=dict)


@dataclass
class AddModelInstance(Directive):
    name: str = ""


@dataclass
class AddFrame(Directive):
    name: str = ""
    X_PF: Pose | None = None


@dataclass
class AddWeld(Directive):
    parent: str = ""
    child: str = ""
    X_PC: Pose | None = None


@dataclass
class AddDirectives(Directive):
    file: str = ""
    model_namespace: str | None = None


@dataclass
class AddCollisionFilterGroup(Directive):
    name: str = ""


class _Reader:
    def __init__(self, file: str) -> None:
        self.file = file

    def fail(self, code: str, msg: str, line: int | None, element: str | None = None) -> ModelError:
        return ModelError(Diagnostic(code, msg, self.file, line, element))

    def mapping(self, node: YNode, what: str, allowed: tuple[str, ...], element: str | None = None) -> dict[str, YNode]:
        if node.kind != "map":
            raise self.fail("DMD_SCHEMA", f"{what} must be a mapping", node.line, element)
        for key in node.items:
            if key not in allowed:
                raise self.fail("DMD_UNKNOWN_KEY", f"{what}: unknown key {key!r} (expected one of "
                                f"{', '.join(allowed) or 'none'})", node.key_lines[key], element)
        return node.items

    def string(self, node: YNode | None, what: str, element: str | None, *, required: bool = True) -> str:
        if node is None or _null(node):
            if required:
                raise self.fail("DMD_MISSING", f"{what} is required", None if node is None else node.line, element)
            return ""
        if node.kind != "scalar" or node.tag is not None:
            raise self.fail("DMD_SCHEMA", f"{what} must be a string", node.line, element)
        return node.text  # as written, as Drake reads a string: "on", "0x1F" and "1.10" stay names

    def strings(self, node: YNode, what: str, element: str | None) -> list[str]:
        if node.kind != "seq":
            raise self.fail("DMD_SCHEMA", f"{what} must be a list of strings", node.line, element)
        return [self.string(v, what, element) for v in node.seq]

    def number(self, node: YNode, what: str, element: str | None) -> float:
        if node.kind == "map" and node.tag == "!Deterministic":
            node = self.mapping(node, what, ("value",), element).get("value") or node
        if node.kind == "map" and node.tag is not None:
            raise self._random(node, what, element)
        if node.kind != "scalar" or node.tag is not None or _null(node):
            raise self.fail("DMD_SCHEMA", f"{what} must be a number", node.line, element)
        # Drake reads the text as a C++ stream reads a double: -.5, 1e3 and 010 (ten) are numbers; 1_0,
        # 0x10, 1:30 and true are not; YAML's .inf and .nan are, but a transform must be finite
        if node.text.lstrip("+-").lower() in (".inf", ".nan"):
            raise self.fail("DMD_SCHEMA", f"{what} must be finite", node.line, element)
        try:
            return parse_number(node.text)[0]
        except NumberError:
            raise self.fail("DMD_SCHEMA", f"{what} must be a number", node.line, element) from None

    def _random(self, node: YNode, what: str, element: str | None) -> ModelError:
        return self.fail("DMD_NOT_DETERMINISTIC", f"{what}: {node.tag} is a random distribution; Drake's model "
                         "directives need deterministic values", node.line, element)

    def vector(self, node: YNode, what: str, element: str | None, size: int | None = 3) -> list[float]:
        if node.kind == "map" and node.tag in ("!Deterministic", "!DeterministicVector"):
            inner = self.mapping(node, what, ("value",), element).get("value")
            if inner is None:
                raise self.fail("DMD_MISSING", f"{what}: value is required", node.line, element)
            node = inner
        if node.kind == "map" and node.tag is not None:
            raise self._random(node, what, element)
        if node.kind != "seq":
            raise self.fail("DMD_SCHEMA", f"{what} must be a list of numbers", node.line, element)
        if size is not None and len(node.seq) != size:
            raise self.fail("DMD_SCHEMA", f"{what} has {len(node.seq)} values (wanted {size})", node.line, element)
        return [self.number(v, what, element) for v in node.seq]

    def pose(self, node: YNode, what: str, element: str | None) -> Pose:
        if _null(node):  # X_PC: (nothing) is Drake's default transform, the identity without a base frame
            return Pose(np.eye(4), None, node.line)
        items = self.mapping(node, what, ("base_frame", "translation", "rotation"), element)
        x = np.eye(4)
        if "translation" in items:
            x[:3, 3] = self.vector(items["translation"], f"{what}.translation", element)
        if "rotation" in items:
            x[:3, :3] = self.rotation(items["rotation"], f"{what}.rotation", element)
        b = items.get("base_frame")
        absent = b is None or _null(b)
        base = None if absent else self.string(b, f"{what}.base_frame", element)  # "" names no frame (Drake)
        return Pose(x, base, node.line)

    def rotation(self, node: YNode, what: str, element: str | None) -> Transform:
        if node.kind != "map":
            raise self.fail("DMD_SCHEMA", f"{what} must be a mapping (!Rpy {{deg: [...]}}, !AngleAxis "
                            "{angle_deg: ..., axis: [...]} or !Identity {})", node.line, element)
        if node.tag in (None, "!Identity"):
            self.mapping(node, f"{what} (identity: untagged or !Identity)", (), element)
            return np.eye(3)
        if node.tag == "!Rpy":
            items = self.mapping(node, what, ("deg",), element)
            deg = self.vector(items["deg"], f"{what}.deg", element) if "deg" in items else [0.0, 0.0, 0.0]
            return rpy_to_matrix(*(math.radians(d) for d in deg))
        if node.tag == "!AngleAxis":
            items = self.mapping(node, what, ("angle_deg", "axis"), element)
            angle = self.number(items["angle_deg"], f"{what}.angle_deg", element) if "angle_deg" in items else 0.0
            axis = np.array(self.vector(items["axis"], f"{what}.axis", element) if "axis" in items else [0, 0, 1.0])
            n = float(np.linalg.norm(axis))
            if not n > 0:
                raise self.fail("DMD_SCHEMA", f"{what}.axis is the zero vector", node.line, element)
            return axis_angle_to_matrix(tuple(axis / n), math.radians(angle))
        if node.tag in ("!Uniform", "!Gaussian", "!UniformDiscrete"):
            raise self._random(node, what, element)
        raise self.fail("DMD_SCHEMA", f"{what}: unsupported tag {node.tag} (Drake accepts !Identity, !Rpy, "
                        "!AngleAxis)", node.line, element)


def _null(node: YNode) -> bool:
    """A YAML null (``~``, ``null``, nothing), untagged."""
    return node.kind == "scalar" and node.tag is None and node.value is None


def _directive(r: _Reader, node: YNode) -> Directive:
    items = r.mapping(node, "a directive", KINDS)
    if len(items) != 1:
        raise r.fail("DMD_SCHEMA", "a directive needs exactly one of " + ", ".join(KINDS), node.line)
    kind, body = next(iter(items.items()))
    el = kind
    line = node.key_lines[kind]
    if kind == "add_model":
        f = r.mapping(body, kind, ("name", "file", "default_joint_positions", "default_free_body_pose"))
        name = r.string(f.get("name"), "add_model: name", el)
        el = f"add_model[name={name}]"
        d = AddModel(kind, line, name=name, file=r.string(f.get("file"), "add_model: file", el))
        d.file_line = f["file"].line if "file" in f else line
        if "default_joint_positions" in f:
            for joint, v in r.mapping(f["default_joint_positions"], "default_joint_positions",
                                      tuple(f["default_joint_positions"].items), el).items():
                d.default_joint_positions[joint] = (r.vector(v, f"default_joint_positions.{joint}", el, None), v.line)
        if "default_free_body_pose" in f:
            for body_name, v in r.mapping(f["default_free_body_pose"], "default_free_body_pose",
                                          tuple(f["default_free_body_pose"].items), el).items():
                d.default_free_body_pose[body_name] = r.pose(v, f"default_free_body_pose.{body_name}", el)
        if not d.name:
            raise r.fail("DMD_MISSING", "add_model: name must be non-empty", line, el)
        return d
    if kind == "add_model_instance":
        f = r.mapping(body, kind, ("name",))
        d2 = AddModelInstance(kind, line, name=r.string(f.get("name"), "add_model_instance: name", el))
        if not d2.name:
            raise r.fail("DMD_MISSING", "add_model_instance: name must be non-empty", line, el)
        return d2
    if kind == "add_frame":
        f = r.mapping(body, kind, ("name", "X_PF"))
        name = r.string(f.get("name"), "add_frame: name", el)
        el = f"add_frame[name={name}]"
        if "X_PF" not in f:
            raise r.fail("DMD_MISSING", "add_frame: X_PF is required", line, el)
        pose = r.pose(f["X_PF"], "X_PF", el)
        if not name:
            raise r.fail("DMD_MISSING", "add_frame: name must be non-empty", line, el)
        if pose.base_frame is None:
            raise r.fail("DMD_MISSING", "add_frame: X_PF.base_frame must be defined (Drake refuses a frame "
                         "without one)", pose.line, el)
        return AddFrame(kind, line, name=name, X_PF=pose)
    if kind == "add_weld":
        f = r.mapping(body, kind, ("parent", "child", "X_PC"))
        parent = r.string(f.get("parent"), "add_weld: parent", el)
        child = r.string(f.get("child"), "add_weld: child", el)
        el = f"add_weld[parent={parent}, child={child}]"
        x_pc = r.pose(f["X_PC"], "X_PC", el) if "X_PC" in f else None
        return AddWeld(kind, line, parent=parent, child=child, X_PC=x_pc)
    if kind == "add_directives":
        f = r.mapping(body, kind, ("file", "model_namespace"))
        file = r.string(f.get("file"), "add_directives: file", el)
        ns = r.string(f.get("model_namespace"), "add_directives: model_namespace", el, required=False) \
            if "model_namespace" in f else None
        return AddDirectives(kind, line, file=file, model_namespace=ns)
    f = r.mapping(body, kind, ("name", "members", "member_groups", "ignored_collision_filter_groups",
                               "model_namespace"))
    for key in ("members", "member_groups", "ignored_collision_filter_groups"):  # Drake refuses a null list
        if key in f:
            r.strings(f[key], f"{kind}: {key}", el)
    if "model_namespace" in f:
        r.string(f["model_namespace"], f"{kind}: model_namespace", el, required=False)
    return AddCollisionFilterGroup(kind, line, name=r.string(f.get("name"), f"{kind}: name", el, required=False))


def read_schema(root: YNode | None, file: str) -> list[Directive]:
    """The directives of a document (``ModelError`` with file and line when it does not fit Drake's schema)."""
    r = _Reader(file)
    if root is None:  # Drake: "the top level element should be a Mapping"
        raise r.fail("DMD_SCHEMA", "the document is empty (a scene is a mapping holding directives: [...])", 1)
    top = r.mapping(root, "the document", ("directives",))
    node = top.get("directives")
    if node is None:
        return []
    if node.kind != "seq":  # a null one too, as Drake refuses it
        raise r.fail("DMD_SCHEMA", "directives must be a list", node.line)
    return [_directive(r, d) for d in node.seq]
