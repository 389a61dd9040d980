"""``robot-state-format view`` in a real browser: Debian's chromium, headless, WebGL in software (SwiftShader),
driven over the DevTools protocol. The served page and the exported folder (served by a Python without this
project) draw the robot; two configurations of one robot, seen from the same camera, give different pictures;
a restart file and a recording draw their robots too; the client's scene tree panel lists the frames of
``fk --json``. Skipped, naming it, without chromium or viser.

Software WebGL on a loaded 2-core machine takes tens of seconds per page (docs/view.md), so the pages are few.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest
from repo_paths import REPO_ROOT
from view_harness import CHROMIUM, Browser, Page, cli, embedded_scene, frame_name, node_poses, robot_pixels

pytest.importorskip("viser")
if CHROMIUM is None:
    pytest.skip("chromium is not installed (apt-get install chromium)", allow_module_level=True)

pytestmark = pytest.mark.timeout(1200)

ROOT = REPO_ROOT
ARM7 = str(ROOT / "robot_state_format" / "samples" / "arm7_gripper.urdf")
POSE_A = '{"joint2": 0.3, "joint4": -0.9}'
POSE_B = '{"joint2": 0.3, "joint4": -0.9, "joint6": 1.2, "joint7": 1.5}'  # the wrist: the same camera
MIN_PIXELS = 300  # of the arm's blue in an 800x600 picture (it covers a few thousand)


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    b = Browser(800, 600)
    try:
        yield b
    finally:
        b.close()


SHOW_SCENE_TREE = """(() => { const e = document.querySelector('[aria-label="Show scene tree"]');
    if (!e) return "no button"; e.click(); return "clicked"; })()"""


def _scene_tree(page: Page, timeout: float = 120.0) -> set[str]:
    """The frame names the page's scene tree panel lists (viser's own /grid and /WorldAxes left out)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        text = page.evaluate("document.body.innerText") or ""
        if "Scene tree" in text and "::" in text:
            rows = [line.strip() for line in text.splitlines() if line.strip().startswith("/")]
            return {frame_name(r) for r in rows if r not in ("/grid", "/WorldAxes") and r.count("/") == 1}
        time.sleep(0.5)
    raise AssertionError("the scene tree panel did not open")


def _drawn(shot: np.ndarray) -> bool:
    return int(robot_pixels(shot).sum()) > MIN_PIXELS


def _camera(scene: dict[str, object]) -> list[object]:
    messages = scene["messages"]
    assert isinstance(messages, list)
    return [m for _, m in messages if m.get("type", "").startswith("SetCamera")]


@pytest.fixture(scope="module")
def http_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Path, int]]:
    """A plain ``python -m http.server`` over a folder, run by an isolated Python (no project on its path)."""
    root = tmp_path_factory.mktemp("site")
    python = shutil.which("python3") or sys.executable
    proc = subprocess.Popen([python, "-I", "-u", "-m", "http.server", "--bind", "127.0.0.1", "-d", str(root), "0"],
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    assert proc.stdout is not None
    line = proc.stdout.readline()
    port = int(line.split(" port ", 1)[1].split()[0])
    try:
        yield root, port
    finally:
        proc.terminate()
        proc.wait(30)


def test_served_page_draws_the_model(browser: Browser) -> None:
    proc = subprocess.Popen([sys.executable, "-m", "robot_state_format", "view", ARM7, "--positions", POSE_A,
                             "--port", "0"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert proc.stdout is not None
        url = proc.stdout.readline().split(" on ", 1)[1].split()[0]
        with browser.page(url) as page:
            shot = page.wait_for_picture(_drawn)
            assert shot.std() > 1.0  # not a blank page
            assert int(robot_pixels(shot).sum()) > MIN_PIXELS
    finally:
        proc.terminate()
        assert proc.wait(30) == 0


def test_exported_configurations_differ_over_a_plain_web_server(browser: Browser, http_server: tuple[Path, int],
                                                                tmp_path: Path) -> None:
    root, port = http_server
    pictures = []
    cameras = []
    for name, pose in (("a", POSE_A), ("b", POSE_B)):
        r = cli("view", ARM7, "--positions", pose, "--export", str(root / name))
        assert r.returncode == 0, r.stderr
        scene = embedded_scene(root / name / "index.html")
        cameras.append(_camera(scene))
        with browser.page(f"http://127.0.0.1:{port}/{name}/") as page:
            pictures.append(robot_pixels(page.wait_for_picture(_drawn)))
            if name == "a":  # the node names the client holds: its scene tree panel lists them
                assert page.evaluate(SHOW_SCENE_TREE) == "clicked"
                names = _scene_tree(page)
                fk = json.loads(cli("fk", ARM7, "--positions", pose, "--json").stdout)["frames"]
                assert names == set(fk)
    assert cameras[0] == cameras[1]  # one camera: the pictures differ by the robot alone
    a, b = pictures
    changed = int((a ^ b).sum())
    assert changed > max(100, 0.05 * min(int(a.sum()), int(b.sum()))), (changed, int(a.sum()), int(b.sum()))


def _restart(tmp_path: Path) -> Path:
    state = tmp_path / "arm7.usdf"
    r = cli("state", "from-model", ARM7, "--positions", POSE_B, "-o", str(state))
    assert r.returncode == 0, r.stderr
    return state


def test_restart_file_and_recording_pages_draw_the_robot(browser: Browser, http_server: tuple[Path, int],
                                                         tmp_path: Path) -> None:
    from robot_state_format.model.loader import load_model_file
    from robot_state_format.recording import STRING_TYPE, RecordingWriter
    from robot_state_format.usdf.build import state_from_model
    from robot_state_format.usdf.writer import write_world_state
    root, port = http_server
    state = _restart(tmp_path)
    r = cli("view", str(state), "--model", ARM7, "--export", str(root / "restart"))
    assert r.returncode == 0, r.stderr
    model = load_model_file(ARM7)
    bag = tmp_path / "bag"
    w = RecordingWriter(bag)
    w.add_topic("/robot_description", STRING_TYPE)
    w.add_topic("/world_state", STRING_TYPE)
    w.write_message("/robot_description", {"data": Path(ARM7).read_text()}, 1_000_000_000)
    for i in range(3):
        w.write_message("/world_state", {"data": write_world_state(state_from_model(model, {"joint1": 0.4 * i}))},
                        1_000_000_000 + i * 200_000_000)
    w.close()
    r = cli("view", str(bag), "--export", str(root / "recording"))
    assert r.returncode == 0, r.stderr
    scene = embedded_scene(root / "recording" / "index.html")
    assert "arm7_gripper::link1" in node_poses([m for _, m in scene["messages"]])
    for name in ("restart", "recording"):
        with browser.page(f"http://127.0.0.1:{port}/{name}/") as page:
            shot = page.wait_for_picture(_drawn)
            assert int(robot_pixels(shot).sum()) > MIN_PIXELS, name
