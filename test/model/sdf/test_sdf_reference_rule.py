"""libsdformat's verdict is the rule: test/fixtures/sdf/reference/{loads,refused} hold one small file
per disagreement class (includes of lights and actors, +-inf limits, shapes without geometry, reserved
names and joints to a world child in every version, several models, duplicate worlds, invalid inertia,
...), sorted by what libsdformat 12 (``sdf::Root::Load``) does with them.

The reader must give the same verdict. Where libsdformat-dev and g++ are installed, the reference
program ``conformance/sdf_ref`` is built and run too: its verdict must be the directory's, and for the
files that load, every model, link, joint and frame must be where libsdformat puts it (1e-9).
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

import numpy as np
import pytest
from repo_paths import REPO_ROOT, TEST_DIR

from robot_state_format.errors import ModelError
from robot_state_format.model.frames import frames_document, joint_frame_keys
from robot_state_format.model.loader import load_model, load_model_file
from robot_state_format.model.types import Model

ROOT = REPO_ROOT
sys.path.insert(0, str(ROOT / "conformance"))
from references import run_sdf_ref, sdf_ref_path  # noqa: E402

REF = TEST_DIR / "fixtures" / "sdf" / "reference"
MODELS = [str(REF / "models")]
LOADS = sorted((REF / "loads").glob("*.sdf"))
REFUSED = sorted((REF / "refused").glob("*.sdf"))
NO_SDF_REF = "libsdformat's reference program needs libsdformat-dev (12.x), pkg-config and g++"


@pytest.fixture(scope="module")
def sdf_ref() -> str:
    exe = sdf_ref_path()
    if exe is None:
        pytest.skip(NO_SDF_REF)
    return exe


@pytest.mark.parametrize("path", LOADS, ids=lambda p: p.stem)
def test_loads(path: Path) -> None:
    load_model_file(path, search_paths=MODELS)


@pytest.mark.parametrize("path", REFUSED, ids=lambda p: p.stem)
def test_refused(path: Path) -> None:
    with pytest.raises(ModelError) as info:
        load_model_file(path, search_paths=MODELS)
    assert all(d.file and d.line for d in info.value.errors), info.value


def _quat_matrix(q: list[float]) -> np.ndarray:
    x, y, z, w = q
    return np.array([[1 - 2 * (y * y + z * z), 2 * (x * y - z * w), 2 * (x * z + y * w)],
                     [2 * (x * y + z * w), 1 - 2 * (x * x + z * z), 2 * (y * z - x * w)],
                     [2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x * x + y * y)]])


def _left_out_joints(model: Model) -> set[str]:
    """The scoped names of the joints a warning says were left out (libsdformat 12 loads them unchecked)."""
    out = set()
    for w in model.warnings:
        m = re.match(r"joint '([^']+)': .*: the joint is left out$", w.message)
        if m:
            out.add(model.scoped(m.group(1)))
    return out


@pytest.mark.parametrize("path", LOADS + REFUSED, ids=lambda p: f"{p.parent.name}/{p.stem}")
def test_libsdformat_agrees(path: Path, sdf_ref: str) -> None:
    ref = run_sdf_ref(sdf_ref, path, MODELS)
    assert ref.loads == (path.parent.name == "loads"), ref.errors
    if not ref.loads:
        return
    model = load_model_file(path, search_paths=MODELS)
    doc = frames_document(model)["frames"]
    joints = {model.scoped(n): k for n, k in joint_frame_keys(model).items()}
    left_out = _left_out_joints(model)
    for e in ref.entities:
        if e["kind"] == "joint" and e["name"] in left_out:
            assert e["name"] not in joints
            continue
        mine = doc[joints.get(e["name"], e["name"]) if e["kind"] == "joint" else e["name"]]
        np.testing.assert_allclose(mine["position"], e["position"], atol=1e-9, err_msg=e["name"], rtol=0)
        np.testing.assert_allclose(_quat_matrix(mine["quaternion"]), _quat_matrix(e["quaternion"]), atol=1e-9, rtol=0)


def test_includes_of_lights_and_actors_are_ignored_with_a_warning() -> None:
    model = load_model_file(REF / "loads" / "include_light.sdf", search_paths=MODELS)
    assert [w.code for w in model.warnings] == ["SDF_INCLUDE_NOT_A_MODEL"]
    assert model.models == {} or all(not m for m in model.models if m)


def test_infinite_limits_mean_unlimited() -> None:
    model = load_model_file(REF / "loads" / "inf_limits.sdf")
    lim = model.joints["j"].limits
    assert lim is not None and (lim.lower, lim.upper) == (None, None)


def test_shapes_without_geometry_are_dropped_with_a_warning() -> None:
    for name in ("visual_no_geometry", "visual_empty_geometry"):
        model = load_model_file(REF / "loads" / f"{name}.sdf")
        assert [w.code for w in model.warnings] == ["SDF_MISSING_ELEMENT"] * 2
        assert model.links["a"].visuals == [] and model.links["a"].collisions == []


def test_invalid_inertia_names_the_inertial() -> None:
    with pytest.raises(ModelError) as info:
        load_model_file(REF / "refused" / "inertia_triangle.sdf")
    (d,) = info.value.errors
    assert d.code == "SDF_INVALID_INERTIA" and d.line == 3 and d.element == "inertial"


def test_unsupported_version_reads_as_1_9_with_a_warning() -> None:
    # libsdformat 12 reads any version it has no conversion for as its own, 1.9
    model = load_model_file(REF / "loads" / "version_0.sdf")
    assert [w.code for w in model.warnings] == ["SDF_UNSUPPORTED_VERSION"] and model.version == "1.9"
    assert model.links["a"].pose[0, 3] == 1.0


def test_nan_limits_mean_unlimited_with_a_warning() -> None:
    # libsdformat 12 reads nan in a joint limit (std::stod); a nan bound bounds nothing
    model = load_model_file(REF / "loads" / "nan_limits.sdf")
    lim = model.joints["j"].limits
    assert lim is not None and (lim.lower, lim.upper, lim.effort) == (None, None, None)
    assert [w.code for w in model.warnings] == ["SDF_NAN_VALUE"] * 3


def test_underflowing_numbers_are_refused_as_libsdformat_refuses_them() -> None:
    for name, element in (("limit_underflow", "lower"), ("pose_subnormal", "pose")):
        with pytest.raises(ModelError) as info:
            load_model_file(REF / "refused" / f"{name}.sdf")
        (d,) = info.value.errors
        assert d.code == "SDF_BAD_VALUE" and d.line == 3 and d.element == element and "underflows" in d.message


# libsdformat 12's verdict on versions it does not know, measured with sdf_ref: loads (as 1.9) or aborts
VERSIONS = {"-inf": True, "+inf": True, "-": True, "": True, "-1": True, "0": True, "1e400": True, "2.0": True,
            "1.12": True, "0.9": True, "1a": True, "1.": True, "1.2.3.4": True, "1. 2": True, "1.9+x": True,
            "inf": False, "nan": False, "abc": False, " -inf": False, " ": False, "a.b": False, ".5": False,
            "1..2": False, "1.a": False, "a1": False}


@pytest.mark.parametrize("version", sorted(VERSIONS))
def test_unknown_versions_follow_libsdformat(version: str, tmp_path: Path) -> None:
    path = tmp_path / "v.sdf"
    path.write_text(f'<?xml version="1.0"?>\n<sdf version="{version}"><model name="m"><link name="l"/></model></sdf>\n')
    if VERSIONS[version]:
        model = load_model_file(path)
        assert [w.code for w in model.warnings] == ["SDF_UNSUPPORTED_VERSION"] and model.version == "1.9"
    else:
        with pytest.raises(ModelError) as info:
            load_model_file(path)
        assert info.value.code == "SDF_UNSUPPORTED_VERSION"


@pytest.mark.parametrize("name", ["nested_joint_parent_in_enclosing_model", "nested_joint_parent_missing_in_world",
                                  "nested_joint_parent_on_child", "nested_joint_parent_model_frame"])
def test_a_nested_joint_whose_parent_does_not_resolve_is_left_out_with_a_warning(name: str) -> None:
    # libsdformat 12 checks the parents of the outermost models' joints only; Gazebo then leaves the joint out
    path = REF / "loads" / f"{name}.sdf"
    model = load_model_file(path, search_paths=MODELS)
    (w,) = [w for w in model.warnings if w.message.endswith("the joint is left out")]
    assert w.code.startswith("SDF_JOINT_") and w.file == str(path) and w.line is not None
    assert not any(n.endswith("::j") or n == "j" for n in model.joints), model.joints
    # the other joints stay (every link's pose against libsdformat's: test_libsdformat_agrees)
    assert list(model.joints) == (["top::inner::kept"] if name.endswith("in_world") else ["inner::jj"] if name.endswith("on_child")
                    else [])
    refused = REF / "refused" / "joint_parent_missing_outermost.sdf"
    with pytest.raises(ModelError, match="SDF_JOINT_PARENT_NOT_FOUND"):
        load_model_file(refused, search_paths=MODELS)


def test_an_axis_expressed_in_no_frame_is_read_in_the_joint_frame_with_a_warning() -> None:
    path = REF / "loads" / "axis_expressed_in_missing.sdf"
    model = load_model_file(path)
    (w,) = model.warnings
    assert (w.code, w.line) == ("SDF_EXPRESSED_IN_NOT_FOUND", 12)  # the <axis>
    # as Gazebo's physics reads it: xyz as written, in the joint frame (the default expressed_in of 1.7+)
    plain = load_model(path.read_text().replace(' expressed_in="nope"', ""), file="plain.sdf")
    assert plain.warnings == []
    np.testing.assert_allclose(model.joints["j"].axis, plain.joints["j"].axis, atol=0, rtol=0)
    np.testing.assert_allclose(model.joints["j"].axis, (0, 1, 0), atol=1e-15, rtol=0)
