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
