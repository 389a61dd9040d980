"""What rosbag2 itself writes, checked without ROS: type hashes, the rosbag2 record, reindex of a torn file.

Independent expectations: the type hashes rosidl generated for every installed interface (the
``share/<pkg>/msg/<Type>.json`` files), the file sizes after each chunk the test forced, mcap-ros2-support
decoding the TF messages that playback restamps.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from optional import MCAP, absent

from robot_state_format.cli import main
from robot_state_format.recording import (
    JOINT_STATE_TYPE,
    STRING_TYPE,
    TF_TYPE,
    RecordingWriter,
    decode_all,
    msgdefs,
    read_recording,
    reindex,
)

SHARE = Path(sys.prefix) / "share"
CLI = [sys.executable, "-m", "robot_state_format"]  # the console script's module, wherever it is installed


def _installed() -> list[tuple[str, str]]:
    """``(type name, rosidl's hash)`` of every installed message with a .msg and a .json."""
    out = []
    for js in sorted(SHARE.glob("*/msg/*.json")):
        if js.with_suffix(".msg").is_file():
            data = json.loads(js.read_text())
            out.append((f"{js.parts[-3]}/msg/{js.stem}", data["type_hashes"][0]["hash_string"]))
    return out


def test_type_hash_of_every_installed_message_equals_rosidls() -> None:
    installed = _installed()
    if len(installed) < 50:
        pytest.skip("the ROS 2 interface packages are not installed in this Python (./run setup)")
    for type_name, want in installed:
        assert msgdefs.type_hash(type_name, msgdefs.definition_from_files(type_name, [SHARE])) == want, type_name


@pytest.mark.parametrize("type_name", sorted(msgdefs.BUILTIN))
def test_builtin_definitions_hash_like_the_installed_ones(type_name: str) -> None:
    pkg, _, name = type_name.split("/")
    js = SHARE / pkg / "msg" / f"{name}.json"
    if not js.is_file():
        pytest.skip(f"{type_name} is not installed in this Python")
    assert msgdefs.type_hash(type_name, msgdefs.BUILTIN[type_name]) == \
        json.loads(js.read_text())["type_hashes"][0]["hash_string"]
    assert msgdefs.definition_from_files(type_name, []) is None  # nothing found: the built-in text is used


def test_definition_error_names_the_type_and_line() -> None:
    with pytest.raises(msgdefs.MessageDefinitionError, match=r"pkg/msg/Bad:2: field type 'float64\[x\]'"):
        msgdefs.type_hash("pkg/msg/Bad", "int32 a\nfloat64[x] b\n")
    with pytest.raises(msgdefs.MessageDefinitionError, match="no message definition for nope_msgs/msg/Nope"):
        msgdefs.definition("nope_msgs/msg/Nope")


def _tf(i: int) -> dict:
    def one(parent: str, child: str, k: float) -> dict:
        return {"header": {"stamp": {"sec": 10 + i, "nanosec": 999_999_000 - i}, "frame_id": parent},
                "child_frame_id": child, "transform": {"translation": {"x": k, "y": -k, "z": 0.5},
                                                       "rotation": {"x": 0.0, "y": 0.0, "z": 0.6, "w": 0.8}}}
    return {"transforms": [one("world", "base", 1.0 * i), one("base", "a_longer_frame_name", 2.0), one("b", "c", 3.0)]}


def test_channels_carry_qos_and_type_hash_and_the_file_the_rosbag2_record(tmp_path: Path) -> None:
    from mcap.reader import make_reader

    offered = [{"reliability": "reliable", "durability": "transient_local", "depth": 1},
               {"reliability": "best_effort", "durability": "volatile", "depth": 7}]
    w = RecordingWriter(tmp_path / "bag")
    w.add_topic("/tf_static", TF_TYPE, offered)
    w.add_topic("/robot_description", STRING_TYPE)
    w.write_message("/tf_static", _tf(0), 5)
    w.write_message("/robot_description", {"data": "<robot name='r'/>"}, 6)
    w.close()
    with open(tmp_path / "bag" / "bag_0.mcap", "rb") as f:
        reader = make_reader(f)
        summary = reader.get_summary()
        assert summary is not None
        ch = next(c for c in summary.channels.values() if c.topic == "/tf_static")
        qos = yaml.safe_load(ch.metadata["offered_qos_profiles"])
        assert [(q["reliability"], q["durability"], q["depth"]) for q in qos] == [
            ("reliable", "transient_local", 1), ("best_effort", "volatile", 7)]
        assert ch.metadata["topic_type_hash"] == msgdefs.type_hash(TF_TYPE)
        assert summary.schemas[ch.schema_id].data.decode() == msgdefs.definition(TF_TYPE)
        (record,) = [m for m in reader.iter_metadata() if m.name == "rosbag2"]
    info = yaml.safe_load((tmp_path / "bag" / "metadata.yaml").read_text())["rosbag2_bagfile_information"]
    assert yaml.safe_load(record.metadata["serialized_metadata"]) == info
    assert info["version"] == 9 and info["message_count"] == 2
    tf = next(t for t in info["topics_with_message_count"] if t["topic_metadata"]["name"] == "/tf_static")
    assert tf["topic_metadata"]["type_description_hash"] == msgdefs.type_hash(TF_TYPE)


def _chunked_bag(directory: Path, chunks: int, per_chunk: int) -> list[tuple[int, dict[str, int], int, int]]:
    """A bag whose chunks end where the test says; per chunk: (file size after it, counts so far, first
    and last log time so far)."""
    w = RecordingWriter(directory, chunk_size=1 << 30, flush_period=1e9, compression="none")
    w.add_topic("/joint_states", JOINT_STATE_TYPE)
    w.add_topic("/tf", TF_TYPE)
    w.add_topic("/world_state", STRING_TYPE)  # declared, never written: counted 0
    marks = []
    counts = {"/joint_states": 0, "/tf": 0, "/world_state": 0}
    t0 = 1_700_000_000_000_000_000
    t = t0
    for c in range(chunks):
        for i in range(per_chunk):
            t = t0 + (c * per_chunk + i) * 1_000_000
            topic = "/tf" if i % 3 == 0 else "/joint_states"
            if topic == "/tf":
                w.write_message(topic, _tf(i), t)
            else:
                w.write_message(topic, {"header": {"stamp": {"sec": 1, "nanosec": i}, "frame_id": ""},
                                        "name": ["j"], "position": [float(i)], "velocity": [], "effort": []}, t)
            counts[topic] += 1
        w.flush()
        marks.append((w.path.stat().st_size, dict(counts), t0, t))
    w.close()
    return marks


def test_reindex_of_an_intact_recording_gives_its_metadata(tmp_path: Path) -> None:
    _chunked_bag(tmp_path / "bag", 4, 9)
    meta = tmp_path / "bag" / "metadata.yaml"
    original = yaml.safe_load(meta.read_text())
    meta.unlink()
    result = reindex(tmp_path / "bag")
    assert result.complete == {"bag_0.mcap": True}
    assert yaml.safe_load(meta.read_text()) == original


def test_reindex_of_a_recording_cut_mid_file_counts_its_complete_chunks(tmp_path: Path,
                                                                       capsys: pytest.CaptureFixture[str]) -> None:
    marks = _chunked_bag(tmp_path / "full", 6, 10)
    data = (tmp_path / "full" / "full_0.mcap").read_bytes()
    for k in (0, 2, 4):  # cut in the middle of chunk k + 1
        size, counts, start, end = marks[k]
        cut = (size + marks[k + 1][0]) // 2
        d = tmp_path / f"cut{k}"
        d.mkdir()
        (d / "cut_0.mcap").write_bytes(data[:cut])  # a crash: no summary, no metadata.yaml
        assert main(["reindex", str(d)]) == 0
        out, err = capsys.readouterr()
        assert "cut_0.mcap ends early" in err
        info = yaml.safe_load((d / "metadata.yaml").read_text())["rosbag2_bagfile_information"]
        got = {t["topic_metadata"]["name"]: t["message_count"] for t in info["topics_with_message_count"]}
        assert got == counts
        assert info["message_count"] == sum(counts.values()) == len(list(read_recording(d)))
        assert info["starting_time"]["nanoseconds_since_epoch"] == start
        assert info["duration"]["nanoseconds"] == end - start
        assert info["relative_file_paths"] == ["cut_0.mcap"]
        assert info["files"] == [{"path": "cut_0.mcap", "starting_time": {"nanoseconds_since_epoch": start},
                                  "duration": {"nanoseconds": end - start}, "message_count": sum(counts.values())}]
        types = {t["topic_metadata"]["name"]: t["topic_metadata"]["type"] for t in info["topics_with_message_count"]}
        assert types == {"/joint_states": JOINT_STATE_TYPE, "/tf": TF_TYPE, "/world_state": STRING_TYPE}
        assert f"{sum(counts.values())} messages in 1 file(s)" in out


def test_reindex_cli_errors(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["reindex", str(tmp_path / "none")]) == 2
    assert "reindex: error: " in (err := capsys.readouterr().err) and "not a directory" in err
    assert main(["reindex", str(tmp_path)]) == 2
    assert "no .mcap file" in capsys.readouterr().err
    (tmp_path / "x_0.mcap").write_bytes(b"not an mcap file at all")
    if absent(*MCAP):  # reading MCAP needs the `record` extra: a missing dependency, one line, exit 2
        assert main(["reindex", str(tmp_path)]) == 2
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and "pip install mcap mcap-ros2-support" in err
    else:
        assert main(["reindex", str(tmp_path)]) == 1  # invalid input, not an I/O error (README exit-code table)
        assert "not an MCAP file" in capsys.readouterr().err
    assert not (tmp_path / "metadata.yaml").exists()


def test_reindex_cli_runs_as_a_command(tmp_path: Path) -> None:
    _chunked_bag(tmp_path / "bag", 2, 4)
    (tmp_path / "bag" / "metadata.yaml").unlink()
    r = subprocess.run([*CLI, "reindex", str(tmp_path / "bag")], capture_output=True, text=True, timeout=60,
                       env=dict(os.environ))
    assert r.returncode == 0, r.stderr
    assert r.stdout.splitlines() == ["/joint_states (sensor_msgs/msg/JointState): 4 messages",
                                     "/tf (tf2_msgs/msg/TFMessage): 4 messages",
                                     "/world_state (std_msgs/msg/String): 0 messages",
                                     f"{tmp_path / 'bag' / 'metadata.yaml'}: 8 messages in 1 file(s), 0.007 s"]


def test_restamp_tf_moves_every_stamp_and_nothing_else(tmp_path: Path) -> None:
    pytest.importorskip("rclpy", reason="rclpy is not installed (run the tests through ./run test)")
    from robot_state_format.recording.cdr import restamp_tf

    w = RecordingWriter(tmp_path / "bag")
    w.add_topic("/tf", TF_TYPE)
    w.write_message("/tf", _tf(3), 1)
    w.close()
    raw = next(iter(read_recording(tmp_path / "bag")))
    shift = 2_500_000_123
    w2 = RecordingWriter(tmp_path / "shifted")
    w2.add_topic("/tf", TF_TYPE)
    w2.write("/tf", restamp_tf(raw.data, shift), 1)
    w2.close()
    (_, _, before), (_, _, after) = decode_all(tmp_path / "bag")[0], decode_all(tmp_path / "shifted")[0]
    for a, b in zip(before.transforms, after.transforms, strict=True):
        ns_a = a.header.stamp.sec * 10**9 + a.header.stamp.nanosec
        assert b.header.stamp.sec * 10**9 + b.header.stamp.nanosec == ns_a + shift
        assert (b.header.frame_id, b.child_frame_id) == (a.header.frame_id, a.child_frame_id)
        assert (b.transform.translation.x, b.transform.rotation.z) == (a.transform.translation.x,
                                                                        a.transform.rotation.z)


def test_plan_tf() -> None:
    pytest.importorskip("rclpy", reason="rclpy is not installed (run the tests through ./run test)")
    from robot_state_format.playback.tf_source import TfPlan, plan_tf

    state = {"joint_states", "world_state"}
    assert plan_tf("auto", {"tf", "tf_static", "robot_description", *state}, False) == TfPlan(
        "recorded", frozenset({"tf", "tf_static", "robot_description", *state}))
    assert plan_tf("auto", state, True) == TfPlan("none", frozenset(state))
    assert plan_tf("computed", {"tf", *state}, True) == TfPlan("computed", frozenset(state))
    with pytest.raises(ValueError, match="holds no /tf"):
        plan_tf("recorded", state, True)
    with pytest.raises(ValueError, match="needs a model"):
        plan_tf("computed", state, False)
    assert plan_tf("auto", None, False) == TfPlan("none", frozenset(state))  # a directory of restart files
