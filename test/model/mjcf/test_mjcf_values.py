"""Values MuJoCo 4.0 refuses (issue 36, item 4): actuator and joint ranges, sensors without their required
attribute, numbers too large for a double, geoms of negative mass or density. Every case is loaded by the
installed ``mujoco`` and by the reader: both load, or both refuse, ours in one line naming the file, the
line and the element, with MuJoCo's reason."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from repo_paths import REPO_ROOT

from robot_state_format.errors import ModelError
from robot_state_format.model.loader import load_model_file
from robot_state_format.model.mjcf.required_text import REQUIRED

mujoco = pytest.importorskip("mujoco", reason="mujoco (requirements/test.txt) is the reference of MJCF refusals")
sys.path.insert(0, str(REPO_ROOT / "conformance"))
import mjcf_required_generate  # noqa: E402

# the offending element stands on a line of its own (see _write)
_HEAD = '<mujoco>\n<compiler {compiler}/>\n<default>{default}</default>\n<worldbody>'
_BODY = '<body name="b"><joint name="j" {joint}/><geom size="0.1" {geom}/><site name="s"/>{inner}'
_TAIL = ('\n</body><body name="c" pos="1 0 0"><geom size="0.1"/>{static}</body></worldbody>\n<actuator>'
         '\n{actuator}\n</actuator>\n<sensor>\n{sensor}\n</sensor>\n</mujoco>')

_I = '<inertial pos="0 0 0" mass="1" {d}/>'
# case -> (parts of the file, MuJoCo's reason or None when it loads the file)
CASES: dict[str, tuple[dict[str, str], str | None]] = {
    "ctrllimited without ctrlrange": ({"actuator": '<motor joint="j" ctrllimited="true"/>'},
                                      "invalid control range for actuator"),
    "ctrllimited, ctrlrange equal": ({"actuator": '<motor joint="j" ctrllimited="true" ctrlrange="1 1"/>'},
                                     "invalid control range for actuator"),
    "ctrllimited, ctrlrange ordered": ({"actuator": '<motor joint="j" ctrllimited="true" ctrlrange="-1 1"/>'},
                                       None),
    "ctrlrange reversed, auto": ({"actuator": '<motor joint="j" ctrlrange="1 0"/>'}, None),
    "ctrlrange reversed, not limited": ({"actuator": '<motor joint="j" ctrllimited="false" ctrlrange="1 0"/>'},
                                        None),
    "position ctrllimited": ({"actuator": '<position joint="j" ctrllimited="true"/>'},
                             "invalid control range for actuator"),
    "velocity ctrllimited": ({"actuator": '<velocity joint="j" ctrllimited="true"/>'},
                             "invalid control range for actuator"),
    "ctrllimited from the default class": ({"default": '<motor ctrllimited="true"/>',
                                            "actuator": '<motor joint="j"/>'}, "invalid control range for actuator"),
    "a motor default on a position": ({"default": '<motor ctrllimited="true"/>', "actuator": '<position joint="j"/>'},
                                      "invalid control range for actuator"),
    "a general default ctrlrange on a motor": ({"default": '<general ctrlrange="-1 1"/>',
                                                "actuator": '<motor joint="j" ctrllimited="true"/>'}, None),
    "forcelimited without forcerange": ({"actuator": '<motor joint="j" forcelimited="true"/>'},
                                        "invalid force range for actuator"),
    "forcerange reversed, auto": ({"actuator": '<motor joint="j" forcerange="1 0"/>'}, None),
    "actlimited without actrange": ({"actuator": '<general joint="j" dyntype="integrator" actlimited="true"/>'},
                                    "invalid actrange for actuator"),
    "ctrlrange without autolimits": ({"compiler": 'autolimits="false"', "actuator": '<motor joint="j" ctrlrange="0 1"/>'},
                                     "actuator has `ctrlrange` but not `ctrllimited`"),
    "joint range reversed, auto": ({"joint": 'range="1 0"'}, None),
    "joint range empty, auto": ({"joint": 'range="0 0"'}, None),
    "ball range empty, auto": ({"joint": 'type="ball" range="0 0"'}, None),
    "accelerometer without site": ({"sensor": "<accelerometer/>"}, "required attribute missing: 'site'"),
    "jointpos without joint": ({"sensor": "<jointpos/>"}, "required attribute missing: 'joint'"),
    "framepos without objname": ({"sensor": '<framepos objtype="site"/>'}, "required attribute missing: 'objname'"),
    "framepos complete": ({"sensor": '<framepos objtype="site" objname="s"/>'}, None),
    "armature overflows": ({"actuator": '<motor joint="j" armature="1e400"/>'},
                           "number is too large in attribute 'armature'"),
    "gear overflows": ({"actuator": '<motor joint="j" gear="-1e999"/>'}, "number is too large in attribute 'gear'"),
    "geom density -1": ({"geom": 'density="-1"'}, "mass, inertia or density are negative in geom"),
    "geom density -inf": ({"geom": 'density="-inf"'}, "mass, inertia or density are negative in geom"),
    "geom mass -1": ({"geom": 'mass="-1" density="1"'}, "mass, inertia or density are negative in geom"),
    "geom mass over a negative density": ({"geom": 'mass="1" density="-1"'}, None),
    "geom density -1 from the default": ({"default": '<geom density="-1"/>'},
                                         "mass, inertia or density are negative in geom"),
    "geom density -1 under an inertial": ({"geom": 'density="-1"',
                                           "inner": '<inertial pos="0 0 0" mass="1" diaginertia="1 1 1"/>'}, None),
    "inertiafromgeom over an inertial": ({"compiler": 'inertiafromgeom="true"', "geom": 'density="-1"',
                                          "inner": '<inertial pos="0 0 0" mass="1" diaginertia="1 1 1"/>'},
                                         "mass, inertia or density are negative in geom"),
    "moving inertial, a zero principal inertia": ({"inner": _I.format(d='diaginertia="0 1 1"')},
                                                   "mass and inertia of moving bodies must be larger than mjMINVAL"),
    "moving inertial, a negative principal inertia": ({"inner": _I.format(d='diaginertia="-1 1 1"')},
                                                      "mass and inertia of moving bodies must be larger than mjMINVAL"),
    "moving inertial, 1e-15": ({"inner": _I.format(d='diaginertia="1e-15 1 1"')}, None),
    "moving inertial, triangle": ({"inner": _I.format(d='diaginertia="1 1 3"')}, "inertia must satisfy A + B >= C"),
    "triangle at equality": ({"inner": _I.format(d='diaginertia="1 1 2"')}, None),
    "triangle balanced": ({"compiler": 'balanceinertia="true"', "inner": _I.format(d='diaginertia="1 1 3"')}, None),
    "triangle, inertia from the geoms": ({"compiler": 'inertiafromgeom="true"',
                                          "inner": _I.format(d='diaginertia="1 1 3"')}, None),
    "static inertial, triangle": ({"static": _I.format(d='diaginertia="1 1 3"')}, "inertia must satisfy A + B >= C"),
    "static inertial, triangle of a zero": ({"static": _I.format(d='diaginertia="0 1 3"')},
                                            "inertia must satisfy A + B >= C"),
    "static inertial, negative": ({"static": _I.format(d='diaginertia="-1 1 1"')}, None),
    "static fullinertia not positive": ({"static": _I.format(d='fullinertia="1 1 1 1 0 0"')},
                                        "error 'inertia must have positive eigenvalues' in fullinertia"),
    "fullinertia, inertia from the geoms": ({"compiler": 'inertiafromgeom="true"',
                                             "inner": _I.format(d='fullinertia="-1 1 1 0 0 0"')},
                                            "error 'inertia must have positive eigenvalues' in fullinertia"),
    "fullinertia triangle": ({"inner": _I.format(d='fullinertia="1 1 3 0 0 0"')}, "inertia must satisfy A + B >= C"),
    "fullinertia fine": ({"inner": _I.format(d='fullinertia="2 2 3 0.5 0 0"')}, None),
}


def _write(path: Path, parts: dict[str, str]) -> tuple[Path, int]:
    """The file and the line of the offending element: an actuator or sensor alone on its line, the static
    body's content on line 6, the moving body's joint, geom and ``inner`` on line 5."""
    keys = ("compiler", "default", "joint", "geom", "inner", "static", "actuator", "sensor")
    p = {k: parts.get(k, "") for k in keys}
    text = _HEAD.format(**p) + "\n" + _BODY.format(**p) + _TAIL.format(**p)
    path.write_text(text)
    lines = text.splitlines()
    for key in ("actuator", "sensor"):
        if p[key]:
            return path, lines.index(p[key]) + 1
    return path, 6 if p["static"] else 5


def _mujoco_reason(path: Path) -> str | None:
    try:
        mujoco.MjModel.from_xml_path(str(path))
    except ValueError as exc:
        return str(exc).splitlines()[0]
    return None


@pytest.mark.parametrize("case", sorted(CASES))
def test_values_refused_as_mujoco_refuses_them(case: str, tmp_path: Path) -> None:
    parts, reason = CASES[case]
    path, line = _write(tmp_path / "m.xml", parts)
    got = _mujoco_reason(path)
    if reason is None:
        assert got is None, got
        load_model_file(path)
        return
    assert got is not None and reason in got, got
    with pytest.raises(ModelError) as err:
        load_model_file(path)
    errors = err.value.errors
    assert len(errors) == 1, err.value  # one line
    assert reason in errors[0].message
    assert (errors[0].file, errors[0].line) == (str(path), line)
    assert errors[0].format().startswith(f"{path}:{line}: error:")


def test_required_table_is_mujocos() -> None:
    """The generated table is what MuJoCo asks for today (re-run conformance/mjcf_required_generate.py if not)."""
    assert mjcf_required_generate.measure("sensor") == REQUIRED["sensor"]
    assert mjcf_required_generate.measure("actuator") == REQUIRED["actuator"]


_STEPS = [(tag, k) for tag, entries in sorted(REQUIRED["sensor"].items()) for k in range(len(entries))]


@pytest.mark.parametrize(("tag", "k"), _STEPS)
def test_every_sensor_without_a_required_attribute(tag: str, k: int, tmp_path: Path) -> None:
    """The sensor given its first ``k`` required attributes (naming real objects) and not the next one."""
    given = [e.split("|")[0] for e in REQUIRED["sensor"][tag][:k]]
    attrs = " ".join(f'{a}="{mjcf_required_generate._FILLER.get(a, "s")}"' for a in given)
    path = tmp_path / "m.xml"
    path.write_text(mjcf_required_generate._BASE.format(section="sensor", tag=tag, attrs=attrs))
    got = _mujoco_reason(path)
    assert got is not None
    with pytest.raises(ModelError) as err:
        load_model_file(path)
    assert len(err.value.errors) == 1, err.value
    assert err.value.errors[0].code == "MJCF_MISSING_ATTRIBUTE"
    assert err.value.errors[0].message in got, got
