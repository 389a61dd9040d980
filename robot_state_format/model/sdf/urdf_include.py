"""What libsdformat's URDF conversion refuses in a URDF included by an SDFormat document.

A plain URDF file is judged by urdfdom (the project's rule for URDF, docs/models.md); a URDF an
SDFormat ``<include>`` pulls in is read by libsdformat, through its URDF-to-SDFormat conversion, and
refused where that conversion's result is invalid SDFormat (checked with ``conformance/sdf_ref``):

* ``<gazebo reference="L">`` extensions adding two ``<sensor>``s of one name to a link or joint
  (``SDF_DUPLICATE_SENSOR``: "sensor with name[s] already exists");
* an invalid inertia (``SDF_INVALID_INERTIA``, :func:`..parse.scope_from_model`).
"""

from __future__ import annotations

from robot_state_format.errors import RobotStateFormatError
from robot_state_format.model.sdf.elements import Report, children, tag
from robot_state_format.model.xml import parse_xml


def gazebo_refusals(data: bytes, path: str, report: Report) -> None:
    """Report the duplicate names the ``<gazebo>`` extensions of the URDF ``data`` create."""
    try:
        root, _ = parse_xml(data, path)
    except RobotStateFormatError:
        return  # the URDF reader has reported it
    seen: dict[tuple[str, str], set[str]] = {}
    for ext in children(root, "gazebo"):
        ref = (ext.get("reference") or "").strip()
        for c in children(ext):
            kind = tag(c)
            if kind != "sensor":
                continue
            name = c.get("name") or ""
            names = seen.setdefault((ref, kind), set())
            if name in names:
                report.error("SDF_DUPLICATE_SENSOR", f"the <gazebo reference={ref!r}> extensions of included URDF "
                             f"{path} add two sensors named {name!r} (libsdformat's URDF conversion refuses it)",
                             path, c)
            names.add(name)


__all__ = ["gazebo_refusals"]
