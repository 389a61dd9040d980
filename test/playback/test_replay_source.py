"""What ``~/play`` opens (playback/source.py) and the node's parameter checks (ros/store_params.py,
pure functions): a directory of restart files, a recording, an empty one; refused values."""

from __future__ import annotations

from pathlib import Path

import pytest

from robot_state_format.playback.source import is_restart_directory, open_source
from robot_state_format.playback.timeline import STATE_TOPICS, RecordingTimeline
from robot_state_format.recording import RecordingWriter
from robot_state_format.recording.cdr import cdr_string, cdr_string_text
from robot_state_format.usdf.types import ModelState, Stamp, WorldState
from robot_state_format.usdf.writer import write_world_state

MS = 1_000_000


def _no_joint_states(t_ns: int, fields: object) -> bytes:
    raise AssertionError("no model: no joint_states are encoded")


def test_a_directory_of_restart_files_is_read_whole_with_its_extent(tmp_path: Path) -> None:
    for i in (3, 1, 2):  # file order is not time order
        text = write_world_state(WorldState("w", stamp=Stamp(10, i * MS), model_states=[ModelState("m")]))
        (tmp_path / f"f{4 - i}.usdf").write_text(text)
    (tmp_path / "notes.txt").write_text("not a restart file")
    assert is_restart_directory(tmp_path)
    src = open_source(tmp_path, STATE_TOPICS, None, _no_joint_states)  # type: ignore[arg-type]
    assert isinstance(src.events, list) and not src.empty and src.notes == []
    assert [e.t_ns - 10 * 10**9 for e in src.events] == [1 * MS, 2 * MS, 3 * MS]
    assert all(e.topic == "world_state" and "<world_state" in cdr_string_text(e.data) for e in src.events)
    assert src.extent is not None and (src.extent.count, src.extent.start_ns, src.extent.end_ns) == (
        3, 10 * 10**9 + MS, 10 * 10**9 + 3 * MS)


def test_a_recording_is_streamed_and_an_empty_directory_is_empty(tmp_path: Path) -> None:
    w = RecordingWriter(tmp_path / "bag")
    w.add_topic("/world_state", "std_msgs/msg/String")
    w.add_topic("/other", "std_msgs/msg/String")
    for i in range(4):
        w.write("/world_state", cdr_string(f"s{i}"), 100 + i * MS)
    w.write("/other", cdr_string("x"), 100)
    w.close()
    assert not is_restart_directory(tmp_path / "bag")  # it holds an .mcap file
    src = open_source(tmp_path / "bag", STATE_TOPICS, None, _no_joint_states)  # type: ignore[arg-type]
    assert isinstance(src.events, RecordingTimeline) and not src.empty
    assert src.extent is not None and src.extent.count == 4  # /other is not played
    assert [cdr_string_text(e.data) for e in src.events] == ["s0", "s1", "s2", "s3"]
    (tmp_path / "empty").mkdir()
    empty = open_source(tmp_path / "empty", STATE_TOPICS, None, _no_joint_states)  # type: ignore[arg-type]
    assert empty.empty and empty.extent is None


def test_an_unreadable_recording_raises(tmp_path: Path) -> None:
    bad = tmp_path / "bad.mcap"
    bad.write_bytes(b"not an mcap file at all")
    with pytest.raises(Exception, match="not an MCAP file"):
        open_source(bad, STATE_TOPICS, None, _no_joint_states)  # type: ignore[arg-type]


def test_parameter_values_are_checked_without_side_effects() -> None:
    store_params = pytest.importorskip("robot_state_format.ros.store_params",
                                       reason="rclpy is not installed (run the tests through ./run test)")
    ok = store_params.check_values(
        {"checkpoint_period": 0.0, "rate": 1000.0, "start_offset": 0.0, "keep_last": 0, "tf_source": "computed",
         "publish_clock": True, "realtime_playback": True}, lambda: True)
    assert ok is None
    refused = {
        "checkpoint_period": (86400.5, "checkpoint_period must be a number of seconds in 0..86400 (0 = off), got 86400.5"),
        "rate": (0.0, "rate must be a number in 0.001..1000, got 0.0"),
        "start_offset": (-1.0, "start_offset must be a number of seconds >= 0, got -1.0"),
        "keep_last": (-1, "keep_last must be an integer >= 0 (0 = keep all), got -1"),
        "output_dir": ("  ", "output_dir must not be empty"),
        "tf_source": ("tf", "tf_source must be one of auto, recorded, computed, none, got 'tf'"),
    }
    for name, (value, reason) in refused.items():
        assert store_params.check_values({name: value}, lambda: True) == reason
    assert "rosgraph_msgs" in store_params.check_values({"publish_clock": True}, lambda: False)
    assert "realtime_playback" in store_params.PARAMS and store_params.PARAMS["realtime_playback"][0] is False
