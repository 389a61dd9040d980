"""Process Model Directives into one world :class:`~robot_state_format.model.types.Model`, as
pydrake's ``ProcessModelDirectives`` builds its ``MultibodyPlant``.

* Model files are read by this project's readers, with Drake's URDF extensions (:mod:`.drake_urdf`:
  an undeclared ``world`` link, ``/robot/frame`` elements).
* Model instances: every ``add_model`` is an instance named ``NAMESPACE::name`` (its links
  ``name::link``, its joints ``name::joint``, an SDFormat nested model ``name::inner``), every
  ``add_model_instance`` an empty one (a namespace for ``add_directives``).  The world instance
  holds the world frame and the frames added to it (unscoped names).
* Frame names as Drake resolves them: ``world``; ``instance::frame`` (the name split at its last
  ``::``, the namespace of the current ``add_directives`` prefixed); an unscoped name must be
  unique across all instances.  An instance's frames are its bodies, its SDFormat frames and
  ``__model__`` (SDFormat models only), and the frames added to it.
* ``add_weld``: a fixed joint ``PARENT_welds_to_CHILD`` in the child frame's instance, from the
  parent frame's body to the child frame's body (``origin = X_body_P @ X_PC``,
  ``child_offset = inv(X_body_C)``); a child body that has a parent joint becomes the root of its
  tree, the joints above it reversed (:meth:`Composer.reroot`), as Drake's topology does.
* A body left free is a root link that floats (its ``Link.pose`` is its default pose: the model
  file's pose, or its ``default_free_body_pose`` relative to the world); a ``default_free_body_pose``
  relative to another frame, or of a frame that is not a body frame, adds, as Drake does, a
  ``floating`` joint from that base frame (or the world) to that frame, named after the body, whose
  default position is the given pose (kept in ``Model.default_positions``).
"""

from __future__ import annotations

import dataclasses
import importlib.util
import os
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import NamedTuple

import numpy as np

from robot_state_format import limits
from robot_state_format.errors import Diagnostic, ModelError, Severity
from robot_state_format.model import access
from robot_state_format.model.directives.drake_urdf import (
    apply_drake_limits,
    declare_world_link,
    drake_limits,
    urdf_frames,
)
from robot_state_format.model.directives.schema import (
    AddDirectives,
    AddFrame,
    AddModel,
    AddModelInstance,
    AddWeld,
    Directive,
    Pose,
)
from robot_state_format.model.packages import NOT_FOUND_HOW, find_package
from robot_state_format.model.types import (
    SCOPE,
    WORLD,
    Frame,
    Joint,
    JointType,
    Model,
    ModelFrame,
    Source,
)
from robot_state_format.spatial import Transform, inverse, matrix_to_quaternion

LoadFile = Callable[[Path, bytes], Model]  # a model file's path and content -> its Model
ReadDirectives = Callable[[Path, str, str], list[Directive]]  # path, reference as written, referencing file

MODEL_FRAME = "__model__"
_REVERSIBLE = (JointType.FIXED, JointType.REVOLUTE, JointType.CONTINUOUS, JointType.PRISMATIC, JointType.SCREW)
NAMESPACE = "namespace"  # Source.element of the models that only hold scoped instance names
_SCHEMES = ("package://", "model://", "file://")


def drake_share() -> Path | None:
    """``share/drake`` of an installed pydrake (found without importing it), or None."""
    try:
        spec = importlib.util.find_spec("pydrake")
    except (ImportError, ValueError):
        return None
    if spec is None or not spec.submodule_search_locations:
        return None
    share = Path(next(iter(spec.submodule_search_locations))) / "share" / "drake"
    return share if (share / "package.xml").is_file() else None


def prefix(ns: str, name: str) -> str:
    return f"{ns}{SCOPE}{name}" if ns else name


class Scoped(NamedTuple):
    """A scoped name split at its last delimiter: its model instance (``a::b``; "" for none) and local name."""

    instance: str
    local: str


class BodyFrame(NamedTuple):
    """A frame as Drake attaches it: the body and the frame's pose in it (X_body_frame)."""

    body: str
    pose: Transform


class FrameRef(NamedTuple):
    """A frame named in a directive: its body, its pose in that body (X_body_frame), its model instance."""

    body: str
    pose: Transform
    instance: str


def split_scoped(name: str) -> Scoped:
    """``a::b::c`` → (``a::b``, ``c``): Drake splits a scoped name at its last delimiter."""
    inst, sep, local = name.rpartition(SCOPE)
    return Scoped(inst, local) if sep else Scoped("", name)


class Composer:
    def __init__(self, model: Model, load_file: LoadFile, read_directives: ReadDirectives,
                 search_paths: Sequence[str]) -> None:
        self.model = model
        self.load_file = load_file
        self.read_directives = read_directives
        self.search_paths = list(search_paths)
        self.instances: set[str] = {""}
        self.added: set[str] = set()  # the instances of add_model directives
        self.frames: dict[str, dict[str, BodyFrame]] = {"": {WORLD: BodyFrame(WORLD, np.eye(4))}}
        self.free_pose: dict[str, Transform] = {}
        self.files_read = 0
        self.stack: list[Path] = []
        self.file = model.source_file
        self.line: int | None = None
        self.element: str | None = None

    # ---- errors ---------------------------------------------------------------------------------
    def fail(self, code: str, msg: str, line: int | None = None) -> ModelError:
        return ModelError(Diagnostic(code, msg, self.file, line if line is not None else self.line, self.element))

    def source(self) -> Source:
        return Source(self.file, self.line, self.element)

    # ---- files ----------------------------------------------------------------------------------
    def resolve(self, uri: str, line: int | None = None) -> Path:
        """``package://``, ``model://`` (the same, as in Drake) or ``file:///absolute`` → a path."""
        access.check_reference(uri, self.file, line if line is not None else self.line)  # before any lookup
        if uri.startswith(("package://", "model://")):
            rest = uri.split("://", 1)[1]
            pkg, _, rel = rest.partition("/")
            share = find_package(pkg, self.search_paths)
            if share is None and pkg == "drake":  # Drake's own package, built into its package map
                share = drake_share()
            if share is None:
                raise self.fail("MODEL_PACKAGE_NOT_FOUND", f"{uri!r}: package {pkg!r} {NOT_FOUND_HOW}", line)
            path = share / rel
        elif uri.startswith("file://"):
            path = Path(uri[len("file://"):])
            if not path.is_absolute():
                raise self.fail("DMD_BAD_URI", f"{uri!r}: a file:// URI needs an absolute path", line)
        elif "://" in uri:
            raise self.fail("DMD_BAD_URI", f"{uri!r}: unsupported scheme; Drake accepts "
                            f"{', '.join(_SCHEMES)}", line)
        else:
            raise self.fail("DMD_BAD_URI", f"{uri!r}: Drake refuses plain paths (relative or absolute) in model "
                            "directives: write package://PACKAGE/path or file:///absolute/path", line)
        if not os.path.isfile(path):  # never raises (a name too long is no file)
            raise self.fail("DMD_FILE_NOT_FOUND", f"{uri!r}: no such file {str(path)!r}", line)
        self.files_read += 1
        if self.files_read > limits.MAX_SDF_INCLUDES:
            raise self.fail("DMD_TOO_MANY_FILES", f"more than {limits.MAX_SDF_INCLUDES} files read "
                            "(RSF_MAX_SDF_INCLUDES)", line)
        return path

    # ---- frames ---------------------------------------------------------------------------------
    def frame(self, name: str, ns: str) -> FrameRef:
        """The body, X_body_frame and instance of a frame named in a directive."""
        if name == WORLD:
            return FrameRef(WORLD, np.eye(4), "")
        inst, local = split_scoped(prefix(ns, name))
        if inst:
            if inst not in self.instances:
                raise self.fail("DMD_INSTANCE_NOT_FOUND", f"frame {name!r}: there is no model instance {inst!r}")
            found = self.frames.get(inst, {}).get(local)
            if found is None:
                valid = ", ".join(sorted(self.frames.get(inst, {}))) or "none"
                raise self.fail("DMD_FRAME_NOT_FOUND", f"there is no frame {local!r} in model instance {inst!r} "
                                f"(valid names: {valid})")
            return FrameRef(found.body, found.pose, inst)
        hits = [(i, fr[local]) for i, fr in self.frames.items() if local in fr]
        if not hits:
            raise self.fail("DMD_FRAME_NOT_FOUND", f"there is no frame {local!r} in any model instance")
        if len(hits) > 1:
            raise self.fail("DMD_FRAME_AMBIGUOUS", f"frame {local!r} exists in several model instances ("
                            f"{', '.join(i or 'the world' for i, _ in hits)}): scope it as INSTANCE::{local}")
        i, found = hits[0]
        return FrameRef(found.body, found.pose, i)

    def parent_joint(self, link: str) -> Joint | None:
        for j in self.model.joints.values():
            if j.child == link:
                return j
        return None

    def root_of(self, body: str) -> str:
        """The link (or WORLD) at the top of ``body``'s chain of parent joints."""
        for _ in range(len(self.model.links) + 2):
            pj = self.parent_joint(body)
            if pj is None:
                return body
            body = pj.parent
        return body

    def check_no_loop(self, parent_body: str, child_body: str) -> None:
        b: str | None = parent_body
        for _ in range(len(self.model.links) + 2):
            if b is None or b == WORLD:
                return
            if b == child_body:
                raise self.fail("DMD_LOOP", f"attaching {child_body!r} below {parent_body!r} would close a kinematic "
                                "loop (Drake refuses loops)")
            pj = self.parent_joint(b)
            b = pj.parent if pj is not None else None

    def add_joint(self, joint: Joint) -> None:
        if joint.name in self.model.joints or joint.name in self.model.constraints:
            inst, local = split_scoped(joint.name)
            raise self.fail("DMD_DUPLICATE_JOINT", f"model instance {inst or 'the world'!r} already contains a "
                            f"joint named {local!r}")
        self.model.joints[joint.name] = joint

    # ---- directives -----------------------------------------------------------------------------
    def process(self, directives: list[Directive], ns: str, file: str) -> None:
        for d in directives:
            self.file, self.line, self.element = file, d.line, d.kind
            if isinstance(d, AddModel):
                self.add_model(d, ns)
            elif isinstance(d, AddModelInstance):
                self.element = f"add_model_instance[name={d.name}]"
                self.new_instance(prefix(ns, d.name))
                self.model.models[prefix(ns, d.name)] = ModelFrame(prefix(ns, d.name), WORLD, source=self.source())
            elif isinstance(d, AddFrame):
                self.add_frame(d, ns)
            elif isinstance(d, AddWeld):
                self.add_weld(d, ns)
            elif isinstance(d, AddDirectives):
                self.add_directives(d, ns)
            else:
                self.model.warnings.append(Diagnostic(
                    "DMD_COLLISION_FILTER_IGNORED", "add_collision_filter_group: collision filters are not part of "
                    "the kinematic model; left out", file, d.line, d.kind, severity=Severity.WARNING))

    def new_instance(self, name: str) -> None:
        if name in self.instances:
            raise self.fail("DMD_DUPLICATE_INSTANCE", f"there already is a model instance named {name!r}")
        self.instances.add(name)
        self.frames.setdefault(name, {})
        parts = name.split(SCOPE)
        for k in range(1, len(parts)):  # Drake allows "a::b" without an instance "a": a model holds it here
            outer = SCOPE.join(parts[:k])
            if outer not in self.model.models:
                self.model.models[outer] = ModelFrame(outer, WORLD, source=Source(self.file, self.line, NAMESPACE))

    def add_model(self, d: AddModel, ns: str) -> None:
        inst = prefix(ns, d.name)
        self.element = f"add_model[name={d.name}]"
        path = self.resolve(d.file, d.file_line)
        if not path.name.endswith((".urdf", ".sdf", ".xml")):
            raise self.fail("DMD_UNSUPPORTED_FILE", f"{d.file!r}: add_model reads .urdf, .sdf and .xml files "
                            "(Drake chooses its parser by the extension)", d.file_line)
        try:
            data = access.read_included(path, uri=d.file, referrer=self.file, line=d.file_line)
        except OSError as exc:
            raise self.fail("DMD_FILE_NOT_FOUND", f"{path}: cannot read: {exc.strerror or exc}", d.file_line) from None
        urdf = path.name.endswith(".urdf")
        try:
            with access.uncounted():  # Drake's limit rules read the file once more: counted once, by load_file
                text, limits, problems = drake_limits(data, str(path)) if urdf else (data, {}, [])
            if not problems:  # else refused below, as Drake refuses the file
                sub = self.load_file(path, declare_world_link(text) if urdf else data)
                apply_drake_limits(sub, limits)
                with access.uncounted():  # the same file again, counted once
                    problems = urdf_frames(data, sub, str(path)) if urdf else []
        except (access.FileRefused, access.ExpansionTooLarge):
            raise  # one line naming the reference or the bound
        except ModelError as exc:
            head = Diagnostic("DMD_MODEL_FILE", f"add_model {inst!r}: {path} is not a valid model",
                              self.file, d.file_line, self.element)
            raise ModelError([head, *exc.diagnostics]) from None
        if problems:
            raise self.fail("DMD_MODEL_FILE", f"add_model {inst!r}: {problems[0]}", d.file_line)
        if sub.is_world:
            raise self.fail("DMD_WORLD_FILE", f"{path}: add_model needs a file with a single model (Drake refuses a "
                            "<world>)", d.file_line)
        self.new_instance(inst)
        self.added.add(inst)
        merge_model(self, sub, inst)
        for jn, (values, line) in d.default_joint_positions.items():
            self.default_positions(inst, jn, values, line)
        for key, pose in d.default_free_body_pose.items():
            self.free_body_pose(inst, key, pose, ns)

    def default_positions(self, inst: str, local: str, values: list[float], line: int) -> None:
        name = prefix(inst, local)
        j = self.model.joints.get(name)
        if j is None:
            valid = ", ".join(sorted(s.local for s in map(split_scoped, self.model.joints) if s.instance == inst))
            raise self.fail("DMD_JOINT_NOT_FOUND", f"default_joint_positions: there is no joint {local!r} in model "
                            f"instance {inst!r} (valid names: {valid or 'none'})", line)
        if j.type in (JointType.BALL, JointType.PLANAR, JointType.UNIVERSAL, JointType.REVOLUTE2):
            raise self.fail("DMD_UNSUPPORTED", f"default_joint_positions of {j.type.value} joint {local!r}: Drake's "
                            "coordinates of this joint type are not mapped (left for a later version)", line)
        if len(values) != j.nq:
            raise self.fail("DMD_JOINT_POSITIONS_SIZE", f"default_joint_positions: {len(values)} values for joint "
                            f"{name!r}, which has {j.nq} positions", line)
        if j.mimic:
            self.model.warnings.append(Diagnostic(
                "DMD_MIMIC_DEFAULT_IGNORED", f"default_joint_positions of {name!r} ignored: it mimics "
                f"{j.mimic[0].joint!r} (Drake sets it independently)", self.file, line, self.element, Severity.WARNING))
            return
        if j.type is JointType.FLOATING:  # Drake: qw qx qy qz x y z
            values = [*values[4:7], *values[1:4], values[0]]
        if j.nq:
            self.model.default_positions[name] = [float(v) for v in values]

    def free_body_pose(self, inst: str, key: str, pose: Pose, ns: str) -> None:
        line = pose.line
        if key == "":
            bodies = [n for n in self.model.links if split_scoped(n).instance == inst]
            if len(bodies) != 1:
                raise self.fail("DMD_FREE_BODY_AMBIGUOUS", f"default_free_body_pose \"\": model instance {inst!r} has "
                                f"{len(bodies)} bodies; name the one to pose", line)
            body, x_bf = bodies[0], np.eye(4)
        else:
            found = self.frames[inst].get(key)
            if found is None:
                raise self.fail("DMD_FRAME_NOT_FOUND", f"default_free_body_pose: there is no body or frame {key!r} in "
                                f"model instance {inst!r}", line)
            body, x_bf = found.body, found.pose
        if body == WORLD or self.parent_joint(body) is not None:
            raise self.fail("DMD_FREE_BODY_NOT_FREE", f"default_free_body_pose: body {body!r} is not a free body (it "
                            "already has a joint)", line)
        on_body = key == "" or split_scoped(body) == Scoped(inst, key)
        if pose.base_frame in (None, WORLD) and on_body:  # Drake: the body stays free, at this default pose
            self.free_pose[body] = pose.X
            return
        # Drake adds a (quaternion floating) joint from the base frame to the named frame
        base = self.frame(WORLD if pose.base_frame is None else pose.base_frame, ns)
        pb, x_pb_base = base.body, base.pose
        self.check_no_loop(pb, body)
        binst, blocal = split_scoped(body)
        name = prefix(binst, blocal)
        while name in self.model.joints:
            blocal = "_" + blocal
            name = prefix(binst, blocal)
        self.add_joint(Joint(name, JointType.FLOATING, pb, body, origin=x_pb_base, child_offset=inverse(x_bf),
                             source=Source(self.file, line, self.element)))
        qx, qy, qz, qw = matrix_to_quaternion(pose.X[:3, :3])
        self.model.default_positions[name] = [*(float(v) for v in pose.X[:3, 3]), qx, qy, qz, qw]
        self.free_pose.pop(body, None)

    def add_frame(self, d: AddFrame, ns: str) -> None:
        self.element = f"add_frame[name={d.name}]"
        assert d.X_PF is not None and d.X_PF.base_frame is not None
        base = self.frame(d.X_PF.base_frame, ns)
        body, x_b_base, base_inst = base.body, base.pose, base.instance
        inst, local = split_scoped(d.name)
        if inst:
            inst = prefix(ns, inst)
            if inst not in self.instances:
                raise self.fail("DMD_INSTANCE_NOT_FOUND", f"add_frame {d.name!r}: there is no model instance {inst!r}")
        else:
            inst = base_inst
        if local in self.frames[inst]:
            raise self.fail("DMD_DUPLICATE_FRAME", f"model instance {inst or 'the world'!r} already contains a frame "
                            f"named {local!r}")
        x = x_b_base @ d.X_PF.X
        self.frames[inst][local] = BodyFrame(body, x)
        full = prefix(inst, local)
        self.model.frames[full] = Frame(full, body, x, self.source())

    def add_weld(self, d: AddWeld, ns: str) -> None:
        self.element = f"add_weld[parent={d.parent}, child={d.child}]"
        parent, child = self.frame(d.parent, ns), self.frame(d.child, ns)
        pb, x_pb_p = parent.body, parent.pose
        cb, x_cb_c, cinst = child.body, child.pose, child.instance
        if cb == WORLD:
            raise self.fail("DMD_WELD_CHILD_WORLD", "add_weld: the child cannot be the world")
        if cinst not in self.added:  # Drake demands it (its process aborts otherwise)
            raise self.fail("DMD_WELD_CHILD_INSTANCE", f"add_weld: the child frame's model instance {cinst!r} was not "
                            "added by add_model (a nested model's or an add_model_instance's frame cannot be "
                            "welded as the child in Drake)")
        name = prefix(cinst, f"{split_scoped(d.parent).local}_welds_to_{split_scoped(d.child).local}")
        if name in self.model.joints:  # Drake checks the joint's name first
            self.add_joint(Joint(name, JointType.FIXED, pb, cb))
        self.check_no_loop(pb, cb)
        if pb != WORLD and self.root_of(pb) == self.root_of(cb):
            raise self.fail("DMD_LOOP", f"add_weld: {pb!r} and {cb!r} are already connected by joints: the weld would "
                            "close a kinematic loop (Drake refuses loops)")
        self.reroot(cb)
        x_pc = d.X_PC.X if d.X_PC is not None else np.eye(4)
        if d.X_PC is not None and d.X_PC.base_frame not in (None, d.parent):
            self.model.warnings.append(Diagnostic(
                "DMD_BASE_FRAME_IGNORED", f"X_PC.base_frame {d.X_PC.base_frame!r} ignored: X_PC is relative to the "
                "parent frame (as in Drake)", self.file, d.X_PC.line, self.element, Severity.WARNING))
        self.add_joint(Joint(name, JointType.FIXED, pb, cb, origin=x_pb_p @ x_pc, child_offset=inverse(x_cb_c),
                             source=self.source()))
        self.free_pose.pop(cb, None)

    def reroot(self, body: str) -> None:
        """Make ``body`` the root of its tree, as Drake does when it welds a body that has a parent
        joint: the joints from it up to the old root are reversed (same coordinate, same poses:
        ``X_CP(q) = inv(X_PC(q))``, i.e. origin and child offset inverted and swapped, the axis negated)."""
        chain: list[Joint] = []
        b = body
        while (pj := self.parent_joint(b)) is not None and len(chain) <= len(self.model.joints):
            chain.append(pj)
            b = pj.parent
            if b == WORLD:
                raise self.fail("DMD_LOOP", f"add_weld: {body!r} is already attached to the world (through "
                                f"{pj.name!r}): the weld would close a kinematic loop (Drake refuses loops)")
        for j in chain:
            if j.type not in _REVERSIBLE:
                raise self.fail("DMD_WELD_CHILD_NOT_FREE", f"add_weld: welding {body!r} reverses the joints above it, "
                                f"and {j.type.value} joint {j.name!r} is not reversed by this reader")
        for j in chain:
            axis = None if j.axis is None else (-j.axis[0], -j.axis[1], -j.axis[2])
            self.model.joints[j.name] = dataclasses.replace(j, parent=j.child, child=j.parent,
                                                            origin=inverse(j.child_offset),
                                                            child_offset=inverse(j.origin), axis=axis)
        if chain:
            self.free_pose.pop(b, None)

    def add_directives(self, d: AddDirectives, ns: str) -> None:
        self.element = "add_directives"
        new_ns = prefix(ns, d.model_namespace or "")
        if new_ns and new_ns not in self.instances:
            raise self.fail("DMD_NAMESPACE_NOT_FOUND", f"add_directives: namespace {new_ns!r} does not exist as a "
                            "model instance (declare it with add_model_instance first)")
        path = self.resolve(d.file)
        key = path.resolve()
        if key in self.stack:
            raise self.fail("DMD_INCLUDE_CYCLE", f"{d.file!r} includes itself (through add_directives)")
        self.stack.append(key)
        file, line, element = self.file, self.line, self.element
        try:
            self.process(self.read_directives(path, d.file, file), new_ns, str(path))
        except ModelError as exc:
            head = Diagnostic("DMD_INCLUDED_FILE", f"in directives included from here ({d.file})", file, line, element)
            raise ModelError([*exc.diagnostics, head]) from None
        self.stack.pop()

    # ---- the end --------------------------------------------------------------------------------
    def finish(self) -> Model:
        """Place every link at its default (free bodies) or zero-configuration (jointed) pose."""
        m = self.model
        children: dict[str, list[Joint]] = {}
        for j in m.joints.values():
            children.setdefault(j.parent, []).append(j)
        is_child = {j.child for j in m.joints.values()}
        poses: dict[str, Transform] = {WORLD: np.eye(4)}
        todo = [WORLD]
        for name, link in m.links.items():
            if name not in is_child:
                poses[name] = self.free_pose.get(name, link.pose)
                todo.append(name)
        while todo:
            p = todo.pop()
            for j in children.get(p, []):
                if j.child not in poses:
                    poses[j.child] = poses[p] @ j.origin @ j.child_offset
                    todo.append(j.child)
        for name, link in m.links.items():
            link.pose = np.array(poses.get(name, link.pose))
        return m


def merge_model(c: Composer, sub: Model, inst: str) -> None:
    """Copy ``sub`` (a URDF or SDFormat model) into the scene as model instance ``inst``."""
    m = c.model
    pre = inst + SCOPE
    x = np.asarray(sub.pose, dtype=float)
    urdf_world = sub.format == "urdf" and WORLD in sub.links  # Drake: a URDF link "world" is the world

    def nm(n: str) -> str:
        return WORLD if n == WORLD else pre + n

    def in_world(att: str, pose: Transform) -> Transform:
        return x @ pose if att == WORLD else np.array(pose)

    def register(name: str, body: str, pose: Transform) -> None:
        i, local = split_scoped(name)
        key = prefix(inst, i) if i else inst
        c.instances.add(key)
        c.frames.setdefault(key, {})[local] = BodyFrame(body, pose)

    for n, link in sub.links.items():
        if urdf_world and n == WORLD:
            continue
        m.links[pre + n] = dataclasses.replace(link, name=pre + n, pose=x @ link.pose)
        register(n, pre + n, np.eye(4))
    default_axis = (1.0, 0.0, 0.0) if sub.format == "urdf" else (0.0, 0.0, 1.0)
    for table, target in ((sub.joints, m.joints), (sub.constraints, m.constraints)):
        for n, j in table.items():
            axis = j.axis if j.axis is not None or not j.is_moving else default_axis
            target[pre + n] = dataclasses.replace(
                j, name=pre + n, parent=nm(j.parent), child=nm(j.child), origin=in_world(j.parent, j.origin),
                axis=axis, mimic=[dataclasses.replace(mm, joint=pre + mm.joint) for mm in j.mimic],
                gearbox_reference_body=None if j.gearbox_reference_body is None else nm(j.gearbox_reference_body))
    for n, f in sub.frames.items():
        att = nm(f.attached_to)
        m.frames[pre + n] = Frame(pre + n, att, in_world(f.attached_to, f.pose), f.source)
        if att == WORLD or att in m.links:
            register(n, att, m.frames[pre + n].pose)
    roots = [r for r in sub.root_links() if not (urdf_world and r == WORLD)]
    if "" not in sub.models and roots:  # URDF: the model frame is the file's frame, on the root link
        m.models[inst] = ModelFrame(inst, pre + roots[0], inverse(sub.links[roots[0]].pose), pre + roots[0],
                                    source=c.source())
    for n, mf in sub.models.items():
        key = pre + n if n else inst
        att = nm(mf.attached_to) if mf.attached_to else WORLD
        m.models[key] = ModelFrame(key, att, in_world(mf.attached_to or WORLD, mf.pose),
                                   None if mf.canonical_link is None else pre + mf.canonical_link, mf.static, mf.source)
        if att == WORLD or att in m.links:
            register(f"{n}{SCOPE}{MODEL_FRAME}" if n else MODEL_FRAME, att, m.models[key].pose)
    for e in sub.extensions:
        m.extensions.append(dataclasses.replace(e, owner=None if e.owner is None else pre + e.owner))
    m.warnings.extend(sub.warnings)
