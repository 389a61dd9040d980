"""The shared safe XML parser: entities and network off, tolerance warnings, errors with lines."""

from __future__ import annotations

import threading

import pytest
from lxml import etree

from robot_state_format.errors import ModelError, Severity, UsdfError
from robot_state_format.model import load_model
from robot_state_format.model.xml import parse_bytes, parse_xml, safe_parser


def test_internal_entity_in_attribute_is_refused_with_its_declaration_line() -> None:
    doc = b'<?xml version="1.0"?>\n<!DOCTYPE robot [\n<!ENTITY n "evil">]>\n<robot name="&n;"><link name="a"/></robot>'
    with pytest.raises(ModelError) as exc:
        load_model(doc, file="bad.urdf")
    assert exc.value.code == "XML_ENTITY"
    assert exc.value.diagnostics[0].line == 3
    assert exc.value.diagnostics[0].file == "bad.urdf"


def test_external_entity_is_never_read(tmp_path) -> None:
    secret = tmp_path / "secret.txt"
    secret.write_text("TOP-SECRET")
    doc = f'<!DOCTYPE r [<!ENTITY e SYSTEM "file://{secret}">]><robot name="r"><link name="a">&e;</link></robot>'
    with pytest.raises(ModelError) as exc:
        parse_xml(doc)
    assert "TOP-SECRET" not in str(exc.value)
    assert exc.value.code == "XML_ENTITY"


def test_tolerated_defects_give_warnings_and_true_lines() -> None:
    doc = b'\n<?xml version="0.0"?>\n<robot name="r">\n  <link name="a"/>\n</robot>\n\x00'
    root, warnings = parse_xml(doc, "r.urdf")
    codes = {w.code for w in warnings}
    assert codes == {"XML_TRAILING_NUL", "XML_MISPLACED_DECLARATION", "XML_BAD_VERSION"}
    assert all(w.severity is Severity.WARNING for w in warnings)
    assert root[0].sourceline == 4  # the blanked declaration kept its line


def test_syntax_error_names_file_and_line() -> None:
    with pytest.raises(ModelError) as exc:
        parse_xml(b"<robot>\n\n<link></robot>", "broken.urdf")
    d = exc.value.diagnostics[0]
    assert (d.code, d.file, d.line) == ("XML_SYNTAX", "broken.urdf", 3)


@pytest.mark.parametrize(("doc", "kind", "line"), [
    (b"<robot>\n&x;</robot>", "ENTITY", 2),  # an undeclared entity (libxml2: ERR_UNDECLARED_ENTITY)
    (b"<robot>&lt</robot>", "ENTITY", 1),  # a reference without its ';' (ERR_ENTITYREF_SEMICOL_MISSING)
    (b"<robot>\n\n< /robot>", "SYNTAX", 3),  # no element name (ERR_NAME_REQUIRED)
    (b"<robot>a & b</robot>", "SYNTAX", 1),  # a bare '&' references nothing (ERR_NAME_REQUIRED too)
])
def test_entity_and_syntax_errors_are_told_apart_by_libxml2_code(doc: bytes, kind: str, line: int) -> None:
    with pytest.raises(ModelError) as exc:
        parse_xml(doc, "r.urdf")
    assert (exc.value.code, exc.value.diagnostics[0].line) == (f"XML_{kind}", line)
    with pytest.raises(UsdfError) as usdf:
        parse_xml(doc, "s.usdf", error_type=UsdfError, code_prefix="USDF_XML", description=False)
    assert (usdf.value.code, usdf.value.diagnostics[0].line) == (f"USDF_XML_{kind}", line)


def test_only_a_description_tolerates_markup_after_its_root() -> None:
    root, warnings = parse_xml(b"<robot name='r'/>\n<!-- c --><x/>", "r.urdf")
    assert root.tag == "robot" and [(w.code, w.line) for w in warnings] == [("XML_TRAILING_CONTENT", 2)]
    with pytest.raises(UsdfError) as exc:
        parse_xml(b"<robot name='r'/>\n<!-- c --><x/>", "s.usdf", error_type=UsdfError, code_prefix="USDF_XML",
                  description=False)
    assert (exc.value.code, exc.value.diagnostics[0].line) == ("USDF_XML_SYNTAX", 2)


def test_parse_bytes_leaves_entities_unexpanded_and_reads_no_file(tmp_path) -> None:
    secret = tmp_path / "secret.txt"
    secret.write_text("TOP-SECRET")
    doc = (f'<!DOCTYPE r [<!ENTITY e SYSTEM "file://{secret}"><!ENTITY i "inner">]>'
           '<r a="x"><c>&e;</c><d>&i;</d></r>').encode()
    root = parse_bytes(doc)
    assert b"TOP-SECRET" not in etree.tostring(root)
    assert b"inner" not in etree.tostring(root)  # even an internal entity stays a reference
    kinds = [type(n).__name__ for n in root.iter() if not isinstance(n.tag, str)]
    assert kinds == ["_Entity", "_Entity"]


def test_parse_bytes_raises_lxml_syntax_errors_with_the_line() -> None:
    with pytest.raises(etree.XMLSyntaxError) as exc:
        parse_bytes(b"<a>\n<b>\n</a>")
    assert exc.value.position[0] == 3


def test_safe_parser_is_one_configuration_per_thread() -> None:
    mine = safe_parser()
    assert safe_parser() is mine
    other: list[etree.XMLParser] = []
    t = threading.Thread(target=lambda: other.append(safe_parser()))
    t.start()
    t.join()
    assert other[0] is not mine
    # the same settings in the other thread: an external entity stays unresolved there too
    root = etree.fromstring(b'<!DOCTYPE r [<!ENTITY e SYSTEM "file:///etc/hostname">]><r>&e;</r>', other[0])
    assert root.text is None and not isinstance(root[0].tag, str)


_MULTILINE = {  # a document whose faulty element's start tag begins on line 3 and ends on line 5
    "urdf": ('<robot name="r">\n<link name="a"/><link name="b"/>\n<joint\n name="j"\n type="revolute">'
             '<parent link="a"/><child link="b"/></joint>\n</robot>', "URDF_MISSING_LIMIT"),
    "sdf": ('<sdf version="1.9"><model name="m">\n<link name="a"/>\n<joint\n name="j"\n type="revolute">'
            '<parent>a</parent><child>nope</child></joint>\n</model></sdf>', "SDF_JOINT_CHILD_NOT_FOUND"),
    "mjcf": ('<mujoco><worldbody>\n<body name="b"><joint name="j"/>\n<geom\n type="box"\n size="0 1 1"/>'
             '</body>\n</worldbody></mujoco>', "MJCF_BAD_VALUE"),
    "xacro": ('<robot name="r" xmlns:xacro="http://www.ros.org/wiki/xacro">\n<link name="a"/><link name="b"/>\n'
              '<joint\n name="j"\n type="revolute"><parent link="a"/><child link="b"/></joint>\n</robot>',
              "URDF_MISSING_LIMIT"),
}


@pytest.mark.parametrize("fmt", sorted(_MULTILINE))
def test_an_element_is_named_by_the_line_its_start_tag_begins_on(fmt: str) -> None:
    # libxml2 gives the line of the start tag's ">"; an editor, and TinyXML2 (the references' parser),
    # the line of its "<"
    text, code = _MULTILINE[fmt]
    with pytest.raises(ModelError) as info:
        load_model(text, file=f"m.{fmt}", fmt=fmt)
    assert [(d.code, d.line) for d in info.value.errors][:1] == [(code, 3)]


def test_start_lines_ignore_markup_in_comments_cdata_and_instructions() -> None:
    raw = (b'<?xml version="1.0"?>\n<!-- <a\nb> -->\n<r><![CDATA[ <x\n y> ]]>\n<?pi <q\n?>\n<e\n k="1"/>'
           b'<f:g xmlns:f="u"\n/></r>')
    parsed = parse_xml(raw, "x.xml", description=False)
    assert [(etree.QName(el).localname, el.sourceline) for el in parsed.root.iter(etree.Element)] == [
        ("r", 4), ("e", 8), ("g", 9)]
