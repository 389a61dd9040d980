"""Bytes and encodings as urdfdom reads them (its XML parser, TinyXML2, reads bytes and never checks UTF-8):

* a URDF whose names hold bytes that are not UTF-8 (0xFF, a lone 0x80) loads, as urdfdom loads it; each such
  byte is the Latin-1 character of the same value, so a name is the Latin-1 reading of urdfdom's bytes (checked
  against ``check_urdf``'s own output where it is installed), and goes to TF and USDF in UTF-8;
* a UTF-16/UTF-32 document (with or without a byte-order mark) is refused, as ``check_urdf`` refuses it, with
  an ``XML_ENCODING`` error on line 1 naming the encoding;
* USDF stays strict UTF-8; the USDF writer refuses a name holding lone surrogates (what Python makes of such
  bytes in a command-line argument) with ``USDF_BAD_NAME`` naming the element; ``state from-model --name``
  with such bytes and ``--stamp`` of 5000 digits end in one clear line, no traceback.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from repo_paths import REPO_ROOT

from robot_state_format.cli import main
from robot_state_format.errors import ModelError, UsdfError
from robot_state_format.model.loader import load_model, load_model_file
from robot_state_format.usdf.reader import read_world_state
from robot_state_format.usdf.types import JointState, LinkState, ModelState, WorldState
from robot_state_format.usdf.writer import write_world_state

ROOT = REPO_ROOT
sys.path.insert(0, str(ROOT / "conformance"))
from references import check_urdf_path  # noqa: E402

PENDULUM = str(ROOT / "robot_state_format" / "samples" / "double_pendulum.urdf")
# line 1: the robot name holds 0xFF; line 3: a link name 0xFF; line 4: a joint name 0xFE 0x80 (not UTF-8)
NOT_UTF8 = (b'<robot name="r\xffx">\n<link name="base"/>\n<link name="a\xff"/>\n'
            b'<joint name="j\xfe\x80" type="revolute"><parent link="base"/><child link="a\xff"/>'
            b'<axis xyz="0 0 1"/><limit lower="-1" upper="1" effort="1" velocity="1"/></joint>\n</robot>\n')
SMALL = '<robot name="r"><link name="a"/></robot>'


def _check_urdf(path: Path) -> tuple[int, bytes] | None:
    exe = check_urdf_path()
    if exe is None:
        return None
    r = subprocess.run([exe, str(path)], capture_output=True, timeout=30, check=False)
    return r.returncode, r.stdout + r.stderr


def test_names_with_bytes_that_are_not_utf8_load_as_urdfdom_loads_them(tmp_path: Path,
                                                                       capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "bytes.urdf"
    path.write_bytes(NOT_UTF8)
    model = load_model_file(path)
    assert model.name == "r\u00ffx"
    assert set(model.links) == {"base", "a\u00ff"}
    assert set(model.joints) == {"j\u00fe\u0080"}
    (w,) = [d for d in model.warnings if d.code == "XML_INVALID_UTF8"]
    assert w.line == 1 and "5 byte(s)" in w.message  # r\xffx, a\xff twice, \xfe\x80 and "0xFF" in w.message
    ref = _check_urdf(path)
    if ref is not None:  # urdfdom loads it, and its names are those bytes: ours are their Latin-1 reading
        code, out = ref
        assert code == 0, out
        assert b"robot name is: r\xffx" in out and b"root Link: base" in out and b"child(1):  a\xff" in out
    # TF and USDF carry the names in UTF-8; the USDF written reads back to the same names
    out_file = tmp_path / "s.usdf"
    assert main(["state", "from-model", str(path), "--positions", '{"j\u00fe\u0080": 0.5}', "-o", str(out_file)]) == 0
    capsys.readouterr()
    data = out_file.read_bytes()
    assert "a\u00ff".encode() in data and b"a\xff\"" not in data
    state = read_world_state(data).state
    assert state.model_states[0].name == "r\u00ffx"
    assert [ls.name for ls in state.model_states[0].link_states] == ["base", "a\u00ff"]
    assert main(["state", "validate", str(out_file), "--model", str(path), "--check-poses", "-q"]) == 0


@pytest.mark.parametrize(("data", "encoding"), [
    (SMALL.encode("utf-16"), "UTF-16 (little-endian)"),
    (b"\xfe\xff" + SMALL.encode("utf-16-be"), "UTF-16 (big-endian)"),
    (SMALL.encode("utf-16-le"), "UTF-16 (little-endian, no byte-order mark)"),
    (SMALL.encode("utf-32"), "UTF-32 (little-endian)"),
])
def test_utf16_and_utf32_are_refused_as_check_urdf_refuses_them(data: bytes, encoding: str, tmp_path: Path,
                                                                capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "wide.urdf"
    path.write_bytes(data)
    with pytest.raises(ModelError) as info:
        load_model_file(path)
    (d,) = info.value.diagnostics
    assert (d.code, d.file, d.line) == ("XML_ENCODING", str(path), 1)
    assert f"the document is {encoding}; it must be UTF-8" in d.message
    assert main(["check", str(path)]) == 1
    assert f"{path}:1: error: [XML_ENCODING]" in capsys.readouterr().err
    ref = _check_urdf(path)
    if ref is not None:
        assert ref[0] != 0, ref[1]


def test_utf8_bom_still_loads() -> None:
    assert load_model(b"\xef\xbb\xbf" + SMALL.encode()).name == "r"


def test_usdf_stays_strict_utf8() -> None:
    doc = (b'<?xml version="1.0" encoding="UTF-8"?>\n<world_state name="w\xff" version="1.0">'
           b'<model_state name="m"/></world_state>\n')
    with pytest.raises(UsdfError) as info:
        read_world_state(doc)
    assert info.value.diagnostics[0].code == "USDF_XML_SYNTAX"


@pytest.mark.parametrize("where", ["world_state", "model_state", "link_state", "joint_state"])
def test_writer_refuses_lone_surrogates_naming_the_element(where: str) -> None:
    bad = "x\udcff"
    state = WorldState(name=bad if where == "world_state" else "w", model_states=[ModelState(
        name=bad if where == "model_state" else "m",
        link_states=[LinkState(name=bad if where == "link_state" else "l", pose=(0, 0, 0, 0, 0, 0))],
        joint_states=[JointState(name=bad if where == "joint_state" else "j", positions=(0.0,))])])
    with pytest.raises(UsdfError) as info:
        write_world_state(state)
    (d,) = info.value.diagnostics
    assert d.code == "USDF_BAD_NAME" and "lone surrogate" in d.message and "0xFF" in d.message
    assert d.element is not None and d.element.startswith(where)
    d.format().encode("utf-8")  # the report itself is printable


def test_from_model_name_with_a_byte_that_is_not_utf8_is_refused_clearly(tmp_path: Path) -> None:
    """As the shell passes it (``--name $'w\\xff'``): exit 1, one error line, nothing written; the same to stdout."""
    for out in (["-o", str(tmp_path / "s.usdf")], []):
        r = subprocess.run([sys.executable, "-m", "robot_state_format", "state", "from-model", PENDULUM,
                            "--positions", "{}", "--name", b"w\xff".decode("utf-8", "surrogateescape"), *out],
                           capture_output=True, timeout=60, check=False, cwd=ROOT)
        err = r.stderr.decode()
        assert r.returncode == 1, err
        assert "Traceback" not in err and "[USDF_BAD_NAME]" in err and "0xFF" in err
        assert r.stdout == b""
    assert not (tmp_path / "s.usdf").exists()


def test_from_model_stamp_of_5000_digits_is_a_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["state", "from-model", PENDULUM, "--positions", "{}", "--stamp", "7" * 5000]) == 2
    err = capsys.readouterr().err
    assert "--stamp '77777777777777777777...(5000 characters)': SEC has 5000 digits, at most 30" in err
    assert main(["state", "from-model", PENDULUM, "--positions", "{}", "--stamp", "9" * 30 + ".5"]) == 0
    assert 'sec="' + "9" * 30 + '" nanosec="500000000"' in capsys.readouterr().out
