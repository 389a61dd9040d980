"""``package://`` lookups below ROS_PACKAGE_PATH are bounded (issue 33 item 5): each real directory
is visited once (symlink loops cost nothing), at most ``RSF_MAX_PACKAGE_SCAN_DIRECTORIES`` of them,
unreadable ones skipped; the ROS semantics stay (a crawl finds ``package.xml`` directories, not below
a package, CATKIN_IGNORE/COLCON_IGNORE honoured, first found wins).

Before: a directory holding 10 symlinks to itself cost 10^8 directory scans (a hang), a self-looping
symlink raised ELOOP and ``ROS_PACKAGE_PATH=/proc`` a PermissionError.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest
from repo_paths import REPO_ROOT

from robot_state_format import limits
from robot_state_format.errors import ModelError
from robot_state_format.model import packages
from robot_state_format.model.packages import clear_cache, find_package, require_package

ROOT = REPO_ROOT


@pytest.fixture(autouse=True)
def _fresh(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("AMENT_PREFIX_PATH", raising=False)
    clear_cache()
    yield
    clear_cache()


def _package(directory: Path, name: str) -> Path:
    directory.mkdir(parents=True)
    (directory / "package.xml").write_text(f"<package><name>{name}</name></package>")
    return directory


def _count_scandir(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    calls: list[str] = []
    real = os.scandir

    def counting(path: str) -> object:
        calls.append(os.path.realpath(path))
        return real(path)

    monkeypatch.setattr(packages.os, "scandir", counting)
    return calls


def test_symlinks_to_itself_scan_each_directory_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    loop = tmp_path / "loop"
    (loop / "sub").mkdir(parents=True)
    for i in range(10):
        (loop / f"s{i}").symlink_to(".")
        (loop / "sub" / f"up{i}").symlink_to("..")
    (loop / "self").symlink_to("self")  # ELOOP when followed
    (loop / "dangling").symlink_to("nowhere")
    calls = _count_scandir(monkeypatch)
    monkeypatch.setenv("ROS_PACKAGE_PATH", str(loop))
    start = time.monotonic()
    assert find_package("nope") is None
    assert time.monotonic() - start < 2.0
    assert sorted(calls) == sorted({str(loop.resolve()), str((loop / "sub").resolve())})  # each real dir once


def test_proc_and_unreadable_directories_are_skipped(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    ws = tmp_path / "ws"
    name = f"pkg_{uuid.uuid4().hex}"  # /proc/PID/cwd reaches other processes' workspaces: a name nobody has
    _package(ws / "src" / "deep" / name, name)
    monkeypatch.setenv("ROS_PACKAGE_PATH", f"{ws}{os.pathsep}/proc")
    start = time.monotonic()
    assert find_package(name) == ws / "src" / "deep" / name
    assert find_package("nopepkg_" + name) is None  # /proc crawled to the bound without an error
    assert time.monotonic() - start < 8.0


def test_ros_semantics_kept(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    ws = tmp_path / "ws"
    a = _package(ws / "a_first" / "dir_name", "declared")  # found under its declared name and its dir name
    _package(ws / "b_second" / "declared", "declared")  # a second one of that name: the first wins
    _package(ws / "a_first" / "dir_name" / "inner", "inner")  # below a package: not crawled
    _package(ws / "ignored" / "hidden_pkg", "hidden_pkg")
    (ws / "ignored" / "COLCON_IGNORE").write_text("")
    (ws / "link").symlink_to(ws / "b_second")  # a symlink to a directory is followed
    _package(tmp_path / "elsewhere" / "linked", "linked")
    (ws / "c_link").symlink_to(tmp_path / "elsewhere")
    monkeypatch.setenv("ROS_PACKAGE_PATH", str(ws))
    assert find_package("declared") == a
    assert find_package("dir_name") == a
    assert find_package("inner") is None
    assert find_package("hidden_pkg") is None
    assert find_package("linked") == ws / "c_link" / "linked"


def test_the_bound_is_named_in_the_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    ws = tmp_path / "ws"
    for i in range(30):
        (ws / f"d{i:02d}").mkdir(parents=True)
    _package(ws / "z_last" / "late", "late")
    monkeypatch.setattr(limits, "MAX_PACKAGE_SCAN_DIRECTORIES", 10)
    monkeypatch.setenv("ROS_PACKAGE_PATH", str(ws))
    calls = _count_scandir(monkeypatch)
    with pytest.raises(ModelError) as err:
        require_package("late", file="m.urdf", line=3)
    assert len(calls) <= 10
    text = str(err.value)
    assert "\n" not in text and "MODEL_PACKAGE_NOT_FOUND" in text and "RSF_MAX_PACKAGE_SCAN_DIRECTORIES" in text, text
    monkeypatch.setattr(limits, "MAX_PACKAGE_SCAN_DIRECTORIES", 100)
    clear_cache()
    assert find_package("late") == ws / "z_last" / "late"


@pytest.mark.parametrize("rpp", ["loop", "/proc"])
def test_check_with_a_hostile_package_path_answers_in_one_line(tmp_path: Path, rpp: str) -> None:
    loop = tmp_path / "loop"
    loop.mkdir()
    for i in range(10):
        (loop / f"s{i}").symlink_to(".")
    (loop / "self").symlink_to("self")
    sdf = tmp_path / "inc.sdf"
    sdf.write_text('<?xml version="1.0"?>\n<sdf version="1.9"><world name="w">'
                   "<include><uri>package://nopepkg/models/x</uri></include></world></sdf>\n")
    env = {**os.environ, "PYTHONPATH": str(ROOT), "ROS_PACKAGE_PATH": str(loop) if rpp == "loop" else rpp}
    r = subprocess.run([sys.executable, "-m", "robot_state_format", "check", str(sdf)], capture_output=True,
                       text=True, timeout=9, env=env)
    assert r.returncode == 1 and "Traceback" not in r.stderr, r.stderr
    lines = r.stderr.splitlines()
    assert len(lines) == 1 and "[SDF_INCLUDE_NOT_FOUND]" in lines[0] and "package://nopepkg" in lines[0], lines
