"""Every key of package.xml resolves with rosdep on Humble (Ubuntu 22.04), Jazzy and Kilted (Ubuntu 24.04), against
a local copy of ros/rosdistro (the offline recipe of its README: these machines cannot reach the rosdistro
servers). Keys that resolve only to pip are not allowed (bloom refuses them): such dependencies are optional
extras instead (mcap, mcap-ros2-support, orjson)."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from xml.etree import ElementTree

import pytest
from repo_paths import REPO_ROOT

ROOT = REPO_ROOT
SNAPSHOT = Path(os.environ.get("RSF_ROSDISTRO", ROOT.parent / "shared" / "rosdistro"))
DISTROS = {"humble": "ubuntu:jammy", "jazzy": "ubuntu:noble", "kilted": "ubuntu:noble"}


def _rosdep() -> str:
    beside = Path(sys.executable).parent / "rosdep"
    found = str(beside) if beside.exists() else shutil.which("rosdep")
    if found is None:
        pytest.skip("rosdep is not installed (pip install rosdep; requirements/test-extra.txt)")
    if not (SNAPSHOT / "index-v4.yaml").is_file():
        pytest.skip(f"no rosdistro snapshot at {SNAPSHOT} (set RSF_ROSDISTRO to a copy with index-v4.yaml, "
                    "rosdep/base.yaml, rosdep/python.yaml and the distros' distribution.yaml)")
    return found


def _keys() -> list[str]:
    root = ElementTree.parse(ROOT / "package.xml").getroot()
    return sorted({e.text or "" for e in root if e.tag.endswith("depend")})


@pytest.mark.parametrize("distro", sorted(DISTROS))
def test_every_package_xml_key_resolves_to_apt(distro: str, tmp_path: Path) -> None:
    rosdep = _rosdep()
    sources = tmp_path / "sources.list.d"
    sources.mkdir()
    snap = SNAPSHOT.resolve()
    (sources / "20-default.list").write_text(f"yaml file://{snap}/rosdep/base.yaml\n"
                                             f"yaml file://{snap}/rosdep/python.yaml\n")
    env = dict(os.environ, ROSDEP_SOURCE_PATH=str(sources), ROSDISTRO_INDEX_URL=f"file://{snap}/index-v4.yaml",
               ROS_HOME=str(tmp_path / "roshome"))
    update = subprocess.run([rosdep, "update", "--rosdistro", distro], capture_output=True, text=True, env=env,
                            timeout=300, check=False)
    assert update.returncode == 0, update.stdout + update.stderr
    keys = _keys()
    r = subprocess.run([rosdep, "resolve", *keys, f"--os={DISTROS[distro]}", f"--rosdistro={distro}"],
                       capture_output=True, text=True, env=env, timeout=300, check=False)
    assert r.returncode == 0, r.stdout + r.stderr  # a key without a rule fails the whole call, naming it
    # per key: "#ROSDEP[key]", then "#apt" (a pip-only key says "#pip"), then the packages
    installers = dict(re.findall(r"^#ROSDEP\[([^\]]+)\]\n#(\w+)$", r.stdout, flags=re.M))
    assert sorted(installers) == keys, r.stdout
    assert {k: v for k, v in installers.items() if v != "apt"} == {}, r.stdout
