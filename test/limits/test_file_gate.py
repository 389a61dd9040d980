"""The file gates and number types every command shares (issue 33 items 4 and 6), in process:
``limits.open_input_file`` / ``input_problem`` / ``directory_problem``, ``output_dirs.output_file_problem``
/ ``open_output_file`` and ``options``' argparse types. Each hostile file is made for real (a FIFO
without a writer would block a plain ``open`` for ever: these return at once)."""

from __future__ import annotations

import argparse
import errno
import os
from pathlib import Path

import pytest

from robot_state_format import options
from robot_state_format.limits import (
    directory_problem,
    input_problem,
    open_input_file,
    read_input_file,
    shown_path,
)
from robot_state_format.output_dirs import ensure_directory, open_output_file, output_file_problem

LONG = "a" * 300


def test_input_gates_name_what_a_path_is(tmp_path: Path) -> None:
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    regular = tmp_path / "f.mcap"
    regular.write_bytes(b"\x89MCAP0\r\nrest")
    assert input_problem(regular) is None
    assert input_problem(fifo) == "is a FIFO (named pipe), not a regular file"
    assert input_problem("/dev/zero") == "is a character device, not a regular file"
    assert input_problem(tmp_path) == "is a directory, not a regular file"
    assert input_problem(tmp_path / "missing") == "no such file or directory"
    assert input_problem(LONG) == "file name too long"
    assert input_problem("a\0b") == "not a valid file name (it holds a NUL byte)"
    assert directory_problem(tmp_path) is None
    assert directory_problem(fifo) == "is a FIFO (named pipe), not a directory"
    assert directory_problem(regular) == "is a file, not a directory"
    with open_input_file(regular) as f:  # streamed, blocking reads once open
        assert f.read(8) == b"\x89MCAP0\r\n" and f.read() == b"rest"
    for path, why in ((fifo, "is a FIFO (named pipe)"), ("/dev/zero", "is a character device"),
                      (tmp_path, "is a directory")):
        with pytest.raises(OSError) as err:
            open_input_file(path)
        assert str(err.value.strerror).startswith(why)
    with pytest.raises(OSError) as err:
        read_input_file(regular, limit=5)
    assert err.value.errno == errno.EFBIG and "12 bytes, over the 5-byte limit" in str(err.value.strerror)


def test_shown_path_keeps_short_names_and_cuts_long_ones() -> None:
    assert shown_path("/a/b.urdf") == "/a/b.urdf"
    shown = shown_path("/tmp/" + "x" * 100_000)
    assert shown == "/tmp/" + "x" * 95 + "..." + "x" * 40 + " (100005 characters)"


def test_output_gates(tmp_path: Path) -> None:
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    assert output_file_problem(tmp_path / "new.csv") is None
    assert output_file_problem(fifo) == "is a FIFO (named pipe), not a regular file"
    assert output_file_problem("/dev/null") == "is a character device, not a regular file"
    assert output_file_problem(tmp_path) == "is a directory, not a regular file"
    assert output_file_problem(tmp_path / LONG) == "file name too long"
    with pytest.raises(OSError, match="FIFO"):
        open_output_file(fifo)
    out = tmp_path / "deep" / "er" / "t.csv"
    out.parent.mkdir(parents=True)
    out.write_text("old content that is longer")
    with open_output_file(out) as f:  # truncated, then written
        f.write("new")
    assert out.read_text() == "new"
    assert ensure_directory(fifo, "--out") == (False, f"--out {str(fifo)!r} exists and is not a directory")
    created, problem = ensure_directory(tmp_path / LONG, "--out")
    assert not created and problem is not None and "File name too long" in problem and "(300 characters)" not in problem


@pytest.mark.parametrize(("parse", "text", "value"), [
    (options.seconds, "0", 0.0), (options.seconds, "2.5", 2.5), (options.positive_seconds, "1e-3", 1e-3),
    (options.rate_hz(10000.0), "50", 50.0), (options.non_negative, "1e-6", 1e-6),
    (options.count(0, 64), "4", 4), (options.count(0, 10**9), "+7", 7),
])
def test_number_types_accept(parse: object, text: str, value: float) -> None:
    assert callable(parse) and parse(text) == value


@pytest.mark.parametrize(("parse", "text", "why"), [
    (options.seconds, "nan", "'nan' is not a finite number"), (options.seconds, "inf", "'inf' is not a finite number"),
    (options.seconds, "-1", "-1 is not in 0..3.1536e+07 seconds"), (options.seconds, "1e308", "not in 0.."),
    (options.seconds, "ten", "'ten' is not a number"), (options.positive_seconds, "0", "not a positive number"),
    (options.rate_hz(10000.0), "1e-300", "1e-300 is not in 0.001..10000 per second"),
    (options.rate_hz(10000.0), "0", "0 is not in 0.001..10000"), (options.non_negative, "-0.5", "-0.5 is negative"),
    (options.count(0, 64), "1e9", "'1e9' is not a whole number"), (options.count(0, 64), "65", "65 is not in 0..64"),
    (options.count(0, 64), "-1", "-1 is not in 0..64"), (options.count(0, 64), "9" * 30, "is not a whole number"),
])
def test_number_types_refuse(parse: object, text: str, why: str) -> None:
    assert callable(parse)
    with pytest.raises(argparse.ArgumentTypeError) as err:
        parse(text)
    assert why in str(err.value)


def test_one_line_usage_errors(capsys: pytest.CaptureFixture[str]) -> None:
    p = options.Parser(prog="prog")
    p.add_argument("--rate", type=options.rate_hz(100.0))
    with pytest.raises(SystemExit) as exc:
        p.parse_args(["--rate", "nan"])
    assert exc.value.code == 2
    assert capsys.readouterr().err == "prog: error: argument --rate: 'nan' is not a finite number (prog --help: usage)\n"


def test_json_option_reads_files_through_the_gate(tmp_path: Path) -> None:
    fifo = tmp_path / "v.json"
    os.mkfifo(fifo)
    good = tmp_path / "g.json"
    good.write_text('{"j": 1}')
    assert options.json_object(str(good), "--positions") == {"j": 1}
    assert options.json_object(f"@{good}", "--positions") == {"j": 1}
    assert options.json_object('{"j": 2}', "--positions") == {"j": 2}
    for text, why in ((str(fifo), "cannot read"), ("/dev/zero", "is a character device"),
                      (LONG, "File name too long"), ("[1]", "expected a JSON object"),
                      ("[" * 100_000, "not valid JSON")):
        with pytest.raises(ValueError) as err:
            options.json_object(text, "--positions")
        assert str(err.value).startswith("--positions: ") and why in str(err.value), err.value
