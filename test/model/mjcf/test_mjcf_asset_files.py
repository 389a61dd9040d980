"""Asset files an MJCF model names: MuJoCo refuses the model when one is missing; so does the reader
(checked against the installed ``mujoco``, with the same files in the same folders)."""

from __future__ import annotations

import struct
import sys
from pathlib import Path

import pytest
from repo_paths import REPO_ROOT

from robot_state_format.errors import ModelError
from robot_state_format.model.loader import load_model_file
from robot_state_format.model.mjcf import read_mjcf

mujoco = pytest.importorskip("mujoco")
sys.path.insert(0, str(REPO_ROOT / "conformance"))
import mjcf_ref  # noqa: E402

_BODY = '<worldbody><body><joint/><geom size="1"/></body></worldbody>'


def _stl(path: Path) -> None:
    """A binary STL tetrahedron MuJoCo reads."""
    v = [(0, 0, 0), (1, 0, 0), (0, 1, 0), (0, 0, 1)]
    faces = [(0, 2, 1), (0, 1, 3), (0, 3, 2), (1, 2, 3)]
    data = b"\0" * 80 + struct.pack("<I", len(faces))
    for f in faces:
        data += struct.pack("<3f", 0, 0, 0) + b"".join(struct.pack("<3f", *v[i]) for i in f) + b"\0\0"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)


CASES = {  # name: (main file text, files to create, MuJoCo loads)
    "mesh missing": (f'<mujoco><asset><mesh name="a" file="nope.stl"/></asset>{_BODY}</mujoco>', [], False),
    "mesh present": (f'<mujoco><asset><mesh name="a" file="a.stl"/></asset>{_BODY}</mujoco>', ["a.stl"], True),
    "mesh in meshdir": (f'<mujoco><compiler meshdir="m"/><asset><mesh file="a.stl"/></asset>{_BODY}</mujoco>',
                        ["m/a.stl"], True),
    "mesh beside the main file, meshdir set": (
        f'<mujoco><compiler meshdir="m"/><asset><mesh file="a.stl"/></asset>{_BODY}</mujoco>', ["a.stl"], False),
    "mesh in assetdir": (f'<mujoco><compiler assetdir="x"/><asset><mesh file="a.stl"/></asset>{_BODY}</mujoco>',
                         ["x/a.stl"], True),
    "mesh beside an included file": (f'<mujoco><include file="sub/inc.xml"/>{_BODY}</mujoco>',
                                     ["sub/a.stl", "sub/inc.xml"], True),
    "texture missing": (f'<mujoco><asset><texture name="t" type="2d" file="nope.png"/></asset>{_BODY}</mujoco>',
                        [], False),
    "hfield missing": (f'<mujoco><asset><hfield name="h" file="h.png" size="1 1 1 1"/></asset>{_BODY}</mujoco>',
                       [], False),
    "skin missing": (f'<mujoco><asset><skin name="s" file="s.skn"/></asset>{_BODY}</mujoco>', [], False),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_asset_files_as_mujoco_finds_them(case: str, tmp_path: Path) -> None:
    text, files, loads = CASES[case]
    for f in files:
        if f.endswith(".stl"):
            _stl(tmp_path / f)
        else:
            (tmp_path / f).parent.mkdir(parents=True, exist_ok=True)
            (tmp_path / f).write_text('<mujoco><asset><mesh name="a" file="a.stl"/></asset></mujoco>')
    path = tmp_path / "main.xml"
    path.write_text(text)
    try:
        mujoco.MjModel.from_xml_path(str(path))
        reference = True
    except ValueError as exc:
        reference = False
        assert "opening file" in str(exc)
    assert reference is loads
    if loads:
        load_model_file(path)
        return
    with pytest.raises(ModelError) as err:
        load_model_file(path)
    assert [d.code for d in err.value.errors] == ["MJCF_MISSING_FILE"]
    assert err.value.errors[0].line == 1 and err.value.errors[0].file == str(path)


def test_a_model_given_as_text_has_no_folder_to_look_in() -> None:
    model = read_mjcf(f'<mujoco><asset><mesh name="a" file="nope.stl"/></asset>{_BODY}</mujoco>')
    assert "joint0" in model.joints


def test_an_included_files_asset_beside_the_main_file(tmp_path: Path) -> None:
    """Meta-World's layout: an included file in assets/ names ../textures/x relative to the main file."""
    _stl(tmp_path / "meshes" / "a.stl")
    (tmp_path / "assets").mkdir()
    (tmp_path / "assets" / "deps.xml").write_text('<mujoco><asset><mesh name="a" file="meshes/a.stl"/></asset></mujoco>')
    path = tmp_path / "main.xml"
    path.write_text(f'<mujoco><include file="assets/deps.xml"/>{_BODY}</mujoco>')
    mujoco.MjModel.from_xml_path(str(path))
    load_model_file(path)


_FITTED = """<mujoco><asset><mesh name="a" file="a.stl"/></asset><worldbody>
<body name="b" pos="0 0 1"><joint name="j" axis="0 1 0"/><geom type="{gtype}" mesh="a"{extra}/><site name="s" pos=".1 0 0"/>
<body name="c" pos="0 .2 0"><joint name="k"/><geom size=".05"/><site name="t" pos="0 0 .1"/></body></body>
</worldbody></mujoco>"""


@pytest.mark.parametrize("gtype", ["sphere", "capsule", "cylinder", "ellipsoid", "box"])
def test_a_primitive_naming_a_mesh_is_fitted_to_it_as_mujoco_does(gtype: str, tmp_path: Path) -> None:
    _stl(tmp_path / "a.stl")
    path = tmp_path / "m.xml"
    # no size, or one MuJoCo ignores: it fits the primitive to the mesh (as real robots' collision classes do)
    for extra in ("", ' size="0.5 0.5 0.5"'):
        path.write_text(_FITTED.format(gtype=gtype, extra=extra))
        model = load_model_file(path)
        (w,) = model.warnings
        assert w.code == "MJCF_FITTED_PRIMITIVE" and w.line == 2
        (visual,) = model.links["b"].visuals
        assert visual.geometry.kind == "mesh" and Path(visual.geometry.filename or "").name == "a.stl"
        count, worst, where = mjcf_ref.pose_errors(model, mujoco.MjModel.from_xml_path(str(path)), 3)
        assert count > 0 and worst < 1e-9, where
    # and with fromto, refused by both
    path.write_text(_FITTED.format(gtype=gtype, extra=' fromto="0 0 0 0 0 1"'))
    with pytest.raises(ValueError, match="fromto"):
        mujoco.MjModel.from_xml_path(str(path))
    with pytest.raises(ModelError, match="fromto cannot be used with mesh geom"):
        load_model_file(path)


@pytest.mark.parametrize("geom", ['<geom type="mesh" mesh="a"/>', '<geom type="capsule" mesh="a"/>'])
def test_align_on_a_body_of_one_mesh_geom_is_said_not_applied(geom: str, tmp_path: Path) -> None:
    # MuJoCo moves a mesh geom's frame to the mesh's own inertial frame (from its vertices, which the
    # reader does not read): <freejoint align> then moves the body there; the reader says it cannot
    _stl(tmp_path / "a.stl")
    path = tmp_path / "m.xml"
    path.write_text(f'<mujoco><asset><mesh name="a" file="a.stl"/></asset><worldbody><body name="b" pos="0 0 1">'
                    f'<freejoint align="true"/>{geom}<site name="s" pos=".1 .2 .3"/></body></worldbody></mujoco>')
    model = load_model_file(path)
    assert "MJCF_ALIGN_NOT_READ" in [w.code for w in model.warnings]
    _, worst, _ = mjcf_ref.pose_errors(model, mujoco.MjModel.from_xml_path(str(path)), 3)
    assert worst > 0.1  # what the warning is about: these poses are not MuJoCo's
