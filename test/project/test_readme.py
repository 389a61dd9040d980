"""The README as written: every shell and Python block marked runnable runs, in order, on a copy of the
checkout (the tracked files: a fresh clone) that shares this set-up's .venv.

Markers (an HTML comment on the line before the block):

* ``<!-- runnable -->``: run with bash (``set -e``) or the venv's Python; must exit 0;
* ``<!-- runnable: exit=N -->``: must exit N;
* ``<!-- runnable: background -->``: a long-running node (a terminal of its own): started and left
  running; it must still be alive when the last block is done, then stops with exit 0 on SIGINT;
* ``<!-- not runnable: REASON -->``: not run (the reason is required).

Every ``sh``/``bash``/``python`` block needs one of them, so a new block is never skipped silently.
The nodes run on this test run's private DDS domain (test/ros_harness.py).
"""

from __future__ import annotations

import importlib.util
import os
import re
import shutil
import signal
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

import pytest
from repo_paths import REPO_ROOT

ROOT = REPO_ROOT
README = ROOT / "README.md"
FENCE_RE = re.compile(r"^```(\w*)\n(.*?)^```", re.S | re.M)
MARK_RE = re.compile(r"<!--\s*(runnable(?::\s*(?P<opts>[^>]*?))?|not runnable:\s*(?P<why>[^>]*?))\s*-->\s*$")
BLOCK_TIMEOUT = 120.0


@dataclass
class Block:
    line: int
    lang: str
    text: str
    run: bool
    background: bool = False
    exit: int = 0


def readme_blocks(text: str) -> list[Block]:
    """The code blocks of ``text`` with their markers; AssertionError for a shell/Python block without one."""
    out: list[Block] = []
    for m in FENCE_RE.finditer(text):
        lang = m.group(1)
        line = text.count("\n", 0, m.start()) + 1
        before = text[:m.start()].rstrip("\n").rsplit("\n", 1)[-1]
        mark = MARK_RE.search(before)
        if lang not in ("sh", "bash", "python"):
            continue
        assert mark is not None, f"README.md:{line}: a {lang} block without <!-- runnable --> or " \
                                 "<!-- not runnable: REASON -->"
        if mark.group(1).startswith("not"):
            assert mark.group("why").strip(), f"README.md:{line}: not runnable needs a reason"
            out.append(Block(line, lang, m.group(2), False))
            continue
        block = Block(line, lang, m.group(2), True)
        for opt in (mark.group("opts") or "").split(","):
            opt = opt.strip()
            if opt == "background":
                block.background = True
            elif opt.startswith("exit="):
                block.exit = int(opt[5:])
            elif opt:
                raise AssertionError(f"README.md:{line}: unknown marker option {opt!r}")
        out.append(block)
    return out


def test_markers_are_read() -> None:
    text = ("<!-- runnable -->\n```sh\necho a\n```\n\n<!-- not runnable: needs X -->\n```sh\nx\n```\n"
            "<!-- runnable: background -->\n```bash\nnode\n```\n<!-- runnable: exit=1 -->\n```sh\nfalse\n```\n"
            "```text\nfree\n```\n")
    got = [(b.line, b.run, b.background, b.exit) for b in readme_blocks(text)]
    assert got == [(2, True, False, 0), (7, False, False, 0), (11, True, True, 0), (15, True, False, 1)]
    with pytest.raises(AssertionError, match=r"README\.md:1: a sh block without"):
        readme_blocks("```sh\necho unmarked\n```\n")


def fresh_copy(dest: Path) -> Path:
    """The checkout's files as a clone would have them (tracked and new, not ignored), .venv shared."""
    files = subprocess.run(["git", "ls-files", "-co", "--exclude-standard", "-z"], cwd=ROOT, capture_output=True,
                           check=True).stdout.decode().split("\0")
    for rel in filter(None, files):
        src = ROOT / rel
        if src.is_file():
            (dest / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src, dest / rel)
    (dest / VENV).symlink_to(ROOT / VENV)
    if VENV != ".venv":  # the README's `. .venv/bin/activate`: this distro's venv under RSF_DISTRO
        (dest / ".venv").symlink_to(ROOT / VENV)
    return dest


# the venv these tests run in: ./run's (RSF_DISTRO=humble|jazzy: .venv-<distro>, else .venv)
VENV = f".venv-{os.environ['RSF_DISTRO']}" if os.environ.get("RSF_DISTRO") in ("humble", "jazzy") else ".venv"


def clone_env(env: dict[str, str]) -> dict[str, str]:
    """What the clone's set-up must see to find this checkout's stamp current: the same ROS 2 tool sources (the
    clone's ``../shared/ros2-src`` does not exist), so ``./run`` there and here never redo each other's stages."""
    setup = ROOT / "scripts" / "ros2_tools.py"
    spec = importlib.util.spec_from_file_location("rsf_ros2_tools_for_clone", setup)
    assert spec is not None and spec.loader is not None
    tools = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(tools)
    src = tools.source_dir(ROOT)
    return {tools.ENV_VAR: str(src)} if src is not None and not env.get(tools.ENV_VAR) else {}


def _clone_would_set_up(clone: Path, env: dict[str, str]) -> str | None:
    """Why the clone's ``./run`` would (re)install into the venv it shares with this checkout, or None.

    The venv's stamp must be current for the clone's inputs (scripts/setup.py, requirements, setup.py ...):
    otherwise the clone's set-up reinstalls this package *editable from the clone* into the shared venv, whose
    console scripts and import path then point into a temporary directory (it happened from a worktree whose
    scripts/setup.py differed from the checkout that made the shared venv)."""
    # computed by the interpreter the clone's ./run runs its set-up with (its path is part of the stamp)
    python = env.get("PYTHON") or shutil.which("python3", path=env.get("PATH")) or "python3"
    code = ("import importlib.util as u; s = u.spec_from_file_location('s', 'scripts/setup.py'); "
            "m = u.module_from_spec(s); s.loader.exec_module(m); "
            "print(m.stamp_ok(m.stage_digests(m.detect_mode())))")
    probe = subprocess.run([python, "-c", code], cwd=clone, env=env, capture_output=True, text=True, timeout=120,
                           check=False)
    current = probe.stdout.strip().endswith("True")
    if current:
        return None
    return (f"{VENV} is not set up for this checkout's inputs (scripts/setup.py, requirements, setup.py, "
            f"package.xml): the clone's ./run would reinstall into the shared {VENV}; run ./run setup here first")


def test_every_runnable_readme_block_runs_as_written(tmp_path: Path) -> None:
    pytest.importorskip("rclpy", reason="rclpy is not installed (run the tests through ./run test)")
    pytest.importorskip("mujoco", reason="the README's simulation block needs mujoco (requirements/test-extra.txt: "
                                         "the kilted .venv)")
    if shutil.which("git") is None or not (ROOT / ".git").exists():
        pytest.skip("needs git and a git checkout to make the fresh copy")
    from ros_harness import configure_ros_environment

    blocks = readme_blocks(README.read_text(encoding="utf-8"))
    assert sum(b.run for b in blocks) >= 6
    clone = fresh_copy(tmp_path / "clone")
    env = dict(os.environ)
    configure_ros_environment(env)
    env.pop("VIRTUAL_ENV", None)
    env["PATH"] = os.pathsep.join(p for p in env.get("PATH", "").split(os.pathsep) if not p.startswith(str(ROOT)))
    env.update(clone_env(env))
    reason = _clone_would_set_up(clone, env)
    if reason:
        pytest.skip(reason)
    background: list[tuple[Block, subprocess.Popen[bytes], Path]] = []
    try:
        for i, block in enumerate(b for b in blocks if b.run):
            if block.lang == "python":
                cmd = [str(clone / VENV / "bin" / "python"), "-c", block.text]
            else:
                cmd = ["bash", "-e", "-c", block.text]
            log = tmp_path / f"block{i}_line{block.line}.log"
            if block.background:
                with log.open("wb") as out:
                    proc = subprocess.Popen(cmd, cwd=clone, env=env, stdout=out, stderr=subprocess.STDOUT,
                                            stdin=subprocess.DEVNULL, start_new_session=True)
                background.append((block, proc, log))
                time.sleep(1.0)
                assert proc.poll() is None, f"README.md:{block.line} exited at once:\n{log.read_text()}"
                continue
            done = subprocess.run(cmd, cwd=clone, env=env, capture_output=True, text=True, timeout=BLOCK_TIMEOUT,
                                  stdin=subprocess.DEVNULL)
            assert done.returncode == block.exit, (f"README.md:{block.line}: exit {done.returncode}, expected "
                                                   f"{block.exit}\n{block.text}\n{done.stdout}\n{done.stderr}")
            if block.exit == 1 and "save" in block.text:  # the refusal names the joints never measured
                assert "never reported" in done.stderr and "joint1" in done.stderr, done.stderr
        for block, proc, log in background:
            assert proc.poll() is None, f"README.md:{block.line} died:\n{log.read_text()}"
    finally:
        codes = []
        for block, proc, _log in background:
            if proc.poll() is None:
                os.killpg(proc.pid, signal.SIGINT)
            try:
                codes.append((block.line, proc.wait(15)))
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)
                codes.append((block.line, proc.wait()))
    assert all(code == 0 for _, code in codes), codes
    saved = list((clone / "out").glob("arm7_gripper_restart_*.usdf"))
    assert len(saved) == 1, saved  # the refused save wrote nothing
