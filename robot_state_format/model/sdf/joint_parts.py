"""Parts of a ``<joint>`` shared by the SDFormat parser: the axes (limits, dynamics), the 1.11
``<mimic>`` and the screw pitch, as a mix-in of :class:`~robot_state_format.model.sdf.parse.Parser`."""

from __future__ import annotations

import math

from lxml import etree

from robot_state_format.model.sdf.elements import Report, ValueParser, Version, child, source
from robot_state_format.model.sdf.ir import MODEL_FRAME, AxisIR, MimicIR
from robot_state_format.model.types import Dynamics, Limits

UNLIMITED = 1e16


class JointParts:
    """Needs ``report`` and ``vp(file)`` from the class it is mixed into."""

    report: Report

    def vp(self, file: str) -> ValueParser:
        raise NotImplementedError


    def screw_pitch(self, el: etree._Element, version: Version, file: str) -> float:
        """Metres per revolution.  ``<screw_thread_pitch>`` (1.10+) is already in m/rev;
        the older ``<thread_pitch>`` is Gazebo-classic's rad/m with the opposite handedness,
        converted as libsdformat does: ``-2 pi / thread_pitch``."""
        vp = self.vp(file)
        if version >= (1, 10) and child(el, "screw_thread_pitch") is not None:
            return vp.float_child(el, "screw_thread_pitch", 1.0) or 0.0
        tp_el = child(el, "thread_pitch")
        if tp_el is not None:
            tp = vp.float_child(el, "thread_pitch", 1.0)
            if tp is None or tp == 0.0:
                self.report.error("SDF_BAD_VALUE", "<thread_pitch> must not be zero", file, tp_el)
                return 0.0
            return -2.0 * math.pi / tp
        return 1.0  # libsdformat's default thread pitch

    def axis(self, el: etree._Element, name: str, version: Version, file: str) -> AxisIR:
        vp = self.vp(file)
        ax = child(el, name)
        if ax is None:
            return AxisIR((0.0, 0.0, 1.0), MODEL_FRAME if version < (1, 5) else None)
        xyz_el = child(ax, "xyz")
        xyz = vp.vec3_child(ax, "xyz", (0.0, 0.0, 1.0)) or (0.0, 0.0, 1.0)
        expressed: str | None = None
        if version < (1, 5):
            expressed = MODEL_FRAME
        elif version < (1, 7):
            if vp.bool_child(ax, "use_parent_model_frame", False):
                expressed = MODEL_FRAME
        elif xyz_el is not None and xyz_el.get("expressed_in"):
            expressed = (xyz_el.get("expressed_in") or "").strip()
        limits = None
        lim = child(ax, "limit")
        if lim is not None:
            # +-inf means no limit, as libsdformat reads it
            lo = vp.float_child(lim, "lower", None, allow_infinite=True)
            hi = vp.float_child(lim, "upper", None, allow_infinite=True)
            eff = vp.float_child(lim, "effort", None, allow_infinite=True)
            vel = vp.float_child(lim, "velocity", None, allow_infinite=True)
            limits = Limits(
                lower=lo if lo is not None and abs(lo) < UNLIMITED else None,
                upper=hi if hi is not None and abs(hi) < UNLIMITED else None,
                effort=eff if eff is not None and eff >= 0 else None,
                velocity=vel if vel is not None and vel >= 0 else None,
            )
        dyn = None
        d = child(ax, "dynamics")
        if d is not None:
            dyn = Dynamics(damping=vp.float_child(d, "damping", 0.0) or 0.0,
                           friction=vp.float_child(d, "friction", 0.0) or 0.0)
        return AxisIR(xyz, expressed, limits, dyn, source(ax, file))

    def mimic(self, el: etree._Element, dof: int, file: str) -> MimicIR | None:
        """1.11 ``<mimic joint= axis=>``: follower = multiplier * (leader - reference) + offset."""
        vp = self.vp(file)
        leader = el.get("joint")
        if not leader:
            self.report.error("SDF_MISSING_ATTRIBUTE", "<mimic> needs a joint attribute", file, el)
            return None
        axis_attr = (el.get("axis") or "axis").strip()
        if axis_attr not in ("axis", "axis2"):
            self.report.error("SDF_BAD_VALUE", f"<mimic axis={axis_attr!r}>: expected axis or axis2", file, el)
            return None
        mult = vp.float_child(el, "multiplier", 1.0)
        off = vp.float_child(el, "offset", 0.0)
        ref = vp.float_child(el, "reference", 0.0)
        mult = 1.0 if mult is None else mult
        return MimicIR(joint=leader.strip(), multiplier=mult, offset=(off or 0.0) - mult * (ref or 0.0),
                       dof=dof, leader_dof=1 if axis_attr == "axis2" else 0, source=source(el, file))

    # ----------------------------------------------------------------- include
