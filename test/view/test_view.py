"""``robot-state-format view``: the scene a browser is given equals ``frames --json`` / ``fk --json`` (1e-9), for
models of every format, restart files and recordings, served and exported; what the server serves; meshes;
the missing-dependency line. The pictures a real browser draws: test_view_browser.py."""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from repo_paths import REPO_ROOT
from view_harness import (
    assert_same_poses,
    cli,
    embedded_scene,
    node_poses,
    served_messages,
    visual_names,
)

# every test but the missing-dependency one needs viser (the view extra, installed by ./run setup on Kilted)
needs_viser = pytest.mark.skipif(importlib.util.find_spec("viser") is None,
                                 reason="viser is not installed (the view extra: pip install viser)")

ROOT = REPO_ROOT
SAMPLES = ROOT / "robot_state_format" / "samples"
ARM7 = str(SAMPLES / "arm7_gripper.urdf")
PENDULUM = str(SAMPLES / "double_pendulum.urdf")


def _json(*args: str) -> dict[str, Any]:
    r = cli(*args)
    assert r.returncode == 0, r.stderr
    doc: dict[str, Any] = json.loads(r.stdout)
    return doc


def _export(tmp_path: Path, *args: str, name: str = "out") -> tuple[dict[str, Any], subprocess.CompletedProcess[str]]:
    out = tmp_path / name
    r = cli("view", *args, "--export", str(out))
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == str(out / "index.html")
    return embedded_scene(out / "index.html"), r


@needs_viser
@pytest.mark.parametrize("model", [
    ARM7, PENDULUM, str(SAMPLES / "nested_world.sdf"), str(SAMPLES / "arm2_site.xml"),
    str(SAMPLES / "two_links_orthogonal_1.sdf"),
])
def test_exported_model_is_frames_json(tmp_path: Path, model: str) -> None:
    scene, _ = _export(tmp_path, model)
    frames = _json("frames", model, "--json")["frames"]
    got = node_poses([m for _, m in scene["messages"]])
    assert set(got) == set(frames)  # one node per frame of frames --json, nothing else
    assert_same_poses(got, frames)


@needs_viser
def test_directives_scene(tmp_path: Path) -> None:
    env = {**os.environ, "AMENT_PREFIX_PATH": f"{ROOT / '.venv'}:{os.environ.get('AMENT_PREFIX_PATH', '')}"}
    model = str(SAMPLES / "arm7_on_table.dmd.yaml")
    r = cli("frames", model, "--json", env=env)
    if r.returncode != 0:
        pytest.skip(f"the directives sample does not load here: {r.stderr.strip()[:200]}")
    out = tmp_path / "dmd"
    v = cli("view", model, "--export", str(out), env=env)
    assert v.returncode == 0, v.stderr
    scene = embedded_scene(out / "index.html")
    frames = json.loads(r.stdout)["frames"]
    got = node_poses([m for _, m in scene["messages"]])
    assert set(got) == set(frames)
    assert_same_poses(got, frames)


@needs_viser
def test_positions_are_fk_json(tmp_path: Path) -> None:
    positions = '{"joint1": 0.5, "joint2": -0.25, "joint4": 1.0}'
    scene, _ = _export(tmp_path, ARM7, "--positions", positions)
    fk = _json("fk", ARM7, "--positions", positions, "--json")["frames"]
    zero = _json("frames", ARM7, "--json")["frames"]
    got = node_poses([m for _, m in scene["messages"]])
    assert_same_poses(got, fk)
    moved = got["arm7_gripper::link7"][0]
    assert np.abs(moved - np.array(zero["arm7_gripper::link7"]["position"])).max() > 0.05  # not the zero pose


@needs_viser
def test_visuals_follow_the_model(tmp_path: Path) -> None:
    """The pendulum's box and two cylinders: one mesh node under each link, at the visual's origin, in its colour."""
    scene, _ = _export(tmp_path, PENDULUM)
    messages = [m for _, m in scene["messages"]]
    meshes = visual_names(messages)
    assert sorted(meshes) == ["/linkage::link A/visual_0", "/linkage::link B/visual_0", "/linkage::link C/visual_0"]
    assert meshes["/linkage::link A/visual_0"]["color"] == [26, 26, 26]  # rgba 0.1 0.1 0.1
    assert meshes["/linkage::link B/visual_0"]["color"] == [76, 76, 76]  # 0.3
    positions = {m["name"]: m["position"] for m in messages if m.get("type") == "SetPositionMessage"}
    assert positions["/linkage::link B/visual_0"] == [0.0, 0.0, -0.5]
    box = scene["binaryBufferLengths"]
    assert box  # the vertices and faces travel as binary buffers


def _restart(tmp_path: Path, positions: str) -> Path:
    state = tmp_path / "pendulum.usdf"
    r = cli("state", "from-model", PENDULUM, "--positions", positions, "-o", str(state))
    assert r.returncode == 0, r.stderr
    return state


@needs_viser
def test_restart_file_is_fk_json(tmp_path: Path) -> None:
    positions = '{"joint A": 0.5, "joint B": -0.3}'
    state = _restart(tmp_path, positions)
    scene, _ = _export(tmp_path, str(state), "--model", PENDULUM)
    got = node_poses([m for _, m in scene["messages"]])
    fk = _json("fk", PENDULUM, "--positions", positions, "--json")["frames"]
    # the model and its links where the file puts them, the joint frames by FK of its joint positions
    assert set(got) == set(fk)
    assert_same_poses(got, fk)
    bare, _ = _export(tmp_path, str(state), name="bare")  # without --model: what the file holds
    links_and_model = {k: v for k, v in fk.items() if v["kind"] in ("model", "link")}
    assert set(node_poses([m for _, m in bare["messages"]])) == set(links_and_model)
    assert len(visual_names([m for _, m in scene["messages"]])) == 3  # --model gives the visuals


@needs_viser
def test_restart_file_without_model_and_free_bodies(tmp_path: Path) -> None:
    """Frames, a free body and a robot whose pose is absent: what has a world pose is shown, as the file says."""
    state = tmp_path / "world.usdf"
    state.write_text("""<world_state name="w" version="1.0">
  <frame name="table"><pose>1 0 0.5 0 0 1.5707963267948966</pose></frame>
  <model_state name="box"><parent>table</parent><pose>0.1 0 0 0 0 0</pose>
    <link_state name="body"><pose>0 0 0.2 0.3 0 0</pose></link_state></model_state>
  <model_state name="ghost"><link_state name="l"><pose>0 0 1 0 0 0</pose></link_state></model_state>
</world_state>
""")
    scene, r = _export(tmp_path, str(state))
    got = node_poses([m for _, m in scene["messages"]])
    assert set(got) == {"table", "box", "box::body", "ghost", "ghost::l"}
    # ghost's place in the world is unknown: drawn at the origin (its link where the file puts it), and said
    assert "'ghost' has no pose in the world" in r.stderr and "'box'" not in r.stderr
    np.testing.assert_allclose(got["ghost::l"][0], [0.0, 0.0, 1.0], rtol=0, atol=0)
    # by hand: table at (1, 0, 0.5) turned 90 deg about z; box 0.1 along the table's x = world y
    np.testing.assert_allclose(got["box"][0], [1.0, 0.1, 0.5], rtol=0, atol=1e-12)
    np.testing.assert_allclose(got["box::body"][0], [1.0, 0.1, 0.7], rtol=0, atol=1e-12)
    h = np.sqrt(0.5)
    np.testing.assert_allclose(got["table"][1], [0.0, 0.0, h, h], rtol=0, atol=1e-12)


def _recording(tmp_path: Path, values: list[float]) -> Path:
    from robot_state_format.model.loader import load_model_file
    from robot_state_format.recording import STRING_TYPE, RecordingWriter
    from robot_state_format.usdf.build import state_from_model
    from robot_state_format.usdf.types import Stamp
    from robot_state_format.usdf.writer import write_world_state
    model = load_model_file(PENDULUM)
    bag = tmp_path / "bag"
    w = RecordingWriter(bag)
    w.add_topic("/robot_description", STRING_TYPE)
    w.add_topic("/world_state", STRING_TYPE)
    t0 = 1_000_000_000
    w.write_message("/robot_description", {"data": Path(PENDULUM).read_text()}, t0)
    for i, a in enumerate(values):
        t = t0 + i * 250_000_000
        state = state_from_model(model, {"joint A": a, "joint B": -a / 2}, stamp=Stamp(*divmod(t, 1_000_000_000)))
        w.write_message("/world_state", {"data": write_world_state(state)}, t)
    w.close()
    return bag


@needs_viser
def test_recording_timeline_is_fk_json(tmp_path: Path) -> None:
    values = [0.0, 0.4, -0.6, 1.0]
    bag = _recording(tmp_path, values)
    scene, _ = _export(tmp_path, str(bag))
    timed = scene["messages"]
    assert scene["durationSeconds"] == pytest.approx(0.75, abs=1e-9, rel=0)  # recorded pace: 4 snapshots 0.25 s apart
    for i, a in enumerate(values):
        upto = [m for t, m in timed if t <= i * 0.25 + 1e-9]
        got = node_poses(upto)
        fk = _json("fk", PENDULUM, "--positions", json.dumps({"joint A": a, "joint B": -a / 2}), "--json")["frames"]
        assert set(got) == set(fk)  # links from the snapshot, joint frames by FK of the recorded model
        assert_same_poses(got, fk)
    assert len(visual_names([m for _, m in timed])) == 3  # the recorded robot_description's visuals


@needs_viser
def test_recording_places_robots_by_tf(tmp_path: Path) -> None:
    """Joint states only (no snapshot), and /tf putting the root link at (1, 2, 0) in world: the robot drawn
    there, by forward kinematics of the recorded description, as state_store builds its world."""
    from robot_state_format.recording import JOINT_STATE_TYPE, STRING_TYPE, TF_TYPE, RecordingWriter
    bag = tmp_path / "bag"
    w = RecordingWriter(bag)
    w.add_topic("/robot_description", STRING_TYPE)
    w.add_topic("/tf", TF_TYPE)
    w.add_topic("/joint_states", JOINT_STATE_TYPE)
    t0 = 1_000_000_000
    w.write_message("/robot_description", {"data": Path(PENDULUM).read_text()}, t0)
    w.write_message("/tf", {"transforms": [{"header": {"stamp": {"sec": 1, "nanosec": 0}, "frame_id": "world"},
                                            "child_frame_id": "link A",
                                            "transform": {"translation": {"x": 1.0, "y": 2.0, "z": 0.0},
                                                          "rotation": {"x": 0.0, "y": 0.0, "z": 0.0, "w": 1.0}}}]},
                    t0 + 1)
    w.write_message("/joint_states", {"header": {"stamp": {"sec": 1, "nanosec": 2}, "frame_id": ""},
                                      "name": ["joint A", "joint B"], "position": [0.5, -0.3], "velocity": [],
                                      "effort": []}, t0 + 2)
    w.close()
    scene, _ = _export(tmp_path, str(bag))
    got = node_poses([m for _, m in scene["messages"]])
    fk = _json("fk", PENDULUM, "--positions", '{"joint A": 0.5, "joint B": -0.3}', "--json")["frames"]
    for entry in fk.values():  # by hand: everything 1 m along x and 2 m along y
        entry["position"] = [entry["position"][0] + 1.0, entry["position"][1] + 2.0, entry["position"][2]]
    assert set(got) == set(fk)
    assert_same_poses(got, fk)


def _serve(*args: str) -> tuple[subprocess.Popen[str], int]:
    proc = subprocess.Popen([sys.executable, "-m", "robot_state_format", "view", *args, "--port", "0"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    assert proc.stdout is not None
    line = proc.stdout.readline()
    if "serving" not in line:
        proc.kill()
        raise AssertionError(f"no URL printed: {line!r} {proc.stderr.read() if proc.stderr else ''}")
    url = line.split(" on ", 1)[1].split()[0]
    assert url.startswith("http://127.0.0.1:")
    return proc, int(url.rstrip("/").rsplit(":", 1)[1])


def _stop(proc: subprocess.Popen[str]) -> int:
    proc.terminate()
    return proc.wait(30)


@needs_viser
def test_served_scene_is_frames_json_and_serves_nothing_else(tmp_path: Path) -> None:
    proc, port = _serve(ARM7)
    try:
        got = node_poses(served_messages(port))
        frames = _json("frames", ARM7, "--json")["frames"]
        assert set(got) == set(frames)
        assert_same_poses(got, frames)
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/", timeout=30) as page:
            assert page.status == 200 and b"<html" in page.read(4096)
        secret = tmp_path / "secret.txt"
        secret.write_text("not for the browser")
        for path in ("/etc/passwd", "/../../../../etc/passwd", "/%2e%2e/%2e%2e/etc/passwd", str(secret),
                     "/" + ARM7, "/index.html/../../__init__.py", "/../_viser.py", "/..%2F_viser.py"):
            with pytest.raises(urllib.error.HTTPError) as err:
                urllib.request.urlopen(f"http://127.0.0.1:{port}{path}", timeout=30)
            assert err.value.code == 404, path
    finally:
        assert _stop(proc) == 0  # SIGTERM: done


@needs_viser
def test_served_recording_has_a_timeline(tmp_path: Path) -> None:
    bag = _recording(tmp_path, [0.0, 0.7])
    proc, port = _serve(str(bag))
    try:
        messages = served_messages(port)
        labels = [m["props"].get("label") for m in messages if m.get("type", "").startswith("Gui") and "props" in m]
        assert "time (s)" in labels and "play" in labels
        got = node_poses(messages)  # at time 0: the first snapshot
        fk = _json("fk", PENDULUM, "--positions", '{"joint A": 0.0, "joint B": 0.0}', "--json")["frames"]
        assert_same_poses(got, {k: v for k, v in fk.items() if v["kind"] in ("model", "link")})
    finally:
        assert _stop(proc) == 0


@needs_viser
def test_missing_mesh_is_a_warning_and_a_placeholder(tmp_path: Path) -> None:
    trimesh = pytest.importorskip("trimesh")
    pytest.importorskip("collada")  # pycollada: trimesh's COLLADA reader (the view extra)
    box = trimesh.creation.box(extents=[0.2, 0.4, 0.6])
    box.export(tmp_path / "part.stl")
    box.export(tmp_path / "part.obj")
    (tmp_path / "part.dae").write_bytes(trimesh.exchange.dae.export_collada(box))
    urdf = tmp_path / "meshes.urdf"
    urdf.write_text(f"""<robot name="m">
  <link name="a"><visual><geometry><mesh filename="part.stl" scale="2 1 1"/></geometry></visual></link>
  <link name="b"><visual><geometry><mesh filename="package://no_such_package/gone.stl"/></geometry></visual></link>
  <link name="c"><visual><geometry><mesh filename="part.obj"/></geometry></visual></link>
  <link name="d"><visual><geometry><mesh filename="file://{tmp_path}/part.dae"/></geometry></visual></link>
  <joint name="j" type="fixed"><parent link="a"/><child link="b"/><origin xyz="1 0 0"/></joint>
  <joint name="k" type="fixed"><parent link="a"/><child link="c"/><origin xyz="0 1 0"/></joint>
  <joint name="l" type="fixed"><parent link="a"/><child link="d"/><origin xyz="0 0 1"/></joint>
</robot>
""")
    out = tmp_path / "out"
    r = cli("view", str(urdf), "--export", str(out))
    assert r.returncode == 0, r.stderr
    assert "no_such_package/gone.stl" in r.stderr and "placeholder" in r.stderr
    scene = embedded_scene(out / "index.html")
    meshes = visual_names([m for _, m in scene["messages"]])
    for read in ("a", "c", "d"):  # STL (relative to the URDF), OBJ, DAE (file://): read, drawn solid
        assert meshes[f"/m::{read}/visual_0"]["wireframe"] is False, read
    assert meshes["/m::b/visual_0"]["wireframe"] is True  # the placeholder
    assert r.stderr.count("placeholder") == 1


def test_without_viser_one_line_and_exit_2(tmp_path: Path) -> None:
    blocker = tmp_path / "block" / "viser"
    blocker.mkdir(parents=True)
    (blocker / "__init__.py").write_text("raise ImportError('No module named viser')\n")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(blocker.parent), str(ROOT)])}
    r = cli("view", ARM7, "--export", str(tmp_path / "x"), env=env)
    assert r.returncode == 2
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and "pip install viser" in lines[0] and "robot_state_format[view]" in lines[0], r.stderr


@needs_viser
def test_bad_inputs_exit_codes(tmp_path: Path) -> None:
    assert cli("view", str(tmp_path / "missing.urdf"), "--export", str(tmp_path / "o")).returncode == 2
    bad = tmp_path / "bad.urdf"
    bad.write_text("<robot name='r'><link name='a'/><joint name='j' type='revolute'/></robot>")
    assert cli("view", str(bad), "--export", str(tmp_path / "o")).returncode == 1
    assert cli("view", ARM7, "--positions", "{not json", "--export", str(tmp_path / "o")).returncode == 2
    assert cli("view", ARM7, "--positions", '{"nope": 1}', "--export", str(tmp_path / "o")).returncode == 1
    assert cli("view").returncode == 2
    t = time.monotonic()
    r = cli("view", ARM7, "--port", "0", "--duration", "0.5")
    assert r.returncode == 0 and "serving" in r.stdout and time.monotonic() - t < 60


@needs_viser
def test_visuals_of_a_model_that_arrives_after_the_first_poses() -> None:
    """The live view shows the frames from TF before the robot_description may arrive: the visuals are added to
    frames already shown, and taken away again with the model."""
    from robot_state_format.model.loader import load_model_file
    from robot_state_format.view.scene import Scene, scene_from_model
    from robot_state_format.view.server import SceneView, start_server, stop_server

    full = scene_from_model(load_model_file(PENDULUM))
    bare = Scene(nodes=dict(full.nodes))
    server = start_server("127.0.0.1", 0)
    try:
        view = SceneView(server)
        view.show(bare)
        assert visual_names(served_messages(server.get_port())) == {}
        view.show(full)
        view.show(full)  # the same model again: nothing to add
        meshes = visual_names(served_messages(server.get_port()))
        assert sorted(meshes) == ["/linkage::link A/visual_0", "/linkage::link B/visual_0", "/linkage::link C/visual_0"]
        assert meshes["/linkage::link B/visual_0"]["color"] == [76, 76, 76]  # rgba 0.3 0.3 0.3
        view.show(bare)
        assert visual_names(served_messages(server.get_port())) == {}
    finally:
        stop_server(server)


def _mesh_disk(tmp_path: Path, trimesh: Any) -> tuple[Path, Path]:
    """A mesh outside any package (``outside/secret.stl``) and one in the package ``meshpkg`` of the package
    path ``tmp_path/ws`` (``meshes/part.stl``)."""
    outside, pkg = tmp_path / "outside", tmp_path / "ws" / "meshpkg"
    outside.mkdir()
    (pkg / "meshes").mkdir(parents=True)
    (pkg / "package.xml").write_text('<package format="3"><name>meshpkg</name></package>')
    box = trimesh.creation.box(extents=[0.2, 0.4, 0.6])
    box.export(outside / "secret.stl")
    box.export(pkg / "meshes" / "part.stl")
    return outside, pkg


@needs_viser
def test_the_live_view_opens_only_package_meshes_of_a_network_description(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """``view --live`` shows robots whose descriptions came over the network: a mesh is read only as a
    ``package://`` file inside its package; a file://, absolute, relative or escaping name is a placeholder,
    and nothing it names is looked up or read (the same name from a user's file is read)."""
    trimesh = pytest.importorskip("trimesh")
    from robot_state_format.model.loader import load_model_file
    from robot_state_format.model.packages import clear_cache
    from robot_state_format.ros.description import XacroPolicy, read_description_text
    from robot_state_format.view import meshes
    from robot_state_format.view import server as server_module
    from robot_state_format.view.scene import scene_from_model
    from robot_state_format.view.server import SceneView, start_server, stop_server

    outside, pkg = _mesh_disk(tmp_path, trimesh)
    monkeypatch.setenv("ROS_PACKAGE_PATH", str(tmp_path / "ws"))
    monkeypatch.setenv("AMENT_PREFIX_PATH", "")
    monkeypatch.chdir(tmp_path)
    clear_cache()
    names = {"a": "package://meshpkg/meshes/part.stl", "b": f"file://{outside}/secret.stl",
             "c": f"{outside}/secret.stl", "d": "outside/secret.stl",
             "e": "package://meshpkg/../../outside/secret.stl", "f": "model://outside/secret.stl"}
    links = "".join(f'<link name="{k}"><visual><geometry><mesh filename="{v}"/></geometry></visual></link>'
                    for k, v in names.items())
    joints = "".join(f'<joint name="j{k}" type="fixed"><parent link="a"/><child link="{k}"/></joint>' for k in "bcdef")
    text = f'<robot name="m">{links}{joints}</robot>'
    model = read_description_text(text, "", XacroPolicy()).model
    read: list[str] = []
    real_read = meshes.read_input_file
    monkeypatch.setattr(meshes, "read_input_file", lambda p, *a, **k: read.append(str(p)) or real_read(p, *a, **k))
    looked: list[str] = []
    real_resolve = server_module.resolve_mesh
    monkeypatch.setattr(server_module, "resolve_mesh", lambda f, *a: looked.append(f) or real_resolve(f, *a))
    server = start_server("127.0.0.1", 0)
    try:
        view = SceneView(server, network=True)
        view.show(scene_from_model(model))
        shown = visual_names(served_messages(server.get_port()))
    finally:
        stop_server(server)
    assert {k: shown[f"/m::{k}/visual_0"]["wireframe"] for k in names} == {
        "a": False, "b": True, "c": True, "d": True, "e": True, "f": True}  # solid: read; wireframe: placeholder
    assert read == [str((pkg / "meshes" / "part.stl").resolve())]
    assert looked == []  # no search by the readers' rules (search paths, existence) for a network model
    assert len([w for w in view.warnings if "not opened" in w]) == 5, view.warnings
    # the same text as the user's own file, in the user's own view: what it names is read
    (tmp_path / "own.urdf").write_text(text)
    server = start_server("127.0.0.1", 0)
    try:
        view = SceneView(server)
        view.show(scene_from_model(load_model_file(tmp_path / "own.urdf")))
        shown = visual_names(served_messages(server.get_port()))
    finally:
        stop_server(server)
        clear_cache()
    assert shown["/m::b/visual_0"]["wireframe"] is False and shown["/m::c/visual_0"]["wireframe"] is False
    assert len(looked) == 6


@needs_viser
def test_a_recorded_description_opens_files_as_a_live_one(tmp_path: Path) -> None:
    """A recording's robot_description came from a topic: viewing the recording opens only package:// meshes
    inside their package (a file:// or absolute mesh is a placeholder, never read), and an MJCF include of
    a file outside any package refuses that robot without quoting the file."""
    trimesh = pytest.importorskip("trimesh")
    from robot_state_format.recording import STRING_TYPE, RecordingWriter

    marker = "SECRETMARKER3391"
    outside, _pkg = _mesh_disk(tmp_path, trimesh)
    (outside / "secret.xml").write_text(f'<mujoco><worldbody><body name="{marker}"><geom size="1"/></body>'
                                        "</worldbody></mujoco>")
    urdf = ('<robot name="m">'
            '<link name="a"><visual><geometry><mesh filename="package://meshpkg/meshes/part.stl"/></geometry>'
            '</visual></link>'
            f'<link name="b"><visual><geometry><mesh filename="file://{outside}/secret.stl"/></geometry></visual></link>'
            f'<link name="c"><visual><geometry><mesh filename="{outside}/secret.stl"/></geometry></visual></link>'
            '<joint name="jb" type="fixed"><parent link="a"/><child link="b"/></joint>'
            '<joint name="jc" type="fixed"><parent link="a"/><child link="c"/></joint></robot>')
    mjcf = f'<mujoco model="x"><include file="{outside}/secret.xml"/></mujoco>'
    bag = tmp_path / "bag"
    w = RecordingWriter(bag)
    for ns in ("/r1", "/r2"):
        w.add_topic(f"{ns}/robot_description", STRING_TYPE)
        w.add_topic(f"{ns}/world_state", STRING_TYPE)
    w.write_message("/r1/robot_description", {"data": urdf}, 1_000_000_000)
    w.write_message("/r2/robot_description", {"data": mjcf}, 1_000_000_001)
    w.write_message("/r1/world_state", {"data": '<world_state name="w" version="1.0"><stamp sec="1" nanosec="0"/>'
                                                '<model_state name="m"><pose>0 0 0 0 0 0</pose>'
                                                + "".join(f'<link_state name="{k}"><pose>0 0 0 0 0 0</pose></link_state>'
                                                          for k in "abc")
                                                + "</model_state></world_state>"}, 1_000_000_002)
    w.close()
    env = {**os.environ, "ROS_PACKAGE_PATH": str(tmp_path / "ws"), "AMENT_PREFIX_PATH": ""}
    out = tmp_path / "out"
    r = cli("view", str(bag), "--export", str(out), env=env)
    assert r.returncode == 0, r.stderr
    meshes = visual_names([m for _, m in embedded_scene(out / "index.html")["messages"]])
    wire = {k.split("::")[1].split("/")[0]: v["wireframe"] for k, v in meshes.items()}
    assert wire == {"a": False, "b": True, "c": True}, meshes
    assert r.stderr.count("not opened: a description received over the network") == 2, r.stderr
    assert "MODEL_FILE_REFUSED" in r.stderr and marker not in r.stderr + r.stdout, r.stderr
    # the refusal says what a viewer's user can do, not how to start a node
    assert "view the robot's own file instead" in r.stderr and "description_files" not in r.stderr, r.stderr
    # the same URDF as the user's own file reads every mesh it names
    (tmp_path / "own.urdf").write_text(urdf)
    r = cli("view", str(tmp_path / "own.urdf"), "--export", str(tmp_path / "own"), env=env)
    assert r.returncode == 0, r.stderr
    own = visual_names([m for _, m in embedded_scene(tmp_path / "own" / "index.html")["messages"]])
    assert [v["wireframe"] for v in own.values()] == [False, False, False], own
