"""MJCF refusals against MuJoCo: real models broken the ways a broken copy is made, each verdict compared.

Every base model MuJoCo loads is copied (beside the original, so its includes and meshes resolve) with one
defect of each kind below, at a random place (fixed seed); ``MjModel.from_xml_path`` and the reader each
load or refuse the copy. A case agrees when both load (and every pose agrees within 1e-9, as in
``mjcf_ref.py``) or both refuse; a refusal of ours must also be one error line naming the copy and a line.

Kinds: ``bad-number`` (a number attribute written ``abc``), ``count`` (a vector given one number too few),
``unknown-element``, ``unknown-attribute``, ``missing-include``, ``missing-mesh``, ``duplicate-body``,
``duplicate-joint``, ``joint-type`` (``type="spin"``), ``zero-quat``, ``zero-axis``, ``geom-type``,
``negative-size``, ``no-mass`` (a moving leaf body's geoms and inertial removed), ``dangling``
(an actuator's or sensor's joint or site renamed), ``angle-unit`` (``<compiler angle="grad">``),
``ctrl-range`` (an actuator made ``ctrllimited`` without its ``ctrlrange``), ``sensor-attribute`` (a sensor's
first required attribute removed), ``overflow`` (``armature="1e400"``), ``negative-density`` (a body's geom
given ``density="-1"`` or ``-inf``).

    .venv/bin/python conformance/mjcf_refusals.py [--per-kind N] [FILE_OR_DIR ...]
"""

from __future__ import annotations

import argparse
import random
import sys
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path

from lxml import etree

sys.path.insert(0, str(Path(__file__).resolve().parent))

import mjcf_ref

from robot_state_format.model.mjcf.required_text import REQUIRED

Mutation = Callable[[etree._Element, random.Random], bool]


def _pick(els: list[etree._Element], rng: random.Random) -> etree._Element | None:
    return rng.choice(els) if els else None


def _world(root: etree._Element) -> list[etree._Element]:
    return [e for w in root.iterchildren("worldbody") for e in w.iter() if isinstance(e.tag, str)]


def _set(tag: str, attr: str, value: str) -> Mutation:
    def apply(root: etree._Element, rng: random.Random) -> bool:
        el = _pick([e for e in _world(root) if e.tag == tag], rng)
        if el is None:
            return False
        el.set(attr, value)
        return True
    return apply


def _bad_number(root: etree._Element, rng: random.Random) -> bool:
    el = _pick([e for e in _world(root) if e.get("pos") is not None], rng)
    if el is None:
        return False
    el.set("pos", "abc 0 0")
    return True


def _count(root: etree._Element, rng: random.Random) -> bool:
    el = _pick([e for e in _world(root) if len((e.get("pos") or "").split()) == 3], rng)
    if el is None:
        return False
    el.set("pos", " ".join((el.get("pos") or "").split()[:2]))
    return True


def _insert(make: Callable[[], etree._Element], where: str) -> Mutation:
    def apply(root: etree._Element, rng: random.Random) -> bool:
        if where == "top":
            root.insert(0, make())
            return True
        el = _pick([e for e in _world(root) if e.tag == "body"], rng)
        if el is None:
            return False
        el.insert(0, make())
        return True
    return apply


def _unknown_attribute(root: etree._Element, rng: random.Random) -> bool:
    el = _pick([e for e in _world(root) if e.tag in ("body", "geom", "joint", "site")], rng)
    if el is None:
        return False
    el.set("frobnicate", "1")
    return True


def _duplicate(tag: str) -> Mutation:
    def apply(root: etree._Element, rng: random.Random) -> bool:
        named = [e for e in _world(root) if e.tag == tag and e.get("name")]
        if len(named) < 2:
            return False
        a, b = rng.sample(named, 2)
        b.set("name", str(a.get("name")))
        return True
    return apply


def _no_mass(root: etree._Element, rng: random.Random) -> bool:
    leaves = [e for e in _world(root) if e.tag == "body" and e.find("body") is None
              and (e.find("joint") is not None or e.find("freejoint") is not None)]
    el = _pick(leaves, rng)
    if el is None:
        return False
    for child in [*el.findall("geom"), *el.findall("inertial")]:
        el.remove(child)
    return True


def _dangling(root: etree._Element, rng: random.Random) -> bool:
    refs = [e for sec in ("actuator", "sensor") for s in root.iterchildren(sec) for e in s
            if isinstance(e.tag, str) and (e.get("joint") or e.get("site"))]
    el = _pick(refs, rng)
    if el is None:
        return False
    attr = "joint" if el.get("joint") else "site"
    el.set(attr, str(el.get(attr)) + "_missing")
    return True


def _angle_unit(root: etree._Element, rng: random.Random) -> bool:
    comp = root.find("compiler")
    if comp is None:
        comp = etree.Element("compiler")
        root.insert(0, comp)
    comp.set("angle", "grad")
    return True


def _ctrl_range(root: etree._Element, rng: random.Random) -> bool:
    el = _pick([e for s in root.iterchildren("actuator") for e in s if isinstance(e.tag, str) and e.get("joint")], rng)
    if el is None:
        return False
    el.set("ctrllimited", "true")
    el.attrib.pop("ctrlrange", None)
    return True


def _sensor_attr(root: etree._Element, rng: random.Random) -> bool:
    table = REQUIRED["sensor"]
    el = _pick([e for s in root.iterchildren("sensor") for e in s if isinstance(e.tag, str) and e.tag in table], rng)
    if el is None:
        return False
    for attr in table[str(el.tag)][0].split("|"):
        el.attrib.pop(attr, None)
    return True


def _negative_density(root: etree._Element, rng: random.Random) -> bool:
    el = _pick([e for e in _world(root) if e.tag == "geom" and any(a.tag == "body" for a in e.iterancestors())],
               rng)
    if el is None:
        return False
    el.set("density", rng.choice(("-1", "-inf")))
    el.attrib.pop("mass", None)
    return True


def _asset(xml: str) -> Callable[[], etree._Element]:
    return lambda: etree.fromstring(xml)


KINDS: dict[str, Mutation] = {
    "bad-number": _bad_number,
    "count": _count,
    "unknown-element": _insert(lambda: etree.Element("thing"), "body"),
    "unknown-attribute": _unknown_attribute,
    "missing-include": _insert(_asset('<include file="no_such_part.xml"/>'), "top"),
    "missing-mesh": _insert(_asset('<asset><mesh name="no_such_mesh" file="no_such_mesh.stl"/></asset>'), "top"),
    "duplicate-body": _duplicate("body"),
    "duplicate-joint": _duplicate("joint"),
    "joint-type": _set("joint", "type", "spin"),
    "zero-quat": _set("body", "quat", "0 0 0 0"),
    "zero-axis": _set("joint", "axis", "0 0 0"),
    "geom-type": _set("geom", "type", "blob"),
    "negative-size": _set("geom", "size", "-0.1 0.1 0.1"),
    "no-mass": _no_mass,
    "dangling": _dangling,
    "angle-unit": _angle_unit,
    "ctrl-range": _ctrl_range,
    "sensor-attribute": _sensor_attr,
    "overflow": _set("joint", "armature", "1e400"),
    "negative-density": _negative_density,
}


def one_line(ours: str, copy: Path) -> bool:
    """Our refusal is an error naming the copy and a line (its first line; the harness keeps only that)."""
    return ours.startswith(f"{copy}:") and ours.split(":")[1].isdigit()


def run(files: list[Path], per_kind: int, seed: int = 0) -> list[tuple[str, str, mjcf_ref.Outcome, bool]]:
    rng = random.Random(seed)
    out = []
    for f in files:
        data = f.read_bytes()
        for kind, mutate in KINDS.items():
            for k in range(per_kind):
                root = etree.fromstring(data, etree.XMLParser(resolve_entities=False, no_network=True))
                if not mutate(root, rng):
                    continue
                copy = f.parent / f"_broken_{kind}_{k}_{f.name}"
                copy.write_bytes(etree.tostring(root, xml_declaration=True, encoding="utf-8"))
                try:
                    o = mjcf_ref.check_file(copy, kind, 3)
                finally:
                    copy.unlink()
                lined = o.ours == "loads" or one_line(o.ours, copy)
                out.append((str(f), kind, o, lined))
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("paths", nargs="*")
    ap.add_argument("--per-kind", type=int, default=1)
    ap.add_argument("--show", type=int, default=20)
    args = ap.parse_args(argv)
    files = [q for p in args.paths for q in (sorted(Path(p).glob("*.xml")) if Path(p).is_dir() else [Path(p)])] \
        if args.paths else mjcf_ref.asset_files()
    t0 = time.monotonic()
    cases = run(files, args.per_kind)
    refused = sum(o.mujoco != "loads" for _, _, o, _ in cases)
    agree = [c for c in cases if c[2].agree and c[3]]
    print(f"{len(cases)} broken copies of {len(files)} models, MuJoCo refuses {refused}, verdicts agree "
          f"{len(agree)} ({time.monotonic() - t0:.0f} s)")
    per = Counter(k for _, k, _, _ in cases)
    ok = Counter(k for _, k, _, _ in agree)
    print("  " + ", ".join(f"{k} {ok[k]}/{per[k]}" for k in KINDS if per[k]))
    for f, kind, o, lined in [c for c in cases if not (c[2].agree and c[3])][:args.show]:
        print(f"DISAGREE {Path(f).name} [{kind}]: mujoco={o.mujoco[:120]!r} ours={o.ours[:160]!r}"
              f"{'' if lined else ' (not one line with file:line)'} worst={o.worst:.3g}")
    return 0 if len(agree) == len(cases) else 1


if __name__ == "__main__":
    sys.exit(main())
