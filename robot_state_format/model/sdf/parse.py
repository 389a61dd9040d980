"""SDFormat XML → :mod:`ir` scopes, applying each version's pose and axis conventions.

* 1.4 and earlier: poses are relative to the parent element, a joint's pose to its child link;
  axis ``xyz`` is expressed in the model frame.
* 1.5/1.6: ``<pose frame="F">`` (empty: the 1.4 default); axis in the joint frame unless
  ``use_parent_model_frame`` is true.
* 1.7+: ``relative_to``, ``<frame attached_to>``, ``//axis/xyz/@expressed_in``,
  ``canonical_link``; 1.8+: ``placement_frame`` (libsdformat 12 applies it in every version); 1.9+: ``<include merge>``;
  1.10+: ``screw_thread_pitch``; 1.11: ``//axis/mimic``.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from lxml import etree

from robot_state_format import limits
from robot_state_format.errors import DiagnosticError, RobotStateFormatError
from robot_state_format.lazy_modules import lazy_package
from robot_state_format.model import access
from robot_state_format.model.detect import detect_format
from robot_state_format.model.sdf import dom_rules, drake, include, urdf_include
from robot_state_format.model.sdf.elements import (
    Report,
    ValueParser,
    Version,
    child,
    children,
    libsdformat_reads_version,
    parse_version,
    source,
    tag,
    text_of,
)
from robot_state_format.model.sdf.ir import (
    MODEL_FRAME,
    FrameIR,
    JointIR,
    LinkIR,
    Scope,
    ShapeIR,
)
from robot_state_format.model.sdf.joint_parts import JointParts
from robot_state_format.model.sdf.prefixes import declare_prefixes
from robot_state_format.model.types import WORLD, Extension, JointType, Shape
from robot_state_format.model.urdf.reader import read_urdf
from robot_state_format.model.xml import check_element_count, check_size, encode_text, parse_xml
from robot_state_format.spatial import Transform

# the specification check (its module and data) costs nothing until an SDFormat document is read
(spec_check,) = lazy_package("robot_state_format.model.sdf.spec_check")

MIN_VERSION: Version = (1, 0)
MAX_VERSION: Version = (1, 11)

_JOINT_TYPES = {
    "fixed": JointType.FIXED, "revolute": JointType.REVOLUTE, "continuous": JointType.CONTINUOUS,
    "prismatic": JointType.PRISMATIC, "screw": JointType.SCREW, "universal": JointType.UNIVERSAL,
    "revolute2": JointType.REVOLUTE2, "ball": JointType.BALL, "gearbox": JointType.GEARBOX,
}
_ONE_AXIS = {JointType.REVOLUTE, JointType.CONTINUOUS, JointType.PRISMATIC, JointType.SCREW}
_TWO_AXES = {JointType.UNIVERSAL, JointType.REVOLUTE2, JointType.GEARBOX}
class Parser(JointParts):
    """Reads SDFormat files (and their includes) into scopes, collecting diagnostics."""

    def __init__(self, report: Report, search_paths: Sequence[str]) -> None:
        self.report = report
        self.search_paths = list(search_paths)
        self.include_stack: list[str] = []
        self.includes_read = 0  # every file read by an <include>: bounded (an include bomb)

    # ----------------------------------------------------------------- documents
    def read_root(self, data: str | bytes, file: str) -> tuple[etree._Element, Version] | None:
        raw = encode_text(data, file) if isinstance(data, str) else bytes(data)
        check_size(raw, file)  # the bounds before any scan
        check_element_count(raw, file)
        raw, declared = declare_prefixes(raw)
        root, warns = parse_xml(raw, file)
        self.report.diagnostics.extend(warns)
        if declared:
            self.report.warn("SDF_UNDECLARED_PREFIX",
                             f"namespace prefix(es) {', '.join(declared)} used without a declaration",
                             file, root)
        if tag(root) != "sdf":
            self.report.error("SDF_NOT_SDFORMAT", f"root element is <{tag(root)}>, expected <sdf>", file, root)
            return None
        vtext = root.get("version")
        if vtext is None:
            self.report.error("SDF_MISSING_VERSION", "<sdf> has no version attribute", file, root)
            return None
        version = parse_version(vtext)
        if version is None or not (MIN_VERSION <= version <= MAX_VERSION):
            if not libsdformat_reads_version(vtext):
                self.report.error("SDF_UNSUPPORTED_VERSION",
                                  f"SDFormat version {vtext!r} is not supported (1.0 to 1.11)", file, root)
                return None
            # libsdformat reads a version it cannot convert from as its own (1.9): so does this reader
            self.report.warn("SDF_UNSUPPORTED_VERSION", f"SDFormat version {vtext!r} is not supported (1.0 to "
                             "1.11); read as 1.9, as libsdformat reads it", file, root)
            version = (1, 9)
            own: Version | None = None
        else:
            own = version
        # the specification's element descriptions, as libsdformat reads the document (it stops at an error)
        if spec_check.check_document(root, self.report, file, own):
            return None
        dom_rules.check(root, self.report, file)  # libsdformat's DOM refusals: reported, the reading goes on
        tops = [c for c in children(root) if tag(c) in ("model", "light", "actor", "include")]
        if not children(root, "world"):  # libsdformat's Root: one model, light or actor (an include is one)
            for extra in tops[1:]:
                both = tag(tops[0]) == tag(extra) == "model"
                self.report.error("SDF_MULTIPLE_MODELS" if both else "SDF_MULTIPLE_ROOTS",
                                  f"<sdf> holds <{tag(tops[0])}> and <{tag(extra)}>: a file without a world holds one "
                                  "model, light or actor (libsdformat refuses more)", file, extra)
        return root, version

    def read_document(self, data: str | bytes, file: str) -> Scope | None:
        """The root scope: the single top-level model, or the (first) world."""
        got = self.read_root(data, file)
        if got is None:
            return None
        root, version = got
        worlds = children(root, "world")
        models = children(root, "model")
        if worlds:
            if models:
                self.report.error("SDF_MULTIPLE_ROOTS", "<sdf> holds both a <world> and a <model>", file, models[0])
            names = [w.get("name") for w in worlds]
            for i, extra in enumerate(worlds[1:], 1):
                if names[i] in names[:i]:  # libsdformat refuses worlds of one name
                    self.report.error("SDF_DUPLICATE_WORLD", f"world name {names[i]!r} is already used", file, extra)
                else:
                    self.report.warn("SDF_EXTRA_WORLD", "only the first <world> is read", file, extra)
            return self.world(worlds[0], version, file)
        top_include = children(root, "include")
        if not models and top_include:  # <sdf><include>: the included model is the file's model
            holder = Scope(name="", version=version, file=file, source=source(root, file))
            self.include(top_include[0], holder, version, file)
            for item in holder.items:
                if isinstance(item, Scope):
                    item.rel = None if item.rel == MODEL_FRAME else item.rel
                    item.parent = None
                    return item
        if not models:
            # libsdformat loads a file holding a light, an actor or nothing: no kinematics (an empty,
            # static model named after it)
            others = [c for c in children(root) if tag(c) in ("light", "actor")] or [root]
            self.report.warn("SDF_NO_MODEL", f"<sdf> holds {'a <' + tag(others[0]) + '>' if others[0] is not root else 'nothing'}"
                             ", no <model> or <world>: nothing to read", file, others[0])
            name = others[0].get("name") or (Path(file).stem if others[0] is root else tag(others[0]))
            empty = etree.SubElement(etree.Element("sdf"), "model", name=name or "empty")
            etree.SubElement(empty, "static").text = "true"
            return self.model(empty, version, file, top=True)
        return self.model(models[0], version, file, top=True)  # (several: refused in read_root)

    # ----------------------------------------------------------------- helpers
    def vp(self, file: str) -> ValueParser:
        return ValueParser(self.report, file)

    def pose_rel(self, el: etree._Element, version: Version, file: str,
                 default: str | None) -> tuple[Transform, str | None]:
        """The ``<pose>`` child of ``el`` and the frame it is relative to (version rules)."""
        p = child(el, "pose")
        x = self.vp(file).pose(p)
        rel = default
        if p is not None:
            if version >= (1, 7):
                r = p.get("relative_to")
                if r:
                    rel = r.strip()
                if p.get("frame"):
                    self.report.warn("SDF_DEPRECATED_ATTRIBUTE",
                                     "//pose/@frame is ignored since SDFormat 1.7; use relative_to", file, p)
            else:  # libsdformat 12 reads the converted document: a relative_to given anyway is honoured
                r = p.get("relative_to")
                f = p.get("frame") if version >= (1, 5) else None
                if f or r:
                    rel = (f or r or "").strip()
        return x, rel

    def name_of(self, el: etree._Element, file: str) -> str | None:
        name: str | None = el.get("name")
        if name is None:
            self.report.error("SDF_MISSING_ATTRIBUTE", f"<{tag(el)}> has no name attribute", file, el)
        return name

    # ----------------------------------------------------------------- world
    def world(self, el: etree._Element, version: Version, file: str) -> Scope:
        name = self.name_of(el, file) or ""
        scope = Scope(name=name, version=version, file=file, source=source(el, file), is_world=True, kind="world")
        seen: dict[str, set[str]] = {}
        for c in children(el):
            t = tag(c)
            if t in ("light", "actor"):  # not frames, but sibling names of one type are unique
                lname = self.name_of(c, file)
                if lname is not None:
                    self._check_sibling(seen, t, lname, c, file)
            elif t == "model":
                m = self.model(c, version, file, top=False, default_rel=WORLD)
                if m is not None:
                    scope.items.append(m)
            elif t == "include":
                self.include(c, scope, version, file)
            elif t == "frame":  # before 1.5 too: libsdformat 12 reads the converted document's frames
                f = self.frame(c, version, file, default_attached=WORLD)
                if f is not None:
                    scope.items.append(f)
            elif t == "joint":
                if (1, 7) <= version < (1, 10):
                    self.report.warn("SDF_WORLD_JOINT_VERSION",
                                     "//world/joint is not part of SDFormat 1.7 to 1.9; read anyway", file, c)
                j = self.joint(c, version, file, scope.extensions)
                if j is not None:
                    scope.items.append(j)
            elif t.startswith("drake:"):
                scope.extensions.append(drake.extension(c, None, file))
        return scope

    # ----------------------------------------------------------------- model
    def model(self, el: etree._Element, version: Version, file: str, *, top: bool,
              default_rel: str = MODEL_FRAME) -> Scope | None:
        name = self.name_of(el, file)
        if name is None:
            return None
        vp = self.vp(file)
        pose, rel = self.pose_rel(el, version, file, None if top else default_rel)
        scope = Scope(name=name, version=version, file=file, source=source(el, file), pose=pose, rel=rel)
        canon = el.get("canonical_link")  # 1.7's; libsdformat 12 checks and uses it in every version
        scope.canonical = canon.strip() if canon else None
        pf = el.get("placement_frame")  # a 1.8 attribute libsdformat 12 applies in files of every version
        scope.placement = pf.strip() if pf else None
        scope.static = vp.bool_child(el, "static", False)
        for c in children(el):
            t = tag(c)
            if t == "link":
                link = self.link(c, version, file, scope)
                if link is not None:
                    scope.items.append(link)
            elif t == "joint":
                j = self.joint(c, version, file, scope.extensions)
                if j is not None:
                    scope.items.append(j)
            elif t == "frame":  # before 1.5 too: libsdformat 12 reads the converted document's frames
                f = self.frame(c, version, file, default_attached=MODEL_FRAME)
                if f is not None:
                    scope.items.append(f)
            elif t == "model":
                m = self.model(c, version, file, top=False)
                if m is not None:
                    scope.items.append(m)
            elif t == "include":
                self.include(c, scope, version, file)
            elif t == "drake:joint":
                pose_rel = self.pose_rel(c, version, file, None)
                if pose_rel[1] is None and child(c, "drake:pose") is not None:
                    pose_rel = self.pose_rel_drake(c, version, file)
                j2 = drake.drake_joint(c, vp, self.report, pose_rel)
                if j2 is not None:
                    scope.items.append(j2)
                    for d in children(c):
                        if tag(d) not in ("drake:parent", "drake:child", "pose", "drake:pose"):
                            scope.extensions.append(drake.extension(d, j2.name, file))
            elif t.startswith("drake:"):
                scope.extensions.append(drake.extension(c, None, file))
        return scope

    def pose_rel_drake(self, el: etree._Element, version: Version, file: str) -> tuple[Transform, str | None]:
        p = child(el, "drake:pose")
        x = self.vp(file).pose(p)
        r = p.get("relative_to") if p is not None else None
        return x, (r.strip() if r else None)

    # ----------------------------------------------------------------- link
    def link(self, el: etree._Element, version: Version, file: str, scope: Scope) -> LinkIR | None:
        name = self.name_of(el, file)
        if name is None:
            return None
        vp = self.vp(file)
        pose, rel = self.pose_rel(el, version, file, MODEL_FRAME)
        link = LinkIR(name=name, source=source(el, file), pose=pose, rel=rel or MODEL_FRAME)
        seen: dict[str, set[str]] = {}
        for c in children(el):
            t = tag(c)
            if t == "inertial":
                link.inertial = vp.inertial(c)
            elif t in ("visual", "collision"):
                sname = self.name_of(c, file)
                if sname is not None:
                    self._check_sibling(seen, t, sname, c, file)
                x, srel = self.pose_rel(c, version, file, None)
                g = child(c, "geometry")
                if g is None or not children(g):  # libsdformat loads it (an empty geometry)
                    self.report.warn("SDF_MISSING_ELEMENT", f"<{t}> has no geometry shape; it is ignored", file,
                                     c if g is None else g)
                    continue
                shape = Shape(geometry=vp.geometry(g), origin=x, name=sname, source=source(c, file),
                              material=vp.material(child(c, "material")) if t == "visual" else None)
                (link.visuals if t == "visual" else link.collisions).append(ShapeIR(shape, srel))
                for d in [*children(c), *children(g)]:
                    if tag(d).startswith("drake:") and tag(d) not in ("drake:capsule", "drake:ellipsoid"):
                        scope.extensions.append(drake.extension(d, name, file))
            elif t == "frame":
                self.report.warn("SDF_IGNORED_FRAME",
                                 "a <frame> inside a <link> is not supported (SDFormat 1.7 allows frames only in "
                                 "models and worlds); ignored", file, c)
            elif t in ("sensor", "light", "projector", "particle_emitter"):  # (an audio_source has no name)
                sname = self.name_of(c, file)
                if sname is not None:
                    self._check_sibling(seen, t, sname, c, file)
            elif t.startswith("drake:"):
                scope.extensions.append(drake.extension(c, name, file))
        return link

    def _check_sibling(self, seen: dict[str, set[str]], kind: str, name: str, el: etree._Element,
                       file: str) -> None:
        names = seen.setdefault(kind, set())
        if name == "":
            self.report.error("SDF_EMPTY_NAME", f"<{kind}> has an empty name", file, el)
        elif name in names:
            self.report.error(f"SDF_DUPLICATE_{kind.upper()}",
                              f"{kind} name {name!r} is used by a sibling {kind}", file, el)
        names.add(name)

    # ----------------------------------------------------------------- frame
    def frame(self, el: etree._Element, version: Version, file: str, default_attached: str) -> FrameIR | None:
        name = self.name_of(el, file)
        if name is None:
            return None
        if version >= (1, 7):
            att = el.get("attached_to")
            attached = att.strip() if att else default_attached
            pose, rel = self.pose_rel(el, version, file, None)
        elif version >= (1, 5):  # 1.5/1.6: //frame/pose/@frame is the pose's frame; libsdformat 12 attaches the
            # frame to the model (as 1.7's default) or to a 1.7 attached_to given anyway, a pose without @frame
            # then being relative to it
            pose, rel = self.pose_rel(el, version, file, None)
            att = el.get("attached_to")
            attached = att.strip() if att else default_attached
        else:  # no <frame> before 1.5: libsdformat 12 reads it as converted (@frame -> @relative_to)
            att = el.get("attached_to")
            attached = att.strip() if att else default_attached
            pose, rel = self.pose_rel(el, version, file, None)
            p = child(el, "pose")
            f = p.get("frame") if p is not None else None
            rel = f.strip() if f else rel
        return FrameIR(name=name, source=source(el, file), pose=pose, rel=rel, attached_to=attached)

    # ----------------------------------------------------------------- joint
    def joint(self, el: etree._Element, version: Version, file: str,  # noqa: C901 (complexity 21): to be split, issue 38
              extensions: list[Extension] | None = None) -> JointIR | None:
        name = self.name_of(el, file)
        if name is None:
            return None
        vp = self.vp(file)
        sensors: dict[str, set[str]] = {}
        for c in children(el, "sensor"):
            sname = self.name_of(c, file)
            if sname is not None:
                self._check_sibling(sensors, "sensor", sname, c, file)
        ttext = (el.get("type") or "").strip().lower()
        jtype = _JOINT_TYPES.get(ttext)
        if jtype is None:
            self.report.error("SDF_UNKNOWN_JOINT_TYPE", f"joint type {el.get('type')!r} is not an SDFormat type",
                              file, el)
            return None
        parent = text_of(child(el, "parent"))
        child_name = text_of(child(el, "child"))
        ok = True
        for what, val in (("parent", parent), ("child", child_name)):
            if val is None:
                self.report.error(f"SDF_JOINT_MISSING_{what.upper()}", f"joint has no <{what}>", file, el)
                ok = False
            elif val == "":
                self.report.error(f"SDF_JOINT_{what.upper()}_NOT_FOUND", f"joint <{what}> is empty", file, el)
                ok = False
        if not ok:
            return None
        pose, rel = self.pose_rel(el, version, file, None)
        j = JointIR(name=name, type=jtype, parent=parent or "", child=child_name or "", source=source(el, file),
                    pose=pose, rel=rel)
        if jtype in _ONE_AXIS or jtype in _TWO_AXES:
            j.axis = self.axis(el, "axis", version, file)
        if jtype in _TWO_AXES:
            j.axis2 = self.axis(el, "axis2", version, file)
        for i, ax_name in enumerate(("axis", "axis2")):
            ax_el = child(el, ax_name)
            mim = child(ax_el, "mimic") if ax_el is not None and version >= (1, 11) else None
            if mim is not None:
                m = self.mimic(mim, i, file)
                if m is not None:
                    j.mimic.append(m)
        dm = child(el, "drake:mimic")
        if dm is not None:
            m2 = drake.drake_mimic(dm, vp)
            if m2 is not None:
                j.mimic.append(m2)
        if jtype is JointType.SCREW:
            j.screw_pitch = self.screw_pitch(el, version, file)
        if jtype is JointType.GEARBOX:
            j.gearbox_ratio = vp.float_child(el, "gearbox_ratio", 1.0)
            ref = text_of(child(el, "gearbox_reference_body"))
            j.gearbox_reference_body = ref or None
        if extensions is not None:  # Drake's joint data (gains, rotor inertia, acceleration limits...)
            for d in el.iter():
                if d is not el and tag(d).startswith("drake:") and tag(d) != "drake:mimic" and not (
                        d.getparent() is not None and tag(d.getparent()).startswith("drake:")):
                    extensions.append(drake.extension(d, name, file))
        return j

    def include(self, el: etree._Element, scope: Scope, version: Version, file: str) -> None:
        uri = text_of(child(el, "uri"))
        if not uri:
            self.report.error("SDF_INCLUDE_MISSING_URI", "<include> has no <uri>", file, el)
            return
        base = Path(file).parent if file and not file.startswith("<") else None
        access.check_reference(uri, file, el.sourceline)  # before any lookup
        problems: list[str] = []
        found = include.resolve_uri(uri, base, self.search_paths, problems)
        shown = uri if len(uri) <= 80 else uri[:38] + "..." + uri[-38:]
        if found is None:
            refused = f"; the system refused {problems[0]}" if problems else ""
            self.report.error("SDF_INCLUDE_NOT_FOUND",
                              f"cannot resolve include URI {shown!r} (searched next to the file, the search "
                              f"paths and {', '.join(include.ENV_VARS)}){refused}", file, el)
            return
        access.check_path(found, uri=uri, referrer=file, line=el.sourceline)  # before a model.config is read
        try:
            path, why = include.model_file(found)
            key = str(path.resolve()) if path is not None else ""
        except (OSError, RuntimeError) as exc:  # permission denied, symlink loop...
            why = f"cannot read {found}: {getattr(exc, 'strerror', None) or exc}"
            path = None
        if path is None:
            self.report.error("SDF_INCLUDE_NOT_FOUND", f"include {shown!r}: {why}", file, el)
            return
        if key in self.include_stack:
            self.report.error("SDF_INCLUDE_CYCLE", f"include {uri!r} includes itself ({path})", file, el)
            return
        self.includes_read += 1
        if self.includes_read > limits.MAX_SDF_INCLUDES:
            if self.includes_read == limits.MAX_SDF_INCLUDES + 1:
                self.report.error("SDF_TOO_MANY_INCLUDES", f"more than {limits.MAX_SDF_INCLUDES} files included "
                                  "(RSF_MAX_SDF_INCLUDES); includes that include each other more than once?", file, el)
            return
        try:
            data = access.read_included(path, uri=uri, referrer=file, line=el.sourceline)
        except OSError as exc:
            self.report.error("SDF_INCLUDE_NOT_FOUND", f"cannot read {path}: {exc.strerror or exc}", file, el)
            return
        self.include_stack.append(key)
        try:
            inc = self._included_scope(data, str(path), el, file)
        finally:
            self.include_stack.pop()
        if inc is None:
            return
        vp = self.vp(file)
        name_el = child(el, "name")
        if name_el is not None and text_of(name_el):
            inc.name = text_of(name_el) or inc.name
        if child(el, "pose") is not None:
            inc.pose, inc.rel = self.pose_rel(el, version, file, None)
        else:
            inc.rel = None
        inc.rel = inc.rel or (WORLD if scope.is_world else MODEL_FRAME)
        pf_el = child(el, "placement_frame")  # 1.8, applied by libsdformat 12 in files of every version
        if pf_el is not None and child(el, "pose") is None:
            self.report.error("SDF_PLACEMENT_WITHOUT_POSE", "an <include> with a <placement_frame> needs a <pose> "
                              "(where to put that frame)", file, pf_el)
        pf = text_of(pf_el)
        if pf:
            inc.placement = pf
        if child(el, "static") is not None:
            inc.static = vp.bool_child(el, "static", False)
        merge = el.get("merge")
        if merge is not None and vp.boolean(el, merge, False, "merge"):
            if scope.is_world:  # (a 1.9 attribute libsdformat 12 applies in files of every version)
                self.report.error("SDF_INCLUDE_MERGE_IN_WORLD", "<include merge> is only allowed in a <model>",
                                  file, el)
            else:
                self._merge(inc, scope, el, file)
                return
        scope.items.append(inc)

    def _included_scope(self, data: bytes, path: str, el: etree._Element, file: str) -> Scope | None:
        try:
            fmt = detect_format(data, path)
        except RobotStateFormatError:
            fmt = "sdf"
        if fmt == "urdf":
            try:
                model = read_urdf(data, file=path)
            except DiagnosticError as exc:
                self.report.diagnostics.extend(exc.diagnostics)
                return None
            except RobotStateFormatError as exc:
                self.report.error("SDF_INCLUDE_ERROR", f"included URDF {path}: {exc}", file, el)
                return None
            self.report.diagnostics.extend(model.warnings)
            urdf_include.refusals(model, path, self.report)
            return urdf_include.scope_from_model(model, path, self.report)
        if fmt == "xacro":
            self.report.error("SDF_INCLUDE_UNSUPPORTED", f"cannot include a xacro file ({path})", file, el)
            return None
        got = self.read_root(data, path)
        if got is None:
            return None
        root, version = got
        models = children(root, "model")
        if not models:
            others = [tag(c) for c in children(root) if tag(c) in ("light", "actor")]
            if others:  # libsdformat includes lights and actors; they carry no kinematics
                self.report.warn("SDF_INCLUDE_NOT_A_MODEL", f"included file {path} holds a <{others[0]}>, not a "
                                 "<model>; it is ignored", file, el)
            else:
                self.report.error("SDF_INCLUDE_NOT_A_MODEL", f"included file {path} holds no <model>", file, el)
            return None
        return self.model(models[0], version, path, top=True)

    def _merge(self, inc: Scope, scope: Scope, el: etree._Element, file: str) -> None:
        """Merge-include: the included model's contents join ``scope``; its model frame becomes
        the frame ``_merged__NAME__model__`` attached to its canonical link."""
        proxy = f"_merged__{inc.name}__model__"
        canonical = inc.canonical
        if canonical is None:
            links = inc.links()
            if links:
                canonical = links[0].name
            else:
                for m in inc.models():
                    if m.links():
                        canonical = f"{m.name}::{m.links()[0].name}"
                        break
        if canonical is None:
            self.report.error("SDF_MODEL_WITHOUT_LINK", f"merged model {inc.name!r} has no link", file, el)
            return
        frame = FrameIR(name=proxy, source=source(el, file), pose=inc.pose, rel=inc.rel,
                        attached_to=canonical, placement=inc.placement)

        def sub(ref: str | None) -> str | None:
            return proxy if ref == MODEL_FRAME else ref

        for item in inc.items:
            if isinstance(item, LinkIR):
                item.rel = sub(item.rel) or MODEL_FRAME
                for s in [*item.visuals, *item.collisions]:
                    s.rel = sub(s.rel)
            elif isinstance(item, JointIR):
                item.rel = sub(item.rel)
                item.parent = sub(item.parent) or item.parent
                item.child = sub(item.child) or item.child
                for ax in (item.axis, item.axis2):
                    if ax is not None:
                        ax.expressed_in = sub(ax.expressed_in)
            elif isinstance(item, FrameIR):
                item.rel = sub(item.rel)
                item.attached_to = sub(item.attached_to) or item.attached_to
            elif isinstance(item, Scope):
                item.rel = sub(item.rel)
                item.parent = scope
        scope.items.append(frame)
        scope.items.extend(inc.items)
        scope.extensions.extend(inc.extensions)

