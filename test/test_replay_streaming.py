"""Playback streams a recording from disk: bounded memory, log-time order, same timeline as in memory."""

from __future__ import annotations

import os
import threading
import time
from pathlib import Path

import pytest

from robot_state_format.recording import RecordingWriter
from robot_state_format.ros import replay as rp

MS = 1_000_000


def _ws(i: int) -> bytes:
    return rp.cdr_string(f'<world_state name="w" version="1.0"><stamp sec="3" nanosec="{i}"/></world_state>')


def _write(directory: Path, times_ns: list[int], chunk_size: int = 4096) -> Path:
    """A recording whose i-th message (in file order) carries i in its stamp and is logged at times_ns[i]."""
    w = RecordingWriter(directory, chunk_size=chunk_size, flush_period=1e9)
    w.add_topic("/world_state", "std_msgs/msg/String")
    for i, t in enumerate(times_ns):
        w.write("/world_state", _ws(i), t)
    w.close()
    return directory


def _index(e: rp.Event) -> int:
    stamp = rp.usdf_stamp_ns(rp.cdr_string_text(e.data))
    assert stamp is not None
    return stamp - 3 * 10**9


def test_stream_equals_the_sorted_recording_with_bounded_memory(tmp_path: Path) -> None:
    # 20 000 messages 1 ms apart, every 50th pair swapped in the file (a late write)
    times = [i * MS for i in range(20_000)]
    for i in range(0, 20_000, 50):
        times[i], times[i + 1] = times[i + 1], times[i]
    bag = _write(tmp_path / "bag", times)
    tl = rp.RecordingTimeline(bag, ahead=256, reorder=64)
    got = list(tl)
    assert [e.t_ns for e in got] == sorted(times)
    assert got == rp.timeline_from_recording(bag)  # same events as the in-memory reader, same order
    assert tl.late == 0
    assert 0 < tl.max_buffered <= 256 + 64  # never the whole recording in memory
    s = tl.summary()
    assert s is not None and (s.count, s.start_ns, s.end_ns) == (20_000, 0, 19_999 * MS)
    again = list(tl)  # every iteration reads the file anew
    assert [e.t_ns for e in again] == sorted(times)


def test_disorder_beyond_the_window_is_counted_and_played_when_reached(tmp_path: Path) -> None:
    times = [i * MS for i in range(100)]
    times.append(5 * MS)  # written last, logged long before: 95 messages out of place
    tl = rp.RecordingTimeline(_write(tmp_path / "bag", times), reorder=10)
    got = [_index(e) for e in tl]
    assert sorted(got) == list(range(101))
    # the others stay in order; the late one comes once it is reached, after the window ahead of it
    assert [i for i in got if i != 100] == list(range(100))
    assert got.index(100) == 90  # after 0..89 had left the 10-message window
    assert tl.late == 1


def test_player_over_a_stream_publishes_what_it_does_over_the_list(tmp_path: Path) -> None:
    bag = _write(tmp_path / "bag", [i * 2 * MS for i in range(30)])

    def run(events: object) -> list[tuple[str, bytes]]:
        out: list[tuple[str, bytes]] = []
        p = rp.Player(events, lambda topic, data: out.append((topic, data)),  # type: ignore[arg-type]
                      rate=20.0, loop=True, start_offset=0.01, realtime=False)
        p.start()
        deadline = time.monotonic() + 10
        while len(out) < 80 and time.monotonic() < deadline:
            time.sleep(0.002)
        p.stop()
        return out[:80]

    streamed = run(rp.RecordingTimeline(bag, ahead=8, reorder=2))
    listed = run(rp.timeline_from_recording(bag))
    assert len(streamed) == 80 and streamed == listed
    # starts 10 ms in (index 5), loops with stamps shifted by span + one step = 60 ms
    stamps = [rp.usdf_stamp_ns(rp.cdr_string_text(d)) for _, d in streamed]
    assert stamps[:25] == [3 * 10**9 + i for i in range(5, 30)]
    assert stamps[25:55] == [3 * 10**9 + i + 60 * MS for i in range(30)]


def test_cut_off_recording_streams_up_to_its_last_chunk(tmp_path: Path) -> None:
    bag = _write(tmp_path / "bag", [i * MS for i in range(2000)], chunk_size=2048)
    f = next(bag.glob("*.mcap"))
    data = f.read_bytes()
    f.write_bytes(data[: len(data) // 2])  # a crash half-way: no summary, a torn chunk
    tl = rp.RecordingTimeline(bag)
    assert tl.summary() is None
    got = [_index(e) for e in tl]
    assert 0 < len(got) < 2000 and got == list(range(len(got)))


def test_stopping_playback_ends_the_read_ahead_thread(tmp_path: Path) -> None:
    bag = _write(tmp_path / "bag", [i * 10 * MS for i in range(500)])  # 5 s of recording
    p = rp.Player(rp.RecordingTimeline(bag, ahead=16), lambda topic, data: None, realtime=False)
    p.start()
    time.sleep(0.1)
    assert any(t.name == "rsf-read-ahead" for t in threading.enumerate())
    p.stop()
    assert p.wait(5)
    deadline = time.monotonic() + 5
    while any(t.name == "rsf-read-ahead" for t in threading.enumerate()) and time.monotonic() < deadline:
        time.sleep(0.01)
    assert not any(t.name == "rsf-read-ahead" for t in threading.enumerate())
    assert 0 < p.published < 500


def test_unreadable_recording_is_reported_when_peeked(tmp_path: Path) -> None:
    bad = tmp_path / "bad.mcap"
    bad.write_bytes(b"not an mcap file at all")
    tl = rp.RecordingTimeline(bad)
    assert tl.summary() is None
    with pytest.raises(Exception, match="not an MCAP file"):
        tl.first()
    assert os.path.exists(bad)
