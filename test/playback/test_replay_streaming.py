"""Playback streams a recording from disk: bounded memory, log-time order, same timeline as in memory."""

from __future__ import annotations

import os
import threading
from pathlib import Path

import pytest

from robot_state_format.playback.clock import FakeClock
from robot_state_format.playback.player import Player
from robot_state_format.playback.restamp import usdf_stamp_ns
from robot_state_format.playback.timeline import Event, RecordingTimeline, timeline_from_recording
from robot_state_format.recording import RecordingWriter
from robot_state_format.recording.cdr import cdr_string, cdr_string_text

MS = 1_000_000


def _ws(i: int) -> bytes:
    return cdr_string(f'<world_state name="w" version="1.0"><stamp sec="3" nanosec="{i}"/></world_state>')


def _write(directory: Path, times_ns: list[int], chunk_size: int = 4096) -> Path:
    """A recording whose i-th message (in file order) carries i in its stamp and is logged at times_ns[i]."""
    w = RecordingWriter(directory, chunk_size=chunk_size, flush_period=1e9)
    w.add_topic("/world_state", "std_msgs/msg/String")
    for i, t in enumerate(times_ns):
        w.write("/world_state", _ws(i), t)
    w.close()
    return directory


def _index(e: Event) -> int:
    stamp = usdf_stamp_ns(cdr_string_text(e.data))
    assert stamp is not None
    return stamp - 3 * 10**9


def test_stream_equals_the_sorted_recording_with_bounded_memory(tmp_path: Path) -> None:
    # 20 000 messages 1 ms apart, every 50th pair swapped in the file (a late write)
    times = [i * MS for i in range(20_000)]
    for i in range(0, 20_000, 50):
        times[i], times[i + 1] = times[i + 1], times[i]
    bag = _write(tmp_path / "bag", times)
    tl = RecordingTimeline(bag, ahead=256, reorder=64)
    got = list(tl)
    assert [e.t_ns for e in got] == sorted(times)
    assert got == timeline_from_recording(bag)  # same events as the in-memory reader, same order
    assert tl.late == 0
    assert 0 < tl.max_buffered <= 256 + 64  # never the whole recording in memory
    s = tl.summary()
    assert s is not None and (s.count, s.start_ns, s.end_ns) == (20_000, 0, 19_999 * MS)
    again = list(tl)  # every iteration reads the file anew
    assert [e.t_ns for e in again] == sorted(times)


def test_disorder_beyond_the_window_is_counted_and_played_when_reached(tmp_path: Path) -> None:
    times = [i * MS for i in range(100)]
    times.append(5 * MS)  # written last, logged long before: 95 messages out of place
    tl = RecordingTimeline(_write(tmp_path / "bag", times), reorder=10)
    got = [_index(e) for e in tl]
    assert sorted(got) == list(range(101))
    # the others stay in order; the late one comes once it is reached, after the window ahead of it
    assert [i for i in got if i != 100] == list(range(100))
    assert got.index(100) == 90  # after 0..89 had left the 10-message window
    assert tl.late == 1


def test_player_over_a_stream_publishes_what_it_does_over_the_list(tmp_path: Path) -> None:
    bag = _write(tmp_path / "bag", [i * 2 * MS for i in range(30)])

    def run(events: object) -> list[tuple[str, bytes, float]]:
        clock = FakeClock(0.0)
        out: list[tuple[str, bytes, float]] = []

        def publish(topic: str, data: bytes) -> None:
            out.append((topic, data, clock.now()))
            if len(out) == 80:
                p.stop()

        p = Player(events, publish, rate=20.0, loop=True, start_offset=0.01, clock=clock)  # type: ignore[arg-type]
        p.start()
        assert p.wait(10)
        return out

    streamed = run(RecordingTimeline(bag, ahead=8, reorder=2))
    listed = run(timeline_from_recording(bag))
    assert len(streamed) == 80 and streamed == listed  # same messages at the same clock times
    # starts 10 ms in (index 5), loops with stamps shifted by span + one step = 60 ms
    stamps = [usdf_stamp_ns(cdr_string_text(d)) for _, d, _ in streamed]
    assert stamps[:25] == [3 * 10**9 + i for i in range(5, 30)]
    assert stamps[25:55] == [3 * 10**9 + i + 60 * MS for i in range(30)]
    # at rate 20 each 2 ms step is 0.1 ms; the second pass begins 50 ms of recording after the first
    # played message (60 ms loop - 10 ms offset) = 2.5 ms
    times = [t for _, _, t in streamed]
    assert times[:25] == pytest.approx([0.0001 * i for i in range(25)], abs=1e-9, rel=0)
    assert times[25:55] == pytest.approx([0.0025 + 0.0001 * i for i in range(30)], abs=1e-9, rel=0)


def test_cut_off_recording_streams_up_to_its_last_chunk(tmp_path: Path) -> None:
    bag = _write(tmp_path / "bag", [i * MS for i in range(2000)], chunk_size=2048)
    f = next(bag.glob("*.mcap"))
    data = f.read_bytes()
    f.write_bytes(data[: len(data) // 2])  # a crash half-way: no summary, a torn chunk
    tl = RecordingTimeline(bag)
    assert tl.summary() is None
    got = [_index(e) for e in tl]
    assert 0 < len(got) < 2000 and got == list(range(len(got)))


def _reading_ahead() -> bool:
    return any(t.name == "rsf-read-ahead" for t in threading.enumerate())


def test_stopping_playback_ends_the_read_ahead_thread(tmp_path: Path) -> None:
    bag = _write(tmp_path / "bag", [i * 10 * MS for i in range(500)])  # 5 s of recording
    seen: list[bool] = []

    def publish(topic: str, data: bytes) -> None:
        seen.append(_reading_ahead())
        if len(seen) == 10:
            p.stop()

    p = Player(RecordingTimeline(bag, ahead=16), publish, clock=FakeClock())
    p.start()
    assert p.wait(5)
    assert seen[0]  # the file is read on its own thread while the player plays
    assert not _reading_ahead()  # stopped with the player, before its thread ended
    assert p.published == 10


def test_unreadable_recording_is_reported_when_peeked(tmp_path: Path) -> None:
    bad = tmp_path / "bad.mcap"
    bad.write_bytes(b"not an mcap file at all")
    tl = RecordingTimeline(bad)
    assert tl.summary() is None
    with pytest.raises(Exception, match="not an MCAP file"):
        tl.first()
    assert os.path.exists(bad)
