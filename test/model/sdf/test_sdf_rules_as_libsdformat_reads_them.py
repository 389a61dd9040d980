"""SDFormat rules as libsdformat 12.3 applies them, beyond the spec's examples:

1. pre-1.7 worlds whose members name the frame ``world`` (``//pose/@frame``, a 1.4 joint child), as
   libsdformat 12.3 reads them;
2. include URIs the operating system refuses to look up (too long, permission denied);
3. names of the top-level model and of the world;
4. duplicate lights and actors of a world, duplicate sensors of a joint;
5. a joint mimicking itself (and mimic cycles), numerically unusable poses.

Expected poses are derived by hand in the comments.
"""

from __future__ import annotations

import math
import pathlib
import warnings
from pathlib import Path

import pytest
from sdf_helpers import T, assert_pose, codes_of, sdf

from robot_state_format.errors import ModelError
from robot_state_format.model.sdf import read_sdf
from robot_state_format.model.types import WORLD

YAW90 = math.pi / 2


def _errors(text: str, **kw: object) -> list:
    with pytest.raises(ModelError) as info:
        read_sdf(text, **kw)  # type: ignore[arg-type]
    return info.value.errors


def _errors_raising_no_warning(text: str) -> list:
    """The error diagnostics of ``text``; any Python warning (numpy overflow) fails the test."""
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        return _errors(text)


# --------------------------------------------------------------------------- 1. the world frame in pre-1.7 worlds
# The 1.5/1.6 specification poses a member of a model with //pose/@frame="world" in the world frame, but
# libsdformat 12.3 (the rule, conformance/sdf_ref) reads the converted document, where that is
# relative_to="world", and refuses it in a model in every version: "relative_to name[world] specified by
# link with name[l] does not match a nested model, link, joint, or frame name in model with name[m]"
# (and "attached_to name[world]" for a frame). In the world itself "world" is the world frame.
@pytest.mark.parametrize("version", ["1.5", "1.6"])
@pytest.mark.parametrize("member,code", [
    ('<link name="x"><pose frame="world">1 0 0 0 0 0</pose></link>', "SDF_RELATIVE_TO_NOT_FOUND"),
    ('<model name="x"><pose frame="world">0 0 3 0 0 0</pose><link name="y"/></model>', "SDF_RELATIVE_TO_NOT_FOUND"),
    ('<frame name="x"><pose frame="world">1 0 0 0 0 0</pose></frame>', "SDF_RELATIVE_TO_NOT_FOUND"),
    ('<frame name="x" attached_to="world"><pose>1 0 0 0 0 0</pose></frame>', "SDF_ATTACHED_TO_NOT_FOUND"),
    ('<joint name="x" type="fixed"><pose frame="world">1 0 0 0 0 0</pose><parent>l</parent><child>k</child>'
     '</joint><link name="k"/>', "SDF_RELATIVE_TO_NOT_FOUND"),
])
def test_pre_1_7_model_member_posed_in_world_is_refused_as_libsdformat_does(version: str, member: str,
                                                                            code: str) -> None:
    text = f"""<world name="w"><model name="m"><pose>0 2 0 0 0 1.5707963267948966</pose><link name="l"/>
      {member}</model></world>"""
    assert codes_of(text, version) == [code]


def test_v16_world_members_posed_in_model_and_world_frames() -> None:
    # Model m at (0,2,0) turned 90 deg about z. Link k uses the default (the model frame):
    # X_W_k = X_W_m @ T(1,0,0) = T(0,3,0, yaw 90); a world frame wf at (0,1,0) and a model posed in it,
    # <pose frame="wf">5 0 0 ...</pose>: X_W_n = T(5,1,0) (libsdformat 12.3: n::x at [5, 1, 0]).
    m = sdf("""<world name="w"><frame name="wf"><pose>0 1 0 0 0 0</pose></frame>
      <model name="m"><pose>0 2 0 0 0 1.5707963267948966</pose><link name="l"/>
      <link name="k"><pose>1 0 0 0 0 0</pose></link>
      <frame name="g"><pose>1 0 0 0 0 0</pose></frame></model>
      <model name="n"><pose frame="wf">5 0 0 0 0 0</pose><link name="x"/></model></world>""", "1.6")
    assert_pose(m.links["m::k"].pose, T(0, 3, 0, 0, 0, YAW90))
    # g (no frame attribute) is posed in and attached to the model frame, which is on link l at X_W_m.
    assert m.frames["m::g"].attached_to == "m::l"
    assert_pose(m.frames["m::g"].pose, T(1, 0, 0))  # X_l_g: l is at the model frame
    assert_pose(m.links["n::x"].pose, T(5, 1, 0))


def test_v14_world_joint_child_world_spec_example_is_refused_as_libsdformat_does() -> None:
    # The 1.4 spec's example (<parent>link</parent><child>world</child>): libsdformat refuses a joint
    # whose child is the world in every version ("specified invalid child link [world]").
    body = """<world name="w"><model name="model"><pose>1 0 0 0 0 0</pose>
      <link name="link"><pose>0 0 1 0 0 0</pose></link>
      <joint name="joint" type="fixed"><pose>0 0 2 0 0 0</pose><parent>link</parent><child>world</child></joint>
      </model></world>"""
    for version in ("1.4", "1.6", "1.9"):
        assert codes_of(body, version) == ["SDF_JOINT_CHILD_WORLD"]


def test_v14_world_parent_stays_valid() -> None:
    m = sdf("""<world name="w"><model name="model"><link name="link"/>
      <joint name="joint" type="fixed"><parent>world</parent><child>link</child></joint></model></world>""", "1.4")
    assert m.joints["model::joint"].parent == WORLD


def test_v16_world_visual_pose_relative_to_world() -> None:
    # A visual posed in the world frame, on link l at (1,0,0): X_l_v = inv(T(1,0,0)) @ T(0,0,4).
    m = sdf("""<world name="w"><model name="m"><link name="l"><pose>1 0 0 0 0 0</pose>
      <visual name="v"><pose frame="world">0 0 4 0 0 0</pose><geometry><box><size>1 1 1</size></box></geometry>
      </visual></link></model></world>""", "1.6")
    assert_pose(m.links["m::l"].visuals[0].origin, T(-1, 0, 4))


def test_v16_model_file_visual_pose_relative_to_world() -> None:
    # The same in a model file: the world frame is where the model pose puts it.  Model at (0,0,1),
    # link at (1,0,1) in the world; visual at T(0,0,4) in the world: X_l_v = T(-1,0,3).
    m = sdf("""<model name="m"><pose>0 0 1 0 0 0</pose><link name="l"><pose>1 0 0 0 0 0</pose>
      <visual name="v"><pose frame="world">0 0 4 0 0 0</pose><geometry><box><size>1 1 1</size></box></geometry>
      </visual></link></model>""", "1.6")
    assert_pose(m.links["l"].visuals[0].origin, T(-1, 0, 3))


# --------------------------------------------------------------------------- 2. include URIs the OS refuses
LONG = "a" * 300


def _include_doc(uri: str) -> str:
    return f'<sdf version="1.8">\n<model name="m"><link name="l"/>\n<include><uri>{uri}</uri></include>\n</model></sdf>'


@pytest.mark.parametrize("uri", [LONG, "/" + LONG, f"model://{LONG}", f"file:///{LONG}", f"{LONG}/model.sdf",
                                 f"package://{LONG}/model.sdf"])
def test_overlong_include_uri_is_a_model_error(uri: str, tmp_path: Path) -> None:
    errs = _errors(_include_doc(uri), file=str(tmp_path / "robot.sdf"), search_paths=[str(tmp_path)])
    assert [d.code for d in errs] == ["SDF_INCLUDE_NOT_FOUND"]
    assert errs[0].file == str(tmp_path / "robot.sdf")
    assert errs[0].line == 3
    assert errs[0].element == "include"


def _refuse_locked_paths(monkeypatch: pytest.MonkeyPatch) -> None:
    """Path.exists raises PermissionError for paths containing "locked", as the OS would for a
    directory the user may not search (the tests run as root, where permissions are never denied)."""
    real = pathlib.Path.exists

    def exists(self: pathlib.Path, *a: object, **k: object) -> bool:
        if "locked" in str(self):
            raise PermissionError(13, "Permission denied", str(self))
        return real(self, *a, **k)  # type: ignore[arg-type]

    monkeypatch.setattr(pathlib.Path, "exists", exists)


def test_include_lookup_permission_denied_is_a_model_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _refuse_locked_paths(monkeypatch)
    errs = _errors(_include_doc("model://locked/thing"), file=str(tmp_path / "robot.sdf"),
                   search_paths=[str(tmp_path)])
    assert [d.code for d in errs] == ["SDF_INCLUDE_NOT_FOUND"]
    assert errs[0].line == 3 and errs[0].element == "include"
    assert "Permission denied" in errs[0].message


def test_include_still_found_after_a_refused_search_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # A search directory the OS refuses does not hide the model in the next one.
    good = tmp_path / "good"
    (good / "thing").mkdir(parents=True)
    (good / "thing" / "model.sdf").write_text(
        '<sdf version="1.8"><model name="thing"><link name="x"><pose>0 0 1 0 0 0</pose></link></model></sdf>')
    (good / "thing" / "model.config").write_text('<model><sdf version="1.8">model.sdf</sdf></model>')
    _refuse_locked_paths(monkeypatch)
    m = read_sdf(_include_doc("model://thing"), search_paths=[str(tmp_path / "locked"), str(good)])
    assert_pose(m.links["thing::x"].pose, T(0, 0, 1))


# --------------------------------------------------------------------------- 3. names of the top-level model and the world
@pytest.mark.parametrize("name,code", [("world", "SDF_RESERVED_NAME"), ("__model__", "SDF_RESERVED_NAME"),
                                       ("__x__", "SDF_RESERVED_NAME"), ("a::b", "SDF_NAME_WITH_DELIMITER"),
                                       ("", "SDF_EMPTY_NAME")])
def test_top_level_model_name_rules(name: str, code: str) -> None:
    assert codes_of(f'<model name="{name}"><link name="l"/></model>', "1.8") == [code]


@pytest.mark.parametrize("name,code", [("world", "SDF_RESERVED_NAME"), ("__model__", "SDF_RESERVED_NAME"),
                                       ("a::b", "SDF_NAME_WITH_DELIMITER"), ("", "SDF_EMPTY_NAME")])
def test_world_name_rules(name: str, code: str) -> None:
    assert codes_of(f'<world name="{name}"><model name="m"><link name="l"/></model></world>', "1.8") == [code]


def test_top_level_name_error_carries_location() -> None:
    errs = _errors('<sdf version="1.8">\n\n<model name="world"><link name="l"/></model></sdf>')
    assert (errs[0].line, errs[0].element) == (3, "model[name=world]")


def test_top_level_name_version_rules() -> None:
    # '::' is only forbidden from 1.8 on; reserved names in every version (libsdformat refuses
    # a top-level model or world named world or __x__ in 1.6 too)
    assert sdf('<model name="a::b"><link name="l"/></model>', "1.7").name == "a::b"
    for version in ("1.4", "1.6", "1.9"):
        assert codes_of('<model name="world"><link name="l"/></model>', version) == ["SDF_RESERVED_NAME"]
        assert codes_of('<model name="__x__"><link name="l"/></model>', version) == ["SDF_RESERVED_NAME"]
        assert codes_of('<world name="__x__"><model name="m"><link name="l"/></model></world>', version) == \
            ["SDF_RESERVED_NAME"]
    assert codes_of('<model name=""><link name="l"/></model>', "1.4") == ["SDF_EMPTY_NAME"]
    assert codes_of('<world name=""><model name="m"><link name="l"/></model></world>', "1.4") == ["SDF_EMPTY_NAME"]


# --------------------------------------------------------------------------- 4. lights, actors, joint sensors
def test_duplicate_world_lights() -> None:
    body = ('<world name="w"><light name="s" type="point"/><light name="s" type="point"/>'
            '<model name="m"><link name="l"/></model></world>')
    assert codes_of(body, "1.8") == ["SDF_DUPLICATE_LIGHT"]
    assert codes_of(body, "1.4") == ["SDF_DUPLICATE_LIGHT"]


def test_duplicate_world_actors() -> None:
    body = '<world name="w"><actor name="a"/><actor name="a"/><model name="m"><link name="l"/></model></world>'
    assert codes_of(body, "1.8") == ["SDF_DUPLICATE_ACTOR"]


def test_distinct_or_differently_typed_world_lights_and_actors_are_valid() -> None:
    m = sdf('<world name="w"><light name="s" type="point"/><light name="t" type="point"/><actor name="s"/>'
            '<model name="m"><link name="l"/></model></world>', "1.8")
    assert list(m.links) == ["m::l"]


def test_empty_light_name() -> None:
    assert codes_of('<world name="w"><light name="" type="point"/><model name="m"><link name="l"/></model>'
                    '</world>', "1.8") == ["SDF_EMPTY_NAME"]


def test_duplicate_joint_sensors() -> None:
    body = ('<model name="m"><link name="a"/><link name="b"/><joint name="j" type="fixed"><parent>a</parent>'
            '<child>b</child><sensor name="s" type="force_torque"/><sensor name="s" type="force_torque"/>'
            '</joint></model>')
    assert codes_of(body, "1.8") == ["SDF_DUPLICATE_SENSOR"]
    ok = body.replace('<sensor name="s" type="force_torque"/></joint>', '<sensor name="t" type="force_torque"/></joint>')
    assert list(sdf(ok, "1.8").joints) == ["j"]


# --------------------------------------------------------------------------- 5. mimic cycles, unusable numbers
def _mimic_model(mimics: dict[str, str]) -> str:
    out = ['<model name="m"><link name="a"/><link name="b"/><link name="c"/>']
    for name, (p, c) in {"j": ("a", "b"), "k": ("b", "c")}.items():
        mim = f'<mimic joint="{mimics[name]}"/>' if name in mimics else ""
        out.append(f'<joint name="{name}" type="revolute"><parent>{p}</parent><child>{c}</child>'
                   f'<axis><xyz>0 0 1</xyz>{mim}</axis></joint>')
    out.append("</model>")
    return "".join(out)


def test_joint_mimicking_itself_is_an_error() -> None:
    assert codes_of(_mimic_model({"j": "j"}), "1.11") == ["SDF_MIMIC_CYCLE"]


def test_mimic_cycle_is_an_error() -> None:
    assert codes_of(_mimic_model({"j": "k", "k": "j"}), "1.11") == ["SDF_MIMIC_CYCLE"]


def test_mimic_chain_is_valid() -> None:
    m = sdf(_mimic_model({"k": "j"}), "1.11")
    assert [mm.joint for mm in m.joints["k"].mimic] == ["j"]


def test_infinite_resolved_pose_is_an_error_without_numpy_warning() -> None:
    # 1e308 + 1e308 overflows: link k's resolved pose is not finite.
    text = ('<sdf version="1.7">\n<model name="m"><link name="l"><pose>1e308 1e308 0 0 0 0</pose></link>\n'
            '<link name="k"><pose relative_to="l">1e308 0 0 0 0 0</pose></link></model></sdf>')
    errs = _errors_raising_no_warning(text)
    assert [d.code for d in errs] == ["SDF_INVALID"]
    assert (errs[0].line, errs[0].element) == (3, "link[name=k]")


# Both cases have finite link poses. Joint: its origin inv(X_RP) @ X_RJ = -1e308 - 1e308 overflows.
# Shape: link l is at -1e308, its visual posed relative to link k at +1e308, so X_l_visual overflows
# (the model frame on l at X_l_m = T(1e308,0,0) is finite).
OVERFLOWING_JOINT = ('<sdf version="1.7"><model name="m"><link name="a"><pose>-1e308 0 0 0 0 0</pose></link>'
                     '<link name="b"><pose>1e308 0 0 0 0 0</pose></link>'
                     '<joint name="j" type="fixed"><parent>a</parent><child>b</child></joint></model></sdf>')
OVERFLOWING_SHAPE = ('<sdf version="1.7"><model name="m"><link name="k"><pose>1e308 0 0 0 0 0</pose></link>'
                     '<link name="l"><pose>-1e308 0 0 0 0 0</pose><visual name="v"><pose relative_to="k"/>'
                     '<geometry><box><size>1 1 1</size></box></geometry></visual></link></model></sdf>')


@pytest.mark.parametrize("text,element", [(OVERFLOWING_JOINT, "joint[name=j]"), (OVERFLOWING_SHAPE, "visual[name=v]")])
def test_overflowing_joint_origin_or_shape_pose_is_an_error(text: str, element: str) -> None:
    errs = _errors_raising_no_warning(text)
    assert [d.code for d in errs] == ["SDF_INVALID"]
    assert errs[0].element == element


def test_three_joint_mimic_cycle_reported_once() -> None:
    body = ('<model name="m"><link name="a"/><link name="b"/><link name="c"/><link name="d"/>'
            + "".join(f'<joint name="{n}" type="revolute"><parent>{p}</parent><child>{c}</child>'
                      f'<axis><xyz>0 0 1</xyz><mimic joint="{lead}"/></axis></joint>'
                      for n, p, c, lead in (("j", "a", "b", "k"), ("k", "b", "c", "l"), ("l", "c", "d", "j")))
            + "</model>")
    with pytest.raises(ModelError) as info:
        sdf(body, "1.11")
    errs = info.value.errors
    assert [d.code for d in errs] == ["SDF_MIMIC_CYCLE"]
    assert "j -> k -> l -> j" in errs[0].message


def test_second_axis_following_the_first_of_its_own_joint_is_no_cycle() -> None:
    # The cycle test works on joint axes: axis2 of j following axis 1 of j couples two different axes.
    m = sdf('<model name="m"><link name="a"/><link name="b"/><joint name="j" type="universal"><parent>a</parent>'
            '<child>b</child><axis><xyz>1 0 0</xyz></axis><axis2><xyz>0 1 0</xyz><mimic joint="j" axis="axis"/>'
            '</axis2></joint></model>', "1.11")
    [mm] = m.joints["j"].mimic
    assert (mm.joint, mm.dof, mm.leader_dof) == ("j", 1, 0)
