"""SDFormat naming rules: empty names, sibling uniqueness, reserved names, the ``::`` delimiter.

* All versions: names are not empty; sibling elements of the same type have unique names.
* Before 1.7: siblings of *different* types may share a name (warning: not recommended);
  a link may be called ``world`` (warning).
* 1.7+: links, joints, frames and nested models of one model share one namespace;
  ``world`` and names starting and ending with ``__`` are reserved.
* 1.8+: names must not contain ``::``.

The top-level model's and the world's own names follow the same rules (libsdformat's
``Model::Load``/``World::Load`` reject reserved names, its parser ``::`` in any name from 1.8);
a reserved one is a warning before 1.7, like the other pre-1.7 naming rules.

In a world, a frame named like a model is not an error: libsdformat 12's ``World::Load``
renames the frame ``<name>_frame`` (a warning), in every version.
"""

from __future__ import annotations

from robot_state_format.model.sdf.elements import Report
from robot_state_format.model.sdf.ir import MODEL_FRAME, Scope
from robot_state_format.model.types import WORLD

_KIND_CODE = {"link": "LINK", "joint": "JOINT", "frame": "FRAME", "model": "MODEL"}


def _reserved(name: str) -> bool:
    return name in (WORLD, MODEL_FRAME) or (name.startswith("__") and name.endswith("__"))


def check_root_name(scope: Scope, report: Report) -> None:
    """Validate the name of the top-level model of a model file, or of the world."""
    name, kind, src, version = scope.name, scope.kind, scope.source, scope.version
    if name == "":
        report.error_at("SDF_EMPTY_NAME", f"{kind} has an empty name", src)
        return
    if _reserved(name):  # libsdformat refuses them in every version
        report.error_at("SDF_RESERVED_NAME", f"{kind} name {name!r} is reserved", src)
    if version >= (1, 8) and "::" in name:
        report.error_at("SDF_NAME_WITH_DELIMITER", f"{kind} name {name!r} contains the '::' delimiter", src)


def check_names(scope: Scope, report: Report) -> None:
    """Validate the names of ``scope``'s members (not recursive) and fill ``scope.local``."""
    by_kind: dict[str, set[str]] = {}
    seen: dict[str, str] = {}
    scope.local = {}
    scope.accepted = []
    world_models = {i.name for i in scope.items if i.kind == "model"} if scope.is_world else set()
    for item in scope.items:
        name, kind = item.name, item.kind
        src = item.source
        version = scope.version
        if name == "":
            report.error_at("SDF_EMPTY_NAME", f"{kind} has an empty name", src)
            continue
        if _reserved(name):  # libsdformat refuses them in every version
            report.error_at("SDF_RESERVED_NAME", f"{kind} name {name!r} is reserved", src)
            continue
        if version >= (1, 8) and "::" in name:
            report.error_at("SDF_NAME_WITH_DELIMITER", f"{kind} name {name!r} contains the '::' delimiter", src)
        if kind == "frame" and name in world_models:
            renamed = name + "_frame"
            report.warn_at("SDF_NAME_CLASH", f"world frame name {name!r} is also a model's name; the frame is "
                           f"renamed {renamed!r}, as libsdformat does", src)
            name = item.name = renamed
        names = by_kind.setdefault(kind, set())
        if name in names:
            report.error_at(f"SDF_DUPLICATE_{_KIND_CODE[kind]}",
                            f"{kind} name {name!r} is already used by a sibling {kind}", src)
            continue
        names.add(name)
        if name in seen and kind == "joint" and version < (1, 7) and (name + "_joint") not in seen:
            # libsdformat's 1.7 conversion renames a joint that shares a link's (or frame's) name
            report.warn_at("SDF_NAME_CLASH", f"joint name {name!r} is also a sibling {seen[name]}'s name; the "
                           f"joint is renamed {name + '_joint'!r}, as libsdformat does", src)
            name = item.name = name + "_joint"
        if name in seen:
            other = seen[name]
            if version >= (1, 7):
                report.error_at("SDF_NAME_CLASH",
                                f"{kind} name {name!r} is already used by a sibling {other}; since SDFormat 1.7 "
                                "links, joints, frames and models share one namespace", src)
                continue
            report.warn_at("SDF_NAME_CLASH", f"{kind} name {name!r} is also a sibling {other}'s name "
                           "(valid before SDFormat 1.7, not recommended)", src)
        else:
            seen[name] = kind
        scope.accepted.append(item)
        # Lookups prefer links, then frames, joints and models (matters only before 1.7).
        prev = scope.local.get(name)
        if prev is None or _rank(kind) < _rank(prev.kind):
            scope.local[name] = item


def _rank(kind: str) -> int:
    return {"link": 0, "frame": 1, "joint": 2, "model": 3}.get(kind, 4)
