"""Real robot descriptions from the installed example-robot-data package (never copied here):
every file reads, ``check`` agrees with urdfdom's ``check_urdf`` on validity and on the tree it
prints, and zero-configuration link poses agree with Pinocchio's URDF loader."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from real_robots import SKIP_REASON, real_urdfs, robots_dir, romeo_urdf

from robot_state_format.cli import main
from robot_state_format.errors import ModelError
from robot_state_format.model.urdf.reader import read_urdf

URDFS = real_urdfs()
pytestmark = pytest.mark.skipif(not URDFS, reason=SKIP_REASON)

# Files urdfdom loads although they break a rule of the URDF reference it does not check: the reader
# loads them too (urdfdom's verdict is the rule), with exactly this warning.
URDFDOM_TOO_LENIENT = {
    # <mimic joint="index_q1"> names joints that do not exist (the hand's joints are Left_index_q1 ...)
    "alex_description/urdf/alex_psyonic_hands.urdf": "URDF_MIMIC_UNKNOWN_JOINT",
}


def _valid(path: Path) -> bool:
    try:
        read_urdf(path.read_bytes(), file=str(path))
    except ModelError:
        return False
    return True


def _rel(path: Path) -> str:
    root = robots_dir()
    assert root is not None
    return path.relative_to(root).as_posix()


def _ids(paths: list[Path] | None = None) -> list[str]:
    return [_rel(p) for p in (URDFS if paths is None else paths)]


VALID = [p for p in URDFS if _valid(p)]
# the one file this reader rejects: an empty, nameless <robot> (urdfdom rejects it too)
EXPECTED_INVALID = {"ur_description/urdf/ur3.urdf"}


def test_the_invalid_real_files_are_the_known_ones() -> None:
    assert {_rel(p) for p in URDFS if p not in VALID} == EXPECTED_INVALID


def _is_elf(path: str) -> bool:
    try:
        with open(path, "rb") as f:
            return f.read(4) == b"\x7fELF"
    except OSError:
        return False


def _check_urdf() -> tuple[str, dict[str, str]] | None:
    """urdfdom's check_urdf and its environment: Debian's liburdfdom-tools binary, or the one
    cmeel-urdfdom (a pin dependency) ships under site-packages/cmeel.prefix (called directly, not
    through its slow Python launcher)."""
    env = dict(os.environ)
    for directory in os.environ.get("PATH", "").split(os.pathsep):
        candidate = os.path.join(directory, "check_urdf")
        if os.access(candidate, os.X_OK) and _is_elf(candidate):
            return candidate, env
    for base in sys.path:
        prefix = Path(base or ".") / "cmeel.prefix"
        candidate = prefix / "bin" / "check_urdf"
        if candidate.is_file() and _is_elf(str(candidate)):
            env["LD_LIBRARY_PATH"] = os.pathsep.join(
                p for p in (str(prefix / "lib"), os.environ.get("LD_LIBRARY_PATH", "")) if p)
            return str(candidate), env
    return None


CHECK_URDF = _check_urdf()


def _urdfdom_tree(output: str) -> tuple[str, set[tuple[str, str]]]:
    """Root link and (parent, child) edges from check_urdf's indented tree."""
    root_match = re.search(r"^root Link: (\S+) has", output, re.M)
    assert root_match is not None, output
    root = root_match.group(1)
    stack: list[tuple[int, str]] = [(0, root)]
    edges: set[tuple[str, str]] = set()
    for line in output.splitlines():
        m = re.match(r"^( *)child\(\d+\):\s+(\S+)\s*$", line)
        if not m:
            continue
        depth = len(m.group(1)) // 4
        while stack and stack[-1][0] >= depth:
            stack.pop()
        edges.add((stack[-1][1], m.group(2)))
        stack.append((depth, m.group(2)))
    return root, edges


def test_there_are_enough_real_robots() -> None:
    assert len(URDFS) >= 20
    romeo = romeo_urdf()
    assert romeo is not None
    model = read_urdf(romeo.read_bytes(), file=str(romeo))
    assert len(model.links) >= 80


@pytest.mark.parametrize("path", URDFS, ids=_ids())
def test_real_urdf_reads_or_fails_with_a_model_error(path: Path) -> None:
    try:
        model = read_urdf(path.read_bytes(), file=str(path))
    except ModelError as exc:
        assert exc.errors and all(d.file == str(path) for d in exc.errors)
        return
    assert model.links and len(model.root_links()) == 1
    assert len(model.joints) == len(model.links) - 1
    for link in model.links.values():
        assert np.allclose(link.pose[3], [0, 0, 0, 1], rtol=0, atol=1e-12)
        assert np.allclose(link.pose[:3, :3] @ link.pose[:3, :3].T, np.eye(3), atol=1e-9, rtol=0)


@pytest.mark.skipif(CHECK_URDF is None, reason="urdfdom's check_urdf is not installed "
                    "(apt-get install liburdfdom-tools, or pip install cmeel-urdfdom)")
@pytest.mark.parametrize("path", URDFS, ids=_ids())
def test_check_agrees_with_urdfdom(path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert CHECK_URDF is not None
    ref = subprocess.run([CHECK_URDF[0], str(path)], capture_output=True, text=True, timeout=60, env=CHECK_URDF[1])
    urdfdom_valid = ref.returncode == 0 and "Successfully Parsed XML" in ref.stdout
    ours = main(["check", "--quiet", str(path)])
    out = capsys.readouterr()
    rel = _rel(path)
    if rel in URDFDOM_TOO_LENIENT:
        assert urdfdom_valid and ours == 0
        assert f"warning: [{URDFDOM_TOO_LENIENT[rel]}]" in out.out
    assert ours == (0 if urdfdom_valid else 1), (ref.stdout[-500:], ref.stderr[-500:], out.err[-2000:])
    if urdfdom_valid:
        root, edges = _urdfdom_tree(ref.stdout)
        model = read_urdf(path.read_bytes(), file=str(path))
        assert model.root_links() == [root]
        assert {(j.parent, j.child) for j in model.joints.values()} == edges


@pytest.mark.parametrize("path", VALID, ids=_ids(VALID))
def test_zero_configuration_poses_agree_with_pinocchio(path: Path) -> None:
    pin = pytest.importorskip("pinocchio", reason="pin (Pinocchio) is not installed")
    model = read_urdf(path.read_bytes(), file=str(path))
    pmodel = pin.buildModelFromUrdf(str(path))
    data = pmodel.createData()
    pin.framesForwardKinematics(pmodel, data, pin.neutral(pmodel))
    compared = 0
    for name, link in model.links.items():
        if not pmodel.existFrame(name, pin.BODY):
            continue
        oMf = data.oMf[pmodel.getFrameId(name, pin.BODY)]
        assert np.allclose(link.pose[:3, 3], oMf.translation, atol=1e-9, rtol=0), name
        assert np.allclose(link.pose[:3, :3], oMf.rotation, atol=1e-9, rtol=0), name
        compared += 1
    assert compared == len(model.links)


def _f(v: object) -> float | None:
    return None if v is None else float(v)  # yourdfpy keeps some values as strings


def _o(x: object) -> np.ndarray:
    return np.eye(4) if x is None else np.asarray(x, dtype=float)  # yourdfpy: None for no <origin>


@pytest.mark.parametrize("path", VALID, ids=_ids(VALID))
def test_elements_agree_with_yourdfpy(path: Path) -> None:
    yourdfpy = pytest.importorskip("yourdfpy", reason="yourdfpy is not installed")
    model = read_urdf(path.read_bytes(), file=str(path))
    robot = yourdfpy.URDF.load(str(path), load_meshes=False, build_scene_graph=False,
                               load_collision_meshes=False).robot
    assert robot.name == model.name
    assert [lk.name for lk in robot.links] == list(model.links)
    for ylink in robot.links:
        link = model.links[ylink.name]
        if ylink.inertial is None:
            assert link.inertial is None
        else:
            ixx, ixy, ixz, iyy, iyz, izz = link.inertial.inertia
            assert link.inertial.mass == pytest.approx(_f(ylink.inertial.mass), rel=0, abs=1e-12)
            assert np.allclose([[ixx, ixy, ixz], [ixy, iyy, iyz], [ixz, iyz, izz]], ylink.inertial.inertia,
                               rtol=0, atol=1e-12)
            assert np.allclose(link.inertial.origin, _o(ylink.inertial.origin), rtol=0, atol=1e-12)
        for ours, theirs in ((link.visuals, ylink.visuals), (link.collisions, ylink.collisions)):
            assert len(ours) == len(theirs), ylink.name
            for shape, yshape in zip(ours, theirs):
                assert np.allclose(shape.origin, _o(yshape.origin), rtol=0, atol=1e-12)
                g, yg = shape.geometry, yshape.geometry
                if yg.box is not None:
                    assert g.kind == "box" and np.allclose(g.size, yg.box.size, rtol=0, atol=1e-12)
                elif yg.cylinder is not None:
                    assert g.kind == "cylinder"
                    assert (g.radius, g.length) == pytest.approx((_f(yg.cylinder.radius), _f(yg.cylinder.length)),
                                                                 rel=0, abs=1e-12)
                elif yg.sphere is not None:
                    assert g.kind == "sphere" and g.radius == pytest.approx(_f(yg.sphere.radius), rel=0, abs=1e-12)
                else:
                    assert g.kind == "mesh" and g.filename == yg.mesh.filename
                    scale = yg.mesh.scale
                    expect = [1.0, 1.0, 1.0] if scale is None else np.broadcast_to(np.asarray(scale, float), (3,))
                    assert np.allclose(g.scale, expect, rtol=0, atol=1e-12)
                ymat = getattr(yshape, "material", None)
                if ymat is not None and ymat.name:
                    assert shape.material is not None and shape.material.name == ymat.name
    assert [j.name for j in robot.joints] == list(model.joints)
    for yj in robot.joints:
        j = model.joints[yj.name]
        assert (j.type.value, j.parent, j.child) == (yj.type, yj.parent, yj.child)
        assert np.allclose(j.origin, _o(yj.origin), rtol=0, atol=1e-12)
        if j.axis is not None and yj.axis is not None:
            ax = np.asarray(yj.axis, dtype=float)
            assert np.allclose(j.axis, ax / np.linalg.norm(ax), rtol=0, atol=1e-12)
        if yj.limit is not None and j.limits is not None:
            assert j.limits.effort == pytest.approx(_f(yj.limit.effort), rel=0, abs=1e-12)
            assert j.limits.velocity == pytest.approx(_f(yj.limit.velocity), rel=0, abs=1e-12)
            if j.type.value in ("revolute", "prismatic"):
                assert (j.limits.lower, j.limits.upper) == pytest.approx(
                    (_f(yj.limit.lower) or 0.0, _f(yj.limit.upper) or 0.0), rel=0, abs=1e-12)
        if yj.dynamics is not None and j.dynamics is not None:
            assert j.dynamics.damping == pytest.approx(_f(yj.dynamics.damping) or 0.0, rel=0, abs=1e-12)
            assert j.dynamics.friction == pytest.approx(_f(yj.dynamics.friction) or 0.0, rel=0, abs=1e-12)
        if yj.mimic is not None and j.nq and yj.mimic.joint in model.joints:  # else ignored (warned)
            (m,) = j.mimic
            assert (m.joint, m.multiplier, m.offset) == (yj.mimic.joint, pytest.approx(_f(yj.mimic.multiplier) or 1.0,
                                                                                       rel=0, abs=1e-12),
                                                       pytest.approx(_f(yj.mimic.offset) or 0.0, rel=0, abs=1e-12))
