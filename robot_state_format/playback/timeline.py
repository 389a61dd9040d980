"""Timelines: the messages playback publishes, in recorded-time order (no rclpy).

* :class:`RecordingTimeline` streams an MCAP recording in log-time order from a read-ahead thread
  (bounded memory); :func:`timeline_from_recording` reads one whole (small recordings, tests);
* :func:`timeline_from_directory` makes one world_state (and joint_states) event per restart file.
"""

from __future__ import annotations

import heapq
import os
import threading
import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

from robot_state_format.errors import RobotStateFormatError
from robot_state_format.limits import read_input_file
from robot_state_format.model.types import Model
from robot_state_format.playback.fit import check_fit
from robot_state_format.playback.joint_arrays import JointStateFields
from robot_state_format.playback.read_ahead import End, ReadAhead, Stream
from robot_state_format.playback.restart_files import parse_name
from robot_state_format.recording.cdr import NS, cdr_string
from robot_state_format.recording.reader import MessageSummary, mcap_file, message_summary, read_recording
from robot_state_format.usdf.reader import read_world_state

STATE_TOPICS = frozenset({"world_state", "joint_states"})
YIELD_EVERY = 8  # messages the read-ahead thread decodes between GIL hand-overs

TimelineSummary = MessageSummary
"""Message count and time span of a timeline."""


@dataclass
class Event:
    t_ns: int  # recorded time (log time or the file's stamp)
    topic: str  # "world_state" or "joint_states" (the recorded name, e.g. "/r1/joint_states", with full_names)
    data: bytes  # CDR


def recorded_events(path: str | os.PathLike[str], topics: frozenset[str] = STATE_TOPICS,
                    full_names: bool = False) -> Iterator[Event]:
    """The messages of a recording on ``topics`` (world_state, joint_states, tf, ...) in file order
    (``full_names``: each with the name it was recorded under, for a world of several namespaces)."""
    for m in read_recording(path):
        topic = m.topic.rsplit("/", 1)[-1]
        if topic in topics:
            yield Event(m.log_time_ns, m.topic if full_names else topic, m.data)


def timeline_from_recording(path: str | os.PathLike[str], topics: frozenset[str] = STATE_TOPICS) -> list[Event]:
    """The messages of an MCAP recording on ``topics`` (by the last part of their names), by log time,
    all in memory (small recordings, tests; playback streams through :class:`RecordingTimeline`)."""
    return sorted(recorded_events(path, topics), key=lambda e: e.t_ns)


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
        self.path = mcap_file(path)
        self.topics = frozenset(topics)
        self.full_names = full_names
        self.ahead = max(2, int(ahead))
        self.reorder = max(1, int(reorder))
        self.late = 0
        self.max_buffered = 0  # the most messages held at once (read-ahead queue plus reorder window)

    def first(self) -> Event | None:
        """The first message in the file (None when it holds none); raises on an unreadable file."""
        return next(recorded_events(self.path, self.topics), None)

    def summary(self) -> TimelineSummary | None:
        """Message count and time span from the MCAP summary section, None when the file has none
        (a recording cut off before it was closed)."""
        return message_summary(self.path, self.topics)

    def __iter__(self) -> Stream[Event]:
        """Start reading ahead at once (so a next pass is ready when the current one ends)."""
        buffer: ReadAhead[Event] = ReadAhead(self.ahead)
        thread = threading.Thread(target=self._produce, args=(buffer,), name="rsf-read-ahead", daemon=True)
        thread.start()
        return Stream(buffer, thread)

    def _produce(self, buffer: ReadAhead[Event]) -> None:
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
            for seq, e in enumerate(recorded_events(self.path, self.topics, self.full_names)):
                if seq % YIELD_EVERY == 0:
                    time.sleep(0)  # hand the GIL over: the player's wake-up never waits for a long read
                heapq.heappush(heap, (e.t_ns, seq, e))
                if len(heap) > self.reorder and not emit():
                    return
            while heap:
                if not emit():
                    return
            buffer.put(End(), 0)
        except BaseException as exc:  # noqa: BLE001 the reader thread hands any error to the consumer
            buffer.put(End(exc), 0)
        finally:
            self.max_buffered = max(self.max_buffered, buffer.max_held)


EncodeJointState = Callable[[int, JointStateFields], bytes]


def timeline_from_directory(directory: str | os.PathLike[str], model: Model | None,
                            encode_joint_state: EncodeJointState | None,
                            notes: list[str] | None = None) -> list[Event]:
    """One world_state (and, with a model, one joint_states) event per restart file, by stamp.

    A file that cannot be read is skipped; a file that does not fit ``model`` plays its world_state
    without joint_states. Each such case is described in ``notes`` (when given).
    """
    files = sorted(p for p in Path(directory).iterdir() if p.suffix == ".usdf" and p.is_file())
    out: list[Event] = []
    for i, p in enumerate(files):
        try:
            text = read_input_file(p).decode("utf-8")
            state = read_world_state(text, file=str(p)).state
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
            fit = check_fit(state, model, file=str(p))
            if fit.ok:
                out.append(Event(t, "joint_states", encode_joint_state(t, fit.fields)))
            elif notes is not None:
                notes.append(f"{p.name}: no joint_states (does not fit model {model.name!r}: {fit.problems[0]})")
    out.sort(key=lambda e: e.t_ns)
    return out


class PassStats:
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
        """Time from the first event of one pass to the first of the next: span plus one mean step."""
        if self.first is None:
            return 0
        span = self.last - self.first
        step = span // (self.distinct - 1) if self.distinct > 1 else NS
        return span + max(step, 1)


def loop_length_ns(events: Iterable[Event]) -> int:
    """Time from the first event of one pass to the first of the next: span plus one mean step."""
    stats = PassStats()
    for e in events:
        stats.add(e.t_ns)
    return stats.loop_length_ns()
