"""``conformance/run.py`` changes nothing on the system unless asked: without ``--install`` it never calls
apt-get (even as root) and says how to get the libsdformat reference; with it, it tries."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

import pytest
from repo_paths import REPO_ROOT

ROOT = REPO_ROOT
SDF = str(ROOT / "robot_state_format" / "samples" / "two_links_orthogonal_1.sdf")


def _load_run(monkeypatch: pytest.MonkeyPatch) -> ModuleType:
    spec = importlib.util.spec_from_file_location("conformance_run", ROOT / "conformance" / "run.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    monkeypatch.setitem(sys.modules, "conformance_run", module)  # dataclasses look their module up
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize(("argv", "installs"), [([], 0), (["--install"], 1), (["--install", "--no-install"], 0)])
def test_installs_only_when_asked(argv: list[str], installs: int, monkeypatch: pytest.MonkeyPatch,
                                  tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    run = _load_run(monkeypatch)
    references = sys.modules["references"]
    calls: list[str] = []
    monkeypatch.setattr(references, "BUILD_DIR", tmp_path)  # no sdf_ref built yet
    monkeypatch.setattr(references, "_pkg_config_flags", lambda: None)  # libsdformat-dev missing
    monkeypatch.setattr(references, "install_libsdformat", lambda: calls.append("apt-get") or False)
    monkeypatch.setattr(references.os, "geteuid", lambda: 0)  # as root
    assert run.main(["--sdf", SDF, "--no-fk", "--mutations", "0", *argv]) == 0
    assert len(calls) == installs
    first = capsys.readouterr().out.splitlines()[0]
    assert "sdf_ref: MISSING" in first and "--install" in first
