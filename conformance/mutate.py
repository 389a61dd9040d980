"""Variants of a model document for the differential harness.

Each mutation changes one thing: an element removed, an attribute removed, a name duplicated
(an element takes the name of a sibling of the same tag), a number replaced by an out-of-range or
malformed value. The variants of one document are listed deterministically; the harness samples them
with a fixed seed.
"""

from __future__ import annotations

import random
import re
from collections.abc import Iterator
from dataclasses import dataclass

from lxml import etree

_NUMBER = re.compile(r"^\s*[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?(\s+[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?)*\s*$")
BAD_NUMBERS = ("-1", "0", "1e400", "nan", "inf", "-inf", "1e-400")


@dataclass(frozen=True)
class Mutation:
    kind: str          # remove-element, remove-attribute, duplicate-name, number
    where: str         # element path (and attribute)
    text: bytes        # the mutated document


def _path(el: etree._Element) -> str:
    parts = []
    while el is not None:
        name = el.get("name")
        parts.append(f"{el.tag}[{name}]" if name else str(el.tag))
        el = el.getparent()
    return "/".join(reversed(parts))


def _elements(root: etree._Element) -> list[etree._Element]:
    return [e for e in root.iter() if isinstance(e.tag, str)]


def mutations(data: bytes) -> Iterator[Mutation]:
    """Every single-change variant of ``data`` (an XML document)."""
    parser = etree.XMLParser(remove_blank_text=False, resolve_entities=False, no_network=True)
    base = etree.fromstring(data, parser)
    n = len(_elements(base))

    def fresh() -> tuple[etree._Element, list[etree._Element]]:
        root = etree.fromstring(data, parser)
        return root, _elements(root)

    def dump(root: etree._Element) -> bytes:
        return etree.tostring(root, xml_declaration=True, encoding="utf-8")

    for i in range(1, n):
        root, els = fresh()
        el = els[i]
        where = _path(el)
        el.getparent().remove(el)
        yield Mutation("remove-element", where, dump(root))
    for i in range(n):
        for attr in list(_elements(base)[i].attrib):
            if attr == "version" and i == 0:
                continue
            root, els = fresh()
            el = els[i]
            where = _path(el) + "@" + attr
            del el.attrib[attr]
            yield Mutation("remove-attribute", where, dump(root))
    for i in range(n):
        el0 = _elements(base)[i]
        name = el0.get("name")
        parent = el0.getparent()
        if name is None or parent is None:
            continue
        others = [s for s in parent if s is not el0 and s.tag == el0.tag and s.get("name")]
        if others:
            root, els = fresh()
            els[i].set("name", others[0].get("name"))
            yield Mutation("duplicate-name", _path(el0), dump(root))
    for i in range(n):
        el0 = _elements(base)[i]
        targets: list[tuple[str | None, str]] = [(a, v) for a, v in el0.attrib.items() if _NUMBER.match(v)]
        if len(el0) == 0 and el0.text and _NUMBER.match(el0.text):
            targets.append((None, el0.text))
        for attr, value in targets:
            count = len(value.split())
            for bad in BAD_NUMBERS:
                root, els = fresh()
                el = els[i]
                parts = value.split()
                parts[0] = bad
                new = " ".join(parts)
                if attr is None:
                    el.text = new
                else:
                    el.set(attr, new)
                yield Mutation("number", f"{_path(el0)}{'@' + attr if attr else ''}={new}", dump(root))
            if count > 1:  # a vector with one component too few / too many
                for new in (" ".join(value.split()[:-1]), value + " 1"):
                    root, els = fresh()
                    el = els[i]
                    if attr is None:
                        el.text = new
                    else:
                        el.set(attr, new)
                    yield Mutation("vector-length", f"{_path(el0)}{'@' + attr if attr else ''}={new}", dump(root))


def sample(data: bytes, limit: int, seed: int = 0) -> list[Mutation]:
    """At most ``limit`` mutations of ``data``, a fixed-seed sample spread over the kinds."""
    everything = list(mutations(data))
    if len(everything) <= limit:
        return everything
    by_kind: dict[str, list[Mutation]] = {}
    for m in everything:
        by_kind.setdefault(m.kind, []).append(m)
    rng = random.Random(seed)
    out: list[Mutation] = []
    kinds = sorted(by_kind)
    share = max(1, limit // len(kinds))
    for k in kinds:
        group = by_kind[k]
        out.extend(rng.sample(group, min(share, len(group))))
    return out[:limit]


# --------------------------------------------------------------------------- SDFormat specification classes
# Snippets inserted into the first <link>, <model> or <world> of a document: each exercises one rule
# of the specification's element descriptions (a value's type, a required attribute, an element a
# version does not allow where it stands, a duplicate).
SPEC_SNIPPETS: dict[str, tuple[str, ...]] = {
    "link": (
        "<velocity_decay><linear>bad</linear></velocity_decay>",
        "<velocity_decay><linear>1abc</linear></velocity_decay>",
        "<velocity_decay><angular>1e-400</angular></velocity_decay>",
        '<light name="spec_lamp"/>',
        '<light name="spec_lamp" type="point"/><light name="spec_lamp" type="spot"/>',
        '<sensor name="spec_sensor"/>',
        '<sensor name="spec_cam" type="camera"><camera><horizontal_fov>0.01</horizontal_fov></camera></sensor>',
        '<sensor name="spec_cam" type="camera"><camera><image><width>1.5</width></image></camera></sensor>',
        '<visual name="spec_v"><material><ambient>1.5 0 0 1</ambient></material></visual>',
        '<visual name="spec_v"><geometry><box><size>1 1</size></box></geometry></visual>',
        '<visual name="spec_v"><geometry><mesh><uri></uri></mesh></geometry></visual>',
        '<collision name="spec_c"><geometry><box><size>1 1 1</size></box></geometry>'
        "<surface><friction><ode><fdir1>1 0</fdir1></ode></friction></surface></collision>",
        '<audio_source><uri>a.wav</uri></audio_source>',
        # libsdformat's Material::Load (model/sdf/dom_rules.py): script without uri, shader type, normal map
        '<visual name="spec_m"><geometry><box><size>1 1 1</size></box></geometry>'
        "<material><script><name>n</name></script></material></visual>",
        '<visual name="spec_m"><geometry><box><size>1 1 1</size></box></geometry>'
        '<material><shader type="Vertex"/></material></visual>',
        '<visual name="spec_m"><geometry><box><size>1 1 1</size></box></geometry>'
        '<material><shader type="normal_map_object_space"/></material></visual>',
        '<visual name="spec_m"><geometry><box><size>1 1 1</size></box></geometry><material>'
        '<script><uri>file://a.material</uri><name>n</name></script>'
        '<shader type="normal_map_tangent_space"><normal_map>n.png</normal_map></shader></material></visual>',
        # values libsdformat's DOM reads as one of a fixed set (dom_rules.ONE_OF), a submesh without name
        '<sensor name="spec_s" type="air_speed"/>',
        '<sensor name="spec_s" type="navsat"/>',
        '<sensor name="spec_ft" type="force_torque"><force_torque><frame>Child</frame></force_torque></sensor>',
        '<particle_emitter name="spec_e" type="Box"/>',
        '<visual name="spec_m"><geometry><mesh><uri>a.dae</uri><submesh/></mesh></geometry></visual>',
        "<spec_unknown>1</spec_unknown>",
        '<pose rotation_format="quat_xyzw">0 0 0 0 0 0</pose>',
    ),
    "model": (
        "<self_collide>yes</self_collide>",
        "<self_collide> TRUE </self_collide>",
        '<light name="spec_lamp" type="point"/>',
        '<actor name="spec_actor"/>',
        '<plugin name="p" filename="f"><anything>bad</anything></plugin>',
    ),
    "world": (
        '<light name="spec_lamp" type="point"/><light name="spec_lamp" type="point"/>',
        '<light name="spec_lamp"/>',
        '<actor name="spec_actor"><skin><filename>x</filename><scale>bad</scale></skin></actor>',
        '<physics type="ode"><max_step_size>bad</max_step_size></physics>',
        "<gravity>0 0</gravity>",
        '<physics name="spec_p" type="ode"/><physics name="spec_p" type="ode"/>',
        '<light name="spec_lamp" type="POINT"/>',
    ),
}
SPEC_VERSIONS = ("1.0", "1.2", "1.3", "1.4", "1.5", "1.6", "1.7", "1.8", "100")


def spec_mutations(data: bytes) -> Iterator[Mutation]:
    """SDFormat variants of the specification classes: snippets inserted (``spec-insert``), a leaf
    value replaced by a word of another type (``spec-value``), the declared version changed
    (``spec-version``)."""
    parser = etree.XMLParser(remove_blank_text=False, resolve_entities=False, no_network=True)

    def dump(root: etree._Element) -> bytes:
        return etree.tostring(root, xml_declaration=True, encoding="utf-8")

    base = etree.fromstring(data, parser)
    for tag, snippets in SPEC_SNIPPETS.items():
        if base.find(f".//{tag}") is None:
            continue
        for snippet in snippets:
            root = etree.fromstring(data, parser)
            target = root.find(f".//{tag}")
            for el in etree.fromstring(f"<x>{snippet}</x>"):
                target.append(el)
            yield Mutation("spec-insert", f"{_path(target)} += {snippet[:60]}", dump(root))
    leaves = [i for i, e in enumerate(_elements(base)) if len(e) == 0 and (e.text or "").strip()]
    for i in leaves:
        for bad in ("bad", "yes", "1 0"):
            root = etree.fromstring(data, parser)
            el = _elements(root)[i]
            el.text = bad
            yield Mutation("spec-value", f"{_path(el)}={bad}", dump(root))
    for version in SPEC_VERSIONS:
        root = etree.fromstring(data, parser)
        root.set("version", version)
        yield Mutation("spec-version", f"version={version}", dump(root))


def spec_sample(data: bytes, limit: int, seed: int = 1) -> list[Mutation]:
    """At most ``limit`` specification variants of ``data`` (every insert and version, values sampled)."""
    everything = list(spec_mutations(data))
    fixed = [m for m in everything if m.kind != "spec-value"]
    values = [m for m in everything if m.kind == "spec-value"]
    rng = random.Random(seed)
    room = max(0, limit - len(fixed))
    return fixed[:limit] + rng.sample(values, min(room, len(values)))


SWAP_VERSIONS = ("1.4", "1.5", "1.6", "1.7", "1.8")
_VERSION_RE = re.compile(rb"""(<sdf\s[^>]*?version\s*=\s*["'])([^"']*)(["'])""")


def version_swaps(data: bytes) -> Iterator[Mutation]:
    """A 1.7-or-later document declared as each older version of :data:`SWAP_VERSIONS` (``version-swap``):
    libsdformat 12 converts it and reads it with its 1.9 classes, so features newer than the declared
    version still count there (placement_frame, merge, attached_to, canonical_link, ...). The text is
    otherwise unchanged."""
    m = _VERSION_RE.search(data)
    if m is None:
        return
    try:
        declared = tuple(int(x) for x in m.group(2).decode().split("."))
    except ValueError:
        return
    if declared < (1, 7):
        return
    for version in SWAP_VERSIONS:
        if tuple(int(x) for x in version.split(".")) < declared:
            yield Mutation("version-swap", f"version={version}",
                           data[:m.start(2)] + version.encode() + data[m.end(2):])
