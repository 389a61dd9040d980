"""Which files a description may open, what its errors may quote, and how much it may expand to (issue 33).

A description text received over the network (``read_description_text``) opens only ``package://`` files
inside their package; no diagnostic quotes a file's content; every description (network or a user file)
is bounded as a whole (``RSF_MAX_EXPANDED_*``, ``RSF_MAX_LINKS``). A secret file holds ``MARKER``: it
must never appear in an error, a warning, or a model read from the network under the default policy.
"""

from __future__ import annotations

import math
import os
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest
from numpy.testing import assert_allclose

from robot_state_format import limits
from robot_state_format.errors import DiagnosticError, ModelError, RobotStateFormatError, error_text
from robot_state_format.kinematics import fk
from robot_state_format.kinematics.tree import compile_model
from robot_state_format.model import access, load_model, load_model_file
from robot_state_format.model.frames import format_frames_tree, frames_document
from robot_state_format.model.packages import clear_cache
from robot_state_format.model.urdf.gazebo import _converted_links
from robot_state_format.ros.description import XacroPolicy, read_description_text
from robot_state_format.sim.mjcf_writer import build_mjcf
from robot_state_format.usdf.reader import read_world_state
from robot_state_format.usdf.resolve import world_poses
from robot_state_format.view.sources import description_model

MARKER = "SECRETMARKER7731"
URDF_T = ('<robot name="{n}"><link name="{n}_base"/><link name="{n}_arm"/><joint name="{n}_j" type="revolute">'
          '<parent link="{n}_base"/><child link="{n}_arm"/><axis xyz="0 0 1"/>'
          '<limit lower="-1" upper="1" effort="1" velocity="1"/></joint></robot>')
MJCF_T = '<mujoco model="{n}"><worldbody><body name="{n}_body"><geom size="0.1"/></body></worldbody></mujoco>'
SDF_T = '<sdf version="1.9"><model name="{n}"><link name="{n}_link"/></model></sdf>'
TETRA_OBJ = "v 0 0 0\nv 1 0 0\nv 0 1 0\nv 0 0 1\nf 1 2 3\nf 1 2 4\nf 1 3 4\nf 2 3 4\n"  # 4 points, 4 triangles


class Files:
    def __init__(self, root: Path) -> None:
        self.root = root
        self.outside = root / "outside"
        self.pkg = root / "ws" / "goodpkg"


@pytest.fixture()
def files(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Files]:
    f = Files(tmp_path)
    f.outside.mkdir()
    (f.outside / "shadow").write_text(f"root:{MARKER}:19000:0:99999:7:::\n")
    (f.outside / "robot.urdf").write_text(URDF_T.format(n=MARKER))
    (f.outside / "robot.xml").write_text(MJCF_T.format(n=MARKER))
    (f.outside / "mesh.obj").write_text(TETRA_OBJ)
    (f.outside / "m").mkdir()
    (f.outside / "m" / "model.sdf").write_text(SDF_T.format(n=MARKER))
    (f.outside / "m" / "model.config").write_text("<model><sdf version='1.9'>model.sdf</sdf></model>")
    f.pkg.mkdir(parents=True)
    (f.pkg / "package.xml").write_text('<package format="3"><name>goodpkg</name></package>')
    (f.pkg / "arm.urdf").write_text(URDF_T.format(n="pkgarm"))
    (f.pkg / "arm.sdf").write_text(SDF_T.format(n="pkgsdf"))
    (f.pkg / "parts.xml").write_text(MJCF_T.format(n="pkgpart"))
    (f.pkg / "scene.xml").write_text('<mujoco model="scene"><include file="parts.xml"/></mujoco>')
    (f.pkg / "escape.xml").write_text('<mujoco model="esc"><include file="../../outside/robot.xml"/></mujoco>')
    (f.pkg / "tetra.obj").write_text(TETRA_OBJ)
    (f.pkg / "flex.xml").write_text(flexcomp("tetra.obj"))
    (f.pkg / "flexesc.xml").write_text(flexcomp("../../outside/mesh.obj"))
    (f.pkg / "leak.urdf").symlink_to(f.outside / "robot.urdf")
    (f.pkg / "leakdir").symlink_to(f.outside)
    # a package file that is broken and quotes names: its errors must not reach the network
    (f.pkg / "broken.urdf").write_text(f'<robot name="{MARKER}"><link name="{MARKER}"/><link name="{MARKER}"/></robot>')
    monkeypatch.setenv("ROS_PACKAGE_PATH", str(tmp_path / "ws"))
    monkeypatch.setenv("AMENT_PREFIX_PATH", "")
    monkeypatch.chdir(tmp_path)
    clear_cache()
    yield f
    clear_cache()


def dmd(kind: str, uri: str) -> str:
    if kind == "add_directives":
        return f"directives:\n- add_directives:\n    file: {uri}\n"
    return f"directives:\n- add_model:\n    name: m\n    file: {uri}\n"


def sdf_include(uri: str) -> str:
    return f'<sdf version="1.9"><world name="w"><include><uri>{uri}</uri></include></world></sdf>'


def mjcf_include(name: str) -> str:
    return f'<mujoco model="x"><include file="{name}"/></mujoco>'


def mjcf_attach(name: str) -> str:
    return (f'<mujoco model="x"><asset><model name="other" file="{name}"/></asset><worldbody><body name="b">'
            f'<attach model="other" body="{MARKER}_body" prefix="p_"/></body></worldbody></mujoco>')


def flexcomp(file: str, compiler: str = "") -> str:
    """A ``<flexcomp type="mesh">``: MuJoCo reads its points from ``file`` (one body per point, dim 2)."""
    return (f'<mujoco model="flex">{compiler}<worldbody><flexcomp name="f" type="mesh" file="{file}" dim="2"/>'
            '</worldbody></mujoco>')


def hostile(f: Files) -> dict[str, str]:
    out = f.outside
    return {
        "dmd add_directives file://": dmd("add_directives", f"file://{out}/shadow"),
        "dmd add_model file://": dmd("add_model", f"file://{out}/robot.urdf"),
        "dmd add_model package ..": dmd("add_model", "package://goodpkg/../../outside/robot.urdf"),
        "dmd add_model package symlink": dmd("add_model", "package://goodpkg/leak.urdf"),
        "dmd add_model package symlinked dir": dmd("add_model", "package://goodpkg/leakdir/robot.urdf"),
        "dmd add_model model://": dmd("add_model", "model://goodpkg/../../outside/robot.urdf"),
        "dmd add_model unknown package": dmd("add_model", "package://nosuchpkg/robot.urdf"),
        "mjcf include absolute": mjcf_include(f"{out}/robot.xml"),
        "mjcf include relative": mjcf_include("outside/robot.xml"),
        "mjcf include package (MuJoCo has no package://)": mjcf_include("package://goodpkg/parts.xml"),
        "mjcf attach absolute": mjcf_attach(f"{out}/robot.xml"),
        "mjcf attach relative": mjcf_attach("outside/robot.xml"),
        "mjcf flexcomp mesh absolute": flexcomp(f"{out}/mesh.obj"),
        "mjcf flexcomp mesh relative": flexcomp("outside/mesh.obj"),
        "mjcf flexcomp mesh under meshdir": flexcomp("mesh.obj", f'<compiler meshdir="{out}"/>'),
        "sdf include file://": sdf_include(f"file://{out}/m"),
        "sdf include absolute": sdf_include(f"{out}/m"),
        "sdf include relative": sdf_include("outside/m"),
        "sdf include model://": sdf_include("model://m"),
        "sdf include package ..": sdf_include("package://goodpkg/../../outside/m"),
        "sdf include package symlink": sdf_include("package://goodpkg/leakdir/m"),
    }


CASES = ["dmd add_directives file://", "dmd add_model file://", "dmd add_model package ..",
         "dmd add_model package symlink", "dmd add_model package symlinked dir", "dmd add_model model://",
         "dmd add_model unknown package", "mjcf include absolute", "mjcf include relative",
         "mjcf include package (MuJoCo has no package://)", "mjcf attach absolute", "mjcf attach relative",
         "mjcf flexcomp mesh absolute", "mjcf flexcomp mesh relative", "mjcf flexcomp mesh under meshdir",
         "sdf include file://", "sdf include absolute",
         "sdf include relative", "sdf include model://", "sdf include package ..", "sdf include package symlink"]


def network(text: str, files: str = "package") -> DiagnosticError:
    with pytest.raises(DiagnosticError) as info:
        read_description_text(text, "", XacroPolicy(files=files))
    return info.value


@pytest.mark.parametrize("case", CASES)
def test_a_network_description_opens_no_file_outside_a_package(files: Files, case: str,
                                                                monkeypatch: pytest.MonkeyPatch) -> None:
    opened: list[str] = []
    real_read = access.read_input_file
    monkeypatch.setattr(access, "read_input_file", lambda p, *a, **k: opened.append(str(p)) or real_read(p, *a, **k))
    exc = network(hostile(files)[case])
    assert exc.errors[0].code == "MODEL_FILE_REFUSED", error_text(exc)
    assert exc.errors[0].file == "<robot_description>"
    assert MARKER not in str(exc)
    assert "description_files:=any" in str(exc)  # says how to widen it
    assert not [p for p in opened if "outside" in p], opened


@pytest.mark.parametrize("case", [c for c in CASES if "symlink" not in c] + ["package double slash"])
def test_a_network_description_looks_up_no_path_outside_a_package(files: Files, case: str,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    # not even a stat: "package://pkg/../../x" and "package://pkg//x" are refused before any lookup (a
    # package's own symbolic links are followed to decide, so those cases are not here)
    texts = {**hostile(files), "package double slash": dmd("add_model", f"package://goodpkg/{files.outside}/robot.urdf")}
    looked: list[str] = []
    for name in ("stat", "lstat"):
        real = getattr(os, name)
        monkeypatch.setattr(os, name, lambda p, *a, _real=real, **k: looked.append(os.fsdecode(p)) or _real(p, *a, **k))
    exc = network(texts[case])
    monkeypatch.undo()
    assert exc.errors[0].code == "MODEL_FILE_REFUSED", error_text(exc)
    assert not [p for p in looked if str(files.outside) in p], looked


def test_what_a_user_file_names_still_opens(files: Files) -> None:
    """A file the user names (command line, model_file) is not the network's: its references open."""
    scene = files.root / "scene.dmd.yaml"
    scene.write_text(dmd("add_model", f"file://{files.outside}/robot.urdf"))
    assert f"m::{MARKER}_arm" in load_model_file(scene).links
    main = files.root / "main.xml"
    main.write_text(mjcf_include(f"{files.outside}/robot.xml"))
    assert f"{MARKER}_body" in load_model_file(main).links


def test_package_files_load_from_the_network(files: Files) -> None:
    model = read_description_text(dmd("add_model", "package://goodpkg/arm.urdf"), "", XacroPolicy()).model
    assert {"m::pkgarm_base", "m::pkgarm_arm"} <= set(model.links)
    model = read_description_text(sdf_include("package://goodpkg/arm.sdf"), "", XacroPolicy()).model
    assert any(name.endswith("pkgsdf_link") for name in model.links)
    # an MJCF file of the package, and the file it includes beside it (relative, inside the package)
    model = read_description_text(dmd("add_model", "package://goodpkg/scene.xml"), "", XacroPolicy()).model
    assert "m::pkgpart_body" in model.links


def test_a_package_file_cannot_include_its_way_out(files: Files) -> None:
    exc = network(dmd("add_model", "package://goodpkg/escape.xml"))
    assert any(d.code == "MODEL_FILE_REFUSED" for d in exc.errors), error_text(exc)
    assert MARKER not in str(exc)


def test_a_flexcomp_mesh_opens_as_an_included_file_does(files: Files) -> None:
    """A <flexcomp type="mesh"> reads its points from a file, and each point becomes a body whose pose goes
    out on TF: from the network, only inside the package of the file that names it."""
    model = read_description_text(dmd("add_model", "package://goodpkg/flex.xml"), "", XacroPolicy()).model
    assert {f"m::f_{i}" for i in range(4)} <= set(model.links)  # the package's mesh: 4 points, 4 bodies
    exc = network(dmd("add_model", "package://goodpkg/flexesc.xml"))
    assert any(d.code == "MODEL_FILE_REFUSED" for d in exc.errors), error_text(exc)
    # the same files named by the user open as before
    assert "f_3" in load_model_file(files.pkg / "flexesc.xml").links


def test_a_network_description_looks_up_no_asset_file(files: Files, monkeypatch: pytest.MonkeyPatch) -> None:
    """MuJoCo refuses a model whose asset file is missing; a text has no folder, so its assets are not looked
    up: one answer whether the file exists or not, and no lookup a peer could learn from."""
    looked: list[str] = []

    def recording(real):  # type: ignore[no-untyped-def]
        def call(*args, **kwargs):  # type: ignore[no-untyped-def]
            looked.extend(str(a) for a in args[:1])
            return real(*args, **kwargs)
        return call

    for owner, name in ((Path, "is_file"), (Path, "exists"), (Path, "stat"), (os.path, "isfile"),
                        (os.path, "exists"), (os, "stat")):
        monkeypatch.setattr(owner, name, recording(getattr(owner, name)))
    out = files.outside
    answers = []
    for file in (f"{out}/shadow", f"{out}/missing.png", "outside/shadow", "outside/missing.png"):
        for asset in (f'<mesh name="a" file="{file}"/>', f'<hfield name="a" file="{file}"/>',
                      f'<texture name="a" type="2d" file="{file}"/>', f'<skin name="a" file="{file}"/>'):
            text = f'<mujoco model="x"><asset>{asset}</asset><worldbody><body name="b"/></worldbody></mujoco>'
            answers.append(sorted(read_description_text(text, "", XacroPolicy()).model.links))
    assert answers == [["b"]] * 16
    assert not [p for p in looked if "outside" in p or "missing" in p], looked


def test_errors_of_a_package_file_quote_nothing_of_it(files: Files) -> None:
    exc = network(dmd("add_model", "package://goodpkg/broken.urdf"))
    text = str(exc)
    assert MARKER not in text
    assert "message withheld" in text
    codes = {(d.code, d.file) for d in exc.diagnostics}
    assert ("URDF_DUPLICATE_LINK", str(files.pkg / "broken.urdf")) in codes  # code and file stay
    # the same file named by the user: the full message, as before
    scene = files.root / "s.dmd.yaml"
    scene.write_text(dmd("add_model", "package://goodpkg/broken.urdf"))
    with pytest.raises(ModelError) as info:
        load_model_file(scene)
    assert MARKER in str(info.value)


def test_warnings_of_a_package_file_are_withheld(files: Files) -> None:
    model = read_description_text(dmd("add_model", "package://goodpkg/arm.urdf"), "", XacroPolicy()).model
    assert model.warnings  # libsdformat's verdict on a massless URDF: a warning about the package file
    assert all("pkgarm" not in d.message and d.element is None for d in model.warnings if d.file != "<robot_description>")


def test_description_files_any_opens_files_but_still_quotes_none(files: Files) -> None:
    model = read_description_text(mjcf_include(f"{files.outside}/robot.xml"), "", XacroPolicy(files="any")).model
    assert f"{MARKER}_body" in model.links  # the documented risk
    exc = network(dmd("add_directives", f"file://{files.outside}/shadow"), files="any")
    assert MARKER not in str(exc)
    assert exc.errors[0].file == str(files.outside / "shadow")
    exc = network(mjcf_include(f"{files.outside}/shadow"), files="any")
    assert MARKER not in str(exc) and exc.errors[0].code == "XML_SYNTAX"


def test_xacro_from_the_network_includes_no_file(files: Files) -> None:
    text = ('<robot xmlns:xacro="http://www.ros.org/wiki/xacro" name="x">'
            f'<xacro:include filename="{files.outside}/robot.urdf"/><link name="a"/></robot>')
    with pytest.raises(ModelError) as info:  # the confined child may read nothing outside xacro_include_paths
        read_description_text(text, "", XacroPolicy(allow=True))
    assert info.value.errors[0].code == "XACRO_INCLUDE" and "not allowed" in str(info.value)
    assert MARKER not in str(info.value)


def test_a_policy_value_that_is_not_known_is_refused() -> None:
    with pytest.raises(Exception, match="description_files"):
        XacroPolicy.from_params(False, "", "everything")


# ---- bounds on the expanded document ---------------------------------------------------------------
def chain_urdf(name: str, n: int, kind: str = "fixed", mass: bool = False) -> str:
    inertial = ('<inertial><mass value="1"/><inertia ixx="1" ixy="0" ixz="0" iyy="1" iyz="0" izz="1"/></inertial>'
                if mass else "")
    parts = [f'<robot name="{name}">', f'<link name="l0">{inertial}</link>']
    extra = ('<axis xyz="0 0 1"/><limit lower="-1" upper="1" effort="1" velocity="1"/>'
             if kind == "revolute" else "")
    for i in range(1, n):
        parts.append(f'<link name="l{i}">{inertial}</link><joint name="j{i}" type="{kind}"><parent link="l{i - 1}"/>'
                     f'<child link="l{i}"/><origin xyz="0.001 0 0"/>{extra}</joint>')
    parts.append("</robot>")
    return "\n".join(parts)


def test_add_models_are_bounded_together(files: Files, monkeypatch: pytest.MonkeyPatch) -> None:
    (files.pkg / "c40.urdf").write_text(chain_urdf("c", 40))
    monkeypatch.setattr(limits, "MAX_LINKS", 100)
    two = "directives:\n" + "".join(f"- add_model:\n    name: m{i}\n    file: package://goodpkg/c40.urdf\n"
                                    for i in range(2))
    assert len(read_description_text(two, "", XacroPolicy()).model.links) == 80  # 80 <= 100
    twenty = two.replace("m1", "m1").replace("directives:\n", "directives:\n" + "".join(
        f"- add_model:\n    name: k{i}\n    file: package://goodpkg/c40.urdf\n" for i in range(18)))
    exc = network(twenty)
    assert exc.errors[0].code == "MODEL_EXPANSION_TOO_LARGE" and "RSF_MAX_LINKS" in exc.errors[0].message
    assert len(error_text(exc).splitlines()) == 1
    # the same from a user file: the bound is not the network's only
    scene = files.root / "fan.dmd.yaml"
    scene.write_text(twenty.replace("package://goodpkg", f"file://{files.pkg}"))
    with pytest.raises(ModelError, match="RSF_MAX_LINKS"):
        load_model_file(scene)


def test_mjcf_includes_are_bounded_together(files: Files, monkeypatch: pytest.MonkeyPatch) -> None:
    body = "".join(f'<body name="b{{i}}_{k}"/>' for k in range(30))
    for i in range(5):
        (files.root / f"part{i}.xml").write_text(f"<mujoco><worldbody>{body.format(i=i)}</worldbody></mujoco>")
    main = files.root / "fan.xml"
    main.write_text("<mujoco>" + "".join(f'<include file="part{i}.xml"/>' for i in range(5)) + "</mujoco>")
    assert len(load_model_file(main).links) == 150
    monkeypatch.setattr(limits, "MAX_LINKS", 100)
    with pytest.raises(ModelError, match="RSF_MAX_LINKS") as info:
        load_model_file(main)
    assert info.value.errors[0].code == "MODEL_EXPANSION_TOO_LARGE"
    monkeypatch.setattr(limits, "MAX_LINKS", 10_000)
    monkeypatch.setattr(limits, "MAX_EXPANDED_ELEMENTS", 100)
    with pytest.raises(ModelError, match="RSF_MAX_EXPANDED_ELEMENTS"):
        load_model_file(main)
    monkeypatch.setattr(limits, "MAX_EXPANDED_ELEMENTS", 10_000)
    monkeypatch.setattr(limits, "MAX_EXPANDED_BYTES", 2 * len((files.root / "part0.xml").read_bytes()))
    with pytest.raises(ModelError, match="RSF_MAX_EXPANDED_BYTES"):
        load_model_file(main)


def test_sdf_includes_are_bounded_together(files: Files, monkeypatch: pytest.MonkeyPatch) -> None:
    links = "".join(f'<link name="l{k}"/>' for k in range(30))
    (files.pkg / "thirty.sdf").write_text(f'<sdf version="1.9"><model name="t">{links}</model></sdf>')
    world = ('<sdf version="1.9"><world name="w">' + "".join(
        f"<include><uri>package://goodpkg/thirty.sdf</uri><name>t{i}</name></include>" for i in range(5))
        + "</world></sdf>")
    assert len(read_description_text(world, "", XacroPolicy()).model.links) == 150
    monkeypatch.setattr(limits, "MAX_LINKS", 100)
    exc = network(world)
    assert any(d.code == "MODEL_EXPANSION_TOO_LARGE" and "RSF_MAX_LINKS" in d.message for d in exc.errors)


# ---- deep chains: no recursion ---------------------------------------------------------------------
@pytest.mark.parametrize("kind", ["fixed", "revolute"])
def test_a_5000_link_chain_loads_and_places_every_link(kind: str) -> None:
    n = 5000
    model = load_model(chain_urdf("deep", n, kind, mass=True), file="deep.urdf")
    assert len(model.links) == n and not [w for w in model.warnings if w.severity.value == "error"]
    tree = compile_model(model)
    q = np.zeros(len(tree.moving_joint_names))
    poses = fk.forward(tree, q)
    last = poses[tree.link_names.index(f"l{n - 1}")]
    assert_allclose(last[:3, 3], [0.001 * (n - 1), 0.0, 0.0], rtol=0, atol=1e-9)  # 4999 steps of 1 mm
    doc = frames_document(model)
    assert_allclose(doc["frames"][f"deep::l{n - 1}"]["position"], [0.001 * (n - 1), 0.0, 0.0], rtol=0, atol=1e-9)
    text = format_frames_tree(model)
    assert f"link l{n - 1}" in text and len(text) < 1000 * n  # linear in the chain (quadratic: ~200 MB)


def test_fixed_chain_lumps_every_mass_into_the_root() -> None:
    n = 5000
    model = load_model(chain_urdf("deep", n, "fixed", mass=True), file="deep.urdf")
    links = _converted_links(model)
    assert [name for name, _ in links] == ["l0"]
    mass = links[0][1]
    assert mass is not None
    assert mass.mass == n
    assert_allclose(mass.com, [0.001 * (n - 1) / 2, 0.0, 0.0], rtol=0, atol=1e-9)  # mean of 0 .. 4.999 m


def test_a_3000_joint_mimic_chain_follows_its_leader() -> None:
    n = 3000
    parts = ['<robot name="m"><link name="l0"/>']
    for i in range(1, n):
        mimic = f'<mimic joint="j{i - 1}"/>' if i > 1 else ""
        parts.append(f'<link name="l{i}"/><joint name="j{i}" type="revolute"><parent link="l{i - 1}"/>'
                     f'<child link="l{i}"/><axis xyz="0 0 1"/><limit lower="-1" upper="1" effort="1" velocity="1"/>'
                     f"{mimic}</joint>")
    model = load_model("".join(parts) + "</robot>", file="mimic.urdf")
    tree = compile_model(model)
    q, _ = tree.resolve_mapping({"j1": 0.001})
    last = fk.forward(tree, q)[tree.link_names.index(f"l{n - 1}")]
    yaw = 0.001 * (n - 1)  # every joint turns by its leader's 0.001 rad about the same z axis
    assert_allclose(last[:2, 0], [math.cos(yaw), math.sin(yaw)], rtol=0, atol=1e-9)


# ---- non-finite poses, entities ----------------------------------------------------------------------
def test_a_pose_that_overflows_is_refused_by_every_reader() -> None:
    deep = ('<mujoco><worldbody><body name="a" pos="1e308 0 0"><geom size="0.1"/><body name="b" pos="1e308 0 0">'
            '<geom size="0.1"/><body name="c" pos="1e308 0 0"><geom size="0.1"/></body></body></body></worldbody>'
            '</mujoco>')
    with pytest.raises(ModelError) as info:
        load_model(deep, file="inf.xml")
    assert info.value.errors[0].code == "MODEL_NON_FINITE_POSE" and "'b'" in info.value.errors[0].message
    urdf = ('<robot name="r"><link name="a"/><link name="b"/><link name="c"/>'
            '<joint name="j1" type="fixed"><parent link="a"/><child link="b"/><origin xyz="1e308 0 0"/></joint>'
            '<joint name="j2" type="fixed"><parent link="b"/><child link="c"/><origin xyz="1e308 0 0"/></joint></robot>')
    with pytest.raises(ModelError, match="MODEL_NON_FINITE_POSE"):
        load_model(urdf, file="inf.urdf")


def test_an_external_entity_in_an_mjcf_attribute_is_an_entity_error(files: Files) -> None:
    text = (f'<?xml version="1.0"?><!DOCTYPE mujoco [<!ENTITY x SYSTEM "file://{files.outside}/shadow">]>'
            '<mujoco><worldbody><body name="&x;"/></worldbody></mujoco>')
    with pytest.raises(ModelError) as info:
        load_model(text, file="xxe.xml")
    assert info.value.errors[0].code == "XML_ENTITY"
    assert MARKER not in str(info.value)


def test_budget_is_per_read(files: Files, monkeypatch: pytest.MonkeyPatch) -> None:
    """Two reads in a row each have the whole budget (nothing carries over)."""
    (files.pkg / "c60.urdf").write_text(chain_urdf("c", 60))
    monkeypatch.setattr(limits, "MAX_LINKS", 100)
    for _ in range(3):
        assert len(read_description_text(dmd("add_model", "package://goodpkg/c60.urdf"), "", XacroPolicy())
                   .model.links) == 60
    assert os.environ["ROS_PACKAGE_PATH"]


def test_the_mujoco_export_of_a_2000_link_chain_nests_every_body() -> None:
    """sim's MJCF is written with a stack: every body opened is closed, in chain order (MuJoCo itself then
    refuses a tree this deep, in one line)."""
    n = 2000
    layout = build_mjcf(load_model(chain_urdf("deep", n, "revolute", mass=True), file="deep.urdf"))
    opened = [line.split('"')[1] for line in layout.xml.splitlines() if line.lstrip().startswith("<body ")]
    assert opened == [f"l{i}" for i in range(n)]
    assert layout.xml.count("</body>") == n
    lines = layout.xml.splitlines()
    assert lines[lines.index(next(x for x in lines if 'name="l1999"' in x)) + 1].lstrip().startswith("<joint")


def test_a_chain_of_5000_usdf_frames_is_placed() -> None:
    """USDF frames posed relative to each other, deeper than Python's recursion limit: each 1 mm further
    along x (resolved with a loop)."""
    n = 5000
    frames = ['<frame name="f0"><pose>0 0 0 0 0 0</pose></frame>'] + [
        f'<frame name="f{i}"><parent>f{i - 1}</parent><pose>0.001 0 0 0 0 0</pose></frame>' for i in range(1, n)]
    state = read_world_state('<world_state name="w" version="1.0">' + "".join(frames) + "</world_state>").state
    poses = world_poses(state)
    assert_allclose(poses[f"f{n - 1}"][:3, 3], [0.001 * (n - 1), 0.0, 0.0], rtol=0, atol=1e-9)


def test_mesh_references_are_never_opened(files: Files, monkeypatch: pytest.MonkeyPatch) -> None:
    """URDF, SDFormat and MJCF meshes are names in the model: no reader opens them (network or not)."""
    opened: list[str] = []
    real_open = os.open
    monkeypatch.setattr(os, "open", lambda p, *a, **k: opened.append(os.fsdecode(p)) or real_open(p, *a, **k))
    secret = files.outside / "shadow"
    urdf = (f'<robot name="r"><link name="a"><visual><geometry><mesh filename="file://{secret}"/></geometry></visual>'
            f'<collision><geometry><mesh filename="{secret}"/></geometry></collision></link></robot>')
    sdf = (f'<sdf version="1.9"><model name="m"><link name="l"><visual name="v"><geometry><mesh><uri>file://{secret}'
           "</uri></mesh></geometry></visual></link></model></sdf>")
    mjcf = (f'<mujoco><compiler meshdir="{files.outside}"/><asset><mesh name="s" file="{secret}"/>'
            '<mesh name="t" file="shadow"/></asset><worldbody><body name="b"><geom type="mesh" mesh="s"/>'
            "</body></worldbody></mujoco>")
    for text in (urdf, sdf, mjcf):
        model = read_description_text(text, "", XacroPolicy()).model
        assert model.links
    assert not [p for p in opened if "outside" in p], opened


def test_answers_about_a_peers_file_keep_the_projects_words_only() -> None:
    """What a node answers about a file a peer named (replay_file, playback_path, restart_file set at runtime):
    the reader's words may quote the file and are withheld; what to install and the OS's reason are not."""
    from robot_state_format.errors import Diagnostic, UsdfError
    from robot_state_format.lazy_modules import MissingDependencyError
    from robot_state_format.recording.writer import RecordingError, RecordingFormatError
    from robot_state_format.ros.description import file_error_text

    missing = MissingDependencyError.of("mcap")
    assert file_error_text(missing, peer=True) == str(missing) and "pip install mcap" in str(missing)
    io = RecordingError("/r: cannot read recording: is a FIFO (named pipe), not a regular file")
    assert file_error_text(io, peer=True) == str(io)
    fmt = RecordingFormatError(f"/r/a.mcap: not an MCAP file: invalid magic b'{MARKER[:8]}'")
    assert MARKER[:8] not in file_error_text(fmt, peer=True) and MARKER[:8] in file_error_text(fmt, peer=False)
    usdf_io = UsdfError(Diagnostic("USDF_IO", "cannot read: No such file or directory", "/x.usdf", None))
    assert "No such file or directory" in file_error_text(usdf_io, peer=True)
    root = ModelError(Diagnostic("USDF_ROOT", f"root element must be <world_state>, not <{MARKER}>", "/x.xml", 1))
    assert file_error_text(root, peer=True) == "/x.xml:1: [USDF_ROOT]"
    assert MARKER in file_error_text(root, peer=False)


@pytest.mark.parametrize("text", ['<config><secret/></config>',
                                  '<config xmlns:xacro="http://www.ros.org/wiki/xacro"><secret/></config>'])
def test_a_description_of_no_known_format_is_named_like_every_other_refusal(text: str) -> None:
    # the refusal names where the text came from, as the readers' errors do, whatever path it took
    with pytest.raises(ModelError) as info:
        read_description_text(text, "", XacroPolicy())
    (d,) = info.value.diagnostics
    assert (d.code, d.file, d.line) == ("MODEL_UNKNOWN_FORMAT", "<robot_description>", 1)
    with pytest.raises(ModelError) as info:
        description_model(text, "/arm/robot_description")  # a recorded description, in the viewer
    (d,) = info.value.diagnostics
    assert (d.code, d.file, d.line) == ("MODEL_UNKNOWN_FORMAT", "</arm/robot_description>", 1)


def test_a_declared_xacro_namespace_alone_is_read_alike_by_the_node_and_the_viewer() -> None:
    # xacro writes its namespace into the URDF it expands: nothing to evaluate, so both read the robot
    text = '<robot name="r" xmlns:xacro="http://www.ros.org/wiki/xacro"><link name="a"/></robot>'
    assert list(read_description_text(text, "", XacroPolicy()).model.links) == ["a"]
    assert list(description_model(text, "/robot_description").links) == ["a"]
    with_xacro = text.replace('<link name="a"/>', '<xacro:property name="p" value="1"/><link name="a"/>')
    with pytest.raises(RobotStateFormatError, match="holds xacro, which runs code"):
        read_description_text(with_xacro, "", XacroPolicy())
    with pytest.raises(RobotStateFormatError, match="holds xacro, which is never evaluated"):
        description_model(with_xacro, "/robot_description")
