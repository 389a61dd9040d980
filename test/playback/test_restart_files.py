"""Restart file naming: untrusted model names never leave output_dir; rotation keeps the newest."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from robot_state_format.playback.restart_files import (
    format_stamp,
    list_restart_files,
    parse_name,
    parse_stamp,
    restart_file_path,
    rotate,
    safe_name,
)

HOSTILE = [
    "../../etc/x",
    "..",
    ".",
    "",
    "/",
    "/etc/passwd",
    "a/../../b",
    "..\\..\\windows",
    "x" * 5000,
    "ロボット",
    "Café robot",
    "nul\x00byte",
    "~root",
    "-rf",
    ".hidden",
    "robot::arm",
    "CON",
    "\u202e gnp.exe",
]


def _assert_inside(out: Path, p: Path) -> None:
    assert p.parent == out.resolve()
    assert p.name not in ("", ".", "..")
    assert "/" not in p.name and "\x00" not in p.name
    assert len(p.name.encode()) < 200
    assert not p.name.startswith(".")


@pytest.mark.parametrize("name", HOSTILE)
def test_hostile_names_stay_inside(tmp_path: Path, name: str) -> None:
    p = restart_file_path(tmp_path, name, 1_700_000_000, 5)
    _assert_inside(tmp_path, p)
    p.write_text("x")  # the name is usable on this file system
    assert p.read_text() == "x"
    assert list(tmp_path.iterdir()) == [p]
    assert parse_name(p) is not None


def test_traversal_name_keeps_visible_tail_only(tmp_path: Path) -> None:
    p = restart_file_path(tmp_path, "../../etc/x", 0)
    assert p.name.startswith("etc_x-")
    p.write_text("")
    assert [f.name for f in tmp_path.iterdir()] == [p.name]


def test_plain_names_unchanged() -> None:
    assert safe_name("arm7_gripper") == "arm7_gripper"
    assert safe_name("robot-1.v2") == "robot-1.v2"


def test_distinct_hostile_names_stay_distinct() -> None:
    names = ["a/b", "a\\b", "a b", "a:b", "ロボット", "ロボ", "x" * 300, "x" * 301]
    assert len({safe_name(n) for n in names}) == len(names)


def test_non_ascii_reduced_to_base_letters() -> None:
    assert safe_name("Café").startswith("Cafe-")


def test_stamp_format_round_trip() -> None:
    assert format_stamp(0, 0) == "19700101T000000.000000000Z"
    # 2023-11-14T22:13:20Z is 1700000000 s after the epoch
    assert format_stamp(1_700_000_000, 123) == "20231114T221320.000000123Z"
    assert parse_stamp(format_stamp(1_700_000_000, 123)) == 1_700_000_000 * 10**9 + 123
    assert format_stamp(5, 1_500_000_000) == "19700101T000006.500000000Z"  # nanosec carried


def test_same_stamp_gets_unique_names(tmp_path: Path) -> None:
    paths = []
    for _ in range(3):
        p = restart_file_path(tmp_path, "r", 10, 0)
        p.write_text("")
        paths.append(p)
    assert len(set(paths)) == 3
    assert [f.path for f in list_restart_files(tmp_path)] == paths


def test_rotation_keeps_newest_checkpoints_only(tmp_path: Path) -> None:
    saved = restart_file_path(tmp_path, "r", 1, kind="restart")
    saved.write_text("")
    made = []
    for s in [5, 3, 9, 7, 1]:
        p = restart_file_path(tmp_path, "r", s, kind="checkpoint")
        p.write_text("")
        made.append((s, p))
    other = restart_file_path(tmp_path, "other", 0, kind="checkpoint")
    other.write_text("")
    removed = rotate(tmp_path, 2, model="r")
    assert sorted(removed) == sorted(p for s, p in made if s in (1, 3, 5))
    left = {p.name for p in tmp_path.iterdir()}
    assert left == {saved.name, other.name} | {p.name for s, p in made if s in (7, 9)}
    assert rotate(tmp_path, 0) == []


def test_unrelated_files_ignored(tmp_path: Path) -> None:
    (tmp_path / "notes.txt").write_text("")
    (tmp_path / "r_checkpoint_garbage.usdf").write_text("")
    assert list_restart_files(tmp_path) == []
    assert list_restart_files(tmp_path / "missing") == []


@settings(max_examples=200, deadline=None)
@given(name=st.text(min_size=0, max_size=400), sec=st.integers(-(2**40), 2**40), ns=st.integers(0, 2**31))
def test_any_name_stays_inside(tmp_path_factory: pytest.TempPathFactory, name: str, sec: int, ns: int) -> None:
    out = tmp_path_factory.getbasetemp() / "hyp"
    out.mkdir(exist_ok=True)
    p = restart_file_path(out, name, sec, ns, kind="checkpoint")
    _assert_inside(out, p)
    assert os.path.commonpath([str(out.resolve()), str(p)]) == str(out.resolve())
    parsed = parse_name(p)
    assert parsed is not None and parsed.kind == "checkpoint" and parsed.model == safe_name(name)


def test_recording_directory_is_named_by_model_and_stamp_and_never_reused(tmp_path: Path) -> None:
    from robot_state_format.playback.restart_files import recording_directory

    stamp_ns = 1_700_000_000 * 10**9 + 5
    first = recording_directory(tmp_path, "arm", stamp_ns)
    assert first.parent == tmp_path and not first.exists()  # named, not created
    assert first.name == "arm_recording_20231114T221320.000000005Z"  # 1.7e9 s = 2023-11-14 22:13:20 UTC
    first.mkdir()
    second = recording_directory(tmp_path, "arm", stamp_ns)
    assert second.name == first.name + "_1"
    second.mkdir()
    assert recording_directory(tmp_path, "arm", stamp_ns).name == first.name + "_2"
    assert recording_directory(tmp_path, "a/b", 0).name.startswith("a_b-")  # an unsafe name made safe
