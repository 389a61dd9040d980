"""A world of several different robots in one USDF state: write/read round trip, schema, validation
against each robot's model, the SDFormat ``<state>`` export (read back with lxml, and imported) and
the MuJoCo keyframe of the whole world (restored by MuJoCo, whose body poses are the reference)."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from lxml import etree
from repo_paths import REPO_ROOT

from robot_state_format.errors import Severity
from robot_state_format.model.loader import load_model_file
from robot_state_format.model.types import Model
from robot_state_format.spatial import pose6_to_transform
from robot_state_format.usdf.build import state_from_model, world_poses
from robot_state_format.usdf.export.sdf_state import sdf_to_state, state_to_sdf
from robot_state_format.usdf.reader import read_world_state
from robot_state_format.usdf.types import FrameState, JointState, ModelState, Stamp, WorldState
from robot_state_format.usdf.validate import validate_schema, validate_world_against_models
from robot_state_format.usdf.writer import write_world_state

SAMPLES = REPO_ROOT / "robot_state_format" / "samples"
FILES = {"arm": SAMPLES / "arm7_gripper.urdf", "pendulum": SAMPLES / "double_pendulum.urdf",
         "sdf_pair": SAMPLES / "two_links_orthogonal_1.sdf"}
POSES = {"arm": (1.0, 2.0, 0.0, 0.0, 0.0, 0.5), "pendulum": (-1.0, 0.5, 2.0, 0.1, -0.2, 0.3),
         "sdf_pair": (0.0, -3.0, 0.25, 0.0, 0.0, -1.0)}


def positions(model: Model, seed: int) -> dict[str, float]:
    rng = np.random.default_rng(seed)
    out = {}
    for j in model.joints.values():
        if j.is_moving and not j.mimic:
            lo = j.limits.lower if j.limits and j.limits.lower is not None else -math.pi
            hi = j.limits.upper if j.limits and j.limits.upper is not None else math.pi
            out[j.name] = float(rng.uniform(lo, hi)) if hi > lo else lo
    return out


@pytest.fixture(scope="module")
def world() -> tuple[WorldState, dict[str, Model], dict[str, dict[str, float]]]:
    models = {name: load_model_file(str(p)) for name, p in FILES.items()}
    values = {name: positions(m, i) for i, (name, m) in enumerate(models.items())}
    tops = []
    for name, model in models.items():
        ms = state_from_model(model, values[name]).model_states[0]
        tops.append(ModelState(name, None, POSES[name], None, ms.link_states, ms.joint_states, ms.model_states))
    state = WorldState("lab", stamp=Stamp(1_700_000_000, 42), frames=[FrameState("dock", None, (5, 0, 0, 0, 0, 0))],
                       model_states=tops)
    return state, models, values


def test_round_trip_and_schema(world: Any) -> None:
    state, _, _ = world
    text = write_world_state(state)
    assert validate_schema(text) == []
    back = read_world_state(text).state
    assert back == read_world_state(write_world_state(back)).state
    assert [m.name for m in back.model_states] == ["arm", "pendulum", "sdf_pair"]
    for ms, orig in zip(back.model_states, state.model_states, strict=True):
        assert ms.pose == orig.pose
        assert [(j.name, j.positions) for j in ms.joint_states] == [(j.name, j.positions) for j in orig.joint_states]


def test_validation_against_each_model(world: Any) -> None:
    state, models, _ = world
    back = read_world_state(write_world_state(state)).state
    diags = validate_world_against_models(back, models, check_poses=True, tolerance=1e-9)
    assert [d for d in diags if d.severity is Severity.ERROR] == []
    # a model_state checked against another robot's model: its joints are unknown there
    wrong = validate_world_against_models(back, {"pendulum": models["arm"]})
    assert any(d.code == "USDF_UNKNOWN_JOINT" and d.element and d.element.startswith("model_state[name=pendulum]")
               for d in wrong)
    assert {d.element for d in wrong if d.code == "USDF_MODEL_NOT_DESCRIBED"} == {
        "model_state[name=arm]", "model_state[name=sdf_pair]"}
    # a wrong count of positions in one robot is found and placed in that robot
    bad = read_world_state(write_world_state(state)).state
    js = bad.model("pendulum").joint_states[0]  # type: ignore[union-attr]
    bad.model("pendulum").joint_states[0] = JointState(js.name, (0.1, 0.2))  # type: ignore[union-attr]
    errors = [d for d in validate_world_against_models(bad, models) if d.severity is Severity.ERROR]
    assert [(d.code, d.element) for d in errors] == [
        ("USDF_DOF_MISMATCH", f"model_state[name=pendulum]/joint_state[name={js.name}]")]
    missing = validate_world_against_models(bad, {**models, "ghost": models["arm"]})
    assert any(d.code == "USDF_UNKNOWN_MODEL" and "'ghost'" in d.message for d in missing)


def test_sdformat_state_of_the_world(world: Any) -> None:
    state, _, values = world
    text, _ = state_to_sdf(state)
    root = etree.fromstring(text.encode())
    st = root.find("world/state")
    assert st is not None and st.findtext("sim_time") == "1700000000 42"
    models = {m.get("name"): m for m in st.findall("model_state")}
    assert sorted(models) == ["arm", "pendulum", "sdf_pair"]
    for name, el in models.items():
        pose = [float(v) for v in el.findtext("pose").split()]  # type: ignore[union-attr]
        assert np.allclose(pose6_to_transform(pose), pose6_to_transform(POSES[name]), atol=1e-12, rtol=0)
        got = {j.get("name"): float(j.findtext("axis_state/position")) for j in el.findall("joint_state")}  # type: ignore[arg-type]
        assert {k: got[k] for k in values[name]} == values[name]  # (mimic followers carry derived values too)
    back = sdf_to_state(text).state
    for name in models:
        ms = back.model(name)
        assert ms is not None
        back_q = {j.name: j.positions[0] for j in ms.joint_states if j.positions}  # type: ignore[index]
        assert {k: back_q[k] for k in values[name]} == values[name]


def test_mujoco_keyframe_of_the_world(world: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    mujoco = pytest.importorskip("mujoco", reason="the mujoco package is not installed")
    from robot_state_format.usdf.export.mujoco import load_mujoco_world, mujoco_keyframe, parse_keyframe

    monkeypatch.chdir(tmp_path)  # MUJOCO_LOG.TXT
    state, models, _ = world
    urdfs = {k: v for k, v in FILES.items() if v.suffix == ".urdf"}  # MuJoCo reads URDF and MJCF, not SDFormat
    spec = load_mujoco_world(state, urdfs, strip_geometry=True)
    text, warnings = mujoco_keyframe(state, spec.compile(), prefixes={k: f"{k}/" for k in urdfs})
    assert warnings == []
    qpos, qvel, _ = parse_keyframe(text)
    key = spec.add_key()
    key.name, key.qpos, key.qvel = "usdf", qpos, qvel
    m = spec.compile()
    d = mujoco.MjData(m)
    mujoco.mj_resetDataKeyframe(m, d, mujoco.mj_name2id(m, mujoco.mjtObj.mjOBJ_KEY, "usdf"))
    mujoco.mj_forward(m, d)
    wp = world_poses(state)
    compared = 0
    for b in range(1, m.nbody):
        body = mujoco.mj_id2name(m, mujoco.mjtObj.mjOBJ_BODY, b)
        robot, _, link = body.partition("/")
        ours = wp[f"{robot}::{link}"]
        assert np.abs(d.xpos[b] - ours[:3, 3]).max() < 1e-9, body
        assert np.abs(d.xmat[b].reshape(3, 3) - ours[:3, :3]).max() < 1e-9, body
        compared += 1
    assert compared == len(models["arm"].links) + len(models["pendulum"].links)
