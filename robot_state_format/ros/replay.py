"""Replay: a restart file checked against a model and turned into messages; timed playback.

* :func:`check_state` compares a :class:`WorldState` with a :class:`Model` (model_state names,
  joint names, DOF counts) and returns every mismatch as a sentence; replay refuses on any.
* :func:`joint_state_fields` gives the ``sensor_msgs/JointState`` arrays of a state (multi-DOF
  joints as MoveIt's named sub-joints ``<joint>/<dof>``, the names the state_publisher reads).
* :class:`RecordingTimeline` streams an MCAP recording in log-time order from a read-ahead thread
  (bounded memory); :func:`timeline_from_directory` reads a directory of restart files.
* :class:`Player` publishes a timeline (from an MCAP recording or a directory of restart files)
  at the recorded pace times ``rate``, from ``start_offset``, optionally looping, with pause and
  resume, on its own thread (SCHED_FIFO when the process may: sub-millisecond wake-ups under load).  Stamps inside the messages (JointState ``header.stamp`` and the
  USDF ``<stamp>``) are shifted by whole loop lengths so time never runs backwards.

The message and timeline code here imports no rclpy; the :class:`Player` gets its publishers
from the node.
"""

from __future__ import annotations

import heapq
import math
import os
import re
import struct
import threading
import time
from collections import deque
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

from robot_state_format.errors import RobotStateFormatError
from robot_state_format import spatial as tfm
from robot_state_format.limits import read_input_file
from robot_state_format.model.types import SCOPE, JointType, Model
from robot_state_format.usdf.types import JointState, ModelState, WorldState

CDR_LE_HEADER = b"\x00\x01\x00\x00"
NS = 1_000_000_000
STATE_TOPICS = frozenset({"world_state", "joint_states"})

MULTI_DOF_SUFFIXES: dict[JointType, tuple[str, ...]] = {
    JointType.FLOATING: ("trans_x", "trans_y", "trans_z", "rot_x", "rot_y", "rot_z", "rot_w"),
    JointType.PLANAR: ("x", "y", "theta"),
    JointType.BALL: ("rot_x", "rot_y", "rot_z", "rot_w"),
    JointType.UNIVERSAL: ("axis1", "axis2"),
    JointType.REVOLUTE2: ("axis1", "axis2"),
}


# -- restart file against a model ------------------------------------------------------------------
def flatten_joints(ms: ModelState, prefix: str = "") -> dict[str, JointState]:
    """Joint states of a model_state and its nested ones, keyed by model-relative name."""
    out = {f"{prefix}{js.name}": js for js in ms.joint_states}
    for sub in ms.model_states:
        out.update(flatten_joints(sub, f"{prefix}{sub.name}{SCOPE}"))
    return out


def state_joints(state: WorldState, model: Model) -> dict[str, JointState]:
    """Every joint state of ``state`` keyed by ``model``'s model-relative names."""
    if model.is_world:
        out: dict[str, JointState] = {}
        for ms in state.model_states:
            out.update(flatten_joints(ms, f"{ms.name}{SCOPE}"))
        return out
    top = state.model(model.name)
    return flatten_joints(top) if top is not None else {}


def check_state(state: WorldState, model: Model) -> list[str]:
    """Why ``state`` cannot be replayed onto ``model`` (empty list: it can)."""
    problems: list[str] = []
    if not model.is_world and state.model(model.name) is None:
        have = ", ".join(repr(m.name) for m in state.model_states) or "none"
        return [f"no model_state named {model.name!r} (the file has {have})"]
    joints = state_joints(state, model)
    moving = {j.name: j for j in model.joints.values() if j.is_moving and not j.mimic}
    for name, js in joints.items():
        joint = model.joints.get(name)
        if joint is None:
            problems.append(f"joint {name!r} is not in model {model.name!r}")
            continue
        if js.positions is not None and len(js.positions) != joint.nq:
            problems.append(f"joint {name!r} ({joint.type.value}) needs {joint.nq} positions, "
                            f"the file has {len(js.positions)}")
        for what, vals in (("velocities", js.velocities), ("torques", js.torques)):
            if vals is not None and len(vals) != joint.nv:
                problems.append(f"joint {name!r} ({joint.type.value}) needs {joint.nv} {what}, "
                                f"the file has {len(vals)}")
    missing = [n for n in moving if n not in joints or joints[n].positions is None]
    if missing:
        problems.append(f"no positions for moving joint(s) {', '.join(map(repr, missing[:10]))}"
                        + (f" and {len(missing) - 10} more" if len(missing) > 10 else ""))
    for name, js in joints.items():
        for vals in (js.positions, js.velocities, js.torques):
            if vals is not None and not all(math.isfinite(v) for v in vals):
                problems.append(f"joint {name!r} has a non-finite value")
                break
    return problems


def _link_poses(ms: ModelState, prefix: str, x_top_ms: NDArray[np.float64]) -> dict[str, NDArray[np.float64]]:
    """Link poses of ``ms`` and its nested model_states in the top-level model_state's frame."""
    out = {f"{prefix}{ls.name}": x_top_ms @ tfm.pose6_to_transform(ls.pose)
           for ls in ms.link_states if ls.pose is not None}
    for sub in ms.model_states:
        if sub.pose is not None:  # a nested model_state is posed in its enclosing one
            out.update(_link_poses(sub, f"{prefix}{sub.name}{SCOPE}", x_top_ms @ tfm.pose6_to_transform(sub.pose)))
    return out


def _model_frame_in_file(model: Model, name: str) -> NDArray[np.float64]:
    """X_world_M of a world's top-level model ``name`` as the model file places it."""
    from robot_state_format.model.types import WORLD

    mf = model.models.get(name)
    if mf is None:
        return np.eye(4)
    pose = np.asarray(mf.pose, dtype=np.float64)
    if mf.attached_to in ("", WORLD) or mf.attached_to not in model.links:
        return pose
    return np.asarray(model.links[mf.attached_to].pose, dtype=np.float64) @ pose


def replay_edges(state: WorldState, model: Model, *, link_tf: bool = False) -> list[tuple[str, str, NDArray[np.float64]]]:
    """The static TF of a restart file, as ``(parent, child, X_parent_child)``.

    * each ``<frame>`` with a pose: its parent (default ``world``) → the frame;
    * each top-level model_state with a pose (every model of a world file; the model of a model
      file): its parent (default ``world``) → each root link of that model, ``X_parent_M ∘ X_M_root``
      with ``X_M_root`` from the model file (for worlds, the link's world pose brought into the
      model frame the file gives);
    * with ``link_tf``: parent link → child link of every joint whose two links have poses in the
      file (nested model_states included), ``X_M_parent⁻¹ ∘ X_M_child``.
    """
    from robot_state_format.model.types import WORLD

    edges: list[tuple[str, str, NDArray[np.float64]]] = []
    for f in state.frames:
        if f.pose is not None:
            edges.append((f.parent or WORLD, f.name, tfm.pose6_to_transform(f.pose)))
    tops: list[tuple[ModelState, str]]
    if model.is_world:
        tops = [(ms, f"{ms.name}{SCOPE}") for ms in state.model_states]
    else:
        top = state.model(model.name)
        tops = [(top, "")] if top is not None else []
    roots = model.root_links()
    for ms, prefix in tops:
        if ms.pose is not None:
            x_parent_m = tfm.pose6_to_transform(ms.pose)
            x_m_file = _model_frame_in_file(model, ms.name) if model.is_world else np.eye(4)
            for root in roots:
                if root.startswith(prefix) and root in model.links:
                    x_m_root = tfm.inverse(x_m_file) @ np.asarray(model.links[root].pose, dtype=np.float64)
                    edges.append((ms.parent or WORLD, root, x_parent_m @ x_m_root))
        if link_tf:
            poses = _link_poses(ms, prefix, np.eye(4))
            for joint in model.joints.values():
                if joint.parent in poses and joint.child in poses:
                    edges.append((joint.parent, joint.child, tfm.inverse(poses[joint.parent]) @ poses[joint.child]))
    return edges


@dataclass
class JointStateFields:
    name: list[str]
    position: list[float]
    velocity: list[float]
    effort: list[float]


def joint_state_fields(state: WorldState, model: Model) -> JointStateFields:
    """JointState arrays for the moving joints of ``state`` (velocities/efforts only if all have them)."""
    joints = state_joints(state, model)
    names: list[str] = []
    pos: list[float] = []
    vel: list[float | None] = []
    eff: list[float | None] = []
    for name, js in joints.items():
        joint = model.joints.get(name)
        if joint is None or not joint.is_moving or joint.mimic or js.positions is None:
            continue  # mimic followers follow their leader in every consumer
        suffixes = MULTI_DOF_SUFFIXES.get(joint.type)
        if suffixes is None:
            names.append(name)
            pos.append(float(js.positions[0]))
            vel.append(float(js.velocities[0]) if js.velocities else None)
            eff.append(float(js.torques[0]) if js.torques else None)
            continue
        for k, suffix in enumerate(suffixes):
            names.append(f"{name}/{suffix}")
            pos.append(float(js.positions[k]))
            has_v = k < joint.nv  # a quaternion's w has no rate of its own
            vel.append((float(js.velocities[k]) if has_v else 0.0) if js.velocities else None)
            eff.append((float(js.torques[k]) if has_v else 0.0) if js.torques else None)
    v = [float(x) for x in vel] if vel and all(x is not None for x in vel) else []  # type: ignore[arg-type]
    e = [float(x) for x in eff] if eff and all(x is not None for x in eff) else []  # type: ignore[arg-type]
    return JointStateFields(names, pos, v, e)


# -- CDR for the two message types the store publishes raw -----------------------------------------
def cdr_string(text: str) -> bytes:
    """``std_msgs/String`` CDR bytes (with the encapsulation header)."""
    raw = text.encode("utf-8")
    return CDR_LE_HEADER + struct.pack("<I", len(raw) + 1) + raw + b"\x00"


def cdr_string_text(data: bytes) -> str:
    (n,) = struct.unpack_from("<I", data, 4)
    return data[8:8 + n - 1].decode("utf-8")


def restamp_joint_state(data: bytes, shift_ns: int) -> bytes:
    """JointState CDR with ``header.stamp`` moved by ``shift_ns`` (the stamp is the first field)."""
    if shift_ns == 0:
        return data
    sec, nsec = struct.unpack_from("<iI", data, 4)
    t = sec * NS + nsec + shift_ns
    s, n = divmod(t, NS)
    return data[:4] + struct.pack("<iI", s, n) + data[12:]


_STAMP_RE = re.compile(r'<stamp\s+sec="(\d+)"\s+nanosec="(\d+)"\s*/>')


def restamp_usdf(text: str, shift_ns: int) -> str:
    """USDF text with its ``<stamp sec nanosec/>`` moved by ``shift_ns`` (unchanged when it has none)."""
    if shift_ns == 0:
        return text

    def repl(m: re.Match[str]) -> str:
        s, n = divmod(int(m.group(1)) * NS + int(m.group(2)) + shift_ns, NS)
        return f'<stamp sec="{max(s, 0)}" nanosec="{n}"/>'

    return _STAMP_RE.sub(repl, text, count=1)


def usdf_stamp_ns(text: str) -> int | None:
    m = _STAMP_RE.search(text)
    return int(m.group(1)) * NS + int(m.group(2)) if m else None


# -- timelines -----------------------------------------------------------------------------------
@dataclass
class Event:
    t_ns: int  # recorded time (log time or the file's stamp)
    topic: str  # "world_state" or "joint_states" (the recorded name, e.g. "/r1/joint_states", with full_names)
    data: bytes  # CDR


def timeline_from_recording(path: str | os.PathLike[str], topics: frozenset[str] = STATE_TOPICS) -> list[Event]:
    """The messages of an MCAP recording on ``topics`` (by the last part of their names), by log time,
    all in memory (small recordings, tests; playback streams through :class:`RecordingTimeline`)."""
    return sorted(_recorded_events(path, topics), key=lambda e: e.t_ns)


def _recorded_events(path: str | os.PathLike[str], topics: frozenset[str] = STATE_TOPICS,
                     full_names: bool = False) -> Iterator[Event]:
    """The messages of a recording on ``topics`` (world_state, joint_states, tf, ...) in file order
    (``full_names``: each with the name it was recorded under, for a world of several namespaces)."""
    from robot_state_format.recording import read_recording

    for m in read_recording(path):
        topic = m.topic.rsplit("/", 1)[-1]
        if topic in topics:
            yield Event(m.log_time_ns, m.topic if full_names else topic, m.data)


YIELD_EVERY = 8  # messages the read-ahead thread decodes between GIL hand-overs


@dataclass
class TimelineSummary:
    count: int  # world_state and joint_states messages
    start_ns: int
    end_ns: int


class RecordingTimeline:
    """The messages of an MCAP recording on ``topics`` (default world_state and joint_states; the last
    part of each name counts), by log time, streamed.

    Every ``iter()`` reads the file again from the start on a read-ahead thread that keeps at most
    ``ahead`` messages decoded (memory stays bounded for recordings of any length, and the file is
    read while earlier messages play). Messages are put in log-time order through a window of
    ``reorder`` messages; one more out of place than that is played when it is reached (counted in
    ``late``). A file cut off by a crash plays up to its last complete chunk.
    """

    def __init__(self, path: str | os.PathLike[str], *, ahead: int = 4096, reorder: int = 1024,
                 topics: frozenset[str] = STATE_TOPICS, full_names: bool = False) -> None:
        from robot_state_format.recording import mcap_file

        self.path = mcap_file(path)
        self.topics = frozenset(topics)
        self.full_names = full_names
        self.ahead = max(2, int(ahead))
        self.reorder = max(1, int(reorder))
        self.late = 0
        self.max_buffered = 0  # the most messages held at once (read-ahead queue plus reorder window)

    def first(self) -> Event | None:
        """The first message in the file (None when it holds none); raises on an unreadable file."""
        return next(_recorded_events(self.path, self.topics), None)

    def summary(self) -> TimelineSummary | None:
        """Message count and time span from the MCAP summary section, None when the file has none
        (a recording cut off before it was closed)."""
        from mcap.reader import make_reader

        try:
            if not Path(self.path).is_file():  # a FIFO would block
                return None
            with open(self.path, "rb") as f:
                summary = make_reader(f).get_summary()
        except Exception:  # noqa: BLE001 - no or torn summary: unknown
            return None
        if summary is None or summary.statistics is None:
            return None
        ids = [cid for cid, ch in summary.channels.items() if ch.topic.rsplit("/", 1)[-1] in self.topics]
        stats = summary.statistics
        count = sum(stats.channel_message_counts.get(cid, 0) for cid in ids)
        return TimelineSummary(count, stats.message_start_time, stats.message_end_time)

    def __iter__(self) -> _Stream:
        """Start reading ahead at once (so a next pass is ready when the current one ends)."""
        buffer = _ReadAhead(self.ahead)
        thread = threading.Thread(target=self._produce, args=(buffer,), name="rsf-read-ahead", daemon=True)
        thread.start()
        return _Stream(buffer, thread)

    def _produce(self, buffer: _ReadAhead) -> None:
        heap: list[tuple[int, int, Event]] = []
        last = -(1 << 63)

        def emit() -> bool:
            nonlocal last
            out = heapq.heappop(heap)[2]
            if out.t_ns < last:
                self.late += 1
            last = max(last, out.t_ns)
            return buffer.put(out, len(heap))

        try:
            for seq, e in enumerate(_recorded_events(self.path, self.topics, self.full_names)):
                if seq % YIELD_EVERY == 0:
                    time.sleep(0)  # hand the GIL over: the player's wake-up never waits for a long read
                heapq.heappush(heap, (e.t_ns, seq, e))
                if len(heap) > self.reorder and not emit():
                    return
            while heap:
                if not emit():
                    return
            buffer.put(None, 0)
        except BaseException as exc:  # noqa: BLE001 - handed to the consumer, raised there
            buffer.put(exc, 0)
        finally:
            self.max_buffered = max(self.max_buffered, buffer.max_held)


class _Stream:
    """An iterator over a read-ahead buffer; ``close()`` (or the end) stops its thread."""

    def __init__(self, buffer: _ReadAhead, thread: threading.Thread) -> None:
        self.buffer = buffer
        self.thread = thread
        self.done = False

    def __iter__(self) -> _Stream:
        return self

    def __next__(self) -> Event:
        if self.done:
            raise StopIteration
        item = self.buffer.get()
        if item is None or isinstance(item, BaseException):
            self.close()
            if item is None:
                raise StopIteration
            raise item
        return item  # type: ignore[no-any-return]

    def wait_ready(self, timeout: float = 30.0) -> None:
        """Wait until the read-ahead is full or the file is read (playback starts without a backlog)."""
        self.buffer.wait_full(timeout)

    def close(self) -> None:
        self.done = True
        self.buffer.close()
        if self.thread is not threading.current_thread():
            self.thread.join(5.0)

    def __del__(self) -> None:
        self.buffer.close()


class _ReadAhead:
    """A bounded hand-over from the read-ahead thread to the player: the producer fills it up to
    ``size`` and then sleeps until it is half empty (few wake-ups; the player never waits on a
    half-full buffer)."""

    def __init__(self, size: int) -> None:
        self.size = size
        self.items: deque[Any] = deque()
        self.cond = threading.Condition()
        self.closed = False
        self.ended = False  # the end marker (or an error) is in
        self.max_held = 0

    def put(self, item: Any, extra: int) -> bool:
        """Append ``item`` (``extra``: messages the producer holds besides); False once closed."""
        with self.cond:
            if len(self.items) >= self.size:
                while not self.closed and len(self.items) > self.size // 2:
                    self.cond.wait()
            if self.closed:
                return False
            self.items.append(item)
            if item is None or isinstance(item, BaseException):
                self.ended = True
            self.max_held = max(self.max_held, len(self.items) + extra)
            if len(self.items) == 1 or len(self.items) >= self.size or self.ended:
                self.cond.notify_all()
            return True

    def wait_full(self, timeout: float) -> None:
        with self.cond:
            self.cond.wait_for(lambda: self.closed or len(self.items) >= self.size or self.ended, timeout)

    def get(self) -> Any:
        with self.cond:
            while not self.items:
                self.cond.wait()
            item = self.items.popleft()
            if len(self.items) == self.size // 2:
                self.cond.notify_all()
            return item

    def close(self) -> None:
        with self.cond:
            self.closed = True
            self.cond.notify_all()


def timeline_from_directory(directory: str | os.PathLike[str], model: Model | None,
                            encode_joint_state: Callable[[int, JointStateFields], bytes] | None,
                            notes: list[str] | None = None) -> list[Event]:
    """One world_state (and, with a model, one joint_states) event per restart file, by stamp.

    A file that cannot be read is skipped; a file that does not fit ``model`` plays its world_state
    without joint_states. Each such case is described in ``notes`` (when given).
    """
    from robot_state_format.playback.restart_files import parse_name
    from robot_state_format.usdf.reader import read_world_state

    files = sorted(p for p in Path(directory).iterdir() if p.suffix == ".usdf" and p.is_file())
    out: list[Event] = []
    for i, p in enumerate(files):
        try:
            text = read_input_file(p).decode("utf-8")
            state = read_world_state(text, file=str(p))
        except (OSError, UnicodeDecodeError, RobotStateFormatError) as exc:
            if notes is not None:
                notes.append(f"{p.name} skipped: {str(exc).splitlines()[0] if str(exc) else type(exc).__name__}")
            continue
        if state.stamp is not None:
            t = state.stamp.sec * NS + state.stamp.nanosec
        else:
            parsed = parse_name(p)
            t = parsed.stamp_ns if parsed else i * NS
        out.append(Event(t, "world_state", cdr_string(text)))
        if model is not None and encode_joint_state is not None:
            problems = check_state(state, model)
            if not problems:
                out.append(Event(t, "joint_states", encode_joint_state(t, joint_state_fields(state, model))))
            elif notes is not None:
                notes.append(f"{p.name}: no joint_states (does not fit model {model.name!r}: {problems[0]})")
    out.sort(key=lambda e: e.t_ns)
    return out


def loop_length_ns(events: Iterable[Event]) -> int:
    """Time from the first event of one pass to the first of the next: span plus one mean step."""
    stats = _PassStats()
    for e in events:
        stats.add(e.t_ns)
    return stats.loop_length_ns()


class _PassStats:
    """First and last time and the number of distinct times of a time-ordered pass."""

    def __init__(self) -> None:
        self.first: int | None = None
        self.last = 0
        self.distinct = 0

    def add(self, t_ns: int) -> None:
        if self.first is None:
            self.first = self.last = t_ns
            self.distinct = 1
        elif t_ns != self.last:
            self.distinct += 1
            self.last = max(self.last, t_ns)

    def loop_length_ns(self) -> int:
        if self.first is None:
            return 0
        span = self.last - self.first
        step = span // (self.distinct - 1) if self.distinct > 1 else NS
        return span + max(step, 1)


def shifted(event: Event, shift_ns: int) -> bytes:
    if shift_ns == 0:
        return event.data
    kind = event.topic.rsplit("/", 1)[-1]  # full names in a world recording ("/r1/joint_states")
    if kind == "joint_states":
        return restamp_joint_state(event.data, shift_ns)
    if kind in ("tf", "tf_static"):
        from robot_state_format.ros.session_playback import restamp_tf

        return restamp_tf(event.data, shift_ns)
    if kind == "world_state":
        return cdr_string(restamp_usdf(cdr_string_text(event.data), shift_ns))
    return event.data


class Player:
    """Publish ``events`` at their recorded pace on a background thread.

    ``publish(topic, data)`` sends CDR bytes; ``clock(t_ns)`` (optional) publishes ``/clock``;
    ``sent(topic, t_ns, wall_s)`` (optional) observes every publication (benchmarks, tests).
    """

    def __init__(self, events: Iterable[Event], publish: Callable[[str, bytes], None], *, rate: float = 1.0,
                 loop: bool = False, start_offset: float = 0.0, clock: Callable[[int], None] | None = None,
                 sent: Callable[[str, int, float], None] | None = None, spin_s: float = 0.02, realtime: bool = True,
                 after_first: Callable[[], None] | None = None) -> None:
        if rate <= 0 or not math.isfinite(rate):
            raise ValueError("rate must be a positive number")
        # a list, or a re-iterable source such as RecordingTimeline (each pass iterates it again)
        self.events = events if isinstance(events, RecordingTimeline) else list(events)
        self._publish = publish
        self._clock = clock
        self._sent = sent
        # called once the first message is published, before the clock starts (e.g. wait until every
        # subscriber acknowledged it: then all of them are matched both ways and miss nothing after)
        self._after_first = after_first
        self.rate = float(rate)
        self.loop = loop
        self.start_offset_ns = int(round(start_offset * NS))
        self._spin_s = spin_s
        self._cond = threading.Condition()
        self._paused_at: float | None = None
        self._stop = False
        self._thread: threading.Thread | None = None
        self.published = 0
        self.loops = 0
        self.error: str | None = None
        self.realtime = realtime
        self.realtime_note: str | None = None  # why the thread runs without real-time priority

    @property
    def running(self) -> bool:
        return self._thread is not None and self._thread.is_alive()

    @property
    def paused(self) -> bool:
        return self._paused_at is not None

    def start(self) -> None:
        self._thread = threading.Thread(target=self._run, name="rsf-player", daemon=True)
        self._thread.start()

    def pause(self) -> bool:
        with self._cond:
            if self._paused_at is not None or not self.running:
                return False
            self._paused_at = time.monotonic()
            return True

    def resume(self) -> bool:
        with self._cond:
            if self._paused_at is None:
                return False
            self._base += time.monotonic() - self._paused_at
            self._paused_at = None
            self._cond.notify_all()
            return True

    def stop(self, timeout: float = 2.0) -> None:
        with self._cond:
            self._stop = True
            self._cond.notify_all()
        if self._thread is not None and self._thread is not threading.current_thread():
            self._thread.join(timeout)

    def wait(self, timeout: float | None = None) -> bool:
        """Wait for the end of playback; True when it ended."""
        if self._thread is None:
            return True
        self._thread.join(timeout)
        return not self._thread.is_alive()

    def _wait_until(self, target: float) -> bool:
        """Sleep until monotonic ``target`` (shifted by pauses); False when stopped."""
        while True:
            with self._cond:
                if self._stop:
                    return False
                if self._paused_at is not None:
                    self._cond.wait(0.1)
                    continue
                due = target + self._base
            now = time.monotonic()
            left = due - now
            if left <= 0:
                return True
            if left > self._spin_s:  # long waits on the condition: pause and stop act at once
                with self._cond:
                    self._cond.wait(left - self._spin_s)
            else:  # a plain sleep wakes most precisely (no spinning: the scheduler favours sleepers)
                time.sleep(left)

    def _raise_priority(self) -> None:
        """SCHED_FIFO for this thread when permitted: wake-ups on time even on a loaded machine.

        The thread only ever sleeps between publications (never spins), so it cannot starve others.
        """
        try:
            prio = min(10, os.sched_get_priority_max(os.SCHED_FIFO))
            os.sched_setscheduler(threading.get_native_id(), os.SCHED_FIFO, os.sched_param(prio))
        except (AttributeError, OSError) as exc:
            self.realtime_note = f"no real-time priority for playback ({exc})"

    def _run(self) -> None:
        if self.realtime:
            self._raise_priority()
        try:
            self._play()
        except Exception as exc:  # noqa: BLE001 - reported through .error, the node keeps running
            self.error = f"{type(exc).__name__}: {exc}"

    def _play(self) -> None:
        self._base = time.monotonic()
        stats = _PassStats()  # of the first pass, for the loop length
        begin: int | None = None
        anchored = False
        period = 0
        k = 0
        current: Iterator[Event] = iter(self.events)
        upcoming: Iterator[Event] | None = None
        ready = getattr(current, "wait_ready", None)
        if ready is not None:
            ready()  # a streamed first pass starts once its read-ahead is full
        try:
            while True:
                # the next pass starts reading now, so it is ready when this one ends
                upcoming = iter(self.events) if self.loop else None
                shift = k * period
                for e in current:
                    if k == 0:
                        stats.add(e.t_ns)
                        if begin is None:
                            begin = e.t_ns + self.start_offset_ns
                        if e.t_ns < begin:
                            continue
                    assert begin is not None
                    target = (e.t_ns + shift - begin) / NS / self.rate
                    if not anchored:  # the clock starts with the first message to play, once it is read
                        with self._cond:
                            self._base = time.monotonic() - target
                        anchored = True
                    if not self._wait_until(target):
                        return
                    if self._clock is not None:
                        self._clock(e.t_ns + shift)
                    self._publish(e.topic, shifted(e, shift))
                    self.published += 1
                    if self._sent is not None:
                        self._sent(e.topic, e.t_ns + shift, time.monotonic())
                    if self._after_first is not None and self.published == 1:
                        self._after_first()
                        with self._cond:  # the timeline goes on from here
                            self._base = time.monotonic() - target
                if not self.loop or stats.first is None:
                    return
                if k == 0:
                    period = stats.loop_length_ns()
                k += 1
                self.loops = k
                assert upcoming is not None
                current, upcoming = upcoming, None
        finally:
            for it in (current, upcoming):
                close = getattr(it, "close", None)
                if close is not None:
                    close()
