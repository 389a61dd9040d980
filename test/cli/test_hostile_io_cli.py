"""Issue 33 items 4-6 through the command line: nothing blocks on a file, every read is bounded, and
every hostile path or number is refused in one line with the README's exit code (2: usage or I/O).

Each case runs the real command in a subprocess with a wall-clock timeout well under 10 s and an
address-space limit (``RLIMIT_AS``, 1.5 GiB: a read of /dev/zero or of a 2 GB sparse file would
fail with MemoryError and a traceback instead of the one line asserted). A FIFO without a writer
made with ``os.mkfifo`` blocks any ``open`` for reading forever: before the fix these commands hung.
"""

from __future__ import annotations

import os
import resource
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from optional import MCAP, require
from repo_paths import REPO_ROOT

MODEL = str(REPO_ROOT / "robot_state_format" / "samples" / "double_pendulum.urdf")
CLI = [sys.executable, "-m", "robot_state_format"]
TIMEOUT = 8.0
MEMORY = 1536 << 20
LONG = "a" * 300  # over NAME_MAX (255): ENAMETOOLONG
BOTH = '{"joint A": 0.1, "joint B": 0.2}'  # every moving joint of MODEL: no "defaulted" warning line


def _limits() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (MEMORY, MEMORY))


ROS_COMMANDS = frozenset({"joint-states", "save", "record", "replay"})
"""Commands that talk to ROS 2: without rclpy they stop at that (one line, exit 2) before reading anything."""


def run(args: list[str], cwd: Path, prefix: tuple[str, ...] = (), env: dict[str, str] | None = None,
        timeout: float = TIMEOUT) -> subprocess.CompletedProcess[str]:
    if args and args[0] in ROS_COMMANDS:
        require("rclpy")
    if args and args[0] in ("record", "reindex"):  # stop at a missing mcap first (one line, exit 2)
        require(*MCAP)
    if args[:2] == ["state", "plot"]:
        require("matplotlib")
    return subprocess.run([*prefix, *CLI, *args], cwd=cwd, capture_output=True, text=True, timeout=timeout,
                          preexec_fn=_limits, env={**os.environ, **(env or {})})


def refused(r: subprocess.CompletedProcess[str], code: int, *needles: str) -> str:
    """The command exited ``code`` with exactly one line on stderr, holding every needle, no traceback."""
    lines = r.stderr.splitlines()
    assert "Traceback" not in r.stderr, r.stderr
    assert r.returncode == code, (r.returncode, r.stderr)
    assert len(lines) == 1, r.stderr
    for n in needles:
        assert n in lines[0], lines[0]
    return lines[0]


@pytest.fixture
def files(tmp_path: Path) -> Path:
    os.mkfifo(tmp_path / "fifo.usdf")
    os.mkfifo(tmp_path / "fifo.mcap")
    os.mkfifo(tmp_path / "fifo.json")
    os.mkfifo(tmp_path / "fifo.yaml")
    os.mkfifo(tmp_path / "fifo.csv")
    os.mkfifo(tmp_path / "fifo")
    (tmp_path / "rec").mkdir()
    os.mkfifo(tmp_path / "rec" / "rec_0.mcap")
    with open(tmp_path / "sparse.json", "wb") as f:  # 2 GB, no block written
        f.truncate(2 << 30)
    return tmp_path


FIFO_CASES = {
    "replay a FIFO .usdf": (["replay", "fifo.usdf", "--model", MODEL], "fifo.usdf: is a FIFO (named pipe)"),
    "replay a FIFO .mcap": (["replay", "fifo.mcap"], "fifo.mcap: is a FIFO (named pipe)"),
    "replay DIR with a FIFO _0.mcap": (["replay", "rec"], "rec_0.mcap: cannot read: is a FIFO (named pipe)"),
    "joint-states --file FIFO": (["joint-states", "--model", MODEL, "--file", "fifo.json"], "is a FIFO (named pipe)"),
    "joint-states --positions FIFO": (["joint-states", "--model", MODEL, "--positions", "fifo.json"],
                                      "--positions: cannot read fifo.json: is a FIFO (named pipe)"),
    "joint-states --positions /dev/zero": (["joint-states", "--model", MODEL, "--positions", "/dev/zero"],
                                           "/dev/zero: is a character device"),
    "joint-states --file /dev/zero": (["joint-states", "--model", MODEL, "--file", "/dev/zero"],
                                      "/dev/zero: is a character device"),
    "joint-states --positions 2 GB": (["joint-states", "--model", MODEL, "--positions", "sparse.json"],
                                      "over the 33554432-byte limit"),
    "joint-states --file 2 GB": (["joint-states", "--model", MODEL, "--file", "sparse.json"],
                                 "over the 33554432-byte limit"),
    "joint-states --model FIFO": (["joint-states", "--model", "fifo"], "--model fifo: is a FIFO (named pipe)"),
    "sim --trajectory FIFO": (["sim", "run", MODEL, "--engine", "mujoco", "--steps", "2", "--trajectory", "fifo.csv"],
                              "--trajectory fifo.csv: is a FIFO (named pipe)"),
    "sim --restart FIFO": (["sim", "run", MODEL, "--engine", "mujoco", "--steps", "2", "--restart", "fifo.usdf"],
                           "--restart fifo.usdf: is a FIFO (named pipe)"),
    "sim --output FIFO": (["sim", "run", MODEL, "--engine", "mujoco", "--steps", "2", "--save-at", "1", "--output", "fifo"],
                       "--output 'fifo' exists and is not a directory"),
    "record --output FIFO": (["record", "--output", "fifo", "--duration", "0.1"], "--output 'fifo' exists and is not a directory"),
    "reindex a FIFO": (["reindex", "fifo"], "fifo: is a FIFO (named pipe), not a directory"),
    "reindex DIR with a FIFO": (["reindex", "rec"], "rec_0.mcap: cannot read recording: is a FIFO (named pipe)"),
    "save --model FIFO": (["save", "--model", "fifo", "--timeout", "0"], "fifo: is a FIFO (named pipe)"),
    "record --model /dev/zero": (["record", "--model", "/dev/zero", "--duration", "0.1"],
                                 "/dev/zero: is a character device"),
    "state validate FIFO": (["state", "validate", "fifo.usdf"], "fifo.usdf: is a FIFO (named pipe)"),
    "state export --model FIFO": (["state", "export", "fifo.usdf", "--model", "fifo", "--to", "sdf-state"],
                                  "is a FIFO (named pipe)"),
    "fk --positions FIFO": (["fk", MODEL, "--positions", "fifo.json"], "cannot read fifo.json: is a FIFO"),
    "state from-model --positions @/dev/zero": (["state", "from-model", MODEL, "--positions", "@/dev/zero"],
                                                "/dev/zero: is a character device"),
}


@pytest.mark.parametrize("case", sorted(FIFO_CASES))
def test_fifo_device_or_huge_input_is_refused_at_once(files: Path, case: str) -> None:
    args, needle = FIFO_CASES[case]
    refused(run(args, files), 2, needle)


OUTPUT_CASES = {
    "state plot -o FIFO": ["state", "plot", "{state}", "-o", "out"],
    "state from-model -o FIFO": ["state", "from-model", MODEL, "--positions", BOTH, "-o", "out"],
    "state import -o FIFO": ["state", "import", "{sdf_state}", "--from", "sdf-state", "-o", "out"],
    "convert -o FIFO": ["convert", MODEL, "--to", "sdf", "-o", "out"],
    "sim run --trajectory FIFO": ["sim", "run", MODEL, "--engine", "mujoco", "--steps", "2", "--trajectory", "out"],
}


@pytest.mark.parametrize("case", sorted(OUTPUT_CASES))
@pytest.mark.parametrize("kind", ["fifo", "directory"])
def test_output_to_a_fifo_or_directory_is_refused(tmp_path: Path, case: str, kind: str) -> None:
    state = tmp_path / "s.usdf"
    made = run(["state", "from-model", MODEL, "--positions", BOTH, "-o", str(state)], tmp_path)
    assert made.returncode == 0, made.stderr
    sdf_state = tmp_path / "s.sdf"
    exported = run(["state", "export", str(state), "--model", MODEL, "--to", "sdf-state", "-o", str(sdf_state)],
                   tmp_path)
    assert exported.returncode == 0, exported.stderr
    if kind == "fifo":
        os.mkfifo(tmp_path / "out")
    else:
        (tmp_path / "out").mkdir()
    args = [a.replace("{state}", str(state)).replace("{sdf_state}", str(sdf_state)) for a in OUTPUT_CASES[case]]
    refused(run(args, tmp_path), 2, "out: is a FIFO (named pipe)" if kind == "fifo" else "out: is a directory")
    # nothing written beside it (matplotlib would have written out.png), the FIFO still a FIFO
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out", "s.sdf", "s.usdf"]
    assert (tmp_path / "out").is_fifo() if kind == "fifo" else (tmp_path / "out").is_dir()


def test_plot_writes_exactly_the_name_given(tmp_path: Path) -> None:
    state = tmp_path / "s.usdf"
    assert run(["state", "from-model", MODEL, "--positions", BOTH, "-o", str(state)], tmp_path).returncode == 0
    r = run(["state", "plot", str(state), "-o", "picture"], tmp_path, timeout=120)  # not hostile: matplotlib
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == "wrote picture"
    assert (tmp_path / "picture").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert not (tmp_path / "picture.png").exists()


LONG_CASES = {
    "replay": ["replay", LONG, "--model", MODEL],
    "replay --model": ["replay", "{state}", "--model", LONG],
    "reindex": ["reindex", LONG],
    "joint-states --model": ["joint-states", "--model", LONG],
    "joint-states --file": ["joint-states", "--model", MODEL, "--file", LONG],
    "joint-states --positions": ["joint-states", "--model", MODEL, "--positions", LONG],
    "save --model": ["save", "--model", LONG, "--timeout", "0"],
    "record --model": ["record", "--model", LONG, "--duration", "0.1"],
    "save --output": ["save", "--output", LONG, "--timeout", "0"],
    "record --output": ["record", "--output", f"{LONG}/x", "--duration", "0.1"],
    "check": ["check", LONG],
    "frames": ["frames", LONG],
    "state validate": ["state", "validate", LONG],
    "state plot -o": ["state", "plot", "{state}", "-o", LONG],
    "sim run": ["sim", "run", LONG, "--engine", "mujoco", "--steps", "1"],
    "sim run --trajectory": ["sim", "run", MODEL, "--engine", "mujoco", "--steps", "1", "--trajectory", LONG],
    "convert -o": ["convert", MODEL, "--to", "sdf", "-o", LONG],
}


@pytest.mark.parametrize("case", sorted(LONG_CASES))
def test_a_name_too_long_is_one_line_exit_2(tmp_path: Path, case: str) -> None:
    state = tmp_path / "s.usdf"
    assert run(["state", "from-model", MODEL, "--positions", BOTH, "-o", str(state)], tmp_path).returncode == 0
    line = refused(run([a.replace("{state}", str(state)) for a in LONG_CASES[case]], tmp_path), 2)
    assert "too long" in line.lower(), line
    assert len(line) < 500, line  # the name is shortened in the message: "aaa...aaa (300 characters)"


def _no_permission() -> tuple[str, ...]:
    """A prefix under which a mode-000 file cannot be opened (root bypasses permissions otherwise)."""
    if os.geteuid() != 0:
        return ()
    if shutil.which("setpriv") is None:
        pytest.skip("root without setpriv: cannot take away CAP_DAC_OVERRIDE")
    return ("setpriv", "--bounding-set", "-dac_override,-dac_read_search")


@pytest.mark.parametrize("option", ["--positions", "--file"])
def test_an_unreadable_file_is_one_line_exit_2(tmp_path: Path, option: str) -> None:
    secret = tmp_path / "values.json"
    secret.write_text(BOTH)
    secret.chmod(0)
    r = run(["joint-states", "--model", MODEL, option, str(secret)], tmp_path, prefix=_no_permission())
    refused(r, 2, "values.json", "Permission denied")


def test_an_unreadable_restart_file_to_replay_is_one_line_exit_2(tmp_path: Path) -> None:
    state = tmp_path / "s.usdf"
    assert run(["state", "from-model", MODEL, "--positions", BOTH, "-o", str(state)], tmp_path).returncode == 0
    state.chmod(0)
    refused(run(["replay", str(state), "--model", MODEL, "--hold", "0"], tmp_path, prefix=_no_permission()), 2,
            "Permission denied")


NUMBER_CASES = {
    "joint-states --rate 1e-300": ["joint-states", "--model", MODEL, "--rate", "1e-300"],
    "joint-states --rate 0": ["joint-states", "--model", MODEL, "--rate", "0"],
    "joint-states --rate nan": ["joint-states", "--model", MODEL, "--rate", "nan"],
    "joint-states --duration nan": ["joint-states", "--model", MODEL, "--duration", "nan"],
    "joint-states --duration inf": ["joint-states", "--model", MODEL, "--duration", "inf"],
    "joint-states --duration -1": ["joint-states", "--model", MODEL, "--duration", "-1"],
    "joint-states --step nan": ["joint-states", "--model", MODEL, "--step", "nan"],
    "joint-states --step 0": ["joint-states", "--model", MODEL, "--step", "0"],
    "save --timeout nan": ["save", "--timeout", "nan"],
    "save --timeout inf": ["save", "--timeout", "inf"],
    "save --timeout -1": ["save", "--timeout", "-1"],
    "record --duration nan": ["record", "--duration", "nan"],
    "record --duration inf": ["record", "--duration", "inf"],
    "record --duration -1": ["record", "--duration", "-1"],
    "replay --hold nan": ["replay", "x.usdf", "--hold", "nan"],
    "replay --hold -1": ["replay", "x.usdf", "--hold", "-1"],
    "replay --hold inf": ["replay", "x.usdf", "--hold", "inf"],
    "replay --speed nan": ["replay", "x.mcap", "--speed", "nan"],
    "replay --start-offset nan": ["replay", "x.mcap", "--start-offset", "nan"],
    "replay --timeout inf": ["replay", "x.mcap", "--timeout", "inf"],
    "replay --wait-for-subscribers -1": ["replay", "x.mcap", "--wait-for-subscribers", "-1"],
    "replay --wait-for-subscribers 1e3": ["replay", "x.mcap", "--wait-for-subscribers", "1e3"],
    "sim --steps -1": ["sim", "run", MODEL, "--engine", "mujoco", "--steps", "-1"],
    "sim --dt nan": ["sim", "run", MODEL, "--engine", "mujoco", "--steps", "1", "--dt", "nan"],
    "sim --dt 0": ["sim", "run", MODEL, "--engine", "mujoco", "--steps", "1", "--dt", "0"],
    "sim --dt inf": ["sim", "run", MODEL, "--engine", "mujoco", "--steps", "1", "--dt", "inf"],
    "sim --save-at -1": ["sim", "run", MODEL, "--engine", "mujoco", "--steps", "1", "--save-at", "-1"],
    "state validate --tolerance nan": ["state", "validate", "x.usdf", "--tolerance", "nan"],
    "state validate --tolerance -1": ["state", "validate", "x.usdf", "--tolerance", "-1"],
    "fk --indent 1000000000": ["fk", MODEL, "--json", "--indent", "1000000000"],
    "frames --indent -1": ["frames", MODEL, "--json", "--indent", "-1"],
}


@pytest.mark.parametrize("case", sorted(NUMBER_CASES))
def test_a_bad_number_is_a_one_line_usage_error(tmp_path: Path, case: str) -> None:
    args = NUMBER_CASES[case]
    option = next(a for a in reversed(args) if a.startswith("--"))
    refused(run(args, tmp_path), 2, f"argument {option}:")


def test_joint_state_source_script_shares_the_number_types(tmp_path: Path) -> None:
    require("rclpy")  # the node script stops at a missing rclpy first (one line, exit 2: test_entry_points)
    r = subprocess.run([sys.executable, "-m", "robot_state_format.ros.trajectory_source", "--model", MODEL,
                        "--rate", "1e-300"], capture_output=True, text=True, timeout=TIMEOUT, preexec_fn=_limits)
    refused(r, 2, "joint_state_source: error: argument --rate: 1e-300 is not in 0.001..10000")


def _alias_bomb(path: Path) -> Path:
    lines = ["a0: &a0 [x, x, x, x, x, x, x, x, x]"]
    lines += [f"a{i}: &a{i} [" + ", ".join([f"*a{i - 1}"] * 9) + "]" for i in range(1, 12)]
    path.write_text("/**:\n  ros__parameters:\n" + "".join(f"    {line}\n" for line in lines))
    return path


@pytest.mark.parametrize("command", [["joint-states", "--model", MODEL], ["save", "--timeout", "0"],
                                     ["record", "--duration", "0.1"]])
@pytest.mark.parametrize("params", ["bomb", "fifo", "missing"])
def test_a_params_file_rcl_refuses_is_one_line_exit_2(tmp_path: Path, command: list[str], params: str) -> None:
    path = tmp_path / "p.yaml"
    if params == "bomb":
        _alias_bomb(path)
    elif params == "fifo":
        os.mkfifo(path)
    needle = {"bomb": "Will not support aliasing", "fifo": "is a FIFO (named pipe)",
              "missing": "No such file or directory"}[params]
    refused(run([*command, "--ros-args", "--params-file", str(path)], tmp_path), 2, needle)


@pytest.mark.parametrize(("args", "needle"), [
    (["save", "--timeout", "0", "--node-name", "bad-name"], "--node-name: Invalid node name"),
    (["replay", "x.usdf", "--node-name", "9x"], "x.usdf: no such file"),  # the path is checked first
    (["record", "--duration", "0.1", "--node-name", "9x"], "node name must not start with a number"),
    (["joint-states", "--model", MODEL, "--topic", "bad!t", "--duration", "0.1"], "Invalid topic name"),
    (["record", "--duration", "0.1", "--topics", "bad!topic"], "record_topics: failed to resolve name"),
])
def test_a_name_rclpy_refuses_is_one_line_exit_2(tmp_path: Path, args: list[str], needle: str) -> None:
    refused(run(args, tmp_path), 2, needle)
