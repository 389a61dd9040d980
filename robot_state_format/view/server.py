"""A :class:`~robot_state_format.view.scene.Scene` in viser: served to browsers, or serialized for export.

Every scene node becomes one viser node directly under the root, named ``/`` + the frame's name
(:func:`node_path`: ``/`` and ``%`` in a name escaped as ``%2F`` and ``%25``, since viser reads ``/`` as
nesting), at the frame's world pose; a link's visuals are its children (``/robot::link1/visual_0``, at
the visual's origin in the link frame). Links, models and explicit frames show small axes; joint frames
are nodes without axes (they mostly coincide with their child link).

What the viser server serves over HTTP is its own client build (``viser/client/build``: one
``index.html``) and nothing else; the scene travels over its websocket. No file of the user's is
served by path. The live view's models come from the network, as do the descriptions of a recording
(declared in a text, ``<robot_description>``): their meshes are opened only as ``package://`` files inside
their package (``SceneView(network=True)``; a shape declared in a text), any other name is shown as a
placeholder without being looked up.
"""

from __future__ import annotations

import contextlib
import io
import math
import threading
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from robot_state_format.lazy_modules import optional_module
from robot_state_format.model.access import package_file
from robot_state_format.spatial import matrix_to_quaternion
from robot_state_format.view.meshes import resolve_mesh, triangles
from robot_state_format.view.scene import Node, Scene, Visual

viser = optional_module("viser")

__all__ = ["SceneView", "Timeline", "frame_name", "node_path", "start_server", "stop_server"]

AXES = {"link": 0.08, "model": 0.15, "frame": 0.06}
PLACEHOLDER_RGB = (230, 0, 200)


def node_path(name: str) -> str:
    """The viser node of a frame name."""
    return "/" + name.replace("%", "%25").replace("/", "%2F")


def frame_name(path: str) -> str:
    """The frame name of a top-level viser node (inverse of :func:`node_path`)."""
    return path[1:].replace("%2F", "/").replace("%25", "%")


def _wxyz(node: Node) -> tuple[float, float, float, float]:
    x, y, z, w = node.quaternion
    return (w, x, y, z)


def start_server(host: str, port: int) -> Any:
    """A viser server on ``host:port`` (port 0: any free port), quiet (the caller prints the URL).

    viser's "share URL" (a public tunnel through viser's relay, asked for by a button of its client) is
    switched off: the scene is served where ``host`` says and nowhere else."""
    with contextlib.redirect_stdout(io.StringIO()):  # viser prints its own banner
        server = viser.ViserServer(host=host, port=port, verbose=False)
    server._websock_server.unregister_handler(viser._messages.ShareUrlRequest)
    server.scene.set_up_direction("+z")
    server.scene.add_grid("/grid", width=4.0, height=4.0, cell_size=0.25)
    return server


def stop_server(server: Any) -> None:
    with contextlib.redirect_stdout(io.StringIO()):  # "(viser) Server stopped"
        server.stop()


def _same_visuals(shown: Sequence[Visual], wanted: Sequence[Visual]) -> bool:
    """Whether ``wanted`` are the visuals already shown: the same shapes (one model), colours and meshes."""
    return len(shown) == len(wanted) and all(
        a.shape is b.shape and a.rgba == b.rgba and a.mesh_path == b.mesh_path for a, b in zip(shown, wanted))


class SceneView:
    """The nodes of one viser server (or serializer recording) kept equal to the scene last given."""

    def __init__(self, server: Any, search_paths: Sequence[str] = (), *, network: bool = False) -> None:
        """``network``: the models come from descriptions received over the network (the live view), whose
        meshes are opened only as ``package://`` files inside their package (``model.access.package_file``)."""
        self.server = server
        self.search_paths = tuple(search_paths)
        self.network = network
        self.handles: dict[str, Any] = {}
        self.visuals: dict[str, tuple[list[Visual], list[Any]]] = {}  # node -> (visuals shown, their handles)
        self.warnings: list[str] = []
        self._lock = threading.Lock()

    def aim(self, scene: Scene) -> None:
        """Point the initial camera of new browsers at the scene: its frames' bounding box, the centre rounded
        to 0.25 m and the size up to 0.5 m (small motions of a robot leave the camera where it was)."""
        if not scene.nodes:
            return
        pts = np.array([n.position for n in scene.nodes.values()], dtype=float)
        lo, hi = pts.min(axis=0), pts.max(axis=0)
        center = np.round((lo + hi) / 2.0 * 4.0) / 4.0
        size = max(math.ceil(float(np.max(hi - lo)) * 2.0) / 2.0, 0.5)
        camera = self.server.initial_camera
        camera.look_at = tuple(center)
        camera.position = tuple(center + np.array([1.3, 1.1, 0.8]) * size)
        camera.up = (0.0, 0.0, 1.0)

    def show(self, scene: Scene) -> None:
        """Add, move and remove nodes so that the view holds ``scene``."""
        if not self.handles:
            self.aim(scene)
        with self._lock, self.server.atomic():
            for name, node in scene.nodes.items():
                handle = self.handles.get(name)
                if handle is None:
                    self._add(name, node, scene)
                else:
                    handle.position = node.position
                    handle.wxyz = _wxyz(node)
                    if not _same_visuals(self.visuals.get(name, ([], []))[0], scene.visuals.get(name, [])):
                        self._replace_visuals(name, scene)  # a model that arrived after the frame's first pose
            for name in [n for n in self.handles if n not in scene.nodes]:
                self.visuals.pop(name, None)
                self.handles.pop(name).remove()
        self.server.flush()

    def _replace_visuals(self, name: str, scene: Scene) -> None:
        for handle in self.visuals.pop(name, ([], []))[1]:
            handle.remove()
        self._add_visuals(name, scene)

    def _add(self, name: str, node: Node, scene: Scene) -> None:
        path = node_path(name)
        length = AXES.get(node.kind)
        self.handles[name] = self.server.scene.add_frame(
            path, show_axes=length is not None, axes_length=length or 0.05, axes_radius=(length or 0.05) / 20,
            position=node.position, wxyz=_wxyz(node))
        self._add_visuals(name, scene)

    def _add_visuals(self, name: str, scene: Scene) -> None:
        path = node_path(name)
        visuals = scene.visuals.get(name, [])
        handles: list[Any] = []
        for i, visual in enumerate(visuals):
            shape = visual.shape
            where = f"{shape.source.file}:{shape.source.line}" if shape.source.line else name
            # the network's: a live description, or one recorded from a topic (declared in "<robot_description>")
            network = self.network or shape.source.file.startswith("<")
            mesh_path = visual.mesh_path
            if shape.geometry.kind == "mesh" and mesh_path is None and shape.geometry.filename:
                mesh_path = self._mesh_path(shape.geometry.filename, shape.source.file, network)
            tri = triangles(shape, mesh_path, self.warnings, where, network=network)
            q = matrix_to_quaternion(shape.origin[:3, :3])
            rgb = PLACEHOLDER_RGB if tri.placeholder else tuple(int(round(255 * c)) for c in visual.rgba[:3])
            handles.append(self.server.scene.add_mesh_simple(
                f"{path}/visual_{i}", tri.vertices, tri.faces, color=rgb, wireframe=tri.placeholder,
                opacity=None if visual.rgba[3] >= 1.0 else float(visual.rgba[3]),
                position=tuple(float(v) for v in shape.origin[:3, 3]), wxyz=(q[3], q[0], q[1], q[2])))
        self.visuals[name] = (list(visuals), handles)


    def _mesh_path(self, filename: str, declared_in: str, network: bool) -> Path | None:
        if not network:  # a model file the user named
            return resolve_mesh(filename, declared_in, self.search_paths)
        real = package_file(filename)  # nothing else is looked up: a peer learns nothing of the files
        return Path(real) if real is not None else None


class Timeline:
    """A recording in the browser: a time slider to scrub and a play toggle that plays at recorded pace."""

    def __init__(self, view: SceneView, frames: Sequence[tuple[float, Scene]]) -> None:
        self.view = view
        self.frames = list(frames)
        self.times = [t for t, _ in self.frames]
        gui = view.server.gui
        end = self.times[-1] if self.times else 0.0
        self.slider = gui.add_slider("time (s)", min=0.0, max=max(end, 1e-3), step=1e-3, initial_value=0.0)
        self.play = gui.add_checkbox("play", initial_value=False)
        self.loop = gui.add_checkbox("loop", initial_value=True)
        self.shown = -1
        self.slider.on_update(lambda _event: self.seek(float(self.slider.value)))
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="view-timeline", daemon=True)
        self.seek(0.0)

    def index_at(self, t: float) -> int:
        """The last frame recorded at or before ``t`` seconds from the start (the first before that)."""
        lo, hi = 0, len(self.times)
        while lo < hi:
            mid = (lo + hi) // 2
            if self.times[mid] <= t + 1e-12:
                lo = mid + 1
            else:
                hi = mid
        return max(lo - 1, 0)

    def seek(self, t: float) -> None:
        if not self.frames:
            return
        i = self.index_at(t)
        if i != self.shown:
            self.shown = i
            self.view.show(self.frames[i][1])

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()

    def _run(self) -> None:
        last = time.monotonic()
        end = self.times[-1] if self.times else 0.0
        while not self._stop.wait(0.02):
            now = time.monotonic()
            if self.play.value and end > 0.0:
                t = float(self.slider.value) + (now - last)
                if t > end:
                    t = 0.0 if self.loop.value else end
                    if not self.loop.value:
                        self.play.value = False
                self.slider.value = t  # on_update seeks
                self.seek(t)
            last = now


def export_html(frames: Sequence[tuple[float, Scene]], out_dir: Path, search_paths: Sequence[str] = ()) -> tuple[
        Path, list[str]]:
    """Write ``out_dir/index.html``: viser's client with the scene (a recording: every frame at its recorded
    time, played by the client's own timeline) embedded; any static web server, or the file itself,
    shows it. Returns the page and the warnings about visuals."""
    server = start_server("127.0.0.1", 0)
    try:
        view = SceneView(server, search_paths)
        view.show(frames[0][1])
        serializer = server.get_scene_serializer()
        previous = frames[0][0]
        for t, scene in frames[1:]:
            serializer.insert_sleep(max(t - previous, 0.0))
            previous = t
            view.show(scene)
        html = serializer.as_html()
    finally:
        stop_server(server)
    out_dir.mkdir(parents=True, exist_ok=True)
    page = out_dir / "index.html"
    page.write_text(html, encoding="utf-8")
    return page, view.warnings
