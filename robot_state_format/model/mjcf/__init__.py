"""MuJoCo MJCF reader: ``<mujoco>`` documents as the project's Model (docs/models.md, "MJCF").

MuJoCo's own compiler is the reference (``mj_kinematics``: every body's and site's pose at any
configuration, conformance/mjcf_ref.py); what MuJoCo refuses is refused here. A joint's value is
MuJoCo's ``qpos`` of it. Read: ``<compiler>``, ``<default>``, ``<include>``, ``<worldbody>`` (bodies,
joints, sites, frames, geoms, inertials), ``<asset><mesh>`` (mesh files), ``<equality><joint>``
(a linear ``polycoef`` → mimic). Not read (a ``MJCF_NOT_READ`` warning names the sections present):
actuators, sensors, tendons, contact pairs/excludes, keyframes, other equality constraints.
"""

from __future__ import annotations

from pathlib import Path

from lxml import etree

from robot_state_format.errors import Severity
from robot_state_format.model.mjcf.asset_files import check_asset_files
from robot_state_format.model.mjcf.build import JointInfo, build_model
from robot_state_format.model.mjcf.document import Document, load_document
from robot_state_format.model.mjcf.mass import check_inertials, check_moving_mass, check_negative_geoms
from robot_state_format.model.mjcf.names import check_counts, check_keyframes, check_names
from robot_state_format.model.mjcf.orient import vector
from robot_state_format.model.mjcf.references import check_references
from robot_state_format.model.mjcf.schema import TOP_LEVEL
from robot_state_format.model.mjcf.schema_check import check_attributes
from robot_state_format.model.mjcf.values import check_values
from robot_state_format.model.types import Mimic, Model

__all__ = ["read_mjcf"]

_NOT_READ = ("actuator", "sensor", "tendon", "contact", "keyframe", "deformable")


def _equality(doc: Document, model: Model, joints: dict[str, JointInfo]) -> None:
    for eq in doc.root.iterchildren("equality"):
        for el in eq:
            if not isinstance(el.tag, str):
                continue
            if el.tag != "joint":
                doc.report(el, "MJCF_EQUALITY_NOT_READ", f"<equality><{el.tag}> is not read (only a linear "
                           "<joint> constraint becomes a mimic)", warning=True)
                continue
            _joint_equality(doc, model, joints, el)


def _joint_equality(doc: Document, model: Model, joints: dict[str, JointInfo], el: etree._Element) -> None:
    cls = el.get("class", "main")
    j1, j2 = el.get("joint1"), el.get("joint2")
    for j in (j1, j2):
        if j is not None and j not in joints:
            doc.report(el, "MJCF_UNKNOWN_JOINT", f"unknown joint {j!r} in equality constraint")
            return
    if j1 is None:
        doc.report(el, "MJCF_UNKNOWN_JOINT", "<equality><joint> needs joint1")
        return
    coef = vector(doc.lookup(el, cls, "polycoef") or "0 1 0 0 0", 5, "polycoef", lambda c, m: doc.report(el, c, m))
    if coef is None:
        return
    if (doc.lookup(el, cls, "active") or "true") != "true":
        doc.report(el, "MJCF_EQUALITY_NOT_READ", "an inactive equality constraint is not read", warning=True)
        return
    follower, leader = joints[j1], joints[j2] if j2 is not None else None
    if leader is None or any(coef[2:]) or follower.mj_type not in ("hinge", "slide") \
            or leader.mj_type not in ("hinge", "slide") or j1 == j2:
        doc.report(el, "MJCF_EQUALITY_NOT_READ", "only a linear polycoef between two hinge/slide joints becomes a "
                   "mimic; this constraint is not read", warning=True)
        return
    # MuJoCo: y - y0 = c0 + c1 (x - x0), y0 and x0 the joints' qpos0 (ref); values here are qpos
    offset = follower.ref + coef[0] - coef[1] * leader.ref
    model.joints[j1].mimic.append(Mimic(j2 or "", coef[1], offset))


def read_mjcf(data: bytes | str, *, file: str = "<string>") -> Model:
    """Read an MJCF document (``ModelError`` listing every problem, as MuJoCo would refuse it); warnings are
    the Model's ``warnings``."""
    doc = load_document(data, file)
    check_attributes(doc)
    check_asset_files(doc)
    for el in doc.root:
        if isinstance(el.tag, str) and el.tag not in TOP_LEVEL:
            doc.report(el, "MJCF_UNKNOWN_ELEMENT", f"unrecognized element <{el.tag}> in <mujoco> (MuJoCo 4.0's "
                       "schema)")
    name = doc.root.get("model") or ("mujoco" if doc.is_text else Path(file).stem)
    model, joints = build_model(doc, name)
    _equality(doc, model, joints)
    check_names(doc, set(joints))
    check_references(doc, model)
    if not check_negative_geoms(doc) and not check_inertials(doc):  # one line, as MuJoCo stops at the first
        check_moving_mass(doc)
    check_counts(doc)
    check_keyframes(doc, [j.mj_type for j in joints.values()])
    check_values(doc)
    present = [s for s in _NOT_READ if doc.root.find(s) is not None]
    if present:
        doc.report(None, "MJCF_NOT_READ", f"not read (no kinematic effect): {', '.join('<' + s + '>' for s in present)}",
                   warning=True)
    doc.raise_errors()
    model.warnings.extend(d for d in doc.diagnostics if d.severity is Severity.WARNING)
    return model
