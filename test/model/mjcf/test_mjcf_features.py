"""MJCF features MuJoCo 4.0 reads, each against MuJoCo itself (issue 36): includes (``<mujocoinclude>``
roots, the nested search order), ``<freejoint align>``, ``<replicate>``, ``<attach>``, ``<flexcomp>``,
sites named like bodies, and the elements MuJoCo 4.0 refuses (``<composite>``). Every fixture is loaded
by ``mujoco`` and compared body by body and site by site with ``mj_kinematics`` at random configurations."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from repo_paths import REPO_ROOT

from robot_state_format.errors import ModelError
from robot_state_format.model.loader import load_model_file
from robot_state_format.model.mjcf import read_mjcf

ROOT = REPO_ROOT
FIXTURES = ROOT / "test" / "fixtures" / "mjcf"
sys.path.insert(0, str(ROOT / "conformance"))

mujoco = pytest.importorskip("mujoco", reason="mujoco (requirements/test.txt) is the reference of MJCF poses")
import mjcf_ref  # noqa: E402


def _agree(path: Path, configs: int = 4) -> None:
    m = mujoco.MjModel.from_xml_path(str(path))
    model = load_model_file(path)
    count, worst, where = mjcf_ref.pose_errors(model, m, configs, seed=7)
    assert count >= configs * (m.nbody - 1 + m.nsite)
    assert worst <= 1e-9, (worst, where)


def _refused_by_both(text: str, code: str, tmp_path: Path) -> ModelError:
    path = tmp_path / "m.xml"
    path.write_text(text)
    with pytest.raises(ValueError):
        mujoco.MjModel.from_xml_path(str(path))
    with pytest.raises(ModelError) as info:
        load_model_file(path)
    assert info.value.diagnostics[0].code == code, info.value
    return info.value


def test_include_roots_and_nested_search() -> None:
    path = FIXTURES / "include_search" / "robot.xml"
    _agree(path)
    model = load_model_file(path)
    # the main folder's shadow.xml wins over parts/shadow.xml; tip.xml is found beside hand.xml
    assert "shadow_main" in model.frames and "shadow_parts" not in model.frames
    assert model.frames["tip"].attached_to == "hand"
    assert model.frames["tip"].source is not None and model.frames["tip"].source.file.endswith("tip.xml")


def test_include_found_nowhere_names_the_including_file(tmp_path: Path) -> None:
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "a.xml").write_text('<mujocoinclude>\n<include file="nope.xml"/></mujocoinclude>')
    text = '<mujoco><worldbody><include file="sub/a.xml"/></worldbody></mujoco>'
    err = _refused_by_both(text, "MJCF_INCLUDE", tmp_path)
    d = err.diagnostics[0]
    assert d.file is not None and d.file.endswith("a.xml") and d.line == 2


@pytest.mark.parametrize("element", [
    '<composite type="grid" count="3 3 1" spacing="0.1"><geom size=".01"/></composite>',
    '<skin/>', '<flex/>'])
def test_elements_mujoco_4_no_longer_knows(element: str, tmp_path: Path) -> None:
    text = f'<mujoco><worldbody><body name="b">\n{element}<geom size="1"/></body></worldbody></mujoco>'
    err = _refused_by_both(text, "MJCF_UNKNOWN_ELEMENT", tmp_path)
    assert err.diagnostics[0].line == 2
    assert len(str(err.diagnostics[0]).splitlines()) == 1


def test_site_named_like_a_body_keeps_a_stable_name() -> None:
    text = """<mujoco><worldbody><body name="hand"><joint/><geom size="0.1"/>
      <site name="hand" pos="0 0 0.1"/><site name="tip" pos="0 0 0.2"/></body>
      <body name="tip_site"><geom size="0.1"/></body></worldbody></mujoco>"""
    model = read_mjcf(text)
    assert model.frames["hand_site"].attached_to == "hand"
    assert [w.code for w in model.warnings if w.code == "MJCF_NAME_CLASH"] == ["MJCF_NAME_CLASH"]
    # a site whose name is free keeps it; one whose NAME_site is taken too gets NAME_site_
    assert model.frames["tip"].attached_to == "hand"
    text2 = """<mujoco><worldbody><body name="hand"><joint/><geom size="0.1"/><site name="hand"/></body>
      <body name="hand_site"><geom size="0.1"/><site name="s2"/></body></worldbody></mujoco>"""
    model2 = read_mjcf(text2)
    assert model2.frames["hand_site_"].attached_to == "hand" and "hand_site" in model2.links


def test_freejoint_align_moves_the_body_onto_its_inertial_frame() -> None:
    path = FIXTURES / "features" / "freejoint_align.xml"
    _agree(path)
    m = mujoco.MjModel.from_xml_path(str(path))
    assert abs(m.body("inertial").ipos).max() == 0.0  # MuJoCo aligned it: the check above is not vacuous
    assert abs(m.body("not_aligned").ipos - [0.3, 0, 0]).max() == 0.0


@pytest.mark.parametrize("geoms", [
    '<geom type="box" size=".1 .2 .3" pos="0.1 0 0" euler="10 20 30"/><geom size=".1" pos="0 .3 0"/>',
    '<geom type="box" size=".1 .2 .3"/><geom type="capsule" size=".1 .3" pos="0 .3 0" euler="0 90 0"/>',
    '<inertial pos="0 0.1 0" mass="1" fullinertia="3 2.5 2 0.1 0.2 0.3"/>',
    '<inertial pos="0 0 0" mass="1" fullinertia="1 2 3 0 0 0"/>'])
def test_freejoint_align_with_principal_axes(geoms: str, tmp_path: Path) -> None:
    """The principal axes of a full inertia or of several geoms, ordered and signed as MuJoCo's compiler
    orders them (within 5e-8: its Jacobi iteration stops at a slightly different rotation)."""
    path = tmp_path / "m.xml"
    path.write_text(f'<mujoco><worldbody><body name="b" pos="1 2 3" euler="30 20 10"><freejoint align="true"/>'
                    f'{geoms}<site name="s" pos="0.3 0.1 0"/></body></worldbody></mujoco>')
    m = mujoco.MjModel.from_xml_path(str(path))
    count, worst, where = mjcf_ref.pose_errors(load_model_file(path), m, 3, seed=1)
    assert count == 6 and worst <= 1e-9, (worst, where)


def test_replicate_expands_as_mujoco_does() -> None:
    path = FIXTURES / "features" / "replicate.xml"
    _agree(path)
    m = mujoco.MjModel.from_xml_path(str(path))
    model = load_model_file(path)
    mj_bodies = {m.body(i).name for i in range(1, m.nbody)}
    assert {"b0", "b1", "b2", "c-00", "c-10", "c-12", "p"} <= mj_bodies <= set(model.links)
    assert {m.site(i).name for i in range(m.nsite)} <= set(model.frames)  # ps00 .. ps10: two digits
    assert {m.joint(i).name for i in range(m.njnt)} == set(model.joints) - {j for j in model.joints
                                                                           if j.endswith("_fixed")}


BOMB = """<mujoco><worldbody>
<replicate count="1000"><replicate count="1000"><replicate count="1000"><body><geom size="1"/></body>
</replicate></replicate></replicate></worldbody></mujoco>"""


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    return subprocess.run([sys.executable, "-m", "robot_state_format", *args], capture_output=True, text=True,
                          env=env, timeout=120, cwd=ROOT)


def test_replicate_bomb_is_refused_before_mujoco_sees_it(tmp_path: Path) -> None:
    """1e9 bodies: refused from the counts in one line, by the reader, `sim run --engine mujoco` and
    `state export --to mujoco-keyframe` (MuJoCo itself would try to build them)."""
    bomb = tmp_path / "bomb.xml"
    bomb.write_text(BOMB)
    with pytest.raises(ModelError) as info:
        load_model_file(bomb)
    d = info.value.diagnostics[0]
    assert (d.code, d.line) == ("MJCF_TOO_LARGE", 2) and "3001001002 elements" in d.message
    state = tmp_path / "s.usdf"
    made = _cli("state", "from-model", str(ROOT / "robot_state_format" / "samples" / "arm2_site.xml"),
                "--positions", "{}", "-o", str(state))
    assert made.returncode == 0, made.stderr
    for args in (("check", str(bomb)), ("sim", "run", str(bomb), "--engine", "mujoco", "--steps", "2", "--out",
                                        str(tmp_path / "out")),
                 ("state", "export", str(state), "--model", str(bomb), "--to", "mujoco-keyframe")):
        proc = _cli(*args)
        assert proc.returncode == 1, (args, proc.stderr)
        assert "[MJCF_TOO_LARGE]" in proc.stderr and ":2:" in proc.stderr, proc.stderr


def test_attach_places_another_models_body_as_mujoco_does() -> None:
    path = FIXTURES / "attach" / "arm.xml"
    _agree(path)
    m = mujoco.MjModel.from_xml_path(str(path))
    model = load_model_file(path)
    assert {"g_hand", "g_left", "g_right", "x-left"} <= {m.body(i).name for i in range(2, m.nbody)} - {""} \
        <= set(model.links)
    assert "body4" in model.links  # unnamed, numbered by MuJoCo's body id
    assert model.joints["g_lj"].type.value == "prismatic" and model.joints["g_rj"].limits is not None


@pytest.mark.parametrize("attach,code", [
    ('<attach model="g" body="nope" prefix="p"/>', "MJCF_ATTACH"),
    ('<attach model="nope" body="hand" prefix="p"/>', "MJCF_ATTACH"),
    ('<attach model="g" body="hand" prefix="p"/><attach model="g" body="hand" prefix="p"/>', "MJCF_DUPLICATE_NAME"),
])
def test_attach_refusals_are_mujocos(attach: str, code: str, tmp_path: Path) -> None:
    (tmp_path / "gripper.xml").write_text((FIXTURES / "attach" / "gripper.xml").read_text())
    text = f'<mujoco><asset><model name="g" file="gripper.xml"/></asset><worldbody><body name="b">' \
           f'<geom size="1"/>\n{attach}</body></worldbody></mujoco>'
    _refused_by_both(text, code, tmp_path)


def test_a_model_attaching_itself_is_refused(tmp_path: Path) -> None:
    """MuJoCo 4.0 crashes on it (not run here); the reader refuses it in one line."""
    path = tmp_path / "self.xml"
    path.write_text('<mujoco><asset><model name="me" file="self.xml"/></asset><worldbody><body name="b">'
                    '<geom size="1"/>\n<attach model="me" body="b" prefix="p"/></body></worldbody></mujoco>')
    with pytest.raises(ModelError) as info:
        load_model_file(path)
    assert info.value.diagnostics[0].code == "MJCF_ATTACH" and "attaches itself" in info.value.diagnostics[0].message


def test_flexcomp_makes_mujocos_bodies() -> None:
    path = FIXTURES / "features" / "flexcomp.xml"
    _agree(path)
    m = mujoco.MjModel.from_xml_path(str(path))
    names = {m.body(i).name for i in range(1, m.nbody)}
    assert {"cloth_1", "cloth_4", "tri_0_0_0", "q_2_2_1", "d_1", "inframe_3"} <= names <= set(load_model_file(path).links)
    assert "cloth_0" not in names and "cloth_5" not in names and "tri_0_1_1" not in names  # pinned


def test_flexcomp_in_a_moving_body_needs_a_pin(tmp_path: Path) -> None:
    text = ('<mujoco><worldbody><body name="top"><joint/><geom size=".1"/>\n<flexcomp name="c" type="grid" '
            'count="3 2 1" spacing="0.1 0.2 0.3" radius="0.01" dim="2" mass="1"/></body></worldbody></mujoco>')
    err = _refused_by_both(text, "MJCF_FLEX_PIN", tmp_path)
    assert err.diagnostics[0].line == 2


def test_an_element_mujoco_does_not_know_at_the_top_is_refused(tmp_path: Path) -> None:
    """A file meant to be included (a <texture> straight under <mujoco>) read on its own."""
    text = '<mujoco>\n<texture type="skybox" builtin="gradient" width="8" height="8"/></mujoco>'
    assert _refused_by_both(text, "MJCF_UNKNOWN_ELEMENT", tmp_path).diagnostics[0].line == 2
    # a <body> straight under <mujoco> (Gymnasium-Robotics' robot.xml fragments): loaded and ignored by both
    text = '<mujoco><body name="x"><geom size="1"/></body><worldbody/></mujoco>'
    assert mujoco.MjModel.from_xml_string(text).nbody == 1
    assert read_mjcf(text).links == {}


def test_an_attribute_of_default_other_than_class_is_refused(tmp_path: Path) -> None:
    text = '<mujoco><default>\n<default class="hand" group="1"><geom size="1"/></default></default></mujoco>'
    assert _refused_by_both(text, "MJCF_UNKNOWN_ATTRIBUTE", tmp_path).diagnostics[0].line == 2


@pytest.mark.parametrize("bodies,refused", [
    ('<body><joint/></body>', True),
    ('<body><joint/><body><geom size=".1"/></body></body>', False),  # a welded child carries the mass
    ('<body><joint/><body><joint/><geom size=".1"/></body></body>', True),  # a moving child does not
    ('<body><site/></body>', False),
    ('<body><joint/><inertial pos="0 0 0" mass="0" diaginertia="1 1 1"/></body>', True),
    ('<body><joint/><geom size=".1" mass="0"/></body>', True),
    ('<body><joint/><geom size=".1" contype="0" conaffinity="0" group="3"/></body>', False),
    ('<body><joint/><geom size=".1" group="6"/></body>', True),
    ('<body><freejoint/></body>', True),
    ('<body><joint type="slide"/><frame><body><geom size=".1"/></body></frame></body>', False),
])
def test_a_moving_body_without_mass_is_refused_as_mujoco_refuses_it(bodies: str, refused: bool,
                                                                    tmp_path: Path) -> None:
    text = f"<mujoco><worldbody>\n{bodies}</worldbody></mujoco>"
    if refused:
        assert _refused_by_both(text, "MJCF_NO_MASS", tmp_path).diagnostics[0].line == 2
    else:
        mujoco.MjModel.from_xml_string(text)
        read_mjcf(text)


@pytest.mark.parametrize("element", [
    '<camera pos="0 0 .2 1"/>', '<camera pos="-.9 .5"/>', '<light diffuse="1 1 1 1"/>',
    '<body><geom size="1" condim="1e-400"/></body>', '<body><geom size="1" conaffinity="-inf"/></body>',
    '<body><geom size="1" group="1.5"/></body>'])
def test_counts_and_integers_as_mujoco_reads_them(element: str, tmp_path: Path) -> None:
    _refused_by_both(f"<mujoco><worldbody>\n{element}</worldbody></mujoco>", "MJCF_BAD_VALUE", tmp_path)


def test_attach_inside_replicate_takes_the_copy_suffix(tmp_path: Path) -> None:
    """MuJoCo names what an <attach> in copy i brings in PREFIX + name + SEP + i (mujoco_warp's n_humanoid)."""
    (tmp_path / "arm.xml").write_text(
        '<mujoco><worldbody><body name="base"><joint name="j" axis="0 1 0"/><geom size=".1"/>'
        '<body name="tip" pos="0 0 .5"><joint name="k"/><geom size=".1"/><site name="s"/></body></body>'
        '</worldbody></mujoco>')
    path = tmp_path / "main.xml"
    path.write_text('<mujoco><asset><model name="arm" file="arm.xml"/></asset><worldbody>'
                    '<replicate count="3" euler="0 0 40" sep="-"><frame pos="0 -1 0">'
                    '<attach model="arm" body="base" prefix="a_"/></frame></replicate></worldbody></mujoco>')
    _agree(path)
    model = load_model_file(path)
    assert {"a_base-0", "a_tip-2"} <= set(model.links) and {"a_j-1", "a_k-2"} <= set(model.joints)


@pytest.mark.parametrize("where", ["world", "body"])
def test_attach_without_body_places_the_whole_model(where: str, tmp_path: Path) -> None:
    """<attach> without body= puts everything in the model's world body at the attach point (MuJoCo 4.0)."""
    free = '<body name="b" pos="0 0 2" euler="0 30 0"><freejoint/><geom size=".1"/></body>' if where == "world" else ""
    (tmp_path / "child.xml").write_text(
        '<mujoco model="child"><compiler angle="radian"/><worldbody><site name="ws" pos="0 0 1"/>'
        '<body name="a" pos="1 0 0" euler="0.3 0 0"><joint name="ja"/><geom size=".1"/><site name="sa" pos="0 .2 0"/>'
        f'<body name="a2" pos="0 1 0"><joint name="ja2" type="slide"/><geom size=".1"/></body></body>{free}'
        '</worldbody></mujoco>')
    attach = '<attach model="c" prefix="p_"/>'
    inner = f'<body name="base" pos="0 0 1" euler="10 20 30"><joint name="j"/><geom size=".1"/>{attach}</body>' \
        if where == "body" else f'<frame pos="3 0 0" euler="0 0 45">{attach}</frame>'
    path = tmp_path / "main.xml"
    path.write_text(f'<mujoco><asset><model name="c" file="child.xml"/></asset><worldbody>{inner}</worldbody></mujoco>')
    _agree(path)
    model = load_model_file(path)
    assert {"p_a", "p_a2"} <= set(model.links) and {"p_ja", "p_ja2"} <= set(model.joints)
    assert "p_ws" in model.frames and "p_sa" in model.frames


@pytest.mark.parametrize(("child", "attach", "loads"), [
    # an attached moving body without mass: refused by both (MJCF_NO_MASS, in the attached file)
    ('<body name="a" pos="1 0 0"><joint/><geom size=".1"/><body name="a2"><joint/><site name="s"/></body></body>',
     '<attach model="c" body="a" prefix="p_"/>', False),
    ('<body name="a" pos="1 0 0"><joint/><geom size=".1"/><body name="a2"><joint/><site name="s"/></body></body>',
     '<geom size="1"/><attach model="c" prefix="p_"/>', False),
    # the body holding the attach takes the mass of an attached body welded to it: both load
    ('<body name="a" pos="1 0 0"><geom size=".1"/><body name="a2"><joint/><geom size=".1"/></body></body>',
     '<attach model="c" body="a" prefix="p_"/>', True),
])
def test_attached_bodies_without_mass(child: str, attach: str, loads: bool, tmp_path: Path) -> None:
    (tmp_path / "child.xml").write_text(f"<mujoco><worldbody>\n{child}</worldbody></mujoco>")
    path = tmp_path / "main.xml"
    path.write_text('<mujoco><asset><model name="c" file="child.xml"/></asset><worldbody>'
                    f'<body name="base"><joint/>{attach}</body></worldbody></mujoco>')
    if loads:
        _agree(path)
        return
    with pytest.raises(ValueError, match="mass and inertia"):
        mujoco.MjModel.from_xml_path(str(path))
    with pytest.raises(ModelError) as err:
        load_model_file(path)
    d = err.value.errors[0]
    assert d.code == "MJCF_NO_MASS" and d.file == str(tmp_path / "child.xml") and d.line == 2
