"""What ``~/play`` plays: a recording (streamed) or a directory of restart files, opened with its
extent, or refused with the reason (no rclpy: the node hands in its JointState encoder)."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from robot_state_format.model.types import Model
from robot_state_format.playback.timeline import (
    EncodeJointState,
    Event,
    RecordingTimeline,
    TimelineSummary,
    timeline_from_directory,
)


def is_restart_directory(path: Path) -> bool:
    """A directory without an ``.mcap`` file: its restart files are played (else: a recording)."""
    return path.is_dir() and not any(path.glob("*.mcap"))


@dataclass
class PlaybackSource:
    """The events to play, their extent (None: a recording without summary, cut off) and notes on
    the restart files skipped or played without joint_states."""

    events: list[Event] | RecordingTimeline
    extent: TimelineSummary | None
    empty: bool
    notes: list[str] = field(default_factory=list)


def open_source(path: Path, kinds: frozenset[str], model: Model | None, encode_joint_state: EncodeJointState,
                *, full_names: bool = False) -> PlaybackSource:
    """The playback of ``path`` (topic ``kinds`` of a recording; with ``full_names``, each message
    keeps the name it was recorded under). Raises when it cannot be read."""
    if is_restart_directory(path):
        notes: list[str] = []
        events = timeline_from_directory(path, model, encode_joint_state, notes)
        extent = TimelineSummary(len(events), events[0].t_ns, events[-1].t_ns) if events else None
        return PlaybackSource(events, extent, not events, notes)
    timeline = RecordingTimeline(path, topics=kinds, full_names=full_names)  # streamed: bounded memory
    summary = timeline.summary()
    empty = (summary.count == 0) if summary is not None else timeline.first() is None
    return PlaybackSource(timeline, summary, empty)
