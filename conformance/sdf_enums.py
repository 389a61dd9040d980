"""Measure the value sets libsdformat 12 accepts for the strings it reads as one of a fixed set.

libsdformat's classes (``sdf::Sensor``, ``Light``, ``ParticleEmitter``, ``ForceTorque``, ``Camera``,
``Atmosphere``, ``SphericalCoordinates``, ``Material``) compare such a value with lists compiled into
the library; the element descriptions state them only in prose, and not always all of them (1.9's
``sensor.sdf`` omits ``wideanglecamera``, which the library accepts). So the lists are measured:
the candidates are every token of the library's own strings (``strings libsdformat12.so``) and of
every version's description files, and ``sdf_ref`` (``references.py``) tells which ones it loads.
A document holds many elements, one candidate each; libsdformat reports one error per refused one,
so sets are split in halves until each is all refused or all accepted. The result is
``robot_state_format/model/sdf/spec/enumerations.json`` (read by ``model/sdf/dom_rules.py``), one
list per entry and declared version.

    .venv/bin/python conformance/sdf_enums.py [--versions 1.9 ...] [--out PATH]
"""

from __future__ import annotations

import argparse
import glob
import json
import re
import subprocess
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from references import run_sdf_ref, sdf_ref_path  # noqa: E402

OUT = HERE.parent / "robot_state_format" / "model" / "sdf" / "spec" / "enumerations.json"
SPEC = Path("/usr/share/sdformat12")
TOKEN = re.compile(r"^[A-Za-z0-9_]{1,40}$")
CHUNK = 1000  # candidates per document at first (a document of 8000 sensors takes libsdformat minutes)


def _sensor(k: int, body: str, kind: str = "camera") -> str:
    return f'<sensor name="s{k}" type="{kind}">{body}</sensor>'


def _link(items: str) -> str:
    return f'<model name="m"><link name="l">{items}</link></model>'


def _esc(v: str) -> str:
    return v.replace("&", "&amp;").replace("<", "&lt;").replace('"', "&quot;")


# entry key (dom_rules.ONE_OF's element path and attribute) -> (one element for candidate k, wrapper)
TEMPLATES: dict[str, tuple[Callable[[int, str], str], Callable[[str], str]]] = {
    "//light@type": (lambda k, v: f'<light name="l{k}" type="{_esc(v)}"/>', _link),
    "//sensor@type": (lambda k, v: f'<sensor name="s{k}" type="{_esc(v)}"/>', _link),
    "//particle_emitter@type": (lambda k, v: f'<particle_emitter name="p{k}" type="{_esc(v)}"/>', _link),
    "//sensor/force_torque/frame": (
        lambda k, v: _sensor(k, f"<force_torque><frame>{_esc(v)}</frame></force_torque>", "force_torque"), _link),
    "//sensor/force_torque/measure_direction": (
        lambda k, v: _sensor(k, f"<force_torque><measure_direction>{_esc(v)}</measure_direction></force_torque>",
                             "force_torque"), _link),
    "//sensor/camera/image/format": (
        lambda k, v: _sensor(k, f"<camera><image><format>{_esc(v)}</format></image></camera>"), _link),
    "//world/atmosphere@type": (lambda k, v: f'<world name="w{k}"><atmosphere type="{_esc(v)}"/></world>',
                                lambda s: s),
    "//world/spherical_coordinates/surface_model": (
        lambda k, v: f'<world name="w{k}"><spherical_coordinates><surface_model>{_esc(v)}</surface_model>'
                     "</spherical_coordinates></world>", lambda s: s),
    "//world/spherical_coordinates/world_frame_orientation": (
        lambda k, v: f'<world name="w{k}"><spherical_coordinates><world_frame_orientation>{_esc(v)}'
                     "</world_frame_orientation></spherical_coordinates></world>", lambda s: s),
}


def candidates() -> list[str]:
    """Every token of the library's strings and of the description files (all versions), and ""."""
    found: set[str] = {""}
    for lib in glob.glob("/usr/lib/*/libsdformat12.so*"):
        out = subprocess.run(["strings", "-n", "2", lib], capture_output=True, text=True, errors="replace").stdout
        found.update(t for t in out.split() if TOKEN.match(t))
        break
    for f in SPEC.glob("*/*.sdf"):
        found.update(t for t in re.split(r"[^A-Za-z0-9_]+", f.read_text(errors="replace")) if TOKEN.match(t))
    return sorted(found)


def _refused(exe: str, key: str, version: str, values: list[str], tmp: Path) -> int:
    one, wrap = TEMPLATES[key]
    body = wrap("".join(one(k, v) for k, v in enumerate(values)))
    path = tmp / "enum.sdf"
    path.write_text(f'<?xml version="1.0"?>\n<sdf version="{version}">{body}</sdf>\n', encoding="utf-8")
    return len(run_sdf_ref(exe, path, timeout=600.0).errors)


def accepted(exe: str, key: str, version: str, values: list[str], tmp: Path) -> list[str]:
    """The values libsdformat loads, by halving: a set with as many refusals as values is all refused (the
    errors one refused value gives, e.g. two for a world, measured first on a value no list holds)."""
    per = _refused(exe, key, version, ["zz_no_such_value"], tmp)
    if per < 1:
        raise RuntimeError(f"{key}: a value no list holds gives no error: the template does not measure it")
    out: list[str] = []
    chunk = CHUNK if not key.startswith("//world") else CHUNK // 10  # a world each: far heavier
    stack = [values[k:k + chunk] for k in range(0, len(values), chunk)]
    while stack:
        group = stack.pop()
        if not group:
            continue
        errors = _refused(exe, key, version, group, tmp) // per
        if errors == 0:
            out += group
        elif errors >= len(group) or len(group) == 1:
            continue
        else:
            half = len(group) // 2
            stack += [group[:half], group[half:]]
    return sorted(out)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--versions", nargs="*", default=["1.9"])
    ap.add_argument("--out", default=str(OUT))
    ap.add_argument("--keys", nargs="*", default=list(TEMPLATES), help="entries to measure (others kept from --out)")
    args = ap.parse_args(argv)
    exe = sdf_ref_path()
    if exe is None:
        print("sdf_ref cannot be built: apt-get install libsdformat-dev g++ pkg-config")
        return 2
    cands = candidates()
    old = Path(args.out)
    result: dict[str, dict[str, list[str]]] = json.loads(old.read_text())["enumerations"] if old.is_file() else {}
    with tempfile.TemporaryDirectory() as d:
        for key in args.keys:
            for version in args.versions:
                values = accepted(exe, key, version, cands, Path(d))
                result.setdefault(key, {})[version] = values
                print(f"{key} [{version}]: {len(values)} of {len(cands)}: {' '.join(repr(v) for v in values)}",
                      flush=True)
                _write(args.out, result)
    return 0


def _write(out: str, result: dict[str, dict[str, list[str]]]) -> None:
    doc = {"_about": "Values libsdformat 12 accepts, measured by conformance/sdf_enums.py with sdf_ref against "
                     "Debian's libsdformat 12.3 from the tokens of the library's strings and of the description "
                     "files; keyed by element path (@attribute) and declared SDFormat version.",
           "enumerations": result}
    Path(out).write_text(json.dumps(doc, indent=1, sort_keys=True) + "\n", encoding="utf-8")


if __name__ == "__main__":
    sys.exit(main())
