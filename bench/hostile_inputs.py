"""Hostile inputs of issue 14: each class, its outcome, CPU time and peak memory (fresh process each).

    .venv/bin/python bench/hostile_inputs.py [--check] [CASE ...]

Every case runs in a forked child (the readers already imported, the input built inside the child);
the parent reads the child's CPU time and peak resident set (``wait4``).  ``--check`` exits 1 when a
case does not end in the expected outcome within 1 s of CPU and 200 MB resident
(test/model/test_hostile_inputs.py runs it).  Figures in docs/robustness.md.
"""

from __future__ import annotations

import argparse
import os
import pickle
import sys
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.machine import describe_machine  # noqa: E402
from robot_state_format.errors import DiagnosticError, RobotStateFormatError  # noqa: E402
from robot_state_format.model.loader import load_model_file, load_xacro  # noqa: E402
from robot_state_format.model.sdf import read_sdf  # noqa: E402
from robot_state_format.model.urdf.reader import read_urdf  # noqa: E402
from robot_state_format.usdf.reader import read_world_state, read_world_state_file  # noqa: E402

CPU_BUDGET_S = 1.0
RSS_BUDGET_MB = 200.0
DECL = b'<?xml version="1.0" encoding="UTF-8"?>'
XACRO_NS = 'xmlns:xacro="http://www.ros.org/wiki/xacro"'


def _links(prefix: bytes, element: bytes, suffix: bytes, n: int) -> bytes:
    return prefix + element * n + suffix


def _bomb(depth: int = 30, single: int = 0) -> str:
    """Macros calling the next twice, ``depth`` levels (2^depth links), after ``single`` levels calling it once."""
    levels = "".join(f'<xacro:macro name="m{i}"><xacro:m{i + 1}/>{"" if i < single else f"<xacro:m{i + 1}/>"}'
                     "</xacro:macro>" for i in range(single + depth))
    return (f'<robot name="r" {XACRO_NS}>{levels}<xacro:macro name="m{single + depth}"><link name="l"/>'
            "</xacro:macro><xacro:m0/></robot>")


def _calls_in_a_row(n: int) -> str:
    return (f'<robot name="r" {XACRO_NS}><xacro:macro name="m" params="i"><link name="l${{i}}"/></xacro:macro>'
            + "".join(f'<xacro:m i="{i}"/>' for i in range(n)) + "</robot>")


def _fifo() -> str:
    path = f"/tmp/rsf-hostile-fifo-{os.getpid()}"
    if not os.path.exists(path):
        os.mkfifo(path)
    return path


# name -> (reader, input maker, expected error code or "load")
CASES: dict[str, tuple[Callable[[object], object], Callable[[], object], str]] = {
    "dev-zero model file": (load_model_file, lambda: "/dev/zero", "io"),
    "dev-zero state file": (read_world_state_file, lambda: "/dev/zero", "USDF_IO"),
    "fifo without writer": (load_model_file, _fifo, "io"),
    "50k '<!--' + decl (URDF)": (read_urdf, lambda: b"<!-- a " * 50_000 + DECL, "XML_SYNTAX"),
    "50k '<!--' + decl (SDFormat)": (read_sdf, lambda: b"<!-- a " * 50_000 + DECL, "XML_SYNTAX"),
    "50k '<!--' + decl (USDF)": (read_world_state, lambda: b"<!-- a " * 50_000 + DECL, "USDF_XML_SYNTAX"),
    "50k '<!--' + decl (xacro)": (load_xacro, lambda: b"<!-- a " * 50_000 + DECL, "XML_SYNTAX"),
    "'<' + 200k blanks in a comment (SDFormat)": (
        read_sdf, lambda: b'<sdf version="1.9"><model name="m"><link name="l"/></model><!-- <' + b" " * 200_000
        + b"--></sdf>", "load"),
    "USDF DOCTYPE entity after the writer's declaration": (
        read_world_state, lambda: DECL + b'\n<!DOCTYPE w [<!ENTITY e "x">]>\n<world_state name="&e;" version="1.0"/>',
        "USDF_XML_ENTITY"),
    "USDF <pose> of 4M numbers": (
        read_world_state, lambda: DECL + b'<world_state name="w" version="1.0"><model_state name="m"><pose>'
        + b"1 " * 4_000_000 + b"</pose></model_state></world_state>", "USDF_ARITY"),
    "1e6 sibling <link> (URDF)": (
        read_urdf, lambda: _links(b'<robot name="r">', b'<link name="l"/>', b"</robot>", 1_000_000),
        "XML_TOO_MANY_ELEMENTS"),
    "1e6 sibling <link> (SDFormat)": (
        read_sdf, lambda: _links(b'<sdf version="1.9"><model name="m">', b'<link name="l"/>', b"</model></sdf>",
                                 1_000_000), "XML_TOO_MANY_ELEMENTS"),
    "1e6 sibling <link_state> (USDF)": (
        read_world_state, lambda: _links(DECL + b'<world_state name="w" version="1.0"><model_state name="m">',
                                         b'<link_state name="l"/>', b"</model_state></world_state>", 1_000_000),
        "USDF_XML_TOO_MANY_ELEMENTS"),
    "USDF 3000 joint_states of 5000 numbers (30 MB)": (
        read_world_state, lambda: b'<world_state name="w" version="1.0"><model_state name="m">' + b"".join(
            b'<joint_state name="j%d"><positions>' % i + b"0 " * 5000 + b"</positions></joint_state>"
            for i in range(3000)) + b"</model_state></world_state>", "USDF_TOO_MANY_NUMBERS"),
    "lone surrogate in a str (SDFormat)": (
        read_sdf, lambda: '<sdf version="1.9"><model name="\ud800"/></sdf>', "XML_ENCODING"),
    "billion laughs (URDF)": (
        read_urdf, lambda: b'<!DOCTYPE r [<!ENTITY a "aaaaaaaaaa"><!ENTITY b "&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;">'
        b'<!ENTITY c "&b;&b;&b;&b;&b;&b;&b;&b;&b;&b;">]><robot name="&c;"><link name="l"/></robot>', "XML_ENTITY"),
    "xacro macro bomb (2^30 links)": (load_xacro, _bomb, "XACRO_TOO_LARGE"),
    "xacro macro bomb 170 calls deep (2^30 links)": (load_xacro, lambda: _bomb(30, 140), "XACRO_TOO_LARGE"),
    "xacro 20k macro calls in a row": (load_xacro, lambda: _calls_in_a_row(20_000), "XACRO_TOO_LARGE"),
    "xacro 2k macro calls in a row": (load_xacro, lambda: _calls_in_a_row(2_000), "XACRO_TOO_LARGE"),
    "32 MiB of blanks (URDF)": (read_urdf, lambda: b'<robot name="r"><link name="l"/>' + b" " * (32 << 20)
                                + b"</robot>", "XML_TOO_LARGE"),
    "deep nesting 100k (URDF)": (read_urdf, lambda: b"<robot>" + b"<a>" * 100_000 + b"</a>" * 100_000 + b"</robot>",
                                 "XML_SYNTAX"),
}


def _child(name: str, wfd: int) -> None:
    read, make, _ = CASES[name]
    data = make()
    try:
        read(data)
        outcome = "load"
    except DiagnosticError as exc:
        d = exc.diagnostics[0]
        outcome = f"{d.code}|{d.format()[:150]}"
    except RobotStateFormatError as exc:
        outcome = f"io|{str(exc)[:150]}"
    except BaseException as exc:  # noqa: BLE001 any escape is the finding this probe reports
        outcome = f"FINDING {type(exc).__name__}|{str(exc)[:150]}"
    os.write(wfd, pickle.dumps(outcome))
    os._exit(0)


def run_case(name: str) -> tuple[str, float, float]:
    rfd, wfd = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(rfd)
        _child(name, wfd)
    os.close(wfd)
    chunks = []
    while True:
        chunk = os.read(rfd, 65536)
        if not chunk:
            break
        chunks.append(chunk)
    os.close(rfd)
    _, status, usage = os.wait4(pid, 0)
    outcome = pickle.loads(b"".join(chunks)) if chunks else f"FINDING died (status {status})"
    return outcome, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024.0


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--check", action="store_true", help="exit 1 unless every case is within budget")
    ap.add_argument("cases", nargs="*", help="case names (default: all)")
    args = ap.parse_args()
    print(f"machine: {describe_machine()}")
    bad = 0
    for name in args.cases or list(CASES):
        expected = CASES[name][2]
        outcome, cpu, rss = run_case(name)
        code, _, text = outcome.partition("|")
        ok = code == expected and cpu <= CPU_BUDGET_S and rss <= RSS_BUDGET_MB
        bad += not ok
        print(f"{'ok ' if ok else 'BAD'} {name:52s} {cpu:6.2f} s CPU {rss:7.1f} MB  {code}  {text[:90]}")
    return 1 if (bad and args.check) else 0


if __name__ == "__main__":
    sys.exit(main())
