"""Model Directives against pydrake, the reference: every frame's world pose at the default
configuration and at random ones within 1e-9 (scenes from the bundled models: an arm welded to a
table, a gripper welded to the arm, namespaced copies through add_directives, add_frame chains in
degrees, default joint positions, free bodies posed in the world and relative to another body),
the scenes Drake refuses, and ``sim run --engine drake`` on a scene (Drake's own loader)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from repo_paths import REPO_ROOT

pytest.importorskip("pydrake", reason="pydrake (drake on PyPI) is the reference for Model Directives: not installed")

from robot_state_format.errors import ModelError
from robot_state_format.kinematics import fk
from robot_state_format.kinematics.tree import compile_model
from robot_state_format.model.directives.compose import drake_share
from robot_state_format.model.loader import load_model_file
from robot_state_format.model.packages import clear_cache
from robot_state_format.sim.run import make_sim

ROOT = REPO_ROOT
sys.path.insert(0, str(ROOT / "conformance"))
from directives_ref import SUB_FILES, ament_prefix, compare, mutations, verdicts, write_scenes  # noqa: E402

ARM = "file://" + str(ROOT / "robot_state_format" / "samples" / "arm7_gripper.urdf")


@pytest.fixture(scope="module")
def scenes(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, Path]]:
    out = tmp_path_factory.mktemp("dmd")
    return out, write_scenes(out)


@pytest.mark.parametrize("name", ["arm_on_table", "namespaced", "free_bodies", "static_and_rooted", "rerooted",
                                  "drake_models"])
def test_every_frame_pose_agrees_with_pydrake(scenes: tuple[Path, dict[str, Path]], name: str) -> None:
    out, paths = scenes
    assert name not in SUB_FILES
    r = compare(paths[name], samples=8, seed=3, prefix=ament_prefix(out))
    assert r["ours_not_in_drake"] == [] and r["drake_not_in_ours"] == [], r
    assert r["frames"] >= 9 * r["links"], r  # every link (and more frames) at 9 configurations
    assert r["worst"] <= 1e-9, r


def test_the_sample_scene_agrees_with_pydrake(tmp_path: Path) -> None:
    prefix = tmp_path / "prefix"
    idx = prefix / "share" / "ament_index" / "resource_index" / "packages"
    idx.mkdir(parents=True)
    (idx / "robot_state_format").write_text("", encoding="utf-8")
    (prefix / "share" / "robot_state_format").symlink_to(ROOT / "robot_state_format")
    r = compare(ROOT / "robot_state_format" / "samples" / "arm7_on_table.dmd.yaml", samples=4, seed=5,
                prefix=str(prefix))
    assert r["worst"] <= 1e-9 and not r["ours_not_in_drake"] and not r["drake_not_in_ours"], r


_DRAKE = r"""
import sys
from pydrake.multibody.parsing import LoadModelDirectives, Parser, ProcessModelDirectives
from pydrake.multibody.plant import MultibodyPlant
plant = MultibodyPlant(0.0)
try:
    ProcessModelDirectives(LoadModelDirectives(sys.argv[1]), plant, Parser(plant))
    plant.Finalize()
except Exception as exc:
    print("refused:", exc)
    sys.exit(3)
"""


@pytest.mark.parametrize(("text", "code"), [
    ("directives:\n- add_model:\n    name: a\n    file: robot_state_format/samples/arm7_gripper.urdf\n", "DMD_BAD_URI"),
    ("directives:\n- add_model_instance: {name: a}\n- add_model_instance: {name: a}\n", "DMD_DUPLICATE_INSTANCE"),
    ("directives:\n- add_frame: {name: f, X_PF: {base_frame: world}}\n- add_frame: {name: f, X_PF: "
     "{base_frame: world}}\n", "DMD_DUPLICATE_FRAME"),
    ("directives:\n- add_frame:\n    name: f\n    X_PF: {base_frame: world, rotation: {deg: [1, 2, 3]}}\n",
     "DMD_UNKNOWN_KEY"),
    ("directives:\n- add_frame:\n    name: f\n    X_PF: {base_frame: world, rotation: !Quaternion {w: 1}}\n",
     "DMD_SCHEMA"),
    (f"directives:\n- add_model:\n    name: a\n    file: {ARM}\n    default_joint_positions: {{joint1: [1, 2]}}\n",
     "DMD_JOINT_POSITIONS_SIZE"),
    (f"directives:\n- add_model:\n    name: a\n    file: {ARM}\n    default_joint_positions: {{nope: [1]}}\n",
     "DMD_JOINT_NOT_FOUND"),
    (f"directives:\n- add_model: {{name: a, file: '{ARM}'}}\n- add_weld: {{parent: a::link3, child: a::base_link}}\n",
     "DMD_LOOP"),
    (f"directives:\n- add_model: {{name: a, file: '{ARM}'}}\n- add_weld: {{parent: a::link1, child: a::link3}}\n",
     "DMD_LOOP"),
    (f"directives:\n- add_model: {{name: a, file: '{ARM}'}}\n- add_weld: {{parent: world, child: a::base_link}}\n"
     "- add_weld: {parent: world, child: a::base_link}\n", "DMD_DUPLICATE_JOINT"),
    ("directives:\n- add_directives: {file: 'file:///nonexistent.dmd.yaml', model_namespace: zz}\n",
     "DMD_NAMESPACE_NOT_FOUND"),
    ("directives:\n- add_frame:\n    name: f\n    X_PF: {base_frame: nowhere}\n", "DMD_FRAME_NOT_FOUND"),
    ("directives:\n- add_model: {name: t, file: 'file://" + str(ROOT / "robot_state_format" / "samples" / "table.sdf")
     + "'}\n- add_weld: {parent: world, child: t::tray::drawer}\n", "DMD_WELD_CHILD_INSTANCE"),
    (f"directives:\n- add_model: {{name: a, file: '{ARM}'}}\n- add_weld: {{parent: world, child: a::link3}}\n"
     "- add_weld: {parent: world, child: a::base_link}\n", "DMD_LOOP"),
    ("directives:\n- add_model:\n    name: w\n    file: file://" + str(ROOT / "robot_state_format" / "samples" /
                                                                    "nested_world.sdf") + "\n", "DMD_WORLD_FILE"),
])
def test_drake_refuses_what_we_refuse(tmp_path: Path, text: str, code: str) -> None:
    p = tmp_path / "bad.dmd.yaml"
    p.write_text(text, encoding="utf-8")
    with pytest.raises(ModelError) as info:
        load_model_file(p)
    assert info.value.diagnostics[0].code == code
    drake = subprocess.run([sys.executable, "-c", _DRAKE, str(p)], capture_output=True, text=True, timeout=120,
                           cwd=ROOT)
    assert drake.returncode != 0, drake.stdout + drake.stderr  # an exception, or an abort on a failed check


def test_sim_run_drake_loads_the_scene_and_restarts_exactly(scenes: tuple[Path, dict[str, Path]],
                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    out, paths = scenes
    monkeypatch.setenv("AMENT_PREFIX_PATH", ament_prefix(out))
    clear_cache()
    try:
        model = load_model_file(paths["free_bodies"])
        sim = make_sim("drake", model, dt=0.002, isolate=False)
        pos, _ = sim.joint_values()
        # Drake starts from the scene's defaults: the floating joint at its default_free_body_pose
        np.testing.assert_allclose(pos["pendulum2::link A"], model.default_positions["pendulum2::link A"],
                                   atol=1e-12, rtol=0)
        np.testing.assert_allclose(pos["pendulum2::joint A"], [0.4], atol=1e-15, rtol=0)
        sim.step(30)
        state = sim.capture()
        fresh = make_sim("drake", model, dt=0.002, isolate=False)
        fresh.restore(state)
        for a, b in zip(sim.joint_values(), fresh.joint_values(), strict=True):
            for n in a:
                np.testing.assert_array_equal(a[n], b[n])
        sim.step(20)
        fresh.step(20)
        np.testing.assert_array_equal(sim.plant.GetPositions(sim.pctx), fresh.plant.GetPositions(fresh.pctx))
        # without the simulator-state extension: positions and velocities restore from the elements
        state.extensions.clear()
        third = make_sim("drake", model, dt=0.002, isolate=False)
        third.restore(state)
        qa, qb = fresh.joint_values().positions, third.joint_values().positions
        sim2 = make_sim("drake", model, dt=0.002, isolate=False)
        sim2.step(30)
        ref = sim2.joint_values()
        for n in ref.positions:
            np.testing.assert_allclose(third.joint_values().positions[n], ref.positions[n], atol=1e-9, rtol=0)
            np.testing.assert_allclose(third.joint_values()[1][n], ref[1][n], atol=1e-9, rtol=0)
        del qa, qb
    finally:
        clear_cache()


def test_variants_get_drake_s_verdict(scenes: tuple[Path, dict[str, Path]]) -> None:
    """One-change variants of a scene (mutations as conformance/directives_ref.py makes them): refused
    where Drake refuses them, loaded (with the same poses) where it loads them."""
    out, paths = scenes
    rng = np.random.default_rng(11)
    seen = set()
    for what, text in mutations(paths["arm_on_table"].read_text(encoding="utf-8"), rng, 8):
        variant = out / "variant.dmd.yaml"
        variant.write_text(text, encoding="utf-8")
        ours, drake = verdicts(variant, ament_prefix(out))
        assert ours == drake, what
        seen.add(ours)
        if ours == "loads":
            r = compare(variant, 1, 0, ament_prefix(out))
            assert r["worst"] <= 1e-9 and not r["ours_not_in_drake"] and not r["drake_not_in_ours"], (what, r)
    assert "refused" in seen


DRAKE_SHARE = drake_share()
DRAKE_MODELS = sorted(str(p.relative_to(DRAKE_SHARE)) for p in DRAKE_SHARE.rglob("*")
                      if p.suffix in (".urdf", ".sdf")) if DRAKE_SHARE is not None else []


@pytest.mark.parametrize("rel", DRAKE_MODELS)
def test_each_model_drake_ships_agrees(tmp_path: Path, rel: str) -> None:
    """Every URDF/SDFormat model in pydrake's share/drake, added by package://drake/... (Drake's own
    package): loaded by both, every frame pose equal (Drake's URDF extensions included: an undeclared
    'world' parent link, /robot/frame elements)."""
    p = tmp_path / "one.dmd.yaml"
    p.write_text(f"directives:\n- add_model:\n    name: m\n    file: package://drake/{rel}\n", encoding="utf-8")
    r = compare(p, samples=2, seed=1, prefix=None)
    assert r["worst"] <= 1e-9 and not r["ours_not_in_drake"] and not r["drake_not_in_ours"], r


def test_drake_simulation_of_a_rerooted_scene_matches_the_model(scenes: tuple[Path, dict[str, Path]]) -> None:
    """Drake runs the scene with its reversed joints; the joint values it reports give, through this
    package's kinematics, the body poses Drake computes."""
    _, paths = scenes
    model = load_model_file(paths["rerooted"])
    sim = make_sim("drake", model, dt=0.002, isolate=False)
    sim.step(40)
    pos, _ = sim.joint_values()
    tree = compile_model(model)
    q, _ = tree.resolve_mapping({n: list(v) for n, v in pos.items() if not model.joints[n].mimic})
    ours = fk.forward(tree, q)
    drake_poses, _ = sim.link_motions()
    names = sim.map.tree.link_names
    assert list(names) == list(tree.link_names)
    assert float(np.abs(ours - drake_poses).max()) < 1e-9
    assert abs(pos["arm::joint2"][0] - 0.4) > 1e-6  # it moved from its default


# (a scalar in the scene, as Drake types it by its schema; "{}" is where it goes): numbers written
# -.5, +.5, 1e3, .5e1, quoted '1.5' or 010 (ten: a C++ stream, not YAML 1.1's octal); names written
# on, yes, True, 0x1F, 1.10, 1_0 or 12:30 (kept as written, not YAML 1.1's bool, int or sexagesimal)
_NUMBER = "directives:\n- add_frame:\n    name: f\n    X_PF: {{base_frame: world, translation: [{}, 0.25, 0]}}\n"
_NAME = ("directives:\n- add_frame:\n    name: {}\n    X_PF: {{base_frame: world, translation: [0, 0, 1]}}\n"
         "- add_frame:\n    name: g\n    X_PF: {{base_frame: {}, translation: [1, 0, 0]}}\n")
SCALARS = [(_NUMBER, v) for v in ("-.5", "+.5", "1e3", "1E-3", ".5e1", "'1.5'", "010", "1_0", "0x10", "1:30",
                                  "true", "~")] + [(_NAME, v) for v in ("on", "yes", "True", "0x1F", "1.10", "1_0",
                                                                        "12:30", "010")]


@pytest.mark.parametrize("template, scalar", SCALARS, ids=[f"{'number' if t is _NUMBER else 'name'}-{v}"
                                                           for t, v in SCALARS])
def test_scalars_are_typed_by_drakes_schema(tmp_path: Path, template: str, scalar: str) -> None:
    scene = tmp_path / "s.dmd.yaml"
    scene.write_text(template.format(scalar, scalar), encoding="utf-8")
    ours, drake = verdicts(scene, None)
    assert ours == drake, (ours, drake)
    if drake == "loads":
        r = compare(scene, samples=1, seed=0, prefix=None)
        assert r["worst"] <= 1e-12 and not r["ours_not_in_drake"] and not r["drake_not_in_ours"], r


@pytest.mark.parametrize("text, loads", [
    ("directives:\n- add_frame:\n    name: f\n    X_PF: {base_frame: world}\n- add_weld:\n    parent: world\n"
     "    child: f\n    X_PC:\n", None),  # X_PC left empty: Drake's default (only its verdict is compared)
    ("directives:\n", False),
    ("", False),
    ("directives: []\n", True),
    ("directives:\n- add_collision_filter_group:\n    name: g\n    members:\n", False),
])
def test_empty_values_as_drake_reads_them(tmp_path: Path, text: str, loads: bool | None) -> None:
    scene = tmp_path / "s.dmd.yaml"
    scene.write_text(text, encoding="utf-8")
    ours, drake = verdicts(scene, None)
    assert ours == drake and (loads is None or (drake == "loads") is loads), (ours, drake)
