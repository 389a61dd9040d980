"""MJCF through the command line, against MuJoCo: ``frames --json`` and ``fk --json`` at random
configurations (a Menagerie-style robot with small placeholder meshes, compared with MuJoCo loading the
same file with its meshes stripped, so that the meshes' inertia does not count), ``state from-model``, ``convert``, and ``sim run`` of the user's own
MJCF restarted from a saved USDF file (bit-identical continuation)."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from repo_paths import REPO_ROOT

ROOT = REPO_ROOT
sys.path.insert(0, str(ROOT / "conformance"))
mujoco = pytest.importorskip("mujoco", reason="mujoco (requirements/test.txt) is the reference of MJCF poses")
import mjcf_ref  # noqa: E402

FIXTURES = ROOT / "test" / "fixtures" / "mjcf"
SCENE = FIXTURES / "quadruped_scene.xml"
SAMPLE = ROOT / "robot_state_format" / "samples" / "arm2_site.xml"


def _cli(*args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    proc = subprocess.run([sys.executable, "-m", "robot_state_format", *args], capture_output=True, text=True,
                          env=env, timeout=300, cwd=ROOT)
    if check:
        assert proc.returncode == 0, proc.stderr
    return proc


def _stripped(tmp_path: Path) -> Path:
    """The scene and robot with mesh assets and mesh geoms removed (what MuJoCo can load without files)."""
    for name in ("quadruped_robot.xml", "quadruped_scene.xml"):
        text = (FIXTURES / name).read_text()
        text = re.sub(r'<geom class="visual"[^>]*/>', "", text)
        text = re.sub(r"<mesh [^>]*/>", "", text)
        (tmp_path / name).write_text(text)
    return tmp_path / "quadruped_scene.xml"


def _quat_matrix(xyzw: list[float]) -> np.ndarray:
    x, y, z, w = xyzw
    return np.array([[1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y)],
                     [2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x)],
                     [2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)]])


def test_frames_and_fk_json_match_mujoco(tmp_path: Path) -> None:
    m = mujoco.MjModel.from_xml_path(str(_stripped(tmp_path)))
    d = mujoco.MjData(m)
    prefix = "quad scene::"
    zero = json.loads(_cli("frames", str(SCENE), "--json").stdout)["frames"]
    rng = np.random.default_rng(7)
    configs = list(mjcf_ref.random_configurations(m, 4, rng))[1:]
    checked = 0
    for qpos in [np.zeros(m.nq), *configs]:
        if not qpos.any():  # frames --json: every joint at zero, free joint at the origin
            doc = zero
            qpos = np.zeros(m.nq)
            qpos[3] = 1.0
            tail = m.jnt_qposadr[mujoco.mj_name2id(m, mujoco.mjtObj.mjOBJ_JOINT, "tail_ball")]
            qpos[tail] = 1.0
        else:
            positions = mjcf_ref.joint_mapping(m, qpos)
            doc = json.loads(_cli("fk", str(SCENE), "--positions", json.dumps(positions), "--json").stdout)["frames"]
        d.qpos[:] = qpos
        mujoco.mj_kinematics(m, d)
        for b in range(1, m.nbody):
            entry = doc[prefix + mujoco.mj_id2name(m, mujoco.mjtObj.mjOBJ_BODY, b)]
            assert entry["kind"] == "link"
            assert np.abs(np.array(entry["position"]) - d.xpos[b]).max() < 1e-9
            assert np.abs(_quat_matrix(entry["quaternion"]) - d.xmat[b].reshape(3, 3)).max() < 1e-9
            checked += 1
        for s in range(m.nsite):
            entry = doc[prefix + mujoco.mj_id2name(m, mujoco.mjtObj.mjOBJ_SITE, s)]
            assert entry["kind"] == "frame"
            assert np.abs(np.array(entry["position"]) - d.site_xpos[s]).max() < 1e-9
            assert np.abs(_quat_matrix(entry["quaternion"]) - d.site_xmat[s].reshape(3, 3)).max() < 1e-9
            checked += 1
    assert checked == 4 * (m.nbody - 1 + m.nsite)


def test_state_from_model_and_convert(tmp_path: Path) -> None:
    out = tmp_path / "s.usdf"
    _cli("state", "from-model", str(SAMPLE), "--positions", '{"shoulder": 0.5, "elbow": -0.3}', "-o", str(out))
    _cli("state", "validate", str(out), "--model", str(SAMPLE), "--check-poses")
    sdf = tmp_path / "arm2.sdf"
    _cli("convert", str(SCENE), "--to", "sdf", "-o", str(sdf))
    assert "valid sdf" in _cli("check", str(sdf)).stdout
    refused = _cli("convert", str(SCENE), "--to", "urdf", "-o", str(tmp_path / "x.urdf"), check=False)
    assert refused.returncode != 0 and "urdf" in refused.stderr.lower()  # a capsule, a ball, a free joint


def test_sim_run_user_mjcf_restarts_bit_identically(tmp_path: Path) -> None:
    scene = _stripped(tmp_path)
    a, b = tmp_path / "a.csv", tmp_path / "b.csv"
    _cli("sim", "run", str(scene), "--engine", "mujoco", "--steps", "120", "--save-at", "60",
         "--out", str(tmp_path / "out"), "--trajectory", str(a))
    restart = tmp_path / "out" / "step_60.usdf"
    _cli("sim", "run", str(scene), "--engine", "mujoco", "--steps", "60", "--restart", str(restart),
         "--out", str(tmp_path / "out2"), "--trajectory", str(b))
    rows_a, rows_b = a.read_text().splitlines(), b.read_text().splitlines()
    assert rows_a[0] == rows_b[0] and "tail_ball.qw" in rows_a[0] and "joint0.x" in rows_a[0]
    assert rows_a[-60:] == rows_b[-60:]
    # the run is MuJoCo's on the user's file: its own time step (0.004 s), the body falls
    last = dict(zip(rows_a[0].split(","), rows_a[-1].split(",")))
    assert float(last["time"]) == pytest.approx(120 * 0.004, rel=0, abs=1e-12)
    assert float(last["joint0.z"]) < 0.445


def test_sim_run_body_with_several_joints(tmp_path: Path) -> None:
    """A body with two joints: the virtual link's state comes from the joint values; restarts exactly."""
    text = SAMPLE.read_text().replace('<joint name="shoulder" range="-120 120"/>',
                                      '<joint name="shoulder" range="-120 120"/><joint name="lift" axis="0 1 0"/>')
    model = tmp_path / "arm2_lift.xml"
    model.write_text(text)
    a, b = tmp_path / "a.csv", tmp_path / "b.csv"
    _cli("sim", "run", str(model), "--engine", "mujoco", "--steps", "80", "--save-at", "40",
         "--out", str(tmp_path / "out"), "--trajectory", str(a))
    saved = (tmp_path / "out" / "step_40.usdf").read_text()
    assert 'name="upper/shoulder"' in saved
    _cli("sim", "run", str(model), "--engine", "mujoco", "--steps", "40", "--restart", str(tmp_path / "out" / "step_40.usdf"),
         "--out", str(tmp_path / "out2"), "--trajectory", str(b))
    assert a.read_text().splitlines()[-40:] == b.read_text().splitlines()[-40:]
    _cli("state", "validate", str(tmp_path / "out" / "step_40.usdf"), "--model", str(model), "--check-poses")
