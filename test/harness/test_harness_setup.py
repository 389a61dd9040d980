"""The set-up script's checks, and the tf2_msgs it builds where a distro does not provide one."""

from __future__ import annotations

import importlib.util
import json
import os
import shutil
import sys
from pathlib import Path
from types import ModuleType

import lxml
import numpy
import pytest
from repo_paths import REPO_ROOT
from ros_tools import skip_reason

import robot_state_format.model.urdf.reader

ROOT = REPO_ROOT


def _load_setup_script() -> ModuleType:
    spec = importlib.util.spec_from_file_location("rsf_setup_script", ROOT / "scripts" / "setup.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_missing_build_tools_are_named(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    setup = _load_setup_script()
    monkeypatch.setenv("PATH", str(tmp_path))  # an empty directory: no cmake, no compilers
    with pytest.raises(setup.SetupError) as info:
        setup.require_tools("wheels", need_build=True)
    message = str(info.value)
    assert "cmake" in message
    assert "C compiler" in message and "C++ compiler" in message
    setup.require_tools("wheels", need_build=False)  # nothing to build: no tool needed


def test_stage_hashes_follow_the_requirement_files() -> None:
    setup = _load_setup_script()
    stages = setup.stage_digests("wheels")
    assert set(stages) == {"base", "ros", "ros2tools", "tf2", "reqs", "pkg", "bytecode"}
    distro = setup.stage_digests("distro")
    assert distro["ros"] == "" and distro["ros2tools"] == ""  # distro mode never installs wheels nor tools
    pins = [ROOT / "requirements" / setup.DISTRO.pins] if setup.DISTRO.pins else []
    assert stages["reqs"] == setup._hash_files(*(ROOT / "requirements" / r for r in setup.DISTRO.reqs), *pins)
    assert {"core.txt", "test.txt"} <= set(setup.DISTRO.reqs)
    # the byte-compile stage follows every other stage: any (re)install redoes it
    changed = dict(stages, reqs="something else")
    del changed["bytecode"]
    assert setup.stage_digests("wheels")["bytecode"] == stages["bytecode"]
    assert stages["bytecode"] != setup.hashlib.sha256(
        setup.json.dumps(changed, sort_keys=True).encode()).hexdigest()


def test_set_up_left_bytecode_for_what_every_process_imports() -> None:
    """Where PYTHONDONTWRITEBYTECODE is set Python caches nothing it compiles: the set-up byte-compiles .venv
    and the package, so numpy, lxml and this package's modules load from cached bytecode."""
    venv = Path(sys.prefix)  # the venv running the tests: .venv, or .venv-<distro> under RSF_DISTRO
    stamp = venv / ".rsf-setup-stamp.json"
    if not stamp.is_file() or "bytecode" not in json.loads(stamp.read_text()).get("stages", {}):
        pytest.skip(f"this venv ({venv.name}) was not made by scripts/setup.py (run the tests through ./run test)")
    for source in (Path(numpy.__file__), Path(lxml.__file__), Path(robot_state_format.model.urdf.reader.__file__)):
        cached = Path(importlib.util.cache_from_source(str(source)))
        edited_since = source.stat().st_mtime > stamp.stat().st_mtime  # recompiled on use, from source
        assert cached.is_file() or edited_since, f"no bytecode for {source}"


def test_tf2_msgs_has_the_upstream_type_and_field() -> None:
    pytest.importorskip("rclpy", reason="rclpy is not installed (run the tests through ./run test)")
    from geometry_msgs.msg import TransformStamped
    from rclpy.serialization import deserialize_message, serialize_message
    from tf2_msgs.msg import TFMessage

    assert TFMessage.get_fields_and_field_types() == {"transforms": "sequence<geometry_msgs/TransformStamped>"}
    t = TransformStamped()
    t.header.frame_id = "a"
    t.child_frame_id = "b"
    t.transform.translation.x = 1.5
    t.transform.rotation.w = 1.0
    data = serialize_message(TFMessage(transforms=[t]))
    # CDR little endian: encapsulation, sequence length 1, stamp (sec, nanosec), "a", "b", 7 doubles.
    assert data[:4] == b"\x00\x01\x00\x00"
    assert data[4:8] == (1).to_bytes(4, "little")
    assert data[16:22] == b"\x02\x00\x00\x00a\x00"
    back = deserialize_message(data, TFMessage)
    assert back.transforms[0].child_frame_id == "b" and back.transforms[0].transform.translation.x == 1.5


def _fake_archives(where: Path, names: list[str]) -> None:
    import io
    import tarfile

    where.mkdir(parents=True, exist_ok=True)
    for name in names:
        with tarfile.open(where / f"{name}.tar.gz", "w:gz") as tar:
            data = f"{name}\n".encode()
            info = tarfile.TarInfo(f"{name}/README")
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))


def test_ros2_tools_sources_come_from_the_env_var(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    setup = _load_setup_script()
    tools = setup.ros2_tools
    names = sorted(tools.PINS)
    monkeypatch.setenv(tools.ENV_VAR, str(tmp_path / "src"))
    _fake_archives(tmp_path / "src", names[:-1])  # one archive missing: not a source directory
    assert tools.source_dir(ROOT) is None
    git_digest = tools.digest(ROOT)
    assert git_digest.startswith("git:")
    _fake_archives(tmp_path / "src", names)
    assert tools.source_dir(ROOT) == (tmp_path / "src").resolve()
    first = tools.digest(ROOT)
    assert first.startswith("archives:") and first != git_digest
    _fake_archives(tmp_path / "src", names[:1])  # an archive's content changed: the stage is redone
    (tmp_path / "src" / f"{names[0]}.tar.gz").write_bytes(b"changed")
    assert tools.digest(ROOT) != first
    # every pinned commit is a full 40-hex git hash on a github.com/ros2 URL
    for url, commit in tools.PINS.values():
        assert url.startswith("https://github.com/ros2/") and len(commit) == 40
        int(commit, 16)


def test_no_sources_and_no_network_installs_nothing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    setup = _load_setup_script()
    tools = setup.ros2_tools
    monkeypatch.setenv(tools.ENV_VAR, str(tmp_path / "nothing here"))
    monkeypatch.setattr(tools, "_github_reachable", lambda: False)
    calls: list[list[str]] = []
    got = tools.fetch_sources(ROOT, tmp_path / "work", lambda cmd, *a, **k: calls.append(cmd), tmp_path / "log",
                              lambda msg: None)
    assert got is None and calls == []  # set-up goes on; nothing was run
    # and the tests needing the tools then skip naming what is missing and how to get it
    reason = skip_reason("no_such_ros_tool_module")
    assert reason is not None and reason.startswith("no_such_ros_tool_module not installed")
    assert "RSF_ROS2_SRC" in reason and "./run setup --force" in reason


def test_bytecode_is_compiled_only_after_an_install() -> None:
    """Issue 25: the first ./run after ./run test compiled again (8 s): a stage digest had changed although
    nothing was installed. Now only an install (or a venv never compiled by this script) makes it due."""
    setup = _load_setup_script()
    stamp = {"base": "b", "ros": "r", "ros2tools": "archives:1", "bytecode": "x"}
    assert not setup.bytecode_due(stamp, installed=False)
    assert setup.bytecode_due(stamp, installed=True)
    assert setup.bytecode_due({k: v for k, v in stamp.items() if k != "bytecode"}, installed=False)  # interrupted
    assert setup.bytecode_due({}, installed=False)  # new venv, or this script changed


def test_the_readme_clone_sees_this_checkouts_stages(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """test_readme.py runs ./run in a copy of the checkout sharing .venv: with the environment it gives that
    copy, the copy's set-up computes the same stage digests, so neither redoes the other's stages."""
    import test_readme

    if shutil.which("git") is None or not (ROOT / ".git").exists():
        pytest.skip("needs git and a git checkout to make the fresh copy")
    clone = test_readme.fresh_copy(tmp_path / "clone")
    for key, value in test_readme.clone_env(dict(os.environ)).items():
        monkeypatch.setenv(key, value)
    here = _load_setup_script()
    spec = importlib.util.spec_from_file_location("rsf_setup_clone", clone / "scripts" / "setup.py")
    assert spec is not None and spec.loader is not None
    there = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(there)
    assert clone.resolve() == there.ROOT
    for mode in ("wheels", "distro"):
        assert there.stage_digests(mode) == here.stage_digests(mode)


def _fake_venv(tmp_path: Path, script: str) -> Path:
    venv = tmp_path / "venv"
    (venv / "bin").mkdir(parents=True)
    python = venv / "bin" / "python"
    python.write_text("#!/bin/sh\n" + script)
    python.chmod(0o755)
    return venv


def test_rclpy_import_check_says_why_and_tries_once_more(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    setup = _load_setup_script()
    monkeypatch.setattr(setup.time, "sleep", lambda _s: None)
    log = tmp_path / "setup.log"
    # fails on the first call only (a marker file), as the transient failure did
    marker = tmp_path / "tried"
    monkeypatch.setattr(setup, "VENV", _fake_venv(tmp_path, f'if [ -e "{marker}" ]; then exit 0; fi\ntouch "{marker}"\n'
                                                  'echo "ImportError: librcl.so: cannot open shared object" >&2\n'
                                                  "exit 1\n"))
    setup.check_rclpy_imports(log)
    assert "attempt 1: exit 1" in log.read_text() and "librcl.so: cannot open" in log.read_text()
    assert "attempt 2" not in log.read_text()


def test_rclpy_that_never_imports_is_one_error_naming_why(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    setup = _load_setup_script()
    slept: list[float] = []
    monkeypatch.setattr(setup.time, "sleep", slept.append)
    log = tmp_path / "setup.log"
    monkeypatch.setattr(setup, "VENV", _fake_venv(tmp_path, 'echo "Traceback ..." >&2\n'
                                                  'echo "ModuleNotFoundError: No module named \'rclpy\'" >&2\nexit 1\n'))
    with pytest.raises(setup.SetupError) as info:
        setup.check_rclpy_imports(log)
    assert str(info.value) == ("rclpy does not import in venv after installing: ModuleNotFoundError: No module "
                               f"named 'rclpy'; see {log}")
    assert log.read_text().count("-c 'import rclpy'") == 2
    assert slept == [2.0]  # between the attempts, not after the last one


def test_another_venvs_bootstrap_is_not_inherited(tmp_path: Path) -> None:
    """Set-up run on the kilted .venv's python (an activated venv) must not hand that venv's bootstrap to the
    jazzy venv's python: the guard would skip its own bootstrap and rclpy would miss libfastrtps.so.2.14."""
    setup = _load_setup_script()
    venv = tmp_path / "venv"
    libs = venv / "lib" / "python3.11" / "site-packages" / "ros_rclpy.libs"
    libs.mkdir(parents=True)
    (venv / "pyvenv.cfg").write_text("home = /usr/bin\n")
    distro_lib = tmp_path / "opt" / "ros" / "jazzy" / "lib"  # a sourced distro's folder stays
    inherited = {"_ROS_WHEELS_BOOTSTRAP_COMPLETE": "1", "HOME": "/root",
                 "LD_LIBRARY_PATH": os.pathsep.join([str(libs), str(distro_lib), str(venv / "lib")])}
    clean = setup.without_other_venvs(inherited)
    assert clean == {"HOME": "/root", "LD_LIBRARY_PATH": str(distro_lib)}
    only_venv = dict(inherited, LD_LIBRARY_PATH=os.pathsep.join([str(venv / "lib"), str(libs)]))
    assert setup.without_other_venvs(only_venv) == {"HOME": "/root"}


def test_the_import_failure_named_is_the_exception_line() -> None:
    setup = _load_setup_script()
    rpyutils = ("Traceback (most recent call last):\n  File \"x.py\", line 39, in import_c_library\n"
                "ImportError: libfastrtps.so.2.14: cannot open shared object file: No such file or directory\n"
                "The C extension '/v/rclpy/_rclpy_pybind11.so' failed to be imported while being present on the "
                "system. Please refer to 'https://docs.ros.org/...' for possible solutions\n")
    assert setup.import_failure(rpyutils) == ("ImportError: libfastrtps.so.2.14: cannot open shared object file: "
                                              "No such file or directory")
    assert setup.import_failure("Segmentation fault\n\n") == "Segmentation fault"
    assert setup.import_failure("") == ""
