"""The SDFormat specification's element descriptions as data (robot_state_format/model/sdf/spec/):
every element's value and presence, as libsdformat 12 reads them.

Expectations are libsdformat 12.3's verdicts, measured with ``conformance/sdf_ref`` (the per-class
files under test/fixtures/sdf/reference/{loads,refused}/spec_* are also compared with ``sdf_ref`` by
test_sdf_reference_rule.py where libsdformat-dev is installed), and the description files themselves.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from repo_paths import REPO_ROOT

from robot_state_format.errors import ModelError
from robot_state_format.model.loader import load_model_file
from robot_state_format.model.sdf import read_sdf, spec_check, spec_values
from robot_state_format.model.sdf.spec_values import BadValue

ROOT = REPO_ROOT
REF = ROOT / "test" / "fixtures" / "sdf" / "reference"
UPSTREAM = Path("/usr/share/sdformat12")
sys.path.insert(0, str(ROOT / "conformance"))
from sdf_spec_generate import generate  # noqa: E402


def _doc(link_body: str, version: str = "1.9", model_body: str = "") -> str:
    return (f'<sdf version="{version}">\n<model name="m">\n<link name="l">\n{link_body}\n</link>\n'
            f"{model_body}</model>\n</sdf>")


def _codes(text: str) -> list[str]:
    with pytest.raises(ModelError) as info:
        read_sdf(text)
    return [d.code for d in info.value.errors]


# ----------------------------------------------------------------------------- the value parsers
@pytest.mark.parametrize("kind,text", [
    ("double", "1abc"), ("double", "0x10"), ("double", "nan"), ("double", "-inf"), ("double", " 1 2"),
    ("double", ""), ("double", " \n "), ("int", "1.5"), ("int", "-7"), ("unsigned int", "-1"),
    ("unsigned int", "99999999999"), ("bool", " TRUE "), ("bool", "0"), ("vector3", "1 2 3 4"),
    ("vector3", "1 2 3abc"), ("vector3", "1 1 1e-400"), ("vector3", "1 1 0x2"), ("vector2d", "+1 .5e1"),
    ("pose", "1\t2\n3  0 0 0"), ("pose", "1 2 3 4 5 6x"), ("color", "1 0 0"), ("color", "1 0 nan"),
    ("color", "0.5abc 0 0 1"), ("string", ""), ("time", "1 2"), ("time", "1 2 3"),
])
def test_values_libsdformat_reads(kind: str, text: str) -> None:
    spec_values.parse(kind, text, required=False)


@pytest.mark.parametrize("kind,text", [
    ("double", "bad"), ("double", "1e400"), ("double", "1e-400"), ("double", "2.2e-310"), ("float", "1e39"),
    ("int", "abc"), ("int", "99999999999"), ("unsigned int", "x1"), ("bool", "yes"), ("bool", "2"),
    ("vector3", "1 2"), ("vector3", "1,2,3"), ("vector3", "1 1 inf"), ("vector3", "1 1 nan"),
    ("vector3", "1 1 1e400"), ("vector2d", "1"), ("pose", "1 2 3 4 5"), ("pose", "1 2 3 4 5 6 7"),
    ("pose", "0 0 0 0 0 nan"), ("pose", "0 0 0 0 0 1e-400"), ("color", "1 0"), ("color", "1 0 0 1 1"),
    ("color", "2 0 0"), ("color", "0 0 -1"), ("time", "bad"), ("time", "1.5"), ("time", "1"),
])
def test_values_libsdformat_refuses(kind: str, text: str) -> None:
    with pytest.raises(BadValue):
        spec_values.parse(kind, text, required=False)


def test_stod_reads_the_longest_prefix() -> None:
    assert spec_values.stod("1abc") == 1.0
    assert spec_values.stod("0x10") == 16.0
    assert spec_values.stod("1e5x") == 1e5
    assert spec_values.stod(".5e") == 0.5


def test_an_empty_required_value_is_refused_and_an_optional_one_is_the_default() -> None:
    with pytest.raises(BadValue):
        spec_values.parse("vector3", " ", required=True)
    assert spec_values.parse("double", " ", required=False) is None


def test_pose_counts_follow_the_rotation_format() -> None:
    spec_values.parse("pose", "0 0 0 0 0 0 1", False, "quat_xyzw")
    with pytest.raises(BadValue):
        spec_values.parse("pose", "0 0 0 0 0 0", False, "quat_xyzw")
    with pytest.raises(BadValue):
        spec_values.parse("pose", "0 0 0 0 0 0", False, "euler")


# ----------------------------------------------------------------------------- documents
def test_wrong_type_in_an_unused_element_is_refused_with_file_line_and_element() -> None:
    path = REF / "refused" / "spec_double_bad.sdf"
    with pytest.raises(ModelError) as info:
        load_model_file(path)
    (err,) = info.value.errors
    assert (err.code, err.file, err.line, err.element) == ("SDF_BAD_VALUE", str(path), 8, "linear")
    assert "'bad'" in err.message and "double" in err.message


@pytest.mark.parametrize("body,code", [
    ('<light name="x"/>', "SDF_MISSING_ATTRIBUTE"),
    ('<sensor name="s"/>', "SDF_MISSING_ATTRIBUTE"),
    ('<visual name=""><geometry><box><size>1 1 1</size></box></geometry></visual>', "SDF_EMPTY_NAME"),
    ('<sensor name="c" type="camera"><camera><horizontal_fov>7</horizontal_fov></camera></sensor>',
     "SDF_VALUE_OUT_OF_RANGE"),
    ('<pose degrees="maybe">0 0 0 0 0 0</pose>', "SDF_BAD_VALUE"),
    ('<visual name="v"><geometry><plane><normal>0 0 1</normal><size>1</size></plane></geometry></visual>',
     "SDF_BAD_VALUE"),
])
def test_spec_refusals(body: str, code: str) -> None:
    assert _codes(_doc(body)) == [code]


@pytest.mark.parametrize("version", ["1.2", "1.5", "1.9", "1.11", "100"])
def test_every_version_is_read_against_1_9_as_libsdformat_converts_it(version: str) -> None:
    assert _codes(_doc('<light name="x"/>', version)) == ["SDF_MISSING_ATTRIBUTE"]


def test_required_children_only_refused_in_joints_as_libsdformat() -> None:
    # <mesh> needs <uri> and <box> needs <size> (required="1"): libsdformat adds the default
    read_sdf(_doc('<visual name="v"><geometry><box/></geometry></visual>'))
    joint = '<link name="l2"/><joint name="j" type="revolute"><parent>l</parent></joint>'
    assert _codes(_doc("", model_body=joint)) == ["SDF_JOINT_MISSING_CHILD"]


def test_unknown_elements_are_warnings_in_1_9_and_not_in_a_version_a_conversion_explains() -> None:
    m = read_sdf(_doc('<inertial foo="1"><mass>1</mass></inertial>', model_body="<thing/>"))
    assert sorted(w.code for w in m.warnings) == ["SDF_UNKNOWN_ATTRIBUTE", "SDF_UNKNOWN_ELEMENT"]
    # 1.6's use_parent_model_frame is gone in 1.9 (the 1.7 conversion moves it): no warning
    joint = ('<link name="l2"/><joint name="j" type="revolute"><parent>l</parent><child>l2</child>'
             "<axis><xyz>0 0 1</xyz><use_parent_model_frame>true</use_parent_model_frame></axis></joint>")
    m16 = read_sdf(_doc("", "1.6", joint))
    assert [w.code for w in m16.warnings] == []
    # custom (namespaced) elements and plugin contents are not checked
    read_sdf(_doc('<x:thing xmlns:x="urn:x">bad</x:thing>',
                  model_body='<plugin name="p" filename="f"><pose>bad</pose></plugin>'))


def test_values_libsdformat_tolerates_stay_loadable() -> None:
    m = load_model_file(REF / "loads" / "spec_tolerated_values.sdf")
    assert sorted(w.code for w in m.warnings) == ["SDF_UNKNOWN_ATTRIBUTE", "SDF_UNKNOWN_ELEMENT"]
    assert m.links["l"].inertial is not None and m.links["l"].inertial.mass == 1.0  # <mass> </mass>: default


def test_include_of_a_model_directory_needs_model_config() -> None:
    with pytest.raises(ModelError) as info:
        load_model_file(REF / "refused" / "include_sdf_without_config.sdf", search_paths=[str(REF / "models")])
    (err,) = info.value.errors
    assert err.code == "SDF_INCLUDE_NOT_FOUND" and "model.config" in err.message and err.line == 4


# ----------------------------------------------------------------------------- the data
def test_every_type_of_the_descriptions_has_a_parser() -> None:
    spec = spec_check.description((1, 9))
    assert spec is not None and spec.version == "1.9"
    kinds = {n.type for n in spec.nodes if n.type} | {a[0] for n in spec.nodes for a in n.attributes.values()}
    assert kinds <= {"string", "double", "float", "int", "unsigned int", "bool", "vector3", "vector2d",
                     "vector2i", "pose", "color", "time"}
    # spot checks against sdf/1.9 (model.sdf, joint.sdf, light.sdf)
    root = spec.nodes[spec.root]
    model = spec.nodes[root.children["model"][0]]
    assert model.attributes["name"][:2] == ("string", "1") and model.children["model"][0] == root.children["model"][0]
    joint = spec.nodes[model.children["joint"][0]]
    assert joint.required_children == ["parent", "child"]
    link = spec.nodes[model.children["link"][0]]
    assert spec.nodes[link.children["light"][0]].attributes["type"][1] == "1"


@pytest.mark.skipif(not UPSTREAM.is_dir(), reason="libsdformat's description files (apt-get install libsdformat-dev)")
@pytest.mark.parametrize("version", ["1.0", "1.2", "1.3", "1.4", "1.5", "1.6", "1.7", "1.8", "1.9"])
def test_shipped_data_is_the_generators_output(version: str) -> None:
    shipped = json.loads((ROOT / "robot_state_format/model/sdf/spec" / f"sdf_{version.replace('.', '_')}.json")
                         .read_text())
    fresh = json.loads(json.dumps(generate(UPSTREAM, version)))
    assert shipped["nodes"] == fresh["nodes"] and shipped["root"] == fresh["root"]


def test_descriptions_load_once_and_never_for_urdf() -> None:
    code = (
        "from robot_state_format.model.loader import load_model_file\n"
        "from robot_state_format.model.sdf import spec_check\n"
        "load_model_file('robot_state_format/samples/arm7_gripper.urdf')\n"
        "print(spec_check.description.cache_info().currsize)\n"
        "load_model_file('robot_state_format/samples/nested_world.sdf')\n"
        "load_model_file('robot_state_format/samples/nested_world.sdf')\n"
        "info = spec_check.description.cache_info()\n"
        "print(info.currsize, info.misses)\n")
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True).stdout
    assert out.split("\n")[:2] == ["0", "1 1"]


# ----------------------------------------------------------------------------- URDF read as part of SDFormat
@pytest.mark.parametrize("model,code", [("urdf_bad_inertia_m", "SDF_INVALID_INERTIA"),
                                        ("urdf_gazebo_dup_m", "SDF_DUPLICATE_SENSOR"),
                                        ("urdf_no_mass_m", "SDF_URDF_NO_LINK")])
def test_included_urdf_refused_as_libsdformats_conversion_refuses_it(model: str, code: str) -> None:
    doc = (f'<sdf version="1.9">\n<world name="w">\n<include><uri>model://{model}</uri></include>\n'
           "</world>\n</sdf>")
    with pytest.raises(ModelError) as info:
        read_sdf(doc, search_paths=[str(REF / "models")])
    (err,) = info.value.errors
    assert err.code == code and err.file.endswith("r.urdf") and err.line is not None
    # on its own the URDF is judged by urdfdom, which loads it (check_urdf: test_urdf_reference_rule's rule)
    load_model_file(REF / "models" / model / "r.urdf")


# ----------------------------------------------------------------------------- libsdformat's DOM (dom_rules.py)


@pytest.mark.parametrize("material,code", [
    ("<script><uri>u</uri></script>", "SDF_MATERIAL_SCRIPT"),  # no <name>
    ("<script><uri>__default__</uri><name>n</name></script>", "SDF_MATERIAL_SCRIPT"),  # the default is no uri
    ('<shader type="normal_map_object_space"><normal_map>__default__</normal_map></shader>',
     "SDF_MATERIAL_NORMAL_MAP"),
    ('<shader type="invalid"><normal_map>n.png</normal_map></shader>', "SDF_UNSUPPORTED_VALUE"),
])
def test_material_variants_as_sdf_ref_measured_them(material: str, code: str) -> None:
    body = f'<visual name="v"><geometry><box><size>1 1 1</size></box></geometry><material>{material}</material></visual>'
    assert _codes(_doc(body, "1.6")) == [code]


@pytest.mark.parametrize("name,code,line,words", [
    ("dom_material_script_no_uri", "SDF_MATERIAL_SCRIPT", 10, "<script> has no <uri>"),
    ("dom_material_shader_type", "SDF_UNSUPPORTED_VALUE", 10, "<shader type='Pixel'> is none of pixel, vertex"),
    ("dom_material_normal_map_missing", "SDF_MATERIAL_NORMAL_MAP", 10,
     "<shader type='normal_map_tangent_space'> has no <normal_map>"),
    ("dom_sensor_type", "SDF_UNSUPPORTED_VALUE", 7, "<sensor type='air_speed'> is none of air_pressure, altimeter, boundingbox"),
    ("dom_force_torque_frame", "SDF_UNSUPPORTED_VALUE", 12, "<frame> 'Child' is none of child, parent, sensor"),
    ("dom_physics_duplicate", "SDF_DUPLICATE_PHYSICS", 6, "two <physics> named 'fast' in <world>"),
    ("dom_submesh_no_name", "SDF_SUBMESH_NAME", 7, "<submesh> has no <name>"),
])
def test_values_and_names_libsdformats_dom_refuses(name: str, code: str, line: int, words: str) -> None:
    path = REF / "refused" / f"{name}.sdf"
    with pytest.raises(ModelError) as info:
        load_model_file(path)
    (err,) = info.value.errors
    assert (err.code, err.file, err.line) == (code, str(path), line)
    assert err.message.startswith(words) and err.message.endswith("(libsdformat refuses it)")


@pytest.mark.parametrize("body", [  # each measured with sdf_ref: refused by libsdformat 12.3
    '<light name="x" type="Point"/>', '<sensor name="s" type="none"/>', '<particle_emitter name="e" type="Box"/>',
    '<sensor name="s" type="force_torque"><force_torque><measure_direction>Child_to_parent</measure_direction>'
    "</force_torque></sensor>",
    '<sensor name="s" type="camera"><camera><image><format>RGB8</format></image></camera></sensor>',
])
def test_one_of_a_fixed_set_as_libsdformat_reads_it(body: str) -> None:
    assert _codes(_doc(body)) == ["SDF_UNSUPPORTED_VALUE"]


def test_world_values_of_a_fixed_set() -> None:
    for body in ('<atmosphere type="Adiabatic"/>', "<spherical_coordinates><world_frame_orientation>NED"
                 "</world_frame_orientation></spherical_coordinates>"):
        assert _codes(f'<sdf version="1.9"><world name="w">{body}</world></sdf>') == ["SDF_UNSUPPORTED_VALUE"]


def test_accepted_values_and_plugin_content_load() -> None:
    m = load_model_file(REF / "loads" / "dom_values_accepted.sdf")
    assert m.is_world and list(m.links) == ["m::l"]


def test_a_complete_material_loads() -> None:
    m = load_model_file(REF / "loads" / "dom_material_complete.sdf")
    assert list(m.links) == ["l"] and len(m.links["l"].visuals) == 2 and m.warnings == []


# ----------------------------------------------------------------------------- the <sdf> root (libsdformat's Root)
def test_include_directly_in_sdf_is_the_files_model() -> None:
    m = load_model_file(REF / "loads" / "root_include_model.sdf", search_paths=[str(REF / "models")])
    assert m.name == "renamed"
    yaw = 1.57  # <pose>1 1 1 0 0 1.57</pose>; the link at z 1 in the model, frame f at x 1
    np.testing.assert_allclose(m.pose[:3, 3], [1, 1, 1], atol=1e-12, rtol=0)
    np.testing.assert_allclose(m.links["l"].pose[:3, 3], [0, 0, 1], atol=1e-12, rtol=0)  # in the model frame
    world_f = m.pose @ m.links["l"].pose @ m.frames["f"].pose if m.frames["f"].attached_to == "l" else None
    if world_f is None:
        world_f = m.pose @ m.frames["f"].pose
    np.testing.assert_allclose(world_f[:3, 3], [1 + np.cos(yaw), 1 + np.sin(yaw), 1], atol=1e-12, rtol=0)


@pytest.mark.parametrize("body", ['<light name="a" type="point"/><light name="b" type="point"/>',
                                  '<model name="m"><link name="l"/></model><actor name="a"/>'])
def test_one_model_light_or_actor_without_a_world(body: str) -> None:
    assert _codes(f'<sdf version="1.9">\n{body}\n</sdf>') == ["SDF_MULTIPLE_ROOTS"]
