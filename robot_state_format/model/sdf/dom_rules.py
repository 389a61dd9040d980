"""libsdformat 12's DOM checks that the element descriptions cannot express.

The descriptions (:mod:`.spec_check`) say which elements and values a document may hold; a few
refusals come from libsdformat's classes reading them (``sdf::Material::Load``), measured with
``conformance/sdf_ref``: a visual's (or particle emitter's) ``<material>``

* with a ``<script>`` whose ``<uri>`` or ``<name>`` is missing, empty or the description's default
  ``__default__`` (``SDF_MATERIAL_SCRIPT``);
* with a ``<shader type>`` other than the four the description lists, case-sensitive
  (``SDF_MATERIAL_SHADER``);
* with a normal-map shader type and no ``<normal_map>`` (missing, empty or ``__default__``,
  ``SDF_MATERIAL_NORMAL_MAP``).
"""

from __future__ import annotations

from lxml import etree

from robot_state_format.model.sdf.elements import Report

SHADER_TYPES = ("pixel", "vertex", "normal_map_object_space", "normal_map_tangent_space")  # material.sdf
_UNSET = ("", "__default__")  # libsdformat reads a missing element as its description's default


def _set(el: etree._Element, name: str) -> bool:
    found = el.find(name)
    return found is not None and (found.text or "").strip() not in _UNSET


def check(root: etree._Element, report: Report, file: str) -> int:
    """Report every refusal above in the document ``root``; the number reported."""
    errors = 0
    for mat in root.xpath("//visual/material | //particle_emitter/material"):
        script = mat.find("script")
        if script is not None:
            for name in ("uri", "name"):
                if not _set(script, name):
                    errors += 1
                    report.error("SDF_MATERIAL_SCRIPT", f"<script> has no <{name}> (missing or empty; "
                                 "libsdformat refuses it)", file, script)
        shader = mat.find("shader")
        if shader is None:
            continue
        kind = (shader.get("type") or "").strip()
        if kind not in SHADER_TYPES:
            errors += 1
            report.error("SDF_MATERIAL_SHADER", f"<shader type={kind!r}> is none of {', '.join(SHADER_TYPES)} "
                         "(libsdformat refuses it)", file, shader)
        elif kind.startswith("normal_map") and not _set(shader, "normal_map"):
            errors += 1
            report.error("SDF_MATERIAL_NORMAL_MAP", f"<shader type={kind!r}> has no <normal_map> (libsdformat "
                         "refuses it)", file, shader)
    return errors


__all__ = ["SHADER_TYPES", "check"]
