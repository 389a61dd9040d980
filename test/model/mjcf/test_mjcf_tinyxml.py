"""Markup MuJoCo's XML parser (TinyXML2) reads and lxml refuses, and attributes MuJoCo's schema refuses,
each checked against the installed ``mujoco``."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from robot_state_format.errors import ModelError
from robot_state_format.model.loader import load_model_file

mujoco = pytest.importorskip("mujoco")

_BODY = '<body name="a" pos="1 2 3"><joint/><geom size="1"/></body>'

TOLERATED = {
    "attributes without a space": ('<mujoco><worldbody><body name="a"pos="1 2 3"><joint/><geom size="1"/></body>'
                                   "</worldbody></mujoco>", "attribute_space"),
    "single quotes without a space": ("<mujoco><worldbody><body name='a'pos='1 2 3'><joint/><geom size='1'/>"
                                      "</body></worldbody></mujoco>", "attribute_space"),
    "-- inside a comment": (f"<mujoco>\n<!-- a -- b -->\n<worldbody>{_BODY}</worldbody></mujoco>", "comment_dashes"),
    "comment ending --->": (f"<mujoco><!-- a ---><worldbody>{_BODY}</worldbody></mujoco>", "comment_dashes"),
    "bare & in a value": (f'<mujoco model="a & b"><worldbody>{_BODY}</worldbody></mujoco>', "attribute_markup"),
    "< in a value": (f'<mujoco model="a < b"><worldbody>{_BODY}</worldbody></mujoco>', "attribute_markup"),
    "undefined entity": (f'<mujoco model="&foo;"><worldbody>{_BODY}</worldbody></mujoco>', "attribute_markup"),
}


@pytest.mark.parametrize("case", sorted(TOLERATED))
def test_markup_mujoco_reads(case: str, tmp_path: Path) -> None:
    text, _ = TOLERATED[case]
    path = tmp_path / "m.xml"
    path.write_text(text)
    m = mujoco.MjModel.from_xml_path(str(path))
    model = load_model_file(path)
    np.testing.assert_allclose(model.joints["joint0"].origin[:3, 3], m.body("a").pos, rtol=0, atol=0)
    assert [w.code for w in model.warnings].count("MJCF_XML_TOLERATED") == 1
    if "model=" in text:  # the value as MuJoCo keeps it
        assert model.name == text.split('model="')[1].split('"')[0]


def test_tolerated_markup_keeps_line_numbers(tmp_path: Path) -> None:
    path = tmp_path / "m.xml"
    path.write_text('<mujoco>\n<!-- a -- b\n -- c -->\n<worldbody>\n<body name="a"pos="1 2 3">\n'
                    '<joint type="bad"/></body></worldbody></mujoco>')
    with pytest.raises(ValueError):
        mujoco.MjModel.from_xml_path(str(path))
    with pytest.raises(ModelError) as err:
        load_model_file(path)
    assert err.value.diagnostics[0].line == 6


@pytest.mark.parametrize("text", [
    '<mujoco><worldbody><body name="a" pos="1 0 0" pos="2 0 0"><geom size="1"/></body></worldbody></mujoco>',
    '<mujoco><worldbody><body name=a><geom size="1"/></body></worldbody></mujoco>',
    '<mujoco><worldbody><body name="a"><geom size="1"/></bodx></worldbody></mujoco>'])
def test_markup_both_refuse(text: str, tmp_path: Path) -> None:
    path = tmp_path / "m.xml"
    path.write_text(text)
    with pytest.raises(ValueError):
        mujoco.MjModel.from_xml_path(str(path))
    with pytest.raises(ModelError):
        load_model_file(path)


@pytest.mark.parametrize("element", ['<option apirate="100"/>', '<option collision="all"/>',
                                     '<size njmax="10" nconmax="5" bogus="1"/>',
                                     '<actuator><motor joint="j" gear="1" ctrlrange2="0 1"/></actuator>',
                                     '<sensor><jointpos joint="j" nam="x"/></sensor>',
                                     '<asset><texture name="t" builtin="checker" width="8" height="8" wdth="2"/></asset>'])
def test_attributes_outside_mujocos_schema_are_refused(element: str, tmp_path: Path) -> None:
    path = tmp_path / "m.xml"
    path.write_text(f'<mujoco>\n{element}\n<worldbody><body><joint name="j"/><geom size="1"/></body>'
                    "</worldbody></mujoco>")
    with pytest.raises(ValueError, match="unrecognized attribute"):
        mujoco.MjModel.from_xml_path(str(path))
    with pytest.raises(ModelError) as err:
        load_model_file(path)
    d = err.value.diagnostics[0]
    assert d.code == "MJCF_UNKNOWN_ATTRIBUTE" and d.line == 2 and len(err.value.errors) == 1
    fixed = path.read_text().replace(' apirate="100"', "").replace(' collision="all"', "").replace(' bogus="1"', "") \
        .replace(' ctrlrange2="0 1"', "").replace(' nam="x"', "").replace(' wdth="2"', "")
    path.write_text(fixed)
    mujoco.MjModel.from_xml_path(str(path))
    load_model_file(path)  # the same file without the attribute: both load


@pytest.mark.parametrize(("value", "loads"), [("abc 0 0", False), ("1 2 x", False), ("1,2,3", False),
                                              ("1e400 0 0", False), ("1 2", False), ("0x10 0 0", True),
                                              ("1 2 3", True)])
def test_camera_and_light_numbers_as_mujoco_parses_them(value: str, loads: bool, tmp_path: Path) -> None:
    for element in (f'<camera pos="{value}"/>', f'<light pos="{value}"/>'):
        path = tmp_path / "m.xml"
        path.write_text(f'<mujoco><worldbody>\n{element}\n<body><joint/><geom size="1"/></body></worldbody></mujoco>')
        try:
            mujoco.MjModel.from_xml_path(str(path))
            reference = True
        except ValueError:
            reference = False
        assert reference is loads
        if loads:
            load_model_file(path)
            continue
        with pytest.raises(ModelError) as err:
            load_model_file(path)
        assert err.value.errors[0].code == "MJCF_BAD_VALUE" and err.value.errors[0].line == 2
