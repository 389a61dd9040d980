"""MCAP recordings: read back by our reader, the mcap reader and rosbags; torn files stay readable."""

from __future__ import annotations

import logging
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from optional import MCAP, needs
from repo_paths import REPO_ROOT

from robot_state_format.recording import (
    JOINT_STATE_TYPE,
    STRING_TYPE,
    RecordingError,
    RecordingWriter,
    decode_all,
    read_recording,
)

NAMES = ["j1", "j2", "gripper"]


def _joint_state(i: int) -> dict:
    return {
        "header": {"stamp": {"sec": 100 + i // 10, "nanosec": (i % 10) * 100_000_000}, "frame_id": ""},
        "name": NAMES,
        "position": [0.1 * i, -0.2 * i, 0.01],
        "velocity": [1.0, -2.0, 0.0],
        "effort": [],
    }


def _write_bag(directory: Path, n: int, **kw: object) -> list[tuple[str, int, object]]:
    w = RecordingWriter(directory, **kw)  # type: ignore[arg-type]
    w.add_topic("/joint_states", JOINT_STATE_TYPE, {"reliability": "best_effort", "depth": 5})
    w.add_topic("/world_state", STRING_TYPE, {"durability": "transient_local", "depth": 1})
    sent: list[tuple[str, int, object]] = []
    for i in range(n):
        t = 1_000_000_000 + i * 10_000_000
        js = _joint_state(i)
        w.write_message("/joint_states", js, t)
        sent.append(("/joint_states", t, js))
        if i % 5 == 0:
            text = f"<world_state><model_state name='r'><pose>{i} 0 0 0 0 0</pose></model_state></world_state>"
            w.write_message("/world_state", {"data": text}, t + 1)
            sent.append(("/world_state", t + 1, text))
    w.close()
    return sent


def _same(sent: list[tuple[str, int, object]], got: list[tuple[str, int, object]]) -> None:
    assert len(got) == len(sent)
    for (st, stime, smsg), (gt, gtime, gmsg) in zip(sent, got, strict=True):
        assert (st, stime) == (gt, gtime)
        if st == "/world_state":
            assert gmsg.data == smsg  # type: ignore[attr-defined]
        else:
            assert isinstance(smsg, dict)
            assert list(gmsg.name) == smsg["name"]  # type: ignore[attr-defined]
            assert list(gmsg.position) == smsg["position"]  # type: ignore[attr-defined]
            assert list(gmsg.velocity) == smsg["velocity"]  # type: ignore[attr-defined]
            assert (gmsg.header.stamp.sec, gmsg.header.stamp.nanosec) == (  # type: ignore[attr-defined]
                smsg["header"]["stamp"]["sec"], smsg["header"]["stamp"]["nanosec"])


def test_round_trip_own_reader(tmp_path: Path) -> None:
    sent = _write_bag(tmp_path / "bag", 40)
    done: list[bool] = []
    assert len(list(read_recording(tmp_path / "bag", complete=done))) == len(sent)
    assert done == [True]
    _same(sent, decode_all(tmp_path / "bag"))


def test_mcap_reader_reads_it(tmp_path: Path) -> None:
    from mcap.reader import make_reader
    from mcap_ros2.decoder import DecoderFactory

    sent = _write_bag(tmp_path / "bag", 30)
    with open(tmp_path / "bag" / "bag_0.mcap", "rb") as f:
        reader = make_reader(f, decoder_factories=[DecoderFactory()])
        header = reader.get_header()
        assert header.profile == "ros2"
        summary = reader.get_summary()
        assert summary is not None
        assert {s.encoding for s in summary.schemas.values()} == {"ros2msg"}
        assert {c.message_encoding for c in summary.channels.values()} == {"cdr"}
        assert {s.name for s in summary.schemas.values()} == {JOINT_STATE_TYPE, STRING_TYPE}
        got = [(ch.topic, m.log_time, dec) for _, ch, m, dec in reader.iter_decoded_messages(log_time_order=False)]
    _same(sent, got)


def test_rosbags_reads_the_directory(tmp_path: Path) -> None:
    rosbags_highlevel = pytest.importorskip("rosbags.highlevel", reason="rosbags is not installed")
    from rosbags.rosbag2 import Reader

    sent = _write_bag(tmp_path / "bag", 30)
    with Reader(tmp_path / "bag") as r:
        assert r.message_count == len(sent)
        assert {c.topic: c.msgcount for c in r.connections} == {"/joint_states": 30, "/world_state": 6}
    with rosbags_highlevel.AnyReader([tmp_path / "bag"]) as ar:
        got = [(c.topic, t, ar.deserialize(raw, c.msgtype)) for c, t, raw in ar.messages()]
    got.sort(key=lambda x: x[1])
    _same(sorted(sent, key=lambda x: x[1]), got)


def test_truncated_file_reads_up_to_last_complete_chunk(tmp_path: Path) -> None:
    # tiny chunks: a chunk every few messages
    sent = _write_bag(tmp_path / "bag", 60, chunk_size=600, compression="none")
    data = (tmp_path / "bag" / "bag_0.mcap").read_bytes()
    full = len(list(read_recording(tmp_path / "bag")))
    assert full == len(sent)
    counts = []
    for cut in range(40, len(data), max(1, len(data) // 53)):
        p = tmp_path / f"cut{cut}.mcap"
        p.write_bytes(data[:cut])
        done: list[bool] = []
        got = list(read_recording(p, complete=done))
        assert done == [False]
        # a prefix of what was written, in order
        assert [(m.topic, m.log_time_ns) for m in got] == [(t, lt) for t, lt, _ in sent[: len(got)]]
        counts.append(len(got))
    assert counts == sorted(counts)
    # cuts inside the data section lose only the torn chunk; cuts in the summary lose nothing
    assert len({c for c in counts if 0 < c < len(sent)}) >= 5
    assert counts[-1] == len(sent)


def test_not_mcap_is_an_error(tmp_path: Path) -> None:
    p = tmp_path / "x.mcap"
    p.write_bytes(b"hello world, not mcap at all")
    with pytest.raises(RecordingError):
        list(read_recording(p))
    with pytest.raises(RecordingError):
        list(read_recording(tmp_path / "missing.mcap"))


def test_non_empty_directory_refused(tmp_path: Path) -> None:
    (tmp_path / "bag").mkdir()
    (tmp_path / "bag" / "other").write_text("")
    with pytest.raises(RecordingError, match="not empty"):
        RecordingWriter(tmp_path / "bag")


_WRITER = """
import sys, time
from robot_state_format.recording import RecordingWriter, JOINT_STATE_TYPE
w = RecordingWriter(sys.argv[1], flush_period=0.02)
w.add_topic("/joint_states", JOINT_STATE_TYPE)
i = 0
while True:
    w.write_message("/joint_states", {"header": {"stamp": {"sec": i, "nanosec": 0}, "frame_id": ""},
                    "name": ["a"], "position": [float(i)], "velocity": [], "effort": []}, 10**9 + i)
    i += 1
    if i == 50:
        print("ready", flush=True)
    time.sleep(0.001)
"""


@needs(*MCAP)
def test_killed_writer_leaves_readable_prefix(tmp_path: Path) -> None:
    env = dict(os.environ, PYTHONPATH=str(REPO_ROOT))
    proc = subprocess.Popen([sys.executable, "-c", _WRITER, str(tmp_path / "bag")], stdout=subprocess.PIPE,
                            env=env)
    try:
        assert proc.stdout is not None
        assert proc.stdout.readline().strip() == b"ready"
        time.sleep(0.3)
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait()
    done: list[bool] = []
    got = decode_all(tmp_path / "bag")
    list(read_recording(tmp_path / "bag", complete=done))
    assert done == [False]
    assert len(got) >= 50
    assert [m.position[0] for _, _, m in got] == [float(i) for i in range(len(got))]


def test_messages_that_cannot_be_placed_are_counted_and_warned(tmp_path: Path) -> None:
    """A message on a channel never declared, or on a channel without a schema, is left out of what is
    read, and the count of those is logged (once per file: the throttle holds repeats back)."""
    import mcap.writer

    path = tmp_path / "odd.mcap"
    with open(path, "wb") as f:
        w = mcap.writer.Writer(f)
        w.start()
        sid = w.register_schema("std_msgs/msg/String", "ros2msg", b"string data")
        good = w.register_channel("/world_state", "cdr", sid)
        bare = w.register_channel("/raw", "cdr", 0)  # schema id 0: no schema
        w.add_message(good, 1, b"\x00\x01\x00\x00\x01\x00\x00\x00\x00", 1)
        for t in (2, 3, 4):
            w.add_message(99, t, b"x", t)  # channel 99 is never declared
        w.add_message(bare, 5, b"y", 5)
        w.finish()
    records: list[logging.LogRecord] = []
    handler = logging.Handler()
    handler.emit = records.append  # type: ignore[method-assign]
    logger = logging.getLogger("robot_state_format.recording.reader")
    logger.addHandler(handler)
    try:
        got = [(m.topic, m.log_time_ns) for m in read_recording(path)]
        decoded = [(t, ns) for t, ns, _ in decode_all(path)]
        again = list(read_recording(path))  # a second read within the period: held back, counted
    finally:
        logger.removeHandler(handler)
    assert got == [("/world_state", 1), ("/raw", 5)]
    assert decoded == [("/world_state", 1)]
    assert len(again) == 2
    lines = [r.getMessage() for r in records if r.levelno == logging.WARNING]
    assert lines == [f"{path}: 3 message(s) on a channel the file never declares (no Channel record before "
                     "them): left out",
                     f"{path}: 1 message(s) on a channel without a schema cannot be decoded: left out"]
