"""Replay: a restart file checked against a model and turned into messages; timed playback.

* :func:`check_state` compares a :class:`WorldState` with a :class:`Model` (model_state names,
  joint names, DOF counts) and returns every mismatch as a sentence; replay refuses on any.
* :func:`joint_state_fields` gives the ``sensor_msgs/JointState`` arrays of a state (multi-DOF
  joints as MoveIt's named sub-joints ``<joint>/<dof>``, the names the state_publisher reads).
* :class:`Player` publishes a timeline (from an MCAP recording or a directory of restart files)
  at the recorded pace times ``rate``, from ``start_offset``, optionally looping, with pause and
  resume, on its own thread (SCHED_FIFO when the process may: sub-millisecond wake-ups under load).  Stamps inside the messages (JointState ``header.stamp`` and the
  USDF ``<stamp>``) are shifted by whole loop lengths so time never runs backwards.

The message and timeline code here imports no rclpy; the :class:`Player` gets its publishers
from the node.
"""

from __future__ import annotations

import math
import os
import re
import struct
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from robot_state_format.model.types import SCOPE, JointType, Model
from robot_state_format.usdf.types import JointState, ModelState, WorldState

CDR_LE_HEADER = b"\x00\x01\x00\x00"
NS = 1_000_000_000

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
    topic: str  # "world_state" or "joint_states"
    data: bytes  # CDR


def timeline_from_recording(path: str | os.PathLike[str]) -> list[Event]:
    """The world_state and joint_states messages of an MCAP recording, by log time."""
    from robot_state_format.recording import read_recording

    out = []
    for m in read_recording(path):
        topic = m.topic.rsplit("/", 1)[-1]
        if topic in ("world_state", "joint_states"):
            out.append(Event(m.log_time_ns, topic, m.data))
    out.sort(key=lambda e: e.t_ns)
    return out


def timeline_from_directory(directory: str | os.PathLike[str], model: Model | None,
                            encode_joint_state: Callable[[int, JointStateFields], bytes] | None) -> list[Event]:
    """One world_state (and, with a model, one joint_states) event per restart file, by stamp."""
    from robot_state_format.restart_files import parse_name
    from robot_state_format.usdf.reader import read_world_state

    files = sorted(p for p in Path(directory).iterdir() if p.suffix == ".usdf" and p.is_file())
    out: list[Event] = []
    for i, p in enumerate(files):
        text = p.read_text(encoding="utf-8")
        state = read_world_state(text, file=str(p))
        if state.stamp is not None:
            t = state.stamp.sec * NS + state.stamp.nanosec
        else:
            parsed = parse_name(p)
            t = parsed.stamp_ns if parsed else i * NS
        out.append(Event(t, "world_state", cdr_string(text)))
        if model is not None and encode_joint_state is not None and not check_state(state, model):
            out.append(Event(t, "joint_states", encode_joint_state(t, joint_state_fields(state, model))))
    out.sort(key=lambda e: e.t_ns)
    return out


def loop_length_ns(events: Sequence[Event]) -> int:
    """Time from the first event of one pass to the first of the next: span plus one mean step."""
    if not events:
        return 0
    span = events[-1].t_ns - events[0].t_ns
    distinct = len({e.t_ns for e in events})
    step = span // (distinct - 1) if distinct > 1 else NS
    return span + max(step, 1)


def shifted(event: Event, shift_ns: int) -> bytes:
    if shift_ns == 0:
        return event.data
    if event.topic == "joint_states":
        return restamp_joint_state(event.data, shift_ns)
    return cdr_string(restamp_usdf(cdr_string_text(event.data), shift_ns))


class Player:
    """Publish ``events`` at their recorded pace on a background thread.

    ``publish(topic, data)`` sends CDR bytes; ``clock(t_ns)`` (optional) publishes ``/clock``;
    ``sent(topic, t_ns, wall_s)`` (optional) observes every publication (benchmarks, tests).
    """

    def __init__(self, events: Sequence[Event], publish: Callable[[str, bytes], None], *, rate: float = 1.0,
                 loop: bool = False, start_offset: float = 0.0, clock: Callable[[int], None] | None = None,
                 sent: Callable[[str, int, float], None] | None = None, spin_s: float = 0.02, realtime: bool = True) -> None:
        if rate <= 0 or not math.isfinite(rate):
            raise ValueError("rate must be a positive number")
        self.events = list(events)
        self._publish = publish
        self._clock = clock
        self._sent = sent
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
        if not self.events:
            return
        t0 = self.events[0].t_ns
        begin = t0 + self.start_offset_ns
        first = next((i for i, e in enumerate(self.events) if e.t_ns >= begin), len(self.events))
        period = loop_length_ns(self.events)
        self._base = time.monotonic()
        k = 0
        while True:
            shift = k * period
            for e in self.events[first:]:
                target = (e.t_ns + shift - begin) / NS / self.rate
                if not self._wait_until(target):
                    return
                if self._clock is not None:
                    self._clock(e.t_ns + shift)
                self._publish(e.topic, shifted(e, shift))
                self.published += 1
                if self._sent is not None:
                    self._sent(e.topic, e.t_ns + shift, time.monotonic())
            if not self.loop:
                return
            k += 1
            self.loops = k
            first = 0
