"""Dangling references: MuJoCo refuses a model naming an object that is not there; so does the reader.
Each case is checked against the installed ``mujoco``, with the reference right (both load) and wrong."""

from __future__ import annotations

from pathlib import Path

import pytest

from robot_state_format.errors import ModelError
from robot_state_format.model.loader import load_model_file

mujoco = pytest.importorskip("mujoco")

_WORLD = """<worldbody><geom name="floor" type="plane" size="1 1 .1"/>
<body name="b"><joint name="j"/><geom name="g" size=".1" material="m"/><site name="s"/>
<body name="c" pos="0 0 .3"><joint name="k"/><geom name="h" size=".1"/><site name="t"/></body></body></worldbody>
<asset><texture name="tx" type="2d" builtin="checker" width="8" height="8"/><material name="m" texture="tx"/></asset>
<tendon><fixed name="tf"><joint joint="j" coef="1"/></fixed><spatial name="ts"><site site="s"/><site site="t"/></spatial></tendon>
<actuator><motor name="a" joint="j"/></actuator>"""

# (section with the reference, the name as written right, the name made wrong)
CASES = {
    "sensor site": ('<sensor><accelerometer site="s"/></sensor>', 'site="s"', 'site="nope"'),
    "sensor joint": ('<sensor><jointpos joint="j"/></sensor>', 'joint="j"', 'joint="nope"'),
    "sensor actuator": ('<sensor><actuatorpos actuator="a"/></sensor>', 'actuator="a"', 'actuator="nope"'),
    "sensor tendon": ('<sensor><tendonpos tendon="tf"/></sensor>', 'tendon="tf"', 'tendon="nope"'),
    "sensor objname": ('<sensor><framepos objtype="body" objname="c"/></sensor>', 'objname="c"', 'objname="nope"'),
    "contact sensor geom": ('<sensor><contact geom1="g" geom2="floor"/></sensor>', 'geom2="floor"', 'geom2="nope"'),
    "pair geom": ('<contact><pair geom1="g" geom2="floor"/></contact>', 'geom2="floor"', 'geom2="nope"'),
    "exclude body": ('<contact><exclude body1="b" body2="c"/></contact>', 'body2="c"', 'body2="nope"'),
    "actuator joint": ('<actuator><position joint="k"/></actuator>', 'joint="k"', 'joint="nope"'),
    "actuator site": ('<actuator><general site="t" gear="1 0 0 0 0 0"/></actuator>', 'site="t"', 'site="nope"'),
    "equality joint": ('<equality><joint joint1="j" joint2="k"/></equality>', 'joint2="k"', 'joint2="nope"'),
    "equality body": ('<equality><weld body1="c"/></equality>', 'body1="c"', 'body1="nope"'),
    "tendon joint": ('<tendon><fixed><joint joint="k" coef="1"/></fixed></tendon>', 'joint="k"', 'joint="nope"'),
    "geom material": ('<worldbody><geom size=".1" material="m"/></worldbody>', 'material="m"', 'material="nope"'),
    "material texture": ('<asset><material name="m2" texture="tx"/></asset>', 'texture="tx"', 'texture="nope"'),
    "light target": ('<worldbody><light mode="targetbodycom" target="c" pos="0 0 2"/></worldbody>', 'target="c"',
                     'target="nope"'),
    "light target in a body, fixed": ('<worldbody><body name="d"><light target="b"/></body></worldbody>',
                                      'target="b"', 'target="nope"'),
    "camera target": ('<worldbody><camera mode="targetbody" target="world" pos="0 0 2"/></worldbody>',
                      'target="world"', 'target="nope"'),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_references_as_mujoco_resolves_them(case: str, tmp_path: Path) -> None:
    section, right, wrong = CASES[case]
    path = tmp_path / "m.xml"
    for text, loads in ((section, True), (section.replace(right, wrong), False)):
        path.write_text(f"<mujoco>{_WORLD}\n{text}\n</mujoco>")
        try:
            mujoco.MjModel.from_xml_path(str(path))
            reference = True
        except ValueError:
            reference = False
        assert reference is loads, (case, text)
        if loads:
            load_model_file(path)
            continue
        with pytest.raises(ModelError) as err:
            load_model_file(path)
        assert len(err.value.errors) == 1, err.value  # one line
        assert err.value.errors[0].code in ("MJCF_UNKNOWN_REFERENCE", "MJCF_UNKNOWN_JOINT", "MJCF_UNKNOWN_NAME")
        assert err.value.errors[0].line == 7 and "nope" in err.value.errors[0].message


@pytest.mark.parametrize("actuator", ["motor", "general", "position", "velocity", "cylinder", "muscle", "adhesion"])
def test_an_actuator_without_a_transmission_target(actuator: str, tmp_path: Path) -> None:
    path = tmp_path / "m.xml"
    path.write_text(f'<mujoco>{_WORLD}\n<actuator><{actuator} ctrlrange="0 1"/></actuator>\n</mujoco>')
    with pytest.raises(ValueError, match="missing transmission target"):
        mujoco.MjModel.from_xml_path(str(path))
    with pytest.raises(ModelError) as err:
        load_model_file(path)
    assert [d.code for d in err.value.errors] == ["MJCF_UNKNOWN_REFERENCE"] and err.value.errors[0].line == 7
