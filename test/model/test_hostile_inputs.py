"""Hostile input (issue 14): the input gate, the XML policy on every path, the bounds, one number
grammar, and linear time at every former hot spot of the readers."""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest
from repo_paths import REPO_ROOT

from robot_state_format import limits, numbers
from robot_state_format.errors import ModelError, ModelIOError, UsdfError
from robot_state_format.model import load_model, load_model_file
from robot_state_format.model.detect import prolog_end as _prolog_end
from robot_state_format.model.detect import without_xacro_declaration
from robot_state_format.model.sdf import read_sdf
from robot_state_format.model.sdf.prefixes import declare_prefixes
from robot_state_format.model.urdf.reader import read_urdf
from robot_state_format.model.xacro.expand import expand_xacro_file
from robot_state_format.model.xml import parse_bytes, start_lines, tolerate
from robot_state_format.usdf.reader import (
    read_world_state,
    read_world_state_file,
)
from robot_state_format.usdf.syntax_faults import _open_quote_before

DECL = b'<?xml version="1.0" encoding="UTF-8"?>'
HOSTILE_SCRIPT = REPO_ROOT / "bench" / "hostile_inputs.py"


# ------------------------------------------------------------------ the input gate

@pytest.fixture
def fifo(tmp_path: Path) -> Path:
    p = tmp_path / "robot.urdf"
    os.mkfifo(p)
    return p


@pytest.mark.timeout(20)
@pytest.mark.parametrize("reader", [load_model_file, read_world_state_file, expand_xacro_file])
def test_a_fifo_without_writer_is_an_error_at_once(reader: Callable[[Path], object], fifo: Path) -> None:
    t0 = time.monotonic()
    with pytest.raises((ModelIOError, UsdfError)) as exc:
        reader(fifo)
    assert "FIFO" in str(exc.value) and "not a regular file" in str(exc.value)
    assert str(fifo) in str(exc.value)
    assert time.monotonic() - t0 < 5.0  # would block forever before


@pytest.mark.timeout(20)
@pytest.mark.parametrize("path,what", [("/dev/zero", "character device"), ("/dev/null", "character device")])
def test_devices_are_refused_before_any_read(path: str, what: str) -> None:
    with pytest.raises(ModelIOError, match=what):
        load_model_file(path)
    with pytest.raises(UsdfError) as exc:
        read_world_state_file(path)
    assert exc.value.code == "USDF_IO" and what in str(exc.value)


def test_a_directory_is_refused(tmp_path: Path) -> None:
    with pytest.raises(ModelIOError, match="is a directory"):
        load_model_file(tmp_path)


def test_the_size_bound_is_checked_before_reading_and_configurable(tmp_path: Path,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    p = tmp_path / "big.urdf"
    p.write_bytes(b'<robot name="r"><link name="a"/></robot>' + b" " * 5000)
    assert load_model_file(p).name == "r"
    monkeypatch.setattr(limits, "MAX_DOCUMENT_BYTES", 4096)
    with pytest.raises(ModelIOError) as exc:
        load_model_file(p)
    assert "5040 bytes, over the 4096-byte limit" in str(exc.value)
    with pytest.raises(ModelError) as exc2:  # the same bound on text given in memory
        load_model(p.read_bytes(), file="mem.urdf")
    assert exc2.value.code == "XML_TOO_LARGE"
    # and on a description received over ROS (the nodes' robot_description parameter or topic): the same code
    from robot_state_format.ros.description import DescriptionRefused, XacroPolicy, read_description_text

    with pytest.raises(DescriptionRefused) as exc3:
        read_description_text(p.read_text(), "", XacroPolicy(allow=False))
    assert exc3.value.kind == "size"
    assert str(exc3.value) == ("robot_description: [XML_TOO_LARGE] 5040 bytes, over the 4096-byte limit "
                               "(RSF_MAX_DOCUMENT_BYTES); not read")


def test_the_bounds_come_from_the_environment() -> None:
    code = ("from robot_state_format import limits; "
            "print(limits.MAX_DOCUMENT_BYTES, limits.MAX_XML_ELEMENTS, limits.MAX_NUMBERS_PER_LIST)")
    env = dict(os.environ, RSF_MAX_DOCUMENT_BYTES="1234", RSF_MAX_XML_ELEMENTS="77", RSF_MAX_NUMBERS_PER_LIST="9")
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["1234", "77", "9"]


# ------------------------------------------------------------------ one XML policy

def test_usdf_fast_path_refuses_entity_declarations_like_every_reader() -> None:
    doc = (DECL + b'\n<!DOCTYPE world_state [\n<!ENTITY e "evil">]>\n'
           b'<world_state name="&e;" version="1.0"><frame name="f"/></world_state>')
    with pytest.raises(UsdfError) as exc:
        read_world_state(doc, file="s.usdf")
    assert (exc.value.code, exc.value.diagnostics[0].line) == ("USDF_XML_ENTITY", 3)
    for read in (read_urdf, read_sdf):
        with pytest.raises(ModelError) as exc2:
            read(doc.replace(b"world_state", b"robot"))
        assert exc2.value.code == "XML_ENTITY"


@pytest.mark.parametrize("read,doc,code", [
    (read_urdf, b'<robot name="r">' + b'<link name="l"/>' * 100_001 + b"</robot>", "XML_TOO_MANY_ELEMENTS"),
    (read_sdf, b'<sdf version="1.9"><model name="m">' + b'<link name="l"/>' * 100_001 + b"</model></sdf>",
     "XML_TOO_MANY_ELEMENTS"),
    (read_world_state, DECL + b'\n<world_state name="w" version="1.0"><model_state name="m">\n'
     + b'<link_state name="l"/>' * 100_001 + b"</model_state></world_state>", "USDF_XML_TOO_MANY_ELEMENTS"),
])
def test_element_count_is_bounded_with_file_line_and_element(read: Callable[..., object], doc: bytes,
                                                             code: str) -> None:
    with pytest.raises((ModelError, UsdfError)) as exc:
        read(doc, file="big.xml")
    d = exc.value.diagnostics[0]
    assert d.code == code and d.file == "big.xml"
    assert d.line is not None and d.line >= 1 and d.element is not None and "link" in d.element


def test_a_lone_surrogate_is_the_same_encoding_error_in_every_reader() -> None:
    for read, doc in ((read_urdf, '<robot name="\ud800"><link name="l"/></robot>'),
                      (read_sdf, '<sdf version="1.9">\n<model name="\ud800"><link name="l"/></model></sdf>')):
        with pytest.raises(ModelError) as exc:
            read(doc)
        assert exc.value.code == "XML_ENCODING"
        assert exc.value.diagnostics[0].line == doc.count("\n", 0, doc.index("\ud800")) + 1


def test_a_list_of_too_many_numbers_is_refused_before_splitting() -> None:
    doc = ('<world_state name="w" version="1.0"><frame name="f"><pose>' + "1 " * 2_000_000
           + "</pose></frame></world_state>")
    with pytest.raises(UsdfError) as exc:
        read_world_state(doc)
    assert exc.value.code == "USDF_ARITY" and "more than 10000 numbers" in str(exc.value)


# ------------------------------------------------------------------ the number grammar

@pytest.mark.parametrize("text,value", [
    ("1", 1.0), ("-2.5", -2.5), ("+.5", 0.5), ("5.", 5.0), ("1e3", 1000.0), ("1E-3", 0.001), ("-0", -0.0),
    (" 7 ", 7.0), ("2.2250738585072014e-308", 2.2250738585072014e-308), ("5e-324", 5e-324),
])
def test_numbers_in_the_grammar(text: str, value: float) -> None:
    assert numbers.parse_number(text) == (value, False)


@pytest.mark.parametrize("text,kind", [
    ("1_0", numbers.SYNTAX), ("\u0661", numbers.SYNTAX), ("1.0.0", numbers.SYNTAX), ("0x10", numbers.SYNTAX),
    ("1,5", numbers.SYNTAX), ("", numbers.SYNTAX), ("1 2", numbers.SYNTAX), ("nan", numbers.NON_FINITE),
    ("-inf", numbers.NON_FINITE), ("Infinity", numbers.NON_FINITE), ("1e999", numbers.OVERFLOW),
    ("\uff11", numbers.SYNTAX),
])
def test_numbers_outside_the_grammar(text: str, kind: str) -> None:
    with pytest.raises(numbers.NumberError) as exc:
        numbers.parse_number(text)
    assert exc.value.kind == kind


@pytest.mark.parametrize("text,ok", [  # each checked with check_urdf on a joint <limit lower=...>
    (" 0", True), ("\t0", True), ("0 ", False), (" 0 ", False), ("0\n", False), ("1e-400", True),
])
def test_urdf_dialect_refuses_space_after_a_number(text: str, ok: bool) -> None:
    if ok:
        assert numbers.parse_number(text, trailing_space=False)[0] == 0.0
    else:
        with pytest.raises(numbers.NumberError) as exc:
            numbers.parse_number(text, trailing_space=False)
        assert exc.value.kind == numbers.SYNTAX and "white space after it" in str(exc.value)


@pytest.mark.parametrize("word", ["1e-400", "-3e-999", "2.2e-310", "4.9e-324", "0." + "0" * 400 + "1"])
def test_sdformat_dialect_refuses_underflow(word: str) -> None:
    # sdf_ref (libsdformat 12): <lower>1e-400</lower> and <lower>2.2e-310</lower> are refused
    assert numbers.parse_words(["1", word]).values[0] == 1.0  # the generic grammar reads it
    with pytest.raises(numbers.NumberError) as exc:
        numbers.parse_words(["1", word], sdformat=True)
    assert exc.value.kind == numbers.UNDERFLOW and exc.value.token == word


def test_sdformat_dialect_reads_the_smallest_normal_double_and_zeros() -> None:
    got = numbers.parse_words(["2.2250738585072014e-308", "0e-400", "-0.0", "1e-300"], sdformat=True)
    assert got.values == (2.2250738585072014e-308, 0.0, -0.0, 1e-300)


def test_underflow_to_zero_is_reported_only_where_the_text_is_not_zero() -> None:
    assert numbers.parse_number("1e-400") == (0.0, True)
    assert numbers.parse_number("0." + "0" * 400 + "1") == (0.0, True)
    assert numbers.parse_number("0e-400") == (0.0, False)
    assert numbers.parse_number("-0.000") == (-0.0, False)
    got = numbers.parse_numbers("0 1e-400 2 -3e-999 0.0")
    assert got.values == (0.0, 0.0, 2.0, -0.0, 0.0) and got.underflows == ("-3e-999", "1e-400")


def test_every_reader_uses_the_grammar_and_warns_on_underflow() -> None:
    urdf = ('<robot name="r"><link name="a"/><link name="b"/><joint name="j" type="fixed"><parent link="a"/>'
            '<child link="b"/><origin xyz="{x} 0 0"/></joint></robot>')
    sdf = '<sdf version="1.9"><model name="m"><link name="l"><pose>{x} 0 0 0 0 0</pose></link></model></sdf>'
    usdf = '<world_state name="w" version="1.0"><frame name="f"><pose>{x} 0 0 0 0 0</pose></frame></world_state>'
    for bad in ("1_0", "\u0661", "1.0.0", "nan", "1e999"):
        with pytest.raises(ModelError) as e1:
            read_urdf(urdf.format(x=bad))
        assert e1.value.code == "URDF_BAD_NUMBER"
        with pytest.raises(ModelError) as e2:
            read_sdf(sdf.format(x=bad))
        assert e2.value.code == "SDF_BAD_VALUE"
        with pytest.raises(UsdfError) as e3:
            read_world_state(usdf.format(x=bad))
        assert e3.value.code in ("USDF_NOT_A_NUMBER", "USDF_NON_FINITE")
    m = read_urdf(urdf.format(x="1e-400"))
    assert [w.code for w in m.warnings] == ["URDF_NUMBER_UNDERFLOW"] and m.joints["j"].origin[0, 3] == 0.0
    with pytest.raises(ModelError) as e4:  # libsdformat refuses it (std::stod: ERANGE)
        read_sdf(sdf.format(x="1e-400"))
    assert e4.value.code == "SDF_BAD_VALUE" and "underflows" in str(e4.value)
    r = read_world_state(usdf.format(x="1e-400"))
    assert [w.code for w in r.warnings] == ["USDF_NUMBER_UNDERFLOW"] and r.state.frames[0].pose[0] == 0.0
    assert read_world_state(usdf.format(x="0e-5")).warnings == []


# ------------------------------------------------------------------ linear time at the former hot spots

def _best(fn: Callable[[], object], rounds: int = 3) -> float:
    best = float("inf")
    for _ in range(rounds):  # CPU time of this process: other jobs on the machine do not count
        t0 = time.process_time()
        fn()
        best = min(best, time.process_time() - t0)
    return best


def _assert_linear(make: Callable[[int], object], run: Callable[[object], object], n: int) -> None:
    """Linear time: doubling the input at most triples the time, over two doublings (``4n`` takes at
    most 9 times as long as ``n``; a quadratic scan takes 16 times).  Two doublings instead of one
    keep a single step of the memory system (a buffer leaving a cache, the allocator switching to
    fresh pages) from deciding; ``n`` is chosen so that the smaller input takes milliseconds and is
    over a megabyte.  CPU time of this process: other jobs on the machine do not count."""
    small, large = make(n), make(4 * n)
    t1 = _best(lambda: run(small))
    t2 = _best(lambda: run(large))
    for _ in range(2):
        if t2 <= 9 * t1:
            break
        t1 = _best(lambda: run(small), 5)  # a loaded machine: measure again before concluding
        t2 = _best(lambda: run(large), 5)
    assert t1 > 0.002, f"input too small to measure ({t1 * 1e3:.2f} ms)"
    assert t2 <= 9 * t1, f"{t1 * 1e3:.1f} ms for n={n}, {t2 * 1e3:.1f} ms for 4n"


def _refused(read: Callable[[object], object]) -> Callable[[object], object]:
    def run(data: object) -> None:
        with contextlib.suppress(ModelError, UsdfError):
            read(data)
    return run


def test_linear_comment_and_declaration_handling() -> None:
    # 50 000 "<!--" and a declaration took 50-67 s in every reader (a lazy regex over each comment).
    def make(n: int) -> bytes:
        return b"<!-- a " * n + DECL
    _assert_linear(lambda n: b"<!-- a -->" * n + make(n), _refused(tolerate), 60_000)
    _assert_linear(make, _refused(read_urdf), 200_000)
    _assert_linear(make, _refused(read_world_state), 200_000)
    # closed comments, each followed by a declaration: all found, all outside the comments
    _assert_linear(lambda n: (b"<!-- c --><?xml version='1.0'?>" * n) + b"<robot/>",
                   tolerate, 5_000)


def test_linear_sdf_prefix_scanning() -> None:
    # "<" and 200 000 blanks in a comment hung the SDFormat reader (two adjacent \s* in a regex).
    _assert_linear(lambda n: b"<!-- <" + b" " * n + b"-->", declare_prefixes, 2_000_000)
    _assert_linear(lambda n: b'<sdf version="1.9"><model name="m"><link name="l"/></model><!--'
                   + b"< " * n + b"--></sdf>", _refused(read_sdf), 200_000)


def test_linear_start_line_scan() -> None:
    # the scan for start tags written over several lines: "<" without ">" in a comment, many such tags,
    # many instructions
    _assert_linear(lambda n: b"<r><!--" + b"< " * n + b"--></r>", _start_lines_of, 300_000)
    _assert_linear(lambda n: b"<r><!--" + b"< \n" * n + b"--></r>", _start_lines_of, 300_000)
    _assert_linear(lambda n: b"<r>" + b"<a\n/>" * n + b"</r>", _start_lines_of, 50_000)
    _assert_linear(lambda n: b"<r>\n<a\n/>" + b"<?p <\n?>" * n + b"</r>", _start_lines_of, 100_000)


def _start_lines_of(raw: object) -> None:
    assert isinstance(raw, bytes)
    start_lines(parse_bytes(raw), raw)


def test_linear_usdf_number_lists() -> None:
    # a <pose> of millions of numbers cost 550 MB per million in a regular expression (4n stays under
    # libxml2's 10 MB text node bound, past which another, also linear, path reports the error)
    _assert_linear(lambda n: " ".join(["1.5"] * n), lambda t: numbers.parse_numbers(t, max_count=10**8), 200_000)
    _assert_linear(lambda n: '<world_state name="w" version="1.0"><frame name="f"><pose>' + "1 " * n
                   + "</pose></frame></world_state>", _refused(read_world_state), 1_000_000)


def test_linear_other_scanners() -> None:
    _assert_linear(lambda n: " " * n + "x", without_xacro_declaration, 500_000)
    # locating an unterminated attribute value looked back over every earlier tag
    _assert_linear(lambda n: b'<world_state name="w" version="1.0">' + b"<a/>" * n + b'<b x="1" y="\n<c/>',
                   _refused(read_world_state), 20_000)
    assert _open_quote_before(b'<a x="1"/><b y="2', 16) == 15
    _assert_linear(lambda n: "<!>" * n, _prolog_end, 20_000)


def test_hostile_files_stay_within_a_second_and_200_mb() -> None:
    """Each class of hostile input of issue 14, in a fresh process: the project's error in under a
    second of CPU and under 200 MB resident (the script prints its figures)."""
    out = subprocess.run([sys.executable, str(HOSTILE_SCRIPT), "--check"], capture_output=True, text=True,
                         timeout=240)
    assert out.returncode == 0, out.stdout + out.stderr


def test_an_include_bomb_is_refused(tmp_path: Path) -> None:
    """Each model includes the next twice: 2^19 links from 20 small files, unless the number of
    included files is bounded."""
    n = 20
    for i in range(n):
        body = (f'<include><uri>m{i + 1}.sdf</uri><name>a</name></include>'
                f'<include><uri>m{i + 1}.sdf</uri><name>b</name></include>') if i < n - 1 else '<link name="l"/>'
        (tmp_path / f"m{i}.sdf").write_text(f'<sdf version="1.9"><model name="m{i}">{body}</model></sdf>')
    t0 = time.process_time()
    with pytest.raises(ModelError) as exc:
        load_model_file(tmp_path / "m0.sdf")
    assert exc.value.code == "SDF_TOO_MANY_INCLUDES" and "more than 1000 files" in str(exc.value)
    assert exc.value.diagnostics[0].line == 1
    assert time.process_time() - t0 < 5.0  # about 0.15 s; the whole bomb would take hours


@pytest.mark.timeout(20)
def test_xacro_never_opens_a_fifo(fifo: Path) -> None:
    from robot_state_format.model.loader import load_xacro

    doc = (f'<robot name="r" xmlns:xacro="http://www.ros.org/wiki/xacro"><xacro:property name="y" '
           f'value="${{xacro.load_yaml(\'{fifo}\')}}"/><link name="${{y}}"/></robot>')
    with pytest.raises(ModelError, match="not a regular file"):
        load_xacro(doc)
    inc = f'<robot name="r" xmlns:xacro="http://www.ros.org/wiki/xacro"><xacro:include filename="{fifo}"/></robot>'
    with pytest.raises(ModelError, match="not a regular file"):
        load_xacro(inc)
