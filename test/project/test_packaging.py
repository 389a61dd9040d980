"""The Python distribution: PEP 621 metadata that an sdist round trip keeps, one version everywhere, the
requirement files and the extras agreeing, CHANGELOG.rst in bloom's form, and a wheel built the normal way
(sdist, then the wheel from it) that installs into a fresh venv without ROS and runs the offline commands."""

from __future__ import annotations

import email
import os
import re
import shutil
import subprocess
import sys
import tarfile
import venv
import zipfile
from pathlib import Path
from xml.etree import ElementTree

import pytest
from repo_paths import REPO_ROOT

ROOT = REPO_ROOT
PKG = "robot_state_format"
SAMPLE = ROOT / PKG / "samples" / "double_pendulum.urdf"
try:
    import tomllib
except ImportError:  # Python 3.10 (Humble): the checks that read pyproject.toml skip, saying so
    tomllib = None  # type: ignore[assignment]


def _pyproject() -> dict:  # type: ignore[type-arg]
    if tomllib is None:
        pytest.skip("tomllib is Python 3.11+: pyproject.toml is checked on 3.11/3.12 (kilted, jazzy)")
    return tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))


def _requirements(name: str) -> list[str]:
    lines = (ln.split("#", 1)[0].strip() for ln in (ROOT / "requirements" / name).read_text().splitlines())
    return [ln for ln in lines if ln and not ln.startswith("-")]


def _version() -> str:
    text = (ROOT / PKG / "__init__.py").read_text()
    found = re.search(r'^__version__ = "([^"]+)"', text, flags=re.M)
    assert found is not None
    return found.group(1)


def test_one_version_everywhere() -> None:
    root = ElementTree.parse(ROOT / "package.xml").getroot()
    assert root.findtext("version") == _version()
    catkin_pkg = pytest.importorskip("catkin_pkg.changelog", reason="catkin_pkg is not installed")
    changelog = catkin_pkg.get_changelog_from_path(str(ROOT / "CHANGELOG.rst"), PKG)
    versions = [v for v, _date, _changes in changelog.foreach_version()]
    assert versions and versions[0] == _version()  # the form bloom's catkin_generate_changelog keeps


def test_package_xml_has_url_author_and_the_test_depends() -> None:
    root = ElementTree.parse(ROOT / "package.xml").getroot()
    assert root.findtext("url", "").startswith("https://")
    assert root.find("author") is not None and root.find("author").get("email")  # type: ignore[union-attr]
    deps = {e.text for e in root if e.tag.endswith("depend")}
    # every runtime import of the ROS side has its key (the Python tf2_ros module comes from tf2_ros_py)
    assert {"rclpy", "rcl_interfaces", "builtin_interfaces", "tf2_ros_py", "launch", "launch_ros",
            "python3-hypothesis", "python3-pytest-timeout"} <= deps
    assert not deps & {"python3-mcap", "mcap-ros2-support", "python3-orjson"}  # no apt key: optional extras


def test_pyproject_agrees_with_the_requirement_files_and_setup_py() -> None:
    meta = _pyproject()["project"]
    assert meta["dependencies"] == _requirements("core.txt")
    extras = meta["optional-dependencies"]
    assert extras["record"] == _requirements("record.txt")
    assert extras["fast"] == _requirements("fast.txt")
    assert extras["sim"] == _requirements("sim.txt")
    assert extras["plot"] == _requirements("plot.txt")
    assert extras["view"] == _requirements("view.txt")
    assert "Typing :: Typed" in meta["classifiers"] and meta["readme"] == "README.md"
    assert (ROOT / PKG / "py.typed").is_file() and (ROOT / "LICENSE").read_text().startswith(
        "\n                                 Apache License\n                           Version 2.0")
    # setup.py's copy for setuptools < 61 (Humble's colcon) says the same
    text = (ROOT / "setup.py").read_text()
    legacy = text[text.index("LEGACY_METADATA = {"):text.index("READS_PYPROJECT")]
    for dep in meta["dependencies"]:
        assert f'"{dep}"' in legacy
    for name, deps in extras.items():
        assert f'"{name}": [{", ".join(repr(d).replace(chr(39), chr(34)) for d in deps)}]' in legacy, name
    for script, target in meta["scripts"].items():
        assert re.search(rf'"{re.escape(script)} = \{{PACKAGE\}}{re.escape(target[len(PKG):])}"', legacy), script


def _venv_without_ros(where: Path) -> Path:
    venv.EnvBuilder(with_pip=True, clear=True).create(where)
    return where / "bin" / "python"


def _uv() -> str | None:
    beside = Path(sys.executable).parent / "uv"
    return str(beside) if beside.exists() else shutil.which("uv")


@pytest.mark.slow
@pytest.mark.timeout(900)
def test_sdist_then_wheel_install_into_a_fresh_venv_and_run_offline(tmp_path: Path) -> None:
    uv = _uv()
    if uv is None:
        pytest.skip("uv is not installed (the set-up puts it beside this Python)")
    src = tmp_path / "src"
    files = subprocess.run(["git", "ls-files", "-co", "--exclude-standard", "-z"], cwd=ROOT, capture_output=True,
                           check=True).stdout.decode().split("\0")
    for rel in filter(None, files):
        if (ROOT / rel).is_file():
            (src / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(ROOT / rel, src / rel)
    dist = tmp_path / "dist"
    # `uv build`: the sdist, then the wheel built from the unpacked sdist (the round trip the issue found empty)
    built = subprocess.run([uv, "build", "--out-dir", str(dist), str(src)], capture_output=True, text=True,
                           timeout=600, check=False, env=dict(os.environ, UV_NO_PROGRESS="1"))
    assert built.returncode == 0, built.stdout[-3000:] + built.stderr[-3000:]
    wheel = next(dist.glob(f"{PKG}-{_version()}-py3-none-any.whl"))
    sdist = next(dist.glob(f"{PKG}-{_version()}.tar.gz"))
    with tarfile.open(sdist) as tar:
        names = set(tar.getnames())
    base = f"{PKG}-{_version()}"
    assert {f"{base}/pyproject.toml", f"{base}/LICENSE", f"{base}/README.md", f"{base}/setup.py",
            f"{base}/package.xml", f"{base}/{PKG}/py.typed"} <= names
    with zipfile.ZipFile(wheel) as whl:
        meta = email.message_from_bytes(whl.read(f"{base}.dist-info/METADATA"))
        listed = set(whl.namelist())
    assert meta["Version"] == _version() and meta["Requires-Python"] == ">=3.10"
    requires = meta.get_all("Requires-Dist") or []
    for dep in _requirements("core.txt"):
        assert dep in requires or dep.replace(">=", " >=") in " ".join(requires), (dep, requires)
    assert sorted(meta.get_all("Provides-Extra") or []) == ["fast", "plot", "record", "sim", "test", "view"]
    assert 'numba>=0.60; extra == "fast"' in requires and not any(r.startswith("numba") and "extra" not in r
                                                                   for r in requires)
    assert "Typing :: Typed" in (meta.get_all("Classifier") or [])
    assert meta["Description-Content-Type"] == "text/markdown" and "robot-state-format" in meta.get_payload()
    assert meta.get_all("Project-URL") and meta["License-File"] == "LICENSE"
    assert f"{PKG}/py.typed" in listed and f"{base}.dist-info/licenses/LICENSE" in listed

    # a fresh venv with no ROS: the wheel and its dependencies, then the offline commands
    py = _venv_without_ros(tmp_path / "venv")
    installed = subprocess.run([uv, "pip", "install", "--python", str(py), str(wheel)], capture_output=True,
                               text=True, timeout=600, check=False, env=dict(os.environ, UV_NO_PROGRESS="1"))
    assert installed.returncode == 0, installed.stdout[-3000:] + installed.stderr[-3000:]
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV", "AMENT_PREFIX_PATH")}
    env.pop("_ROS_WHEELS_BOOTSTRAP_COMPLETE", None)
    probe = subprocess.run([str(py), "-c", "import rclpy"], capture_output=True, text=True, env=env, check=False)
    assert probe.returncode != 0  # no ROS here
    cli = tmp_path / "venv" / "bin" / "robot-state-format"
    state = tmp_path / "s.usdf"
    for args in (["--version"], ["check", str(SAMPLE)], ["frames", str(SAMPLE)],
                 ["fk", str(SAMPLE), "--positions", '{"joint A": 0.5}', "--json"],
                 ["state", "from-model", str(SAMPLE), "--positions", '{"joint A": 0.5, "joint B": 0.25}',
                  "-o", str(state)],
                 ["state", "validate", str(state), "--model", str(SAMPLE)]):
        r = subprocess.run([str(cli), *args], capture_output=True, text=True, env=env, cwd=tmp_path, timeout=120,
                           check=False)
        assert r.returncode == 0 and "Traceback" not in r.stderr, (args, r.stdout, r.stderr)
        if args == ["--version"]:
            assert r.stdout.strip().endswith(_version())
    where = subprocess.run([str(py), "-c", f"import {PKG}; print({PKG}.__file__)"], capture_output=True, text=True,
                           env=env, cwd=tmp_path, check=True)
    assert Path(where.stdout.strip()).is_relative_to(tmp_path / "venv")  # the installed copy, not this checkout
    # what needs ROS says so in one line
    r = subprocess.run([str(cli), "save"], capture_output=True, text=True, env=env, cwd=tmp_path, timeout=60,
                       check=False)
    assert r.returncode == 2 and "Traceback" not in r.stderr and "rclpy" in r.stderr, r.stderr
