"""Generate robot_state_format/model/sdf/spec/sdf_<version>.json from libsdformat's element descriptions.

The SDFormat specification is published by the libsdformat project (https://github.com/gazebosim/sdformat,
``sdf/<version>/*.sdf``, Apache License 2.0) as XML element descriptions: ``<element name= type=
default= required= min= max= copy_data= ref=>``, ``<attribute name= type= required=>`` and
``<include filename= required=>`` (another description file, its root element a child here). Debian's
``sdformat-sdf`` package (pulled in by ``libsdformat-dev``) installs them in /usr/share/sdformat12/.

This script turns one version's description tree into a compact table the reader loads (no
libsdformat needed at run time)::

    {"version": "1.9", "source": ..., "license": ..., "root": 0,
     "nodes": [[name, type, required, min, max, copy_data, {attr: [type, required, min, max]},
                [[child_node, required], ...]], ...]}

``type`` is null for an element without a value; an ``<include>``d file's root appears once (its
node shared by every includer, with the include's own ``required``); ``ref="X"`` points at the
root of ``X.sdf`` (``ref="model"``: nested models), renamed to the element's name when it differs. Descriptions (prose) are left out.

    python conformance/sdf_spec_generate.py [--source /usr/share/sdformat12] [--versions 1.9]
"""

from __future__ import annotations

import argparse
import json
import sys
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "robot_state_format" / "model" / "sdf" / "spec"
LICENSE = "Apache-2.0 (libsdformat, Open Source Robotics Foundation); see spec/README.md"


class Builder:
    def __init__(self, directory: Path) -> None:
        self.directory = directory
        self.nodes: list[list[Any]] = []
        self.by_file: dict[str, int] = {}
        self.pending_refs: list[tuple[int, str, str]] = []

    def file_root(self, filename: str) -> int:
        if filename not in self.by_file:
            root = ET.parse(self.directory / filename).getroot()
            self.by_file[filename] = len(self.nodes)  # before descending: a file may include itself
            self.element(root)
        return self.by_file[filename]

    def element(self, el: ET.Element) -> int:
        idx = len(self.nodes)
        node: list[Any] = [el.get("name") or "", el.get("type"), el.get("required", "0"),
                           _num(el.get("min")), _num(el.get("max")), el.get("copy_data") == "true", {}, []]
        self.nodes.append(node)
        for c in el:
            if c.tag == "attribute":
                node[6][c.get("name")] = [c.get("type"), c.get("required", "0"), _num(c.get("min")),
                                          _num(c.get("max"))]
            elif c.tag == "include":
                if not (self.directory / str(c.get("filename"))).exists():  # 1.7 names navsat.sdf, not shipped
                    print(f"{self.directory}: {c.get('filename')} is missing; left out", file=sys.stderr)
                    continue
                node[7].append([self.file_root(str(c.get("filename"))), c.get("required", "0")])
            elif c.tag == "element":
                if c.get("copy_data") == "true":  # any child element, copied verbatim
                    node[5] = True
                elif c.get("ref"):
                    node[7].append([-1, c.get("required", "0")])
                    self.pending_refs.append((idx, str(c.get("ref")), str(c.get("name"))))
                else:
                    node[7].append([self.element(c), c.get("required", "0")])
        return idx

    def resolve_refs(self) -> None:
        while self.pending_refs:  # ref="X": the element described by X.sdf (named as here)
            idx, ref, name = self.pending_refs.pop(0)
            target = self.file_root(f"{ref}.sdf")
            if self.nodes[target][0] != name:  # ref="model_state" named "model": a renamed copy
                copy = list(self.nodes[target])
                copy[0] = name
                self.nodes.append(copy)
                target = len(self.nodes) - 1
            for entry in self.nodes[idx][7]:
                if entry[0] == -1:
                    entry[0] = target
                    break


def _num(text: str | None) -> float | None:
    """A scalar ``min``/``max`` (libsdformat checks those of numbers; a vector bound is kept as None)."""
    try:
        return float(text) if text is not None else None
    except ValueError:
        return None


def generate(source: Path, version: str) -> dict[str, Any]:
    directory = source / version
    builder = Builder(directory)
    root_file = "root.sdf" if (directory / "root.sdf").exists() else "gazebo.sdf"
    root = builder.file_root(root_file)
    builder.resolve_refs()
    return {"version": version, "source": f"libsdformat description files, sdf/{version}/ ({directory})",
            "license": LICENSE, "root": root, "nodes": builder.nodes}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--source", type=Path, default=Path("/usr/share/sdformat12"))
    ap.add_argument("--versions", nargs="+", default=["1.9"])
    ap.add_argument("--out", type=Path, default=OUT)
    args = ap.parse_args(argv)
    for version in args.versions:
        data = generate(args.source, version)
        out = args.out / f"sdf_{version.replace('.', '_')}.json"
        out.write_text(json.dumps(data, separators=(",", ":")) + "\n")
        print(f"{out}: {len(data['nodes'])} elements", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
