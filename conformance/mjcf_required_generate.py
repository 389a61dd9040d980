"""Write robot_state_format/model/mjcf/required_text.py: the attributes MuJoCo requires on each sensor
and actuator element, measured by loading each element with no attributes (``required attribute missing: 'x'``,
or ``one of 'a', 'b' must be specified``: written ``a|b``), then again with each found attribute given a
value naming a real object, until MuJoCo asks for nothing more.

    .venv/bin/python conformance/mjcf_required_generate.py     # after a mujoco upgrade; review the diff
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

import mujoco

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from robot_state_format.model.mjcf.schema_check import children_of

OUT = Path(__file__).resolve().parents[1] / "robot_state_format" / "model" / "mjcf" / "required_text.py"
_BASE = ('<mujoco><worldbody><body name="b"><joint name="j"/><geom name="g" size="0.1"/><site name="s"/>'
         '<camera name="c"/></body></worldbody><{section}><{tag} {attrs}/></{section}></mujoco>')
# a value that lets MuJoCo go on to the next required attribute (the names of the objects above)
_FILLER = {"objtype": "site", "objname": "s", "dim": "1", "joint": "j", "site": "s", "body": "b", "body1": "b",
           "body2": "b", "geom": "g", "geom1": "g", "geom2": "g", "camera": "c"}
_MISSING = re.compile(r"required attribute missing: '(\w+)'|one of '(\w+)', '(\w+)' must be specified")


def _required(section: str, tag: str) -> tuple[str, ...]:
    """Every attribute MuJoCo asks for, in its order, each given a filler value before asking again."""
    found: list[str] = []
    while True:
        attrs = " ".join(f'{a.split("|")[0]}="{_FILLER.get(a.split("|")[0], "s")}"' for a in found)
        try:
            mujoco.MjModel.from_xml_string(_BASE.format(section=section, tag=tag, attrs=attrs))
            return tuple(found)
        except ValueError as exc:
            missing = _MISSING.search(str(exc))
            if missing is None:
                return tuple(found)
            entry = missing.group(1) or f"{missing.group(2)}|{missing.group(3)}"
            if entry in found:
                return tuple(found)
            found.append(entry)


def measure(section: str) -> dict[str, tuple[str, ...]]:
    out = {tag: _required(section, tag) for tag in sorted(children_of(section))}
    return {tag: attrs for tag, attrs in out.items() if attrs}


def _quoted(attrs: tuple[str, ...]) -> str:
    return " ".join(f'"{a}",' for a in attrs)


def main() -> None:
    lines = [f'"""The attributes MuJoCo {mujoco.__version__} requires on each element, in the order it asks (measured by',
             'conformance/mjcf_required_generate.py; read by :mod:`.values`)."""', "",
             "REQUIRED: dict[str, dict[str, tuple[str, ...]]] = {"]
    for section in ("sensor", "actuator"):
        table = measure(section)
        lines.append(f'    "{section}": {{')
        lines += [f'        "{tag}": ({_quoted(attrs)}),' for tag, attrs in table.items()]
        lines.append("    },")
    lines.append("}")
    OUT.write_text("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
