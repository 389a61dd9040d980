"""One exit-code table for every command (README "Command line"): 0 ok, 1 invalid input or refused,
2 usage or I/O error. For each command the same four cases: it works (0); input that does not fit
(an invalid model or document, an unknown joint: 1); a usage error (2); a model file that is missing (2).

The commands without ROS run in this process (``main``); those that start a node run as processes on the
test's private ROS domain. Output folders given to ``-o`` / ``--output`` are missing in the ok cases: every
command creates them with their parents."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from optional import MCAP, absent, require
from repo_paths import REPO_ROOT
from ros_harness import node_command

from robot_state_format.cli import main
from robot_state_format.recording import JOINT_STATE_TYPE, RecordingWriter

ROOT = REPO_ROOT
PENDULUM = str(ROOT / "robot_state_format" / "samples" / "double_pendulum.urdf")
POSITIONS = '{"joint A": 0.1, "joint B": -0.2}'
MISSING = "/nonexistent/robot.urdf"
INVALID_URDF = """<robot name="x"><link name="a"/>
  <joint name="j" type="continuous"><parent link="a"/><child link="no_such_link"/></joint></robot>
"""
CLI = [sys.executable, "-m", "robot_state_format"]


@pytest.fixture
def files(tmp_path: Path) -> dict[str, str]:
    """A valid state of the pendulum, its SDFormat state, an invalid model and document, a recording."""
    bad_urdf = tmp_path / "bad.urdf"
    bad_urdf.write_text(INVALID_URDF)
    bad_usdf = tmp_path / "bad.usdf"
    bad_usdf.write_text("<world_state><model_state name='linkage'></world_state>")
    state = tmp_path / "ok.usdf"
    assert main(["state", "from-model", PENDULUM, "--positions", POSITIONS, "-o", str(state)]) == 0
    sdf_state = tmp_path / "ok_state.sdf"
    assert main(["state", "export", str(state), "--model", PENDULUM, "--to", "sdf-state", "-o", str(sdf_state)]) == 0
    bag = tmp_path / "bag"
    if not absent(*MCAP):  # writing a recording needs the `record` extra (the reindex cases skip without it)
        w = RecordingWriter(bag)
        w.add_topic("/joint_states", JOINT_STATE_TYPE)
        w.write_message("/joint_states", {"header": {"stamp": {"sec": 1, "nanosec": 0}, "frame_id": ""},
                                          "name": ["joint A"], "position": [0.1], "velocity": [], "effort": []}, 10)
        w.close()
    not_mcap = tmp_path / "not_mcap"
    not_mcap.mkdir()
    (not_mcap / "not_mcap_0.mcap").write_bytes(b"this is not an MCAP file at all" * 4)
    return {"state": str(state), "sdf_state": str(sdf_state), "bad_urdf": str(bad_urdf), "bad_usdf": str(bad_usdf),
            "bag": str(bag), "not_mcap": str(not_mcap), "out": str(tmp_path / "new" / "folder")}


# command: {case: argv}; {name} is filled from the files fixture
IN_PROCESS: dict[str, dict[str, list[str]]] = {
    "check": {"ok": ["check", PENDULUM], "invalid": ["check", "{bad_urdf}"], "usage": ["check", "--no-such-option"],
              "missing": ["check", MISSING]},
    "frames": {"ok": ["frames", PENDULUM], "invalid": ["frames", "{bad_urdf}"], "usage": ["frames"],
               "missing": ["frames", MISSING]},
    "fk": {"ok": ["fk", PENDULUM, "--positions", POSITIONS], "invalid": ["fk", PENDULUM, "--positions", '{"nope": 1}'],
           "usage": ["fk", PENDULUM, "--positions", "{not json"], "missing": ["fk", MISSING]},
    "convert": {"ok": ["convert", PENDULUM, "--to", "sdf", "-o", "{out}/p.sdf"],
                "invalid": ["convert", "{bad_urdf}", "--to", "sdf"], "usage": ["convert", PENDULUM, "--to", "obj"],
                "missing": ["convert", MISSING, "--to", "sdf"]},
    "state from-model": {
        "ok": ["state", "from-model", PENDULUM, "--positions", POSITIONS, "-o", "{out}/s.usdf"],
        "invalid": ["state", "from-model", PENDULUM, "--positions", '{"nope": 1}'],
        "usage": ["state", "from-model", PENDULUM, "--positions", "{not json"],
        "missing": ["state", "from-model", MISSING, "--positions", "{}"]},
    "state validate": {
        "ok": ["state", "validate", "{state}", "--model", PENDULUM], "invalid": ["state", "validate", "{bad_usdf}"],
        "usage": ["state", "validate"], "missing": ["state", "validate", "{state}", "--model", MISSING]},
    "state export": {
        "ok": ["state", "export", "{state}", "--model", PENDULUM, "--to", "sdf-state", "-o", "{out}/s.sdf"],
        "invalid": ["state", "export", "{bad_usdf}", "--model", PENDULUM, "--to", "sdf-state"],
        "usage": ["state", "export", "{state}", "--model", PENDULUM, "--to", "nothing"],
        "missing": ["state", "export", "{state}", "--model", MISSING, "--to", "sdf-state"]},
    "state import": {
        "ok": ["state", "import", "{sdf_state}", "--from", "sdf-state", "-o", "{out}/i.usdf"],
        "invalid": ["state", "import", "{bad_usdf}", "--from", "sdf-state"],
        "usage": ["state", "import", "{sdf_state}", "--from", "mjcf"],
        "missing": ["state", "import", "/nonexistent/state.sdf", "--from", "sdf-state"]},
    "state plot": {
        "ok": ["state", "plot", "{state}", "--model", PENDULUM, "-o", "{out}/p.png"],
        "invalid": ["state", "plot", "{bad_usdf}", "-o", "{out}/p.png"],
        "usage": ["state", "plot", "{state}"],
        "missing": ["state", "plot", "{state}", "--model", MISSING, "-o", "{out}/p.png"]},
    "sim run": {
        "ok": ["sim", "run", PENDULUM, "--engine", "mujoco", "--steps", "2", "--save-at", "2", "--output", "{out}"],
        "invalid": ["sim", "run", "{bad_urdf}", "--engine", "mujoco", "--steps", "2"],
        "usage": ["sim", "run", PENDULUM, "--engine", "mujoco", "--steps", "-1"],
        "missing": ["sim", "run", MISSING, "--engine", "mujoco", "--steps", "2"]},
    "reindex": {"ok": ["reindex", "{bag}"], "invalid": ["reindex", "{not_mcap}"], "usage": ["reindex"],
                "missing": ["reindex", "/nonexistent/recording"]},
}
WANT = {"ok": 0, "invalid": 1, "invalid recording": 1, "usage": 2, "missing": 2}


def _fill(argv: list[str], files: dict[str, str]) -> list[str]:
    out = []
    for a in argv:
        for name, value in files.items():
            a = a.replace("{" + name + "}", value)
        out.append(a)
    return out


@pytest.mark.parametrize("case", ["ok", "invalid", "usage", "missing"])
@pytest.mark.parametrize("command", list(IN_PROCESS))
def test_command_exit_code(command: str, case: str, files: dict[str, str],
                           capsys: pytest.CaptureFixture[str]) -> None:
    if command == "sim run":
        require("mujoco")
    if command == "reindex" and case in ("ok", "invalid"):
        require(*MCAP)
    argv = _fill(IN_PROCESS[command][case], files)
    code = main(argv)
    err = capsys.readouterr().err
    if command == "state plot" and case == "ok" and absent("matplotlib"):  # the `plot` extra: one line, exit 2
        assert code == 2 and err.count("\n") == 1 and "pip install matplotlib" in err, err
        return
    assert code == WANT[case], (argv, err)
    assert "Traceback" not in err
    if case != "ok":
        assert "error" in err, err  # every failure says why
    elif "-o" in argv or "--output" in argv:  # the missing output folders were made
        assert Path(files["out"]).is_dir()


# -- the commands that run a node ----------------------------------------------------------------

def _run(argv: list[str], timeout: float = 60) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*CLI, *argv], capture_output=True, text=True, timeout=timeout, env=dict(os.environ),
                          cwd=ROOT, check=False)


ROS_CASES: dict[str, dict[str, list[str]]] = {
    "joint-states": {
        "ok": ["joint-states", "--model", PENDULUM, "--duration", "0.3"],
        "invalid": ["joint-states", "--model", PENDULUM, "--positions", '{"nope": 1}', "--duration", "0.3"],
        "usage": ["joint-states", "--model", PENDULUM, "--speed", "0"],
        "missing": ["joint-states", "--model", MISSING, "--duration", "0.3"]},
    "save": {
        "invalid": ["save", "--model", "{bad_urdf}", "--output", "{out}", "--timeout", "0.2"],
        "usage": ["save", "--timeout", "soon"],
        "missing": ["save", "--model", MISSING, "--output", "{out}", "--timeout", "0.2"]},
    "record": {
        "ok": ["record", "--output", "{out}", "--duration", "0.3"],
        "invalid": ["record", "--model", "{bad_urdf}", "--output", "{out}", "--duration", "0.3"],
        "usage": ["record", "--duration", "long"],
        "missing": ["record", "--model", MISSING, "--output", "{out}", "--duration", "0.3"]},
    "replay": {
        "ok": ["replay", "{state}", "--model", PENDULUM, "--hold", "0"],
        "invalid": ["replay", "{bad_usdf}", "--model", PENDULUM, "--hold", "0"],
        "invalid recording": ["replay", "{not_mcap}"],
        "usage": ["replay", "{state}", "--model", PENDULUM, "--speed", "0"],
        "missing": ["replay", "{state}", "--model", MISSING, "--hold", "0"]},
}


@pytest.mark.parametrize("command", list(ROS_CASES))
def test_node_command_exit_codes(command: str, files: dict[str, str], ros_context: Any) -> None:
    """``ros_context`` gives this process (and so the children) a private ROS domain."""
    for case, argv in ROS_CASES[command].items():
        r = _run(_fill(argv, files))
        if command == "record" and case != "usage" and absent(*MCAP):
            # without the `record` extra: one line naming it, exit 2, before the --output folder is made
            assert r.returncode == 2 and r.stderr.count("\n") == 1, (case, r.stderr)
            assert "pip install mcap mcap-ros2-support" in r.stderr and not Path(files["out"]).exists()
            continue
        assert r.returncode == WANT[case], (case, argv, r.stderr)
        assert "Traceback" not in r.stderr, r.stderr
        if case == "ok" and "--output" in argv:
            assert Path(files["out"]).is_dir()


def test_save_ok_and_its_missing_out_folder(files: dict[str, str], ros_context: Any) -> None:
    """``save`` with a live source: 0, the restart file in the ``--out`` folder it created."""
    source = subprocess.Popen([*CLI, "joint-states", "--model", PENDULUM], stdout=subprocess.DEVNULL,
                              stderr=subprocess.DEVNULL, env=dict(os.environ), cwd=ROOT)
    try:
        r = _run(["save", "--model", PENDULUM, "--output", files["out"], "--timeout", "30"], timeout=90)
    finally:
        source.terminate()
        assert source.wait(timeout=30) == 0
    assert r.returncode == 0, r.stderr
    saved = Path(r.stdout.strip())
    assert saved.parent == Path(files["out"]) and saved.is_file()


# the nodes started on their own follow the same table: a model file that cannot be read 2, an invalid model 1
NODES = {
    "state_publisher": ["state_publisher"],
    "state_store": ["state_store"],
    "sim_bridge": ["sim_bridge"],
    "joint_state_source": ["joint_state_source"],
}


@pytest.mark.parametrize("node", list(NODES))
def test_nodes_exit_codes_for_models(node: str, files: dict[str, str], ros_context: Any) -> None:
    if node == "sim_bridge":
        require("mujoco")
    exe = node_command(NODES[node][0])  # beside this Python, on PATH, or where colcon installs it
    for model, want in ((MISSING, 2), (files["bad_urdf"], 1)):
        argv = ["--model", model, "--duration", "0.3"] if node == "joint_state_source" else [
            "--ros-args", "-p", f"model_file:={model}"]
        r = subprocess.run([*exe, *argv], capture_output=True, text=True, timeout=60, env=dict(os.environ), cwd=ROOT,
                           check=False)
        assert r.returncode == want, (model, r.stderr)
        assert "Traceback" not in r.stderr and "error" in r.stderr, r.stderr


def test_help_states_the_table(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--help"]) == 0
    text = " ".join(capsys.readouterr().out.split())
    assert "exit codes (every command): 0 done/valid" in text
    assert "1 invalid input or refused" in text and "2 usage or I/O error" in text


# -- one spelling per option; the previous release's spellings still work, unlisted ----------------
RENAMED = [  # (command, new spelling with its value, old spelling with the same value, the parsed field)
    (["save"], ["-o", "D"], ["--out", "D"], "out"),
    (["save"], ["--output", "D"], ["--out", "D"], "out"),
    (["record"], ["--output", "D"], ["--out", "D"], "out"),
    (["sim", "run", "M", "--engine", "mujoco", "--steps", "1"], ["--output", "D"], ["--out", "D"], "out"),
    (["replay", "P"], ["--speed", "2.5"], ["--rate", "2.5"], "speed"),
    (["replay", "P"], ["--timeout", "3"], ["--wait-timeout", "3"], "timeout"),
    (["state", "export", "F", "--model", "M", "--to", "mujoco-keyframe"], ["--floating-base"], ["--free-base"],
     "floating_base"),
]


@pytest.mark.parametrize(("command", "new", "old", "field"), RENAMED, ids=lambda v: " ".join(v) if isinstance(v, list) else v)
def test_old_option_spellings_are_hidden_aliases(command: list[str], new: list[str], old: list[str], field: str,
                                                 capsys: pytest.CaptureFixture[str]) -> None:
    from robot_state_format.cli import build_parser

    def parsed(extra: list[str]) -> dict[str, Any]:
        argv = [*command, *extra]
        return {k: v for k, v in vars(build_parser(argv).parse_args(argv)).items() if k != "func"}

    with_new, with_old, neither = parsed(new), parsed(old), parsed([])
    assert with_new == with_old and with_new[field] != neither[field]  # the same value, and not the default
    assert main([*(command[:2] if command[0] in ("sim", "state") else command[:1]), "--help"]) == 0
    text = capsys.readouterr().out
    usage = text.split("\n\n")[0].split()
    listed = [w.strip(",") for line in text.splitlines() if line.startswith("  -") for w in line.split()]
    assert any(w == new[0] for w in listed)  # the new spelling in the option list
    assert not any(w.strip("[]") == old[0] for w in usage + listed)  # the old one neither there nor in the usage
