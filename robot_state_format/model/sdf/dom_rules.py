"""libsdformat 12's DOM checks that the element descriptions cannot express.

The descriptions (:mod:`.spec_check`) say which elements and values a document may hold; a few
refusals come from libsdformat's classes reading them (``sdf::Material::Load``, ``Light``, ``Sensor``,
``ForceTorque``, ``Camera``, ``ParticleEmitter``, ``Atmosphere``, ``SphericalCoordinates``, ``Mesh``,
``World``), each measured with ``conformance/sdf_ref``. Outside ``<plugin>`` content (copied, not read):

* a value of a string libsdformat reads as one of a fixed set (:data:`ONE_OF`: a light's, sensor's or
  particle emitter's type, a force-torque frame, a camera image format, ...), case-sensitive, spaces
  around it ignored (``SDF_UNSUPPORTED_VALUE``). The sets are libsdformat 12's own lists, measured
  (``conformance/sdf_enums.py``: every token of the library's strings and of the description files,
  loaded by ``sdf_ref``) into ``spec/enumerations.json``, not written by hand: the descriptions' prose
  misses some (``wideanglecamera``, ``boundingbox``). libsdformat 12 converts every document to 1.9
  before its classes read these values, so the 1.9 lists hold for every declared version;
* a mesh ``<submesh>`` whose ``<name>`` is missing, empty or ``__default__`` (``SDF_SUBMESH_NAME``);
* two ``<physics>`` of one name in a world (``SDF_DUPLICATE_PHYSICS``);
* and a visual's (or particle emitter's) ``<material>``

* with a ``<script>`` whose ``<uri>`` or ``<name>`` is missing, empty or the description's default
  ``__default__`` (``SDF_MATERIAL_SCRIPT``);
* with a ``<shader type>`` other than the four the description lists (``SDF_UNSUPPORTED_VALUE``);
* with a normal-map shader type and no ``<normal_map>`` (missing, empty or ``__default__``,
  ``SDF_MATERIAL_NORMAL_MAP``).
"""

from __future__ import annotations

import functools
import json
from pathlib import Path

from lxml import etree

from robot_state_format.model.sdf.elements import Report

_MEASURED = Path(__file__).resolve().parent / "spec" / "enumerations.json"  # package data (setup.py)


@functools.cache
def measured(key: str) -> tuple[str, ...] | None:
    """libsdformat 12's accepted values for ``key`` (``//element@attribute`` or ``//element/path``),
    as measured into ``spec/enumerations.json``; None when that entry was not measured."""
    table = json.loads(_MEASURED.read_text(encoding="utf-8"))["enumerations"]
    values = table.get(key, {}).get("1.9")
    return tuple(values) if values is not None else None

# material.sdf's values, and the spellings libsdformat 12.3's Material.cc accepts too (measured)
SHADER_TYPES = ("pixel", "vertex", "normal_map_object_space", "normal_map_tangent_space", "normal_map_objectspace",
                "normal_map_tangentspace")
_UNSET = ("", "__default__")  # libsdformat reads a missing element as its description's default
_OUTSIDE_PLUGINS = "[not(ancestor::plugin)]"

# (elements, attribute or None for the element's text, the values libsdformat 12.3 accepts): measured
# (spec/enumerations.json) where conformance/sdf_enums.py measures the entry, else the lists below
_SENSOR_TYPES = ("altimeter", "camera", "contact", "depth", "depth_camera", "force_torque", "gps", "navsat",
                 "gpu_ray", "gpu_lidar", "imu", "logical_camera", "magnetometer", "multicamera", "ray", "lidar",
                 "rfid", "rfidtag", "sonar", "wireless_receiver", "wireless_transmitter", "air_pressure", "rgbd",
                 "rgbd_camera", "thermal", "thermal_camera", "segmentation", "segmentation_camera",
                 "boundingbox_camera", "custom")
_PIXEL_FORMATS = ("", "L8", "L16", "R_FLOAT16", "R_FLOAT32", "R8G8B8", "B8G8R8", "BAYER_RGGB8", "BAYER_BGGR8",
                  "BAYER_GBRG8", "BAYER_GRBG8", "L_INT8", "L_INT16", "RGB_INT8", "RGBA_INT8", "BGRA_INT8",
                  "RGB_INT16", "RGB_INT32", "BGR_INT8", "BGR_INT16", "BGR_INT32", "RGB_FLOAT16", "RGB_FLOAT32")


def _listed(path: str, attr: str | None, fallback: tuple[str, ...]) -> tuple[str, ...]:
    found = measured(f"{path}@{attr}" if attr else path)
    return found if found is not None else fallback


SENSOR_TYPES = _listed("//sensor", "type", _SENSOR_TYPES)
PIXEL_FORMATS = _listed("//sensor/camera/image/format", None, _PIXEL_FORMATS)
ONE_OF: tuple[tuple[str, str | None, tuple[str, ...]], ...] = (
    ("//light", "type", _listed("//light", "type", ("point", "spot", "directional"))),
    ("//sensor", "type", SENSOR_TYPES),
    ("//particle_emitter", "type", _listed("//particle_emitter", "type", ("point", "box", "cylinder", "ellipsoid"))),
    ("//sensor/force_torque/frame", None, _listed("//sensor/force_torque/frame", None, ("child", "parent", "sensor"))),
    ("//sensor/force_torque/measure_direction", None,
     _listed("//sensor/force_torque/measure_direction", None, ("child_to_parent", "parent_to_child"))),
    ("//sensor/camera/image/format", None, PIXEL_FORMATS),
    ("//world/atmosphere", "type", _listed("//world/atmosphere", "type", ("adiabatic",))),
    ("//world/spherical_coordinates/surface_model", None,
     _listed("//world/spherical_coordinates/surface_model", None, ("EARTH_WGS84",))),
    ("//world/spherical_coordinates/world_frame_orientation", None,
     _listed("//world/spherical_coordinates/world_frame_orientation", None, ("ENU",))),
    ("//visual/material/shader | //particle_emitter/material/shader", "type", SHADER_TYPES),
)


def _set(el: etree._Element, name: str) -> bool:
    found = el.find(name)
    return found is not None and (found.text or "").strip() not in _UNSET


def _one_of(root: etree._Element, report: Report, file: str) -> None:
    for path, attr, allowed in ONE_OF:
        query = " | ".join(p.strip() + _OUTSIDE_PLUGINS for p in path.split("|"))
        for el in root.xpath(query):
            raw = el.get(attr) if attr is not None else el.text
            if raw is None:  # a missing required attribute is the descriptions' refusal (spec_check)
                continue
            if raw.strip() not in allowed:
                what = f"<{el.tag} {attr}={raw.strip()!r}>" if attr else f"<{el.tag}> {raw.strip()!r}"
                named = [a for a in allowed if a]
                shown = ", ".join(named) if len(named) <= 12 else ", ".join(named[:7]) + ", ..."
                report.error("SDF_UNSUPPORTED_VALUE", f"{what} is none of {shown} (libsdformat refuses it)", file, el)


def check(root: etree._Element, report: Report, file: str) -> None:
    """Report every refusal above in the document ``root`` (errors in ``report``)."""
    _one_of(root, report, file)
    for sub in root.xpath("//mesh/submesh" + _OUTSIDE_PLUGINS):
        if not _set(sub, "name"):
            report.error("SDF_SUBMESH_NAME", "<submesh> has no <name>, or an empty one (libsdformat refuses it)",
                         file, sub)
    for world in root.xpath("//world"):
        seen: set[str] = set()
        for ph in world.findall("physics"):
            name = (ph.get("name") or "default_physics").strip()
            if name in seen:
                report.error("SDF_DUPLICATE_PHYSICS", f"two <physics> named {name!r} in <world> (libsdformat "
                             "refuses it)", file, ph)
            seen.add(name)
    for mat in root.xpath("//visual/material | //particle_emitter/material"):
        script = mat.find("script")
        if script is not None:
            for name in ("uri", "name"):
                if not _set(script, name):
                    report.error("SDF_MATERIAL_SCRIPT", f"<script> has no <{name}>, or an empty one "
                                 "(libsdformat refuses it)", file, script)
        shader = mat.find("shader")
        kind = (shader.get("type") or "").strip() if shader is not None else ""
        if shader is not None and kind.startswith("normal_map") and kind in SHADER_TYPES and not _set(
                shader, "normal_map"):
            report.error("SDF_MATERIAL_NORMAL_MAP", f"<shader type={kind!r}> has no <normal_map> (libsdformat "
                         "refuses it)", file, shader)


__all__ = ["ONE_OF", "SHADER_TYPES", "check"]
