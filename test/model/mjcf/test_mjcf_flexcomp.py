"""``<flexcomp>`` of every type MuJoCo 4.0 builds from attributes (grid, circle, square, disc, box,
cylinder, ellipsoid, direct) and every dof (full, radial, trilinear, quadratic), with pins, each against
MuJoCo itself: the same body names, ``mj_kinematics`` poses at 3 configurations to 1e-9, the same
per-point mass (full, radial), and the same verdict where MuJoCo refuses the flexcomp."""

from __future__ import annotations

import shutil
import struct
import sys
from pathlib import Path

import pytest
from repo_paths import REPO_ROOT

from robot_state_format.errors import ModelError
from robot_state_format.model.loader import load_model_file
from robot_state_format.model.mjcf import read_mjcf

FIXTURES = REPO_ROOT / "test" / "fixtures" / "mjcf" / "flexcomp"
sys.path.insert(0, str(REPO_ROOT / "conformance"))
mujoco = pytest.importorskip("mujoco", reason="mujoco (requirements/test.txt) is the reference of MJCF poses")
import mjcf_ref  # noqa: E402

_COMMON = 'radius="0.01" mass="2" pos="0.1 0.2 0.3" euler="10 20 30"'
_TYPES = ("grid", "circle", "square", "disc", "box", "cylinder", "ellipsoid")
_BUILT = [f'<flexcomp name="f" type="{t}" count="{c}" spacing="0.3 0.5 0.7" dim="{d}" dof="{dof}" {_COMMON}/>'
          for t in _TYPES for d, c in ((1, "5 1 1"), (2, "4 3 1"), (3, "4 3 3"))
          for dof in ("full", "radial", "trilinear", "quadratic")]
_OTHERS = [
    f'<flexcomp name="f" type="direct" point="0 0 0 1 0 0 0 1 0 5 5 5 0 0 1" element="0 1 2 1 2 4" {_COMMON}>'
    '<pin id="1"/></flexcomp>',
    f'<flexcomp name="f" type="direct" point="1 0 0 1 1 0 0 1 0 5 5 5 0 0 1" element="0 1 2 1 2 4" dof="radial" '
    f'{_COMMON}/>',
    f'<flexcomp name="f" type="box" count="3 4 3" spacing="0.3 0.5 0.7" dim="3" {_COMMON}><pin id="2 5"/>'
    '<pin range="7 9"/></flexcomp>',
    f'<flexcomp name="f" type="grid" count="3 4 1" spacing="0.3 0.5 0.7" dim="2" {_COMMON}><pin grid="1 2"/>'
    '<pin gridrange="0 0 0 3"/></flexcomp>',
    f'<flexcomp name="f" type="ellipsoid" count="3 3 3" spacing="0.3 0.5 0.7" dim="3" dof="trilinear" {_COMMON}>'
    '<pin id="0 7"/></flexcomp>',
    f'<frame pos="0 1 0" euler="0 0 30"><flexcomp name="f" type="cylinder" count="3 3 4" spacing="0.3 0.5 0.7" '
    f'dim="2" dof="radial" {_COMMON}/></frame>',
]
_REFUSED = [  # MuJoCo's reason, then the flexcomp
    ("Count too small", '<flexcomp name="f" type="grid" count="0 3 1" spacing="1 1 1" dim="2"/>'),
    ("Count too small", '<flexcomp name="f" type="disc" count="4 3 1" spacing="1 1 1" dim="3" dof="radial"/>'),
    ("Spacing must be larger", '<flexcomp name="f" type="grid" count="3 3 1" spacing="0.01 1 1" radius="0.01"/>'),
    ("No elements were created in grid", '<flexcomp name="f" type="circle" count="3 1 1" spacing="1 1 1" dim="1"/>'),
    ("No elements were created in box", '<flexcomp name="f" type="box" count="4 3 1" spacing="1 1 1" dim="3"/>'),
    ("number of points is 12", '<flexcomp name="f" type="square" count="4 3 3" spacing="1 1 1"/>'),
    ("axis too small", '<flexcomp name="f" type="grid" count="3 3 1" spacing="1 1 1" dim="2" dof="radial"/>'),
    ("Pin grid(range) can only be used", '<flexcomp name="f" type="box" count="3 3 3" spacing="1 1 1" dim="3">'
     '<pin grid="0 0 0"/></flexcomp>'),
    ("not orthonormal", '<flexcomp name="f" type="grid" count="4 3 1" spacing="1 1 1" dim="2" dof="trilinear"/>'),
    ("pinid out of range", '<flexcomp name="f" type="box" count="3 3 3" spacing="1 1 1" dim="3"><pin id="27"/>'
     '</flexcomp>'),
    ("element 2 has point id 7", '<flexcomp name="f" type="direct" point="0 0 0 1 0 0 0 1 0" element="0 1 7"/>'),
]


def _doc(flexcomp: str) -> str:
    return f'<mujoco><worldbody><body name="top" pos="0 0 1"><geom size=".1"/>\n{flexcomp}</body></worldbody></mujoco>'


@pytest.mark.parametrize("flexcomp", _BUILT + _OTHERS)
def test_flexcomp_agrees_with_mujoco(flexcomp: str) -> None:
    text = _doc(flexcomp)
    try:
        m = mujoco.MjModel.from_xml_string(text)
    except ValueError as exc:  # refused by MuJoCo: refused here too, on the flexcomp's line
        with pytest.raises(ModelError) as info:
            read_mjcf(text)
        assert info.value.diagnostics[0].line == 2, (str(exc), info.value)
        return
    model = read_mjcf(text)
    names = {m.body(i).name for i in range(1, m.nbody)}
    assert names <= set(model.links)
    assert {n for n in model.links if "/" not in n} - {"world"} == names  # no body MuJoCo lacks
    count, worst, where = mjcf_ref.pose_errors(model, m, 3, seed=11)
    assert count >= 3 * (m.nbody - 1) and worst <= 1e-9, (worst, where)
    interpolated = 'dof="trilinear"' in flexcomp or 'dof="quadratic"' in flexcomp
    for i in range(2, m.nbody):
        got = model.links[m.body(i).name].inertial
        if interpolated:
            assert got is None  # MuJoCo integrates the node's shape function over the elements: left absent
        else:
            assert got is not None
            assert abs(got.mass - m.body_mass[i]) <= 1e-12


@pytest.mark.parametrize("reason,flexcomp", _REFUSED)
def test_flexcomp_mujoco_refuses_is_refused(reason: str, flexcomp: str) -> None:
    text = _doc(flexcomp)
    with pytest.raises(ValueError, match=reason.split("(")[0]):
        mujoco.MjModel.from_xml_string(text)
    with pytest.raises(ModelError) as info:
        read_mjcf(text)
    d = info.value.diagnostics[0]
    assert d.line == 2 and reason in d.message and d.element is not None, info.value
    assert d.element.startswith("flexcomp") or d.element == "pin", d


def _stl(path: Path, binary: bool) -> None:
    """The cube of cube.obj as an STL (every triangle's own three corners, as STL stores them)."""
    v = [(0.1, 0, 0), (1.3, 0, 0), (1.3, 1, 0), (0.1, 1, 0), (0.1, 0, 1), (1.3, 0, 1), (1.3, 1, 1), (0.1, 1, 1)]
    tris = [(0, 2, 1), (0, 3, 2), (4, 5, 6), (4, 6, 7), (0, 1, 5), (0, 5, 4), (1, 2, 6), (1, 6, 5), (2, 3, 7),
            (2, 7, 6), (3, 0, 4), (3, 4, 7)]
    if binary:
        body = b"".join(struct.pack("<12fH", 0, 0, 0, *v[a], *v[b], *v[c], 0) for a, b, c in tris)
        path.write_bytes(b"\0" * 80 + struct.pack("<I", len(tris)) + body)
    else:
        facets = "".join("facet normal 0 0 0\nouter loop\n" + "".join(f"vertex {' '.join(map(str, v[i]))}\n"
                         for i in t) + "endloop\nendfacet\n" for t in tris)
        path.write_text(f"solid cube\n{facets}endsolid cube\n")


@pytest.mark.parametrize("file", ["cube.obj", "cube.stl", "ascii.stl"])
@pytest.mark.parametrize("attrs", ['dim="2"', 'dim="1" dof="radial" pos="1 1 1"',
                                   'dim="3" origin="0.5 0.5 0.5" scale="2 1 1" pos="1 0 0" euler="0 0 40"',
                                   'dim="2" dof="trilinear"', 'dim="2"><pin id="2"/></flexcomp'])
def test_mesh_flexcomp_agrees_with_mujoco(file: str, attrs: str, tmp_path: Path) -> None:
    shutil.copy(FIXTURES / "cube.obj", tmp_path / "cube.obj")
    _stl(tmp_path / "cube.stl", True)
    _stl(tmp_path / "ascii.stl", False)
    tail = "" if attrs.endswith("</flexcomp") else "/"
    path = tmp_path / "m.xml"
    path.write_text(_doc(f'<flexcomp name="f" type="mesh" file="{file}" radius="0.01" mass="2" {attrs}{tail}>'))
    if file == "ascii.stl":  # MuJoCo reads binary STL only
        with pytest.raises(ValueError, match="ASCII"):
            mujoco.MjModel.from_xml_path(str(path))
        with pytest.raises(ModelError, match="ASCII"):
            load_model_file(path)
        return
    m = mujoco.MjModel.from_xml_path(str(path))
    model = load_model_file(path)
    names = {m.body(i).name for i in range(1, m.nbody)}
    assert names <= set(model.links) and {n for n in model.links if "/" not in n} - {"world"} == names
    count, worst, where = mjcf_ref.pose_errors(model, m, 3, seed=5)
    assert count >= 3 * (m.nbody - 1) and worst <= 1e-9, (worst, where)
    if "trilinear" not in attrs:
        for i in range(2, m.nbody):
            got = model.links[m.body(i).name].inertial
            assert got is not None and abs(got.mass - m.body_mass[i]) <= 1e-12


def test_mesh_flexcomp_of_dim_3_needs_an_origin(tmp_path: Path) -> None:
    shutil.copy(FIXTURES / "cube.obj", tmp_path / "cube.obj")
    path = tmp_path / "m.xml"
    path.write_text(_doc('<flexcomp name="f" type="mesh" file="cube.obj" dim="3" radius="0.01"/>'))
    with pytest.raises(ValueError, match="origin must be specified"):
        mujoco.MjModel.from_xml_path(str(path))
    with pytest.raises(ModelError) as info:
        load_model_file(path)
    d = info.value.diagnostics[0]
    assert d.code == "MJCF_BAD_FLEXCOMP" and "origin must be specified" in d.message and d.line == 2


def test_mesh_flexcomp_of_a_format_not_read_is_refused_naming_it() -> None:
    with pytest.raises(ModelError) as info:
        read_mjcf(_doc('<flexcomp name="f" type="mesh" file="cube.ply" dim="2"/>'))
    d = info.value.diagnostics[0]
    assert d.code == "MJCF_UNSUPPORTED" and "cube.ply" in d.message and d.line == 2


def test_gmsh_flexcomp_is_refused_naming_the_type() -> None:
    with pytest.raises(ModelError) as info:
        read_mjcf(_doc('<flexcomp name="f" type="gmsh" file="cube.msh" dim="3"/>'))
    d = info.value.diagnostics[0]
    assert d.code == "MJCF_UNSUPPORTED" and "type='gmsh'" in d.message and d.line == 2


_GRID = '<flexcomp name="c" type="grid" count="3 2 1" spacing="0.1 0.2 0.3" radius="0.01" dim="2" mass="1"'


@pytest.mark.parametrize("inside", [
    f'{_GRID}><pin id="0"/></flexcomp>',  # pinned points put no mass on the body
    f'{_GRID} rigid="true"/>',
    '<flexcomp name="c" type="grid" count="3 2 2" spacing="0.1 0.2 0.3" radius="0.01" dim="3" dof="trilinear">'
    '<pin id="0"/></flexcomp>',
    '<flexcomp name="c" type="box" count="3 3 3" spacing="0.1 0.2 0.3" radius="0.01" dim="3" dof="radial"/>',
    f'<body name="w">{_GRID}><pin id="0"/></flexcomp></body>',  # a welded child holding one: no mass either
])
def test_a_flexcomp_gives_its_moving_body_no_mass(inside: str) -> None:
    text = f'<mujoco><worldbody>\n<body name="top"><joint/>{inside}</body></worldbody></mujoco>'
    with pytest.raises(ValueError, match="mass and inertia of moving bodies"):
        mujoco.MjModel.from_xml_string(text)
    with pytest.raises(ModelError) as info:
        read_mjcf(text)
    d = info.value.diagnostics[0]
    assert d.code == "MJCF_NO_MASS" and d.line == 2 and "'top'" in d.message, info.value
