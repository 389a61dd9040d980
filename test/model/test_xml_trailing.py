"""Markup after a robot description's root element, and ``<?...?>`` instructions, as TinyXML2 reads
them under urdfdom, libsdformat and MuJoCo (robot_state_format/model/xml_trailing.py, model/xml.py).

Each expectation was measured with ``check_urdf`` (urdfdom 6), ``conformance/sdf_ref`` (libsdformat 12.3)
and ``mujoco.MjModel.from_xml_string``, which agree on every case; the tests also ask the references
themselves when they are installed. USDF, this project's own format, stays strict XML.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from repo_paths import REPO_ROOT

from robot_state_format.errors import ModelError, UsdfError
from robot_state_format.model.loader import load_model
from robot_state_format.model.xml_trailing import tail_loads
from robot_state_format.usdf.reader import read_world_state

ROOT = REPO_ROOT
sys.path.insert(0, str(ROOT / "conformance"))
from references import run_sdf_ref, sdf_ref_path  # noqa: E402

CHECK_URDF = Path(sys.executable).parent / "check_urdf"

# (text after the root element, whether TinyXML2 loads the document)
TAILS = [
    ("\n", True),
    ("\n<!-- a comment -->\n", True),
    ("\n</ROOT>\n", True),                         # an end tag closing nothing ends the document
    ("\n</ROOT>\njunk text <unclosed\n", True),    # ... and what follows it is ignored
    ("<foo/>", True),
    ('\n<!-- c -->\n<foo a="1 > 2"><b/>text</foo>\n', True),
    ("\n<![CDATA[x]]>\n", True),
    ("\n<!DOCTYPE x>\n", True),
    ("\n<foo>&amp;</foo>\n", True),
    ("\n<foo>&bogus;</foo>\n", True),
    ("\n<foo>\n", False),                          # unclosed
    ("\n<foo></bar>\n", False),                    # mismatched
    ("\n<foo/>junk\n", False),                     # text outside an element
    ("\njunk\n", False),
    ("\n<?pi x?>\n", False),                       # a declaration after the first element
    ("\n<!-- unterminated\n", False),
    ('\n<foo a="unterminated>\n', False),
]


@pytest.mark.parametrize("tail,loads", TAILS)
def test_tail_as_tinyxml2_reads_it(tail: str, loads: bool) -> None:
    assert tail_loads(tail.replace("ROOT", "robot").encode()) is loads


def _urdf(tail: str) -> str:
    return ('<robot name="r"><link name="a"><inertial><mass value="1"/>'
            '<inertia ixx="1" ixy="0" ixz="0" iyy="1" iyz="0" izz="1"/></inertial></link></robot>'
            + tail.replace("ROOT", "robot"))


def _sdf(tail: str) -> str:
    return "<sdf version='1.9'><model name='m'><link name='a'/></model></sdf>" + tail.replace("ROOT", "sdf")


@pytest.mark.parametrize("tail,loads", TAILS)
def test_urdf_verdict_is_urdfdoms(tail: str, loads: bool, tmp_path: Path) -> None:
    text = _urdf(tail)
    if CHECK_URDF.is_file():
        path = tmp_path / "r.urdf"
        path.write_text(text)
        assert (subprocess.run([str(CHECK_URDF), str(path)], capture_output=True, timeout=60).returncode == 0) is loads
    if loads:
        model = load_model(text, file="r.urdf")
        assert list(model.links) == ["a"]
        trailing = [d for d in model.warnings if d.code == "XML_TRAILING_CONTENT"]
        # (nothing, or a comment, after the root is plain XML: no warning)
        assert len(trailing) == (0 if tail.strip() in ("", "<!-- a comment -->") else 1)
    else:
        with pytest.raises(ModelError) as info:
            load_model(text, file="r.urdf")
        assert info.value.code == "XML_SYNTAX"


@pytest.mark.parametrize("tail,loads", TAILS)
def test_sdformat_verdict_is_libsdformats(tail: str, loads: bool, tmp_path: Path) -> None:
    text = _sdf(tail)
    exe = sdf_ref_path()
    if exe is not None:
        path = tmp_path / "m.sdf"
        path.write_text(text)
        assert run_sdf_ref(exe, path, []).loads is loads
    if loads:
        assert list(load_model(text, file="m.sdf").links) == ["a"]
    else:
        with pytest.raises(ModelError):
            load_model(text, file="m.sdf")


def test_the_warning_names_the_line_where_the_markup_starts() -> None:
    model = load_model(_urdf("\n\n<extra/>\n"), file="r.urdf")
    (w,) = [d for d in model.warnings if d.code == "XML_TRAILING_CONTENT"]
    assert w.format() == ("r.urdf:3: warning: [XML_TRAILING_CONTENT] markup after the root element is ignored, "
                          "as urdfdom and libsdformat (TinyXML2) ignore it")


@pytest.mark.parametrize("where,loads", [("before", True), ("inside", False), ("after", False)])
def test_instructions_only_before_the_root(where: str, loads: bool) -> None:
    pi = "<?pi x?>"
    urdf = _urdf("")
    text = {"before": pi + "\n" + urdf, "inside": urdf.replace("<link", pi + "<link", 1),
            "after": urdf + "\n" + pi}[where]
    if loads:
        assert list(load_model(text, file="r.urdf").links) == ["a"]
    else:
        with pytest.raises(ModelError) as info:
            load_model(text, file="r.urdf")
        assert info.value.code == "XML_SYNTAX" and f"{where} the root element" in info.value.diagnostics[0].message


def test_mujoco_reads_the_same() -> None:
    mujoco = pytest.importorskip("mujoco", reason="the mujoco package is not installed")
    body = '<mujoco><worldbody><body name="b"><geom size="1"/></body></worldbody></mujoco>'
    for tail, loads in TAILS:
        try:
            mujoco.MjModel.from_xml_string(body + tail.replace("ROOT", "mujoco"))
            got = True
        except ValueError:
            got = False
        assert got is loads, tail


def test_usdf_stays_strict() -> None:
    doc = ('<world_state><time>0</time></world_state>\n<extra/>\n')
    with pytest.raises(UsdfError) as info:
        read_world_state(doc)
    assert info.value.code == "USDF_XML_SYNTAX"


# (text before the root element, whether TinyXML2 loads the document): every <?...?> is a declaration
# to TinyXML2, allowed only before every other node (blanks do not count)
HEADS = [
    ('  \n<?xml version="1.0"?>\n', True),
    ('<?xml version="1.0"?>\n<?xml version="1.0"?>\n', True),
    ('<?pi x?><?xml version="1.0"?>\n', True),
    ('<?xml version="1.0"?>\n<!-- c -->\n', True),
    ('<!-- c -->\n<?xml version="1.0"?>\n', False),
    ('<?xml version="1.0"?><!-- c --><?xml version="1.0"?>\n', False),
    ("<!-- c --><?pi x?>\n", False),
    ("<!DOCTYPE ROOT>\n<?pi x?>\n", False),
    ("<!DOCTYPE ROOT>\n", True),
]


@pytest.mark.parametrize("head,loads", HEADS)
def test_declarations_before_the_root_as_the_references_read_them(head: str, loads: bool, tmp_path: Path) -> None:
    urdf, sdf = head.replace("ROOT", "robot") + _urdf(""), head.replace("ROOT", "sdf") + _sdf("")
    if CHECK_URDF.is_file():
        (tmp_path / "r.urdf").write_text(urdf)
        done = subprocess.run([str(CHECK_URDF), str(tmp_path / "r.urdf")], capture_output=True, timeout=60)
        assert (done.returncode == 0) is loads
    exe = sdf_ref_path()
    if exe is not None:
        (tmp_path / "m.sdf").write_text(sdf)
        assert run_sdf_ref(exe, tmp_path / "m.sdf", []).loads is loads
    for text, file in ((urdf, "r.urdf"), (sdf, "m.sdf")):
        if loads:
            assert list(load_model(text, file=file).links) == ["a"]
        else:
            with pytest.raises(ModelError) as info:
                load_model(text, file=file)
            (d,) = info.value.errors
            assert d.code == "XML_SYNTAX" and "declaration after a" in d.message
            assert d.line == head[:head.rindex("<?")].count("\n") + 1  # the refused one: the last
    try:
        import mujoco
    except ImportError:
        return
    body = '<mujoco><worldbody><body name="b"><geom size="1"/></body></worldbody></mujoco>'
    try:
        mujoco.MjModel.from_xml_string(head.replace("ROOT", "mujoco") + body)
        assert loads
    except ValueError:
        assert not loads
