"""Helpers of test_view*.py: Debian's chromium driven headless over the DevTools protocol, and the scene a
viser client holds, decoded from what the client is given (the websocket of a served view, or the scene
embedded in an exported page) with viser's documented wire format (zstd + msgpack), not with our code."""

from __future__ import annotations

import base64
import io
import itertools
import json
import re
import select
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import numpy as np

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
NOT_FRAMES = {"/grid", "/WorldAxes"}


# -- what a client holds ---------------------------------------------------------------------------------
def _msgpack(data: bytes) -> Any:
    import msgspec
    return msgspec.msgpack.decode(data)


def decode_viser_file(data: bytes) -> dict[str, Any]:
    """A serialized scene (a ``.viser`` file, or the one an exported page embeds)."""
    import zstandard
    inner_size = int.from_bytes(data[:8], "little")
    inner = zstandard.ZstdDecompressor().decompress(data[8:], max_output_size=inner_size)
    n = int.from_bytes(inner[:8], "little")
    doc: dict[str, Any] = _msgpack(inner[8:8 + n])
    return doc


def embedded_scene(page: Path) -> dict[str, Any]:
    """The scene an exported page embeds (``window.__VISER_EMBED_DATA__``)."""
    m = re.search(r'window\.__VISER_EMBED_DATA__="([A-Za-z0-9+/=]*)"', page.read_text(encoding="utf-8"))
    assert m is not None, f"{page}: no embedded scene"
    return decode_viser_file(base64.b64decode(m.group(1)))


def served_messages(port: int, timeout: float = 30.0, host: str = "127.0.0.1") -> list[dict[str, Any]]:
    """The messages a browser connecting to a served view receives, up to the end of the backlog."""
    import viser
    import zstandard
    from websockets.sync.client import connect
    out: list[dict[str, Any]] = []
    deadline = time.monotonic() + timeout
    with connect(f"ws://{host}:{port}", subprotocols=[f"viser-v{viser.__version__}"],  # type: ignore[list-item]
                 max_size=None, open_timeout=timeout) as ws:
        while time.monotonic() < deadline:
            frame = ws.recv(timeout=max(deadline - time.monotonic(), 0.1))
            assert isinstance(frame, bytes)
            size = int.from_bytes(frame[:8], "little")
            clen = int.from_bytes(frame[8:16], "little")
            inner = zstandard.ZstdDecompressor().decompress(frame[16:16 + clen], max_output_size=size)
            messages = _msgpack(inner)["messages"]
            out.extend(messages)
            if any(m.get("type") == "ReplayDoneMessage" for m in messages):
                return out
    raise AssertionError("the served view did not finish sending its scene")


def frame_name(path: str) -> str:
    return path[1:].replace("%2F", "/").replace("%25", "%")


def node_poses(messages: list[dict[str, Any]]) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """Frame name -> (position, quaternion x y z w) of every top-level node (a frame of the scene), applying
    the messages in order as the client does (a new node at the identity, then position/orientation
    updates, removals)."""
    poses: dict[str, tuple[np.ndarray, np.ndarray]] = {}
    for m in messages:
        name = m.get("name")
        if not isinstance(name, str) or name in NOT_FRAMES or name.count("/") != 1:
            continue
        kind = m.get("type", "")
        if kind == "FrameMessage":
            poses[name] = (np.zeros(3), np.array([0.0, 0.0, 0.0, 1.0]))
        elif kind == "SetPositionMessage" and name in poses:
            poses[name] = (np.array(m["position"], dtype=float), poses[name][1])
        elif kind == "SetOrientationMessage" and name in poses:
            w, x, y, z = m["wxyz"]
            poses[name] = (poses[name][0], np.array([x, y, z, w], dtype=float))
        elif kind == "RemoveSceneNodeMessage":
            poses.pop(name, None)
    return {frame_name(k): v for k, v in poses.items()}


def assert_same_poses(got: dict[str, tuple[np.ndarray, np.ndarray]], frames: dict[str, Any],
                      atol: float = 1e-9) -> None:
    """Every frame of a ``frames --json`` table in ``got`` at its pose (quaternions up to sign)."""
    for name, entry in frames.items():
        assert name in got, f"{name!r} is not in the view"
        pos, quat = got[name]
        np.testing.assert_allclose(pos, entry["position"], rtol=0, atol=atol, err_msg=name)
        q = np.array(entry["quaternion"], dtype=float)
        sign = 1.0 if float(q @ quat) >= 0 else -1.0
        np.testing.assert_allclose(sign * quat, q, rtol=0, atol=atol, err_msg=name)


def visual_names(messages: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """Mesh nodes (the visuals) by node path, with their props."""
    return {m["name"]: m["props"] for m in messages if m.get("type") == "MeshMessage"}


# -- the browser -----------------------------------------------------------------------------------------
class Browser:
    """One headless chromium (SwiftShader WebGL) and its DevTools connection."""

    def __init__(self, width: int = 800, height: int = 600) -> None:
        assert CHROMIUM is not None
        self.profile = tempfile.mkdtemp(prefix="rsf-chromium-")
        self.proc = subprocess.Popen(
            [CHROMIUM, "--headless=new", "--no-sandbox", "--use-angle=swiftshader", "--enable-unsafe-swiftshader",
             f"--window-size={width},{height}", "--remote-debugging-port=0", "--remote-allow-origins=*",
             "--disable-background-networking", "--disable-component-update", "--disable-sync", "--no-first-run",
             "--disable-extensions", "--mute-audio", f"--user-data-dir={self.profile}", "about:blank"],
            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        self.width, self.height = width, height
        port = int(self._devtools_url(60.0).split("//", 1)[1].split("/", 1)[0].rsplit(":", 1)[1])
        import urllib.request
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/json/list", timeout=30) as r:
            targets = json.loads(r.read())
        url = next(t["webSocketDebuggerUrl"] for t in targets if t.get("type") == "page")
        from websockets.sync.client import connect
        self.ws = connect(url, max_size=None, open_timeout=30)
        self.ids = itertools.count(1)

    def _devtools_url(self, timeout: float) -> str:
        assert self.proc.stderr is not None
        deadline = time.monotonic() + timeout
        seen = []
        while time.monotonic() < deadline:
            ready, _, _ = select.select([self.proc.stderr], [], [], 0.5)
            if not ready:
                continue
            line = self.proc.stderr.readline()
            if not line and self.proc.poll() is not None:
                break
            seen.append(line)
            m = re.search(r"DevTools listening on (ws://\S+)", line)
            if m:
                return m.group(1)
        raise AssertionError("chromium did not start: " + "".join(seen[-5:]))

    def call(self, method: str, params: dict[str, Any] | None = None, session: str | None = None,
             timeout: float = 240.0) -> dict[str, Any]:
        i = next(self.ids)
        msg: dict[str, Any] = {"id": i, "method": method, "params": params or {}}
        if session is not None:
            msg["sessionId"] = session
        self.ws.send(json.dumps(msg))
        deadline = time.monotonic() + timeout
        while True:
            reply = json.loads(self.ws.recv(timeout=max(deadline - time.monotonic(), 0.1)))
            if reply.get("id") == i:
                if "error" in reply:
                    raise AssertionError(f"{method}: {reply['error']}")
                result: dict[str, Any] = reply.get("result", {})
                return result

    @contextmanager
    def page(self, url: str) -> Iterator[Page]:
        """The browser's page, showing ``url`` (about:blank again afterwards)."""
        page = Page(self, None)
        self.call("Emulation.setDeviceMetricsOverride", {"width": self.width, "height": self.height,
                                                         "deviceScaleFactor": 1, "mobile": False})
        self.call("Page.navigate", {"url": url})
        try:
            yield page
        finally:
            self.call("Page.navigate", {"url": "about:blank"})

    def close(self) -> None:
        try:
            self.ws.close()
        finally:
            self.proc.terminate()
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(10)
            shutil.rmtree(self.profile, ignore_errors=True)


class Page:
    def __init__(self, browser: Browser, session: str | None) -> None:
        self.browser, self.session = browser, session

    def evaluate(self, expression: str) -> Any:
        r = self.browser.call("Runtime.evaluate", {"expression": expression, "returnByValue": True}, self.session)
        return r.get("result", {}).get("value")

    def screenshot(self) -> np.ndarray:
        from PIL import Image
        data = self.browser.call("Page.captureScreenshot", {"format": "png"}, self.session)["data"]
        return np.asarray(Image.open(io.BytesIO(base64.b64decode(data))).convert("RGB"), dtype=np.int32)

    def wait_for_picture(self, drawn: Callable[[np.ndarray], bool], timeout: float = 300.0) -> np.ndarray:
        """The first screenshot for which ``drawn`` holds, once it stopped changing (two equal in a row), or
        the sixth in a row for which it holds while the picture keeps changing (a recording being played)."""
        deadline = time.monotonic() + timeout
        last: np.ndarray | None = None
        held = 0
        while time.monotonic() < deadline:
            try:
                shot = self.screenshot()
            except AssertionError as exc:  # a navigation swapping the renderer: not attached for a moment
                if "Not attached" not in str(exc):
                    raise
                time.sleep(0.5)
                continue
            held = held + 1 if drawn(shot) else 0
            if held and ((last is not None and np.array_equal(shot, last)) or held >= 6):
                return shot
            last = shot
            time.sleep(0.5)
        raise AssertionError("the page did not draw the scene in time")


def robot_pixels(shot: np.ndarray) -> np.ndarray:
    """Pixels of a saturated blue (the arm7 sample's links), not of the white page, grey grid or the
    notification's orange bar."""
    r, g, b = shot[..., 0], shot[..., 1], shot[..., 2]
    mask: np.ndarray = (b - np.maximum(r, g)) > 60
    return mask


def cli(*args: str, timeout: float = 120.0, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    """``robot-state-format ARGS`` in a child process."""
    return subprocess.run([sys.executable, "-m", "robot_state_format", *args], capture_output=True, text=True,
                          timeout=timeout, env=env)
