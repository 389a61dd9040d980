"""The URDF reader's fast paths (issue 17) read what the checked paths read: undeclared prefixes found
by the linear scans, texts read once per document and reused, never hiding a diagnostic."""

from __future__ import annotations

import numpy as np

from robot_state_format.model.urdf import read_urdf


def test_undeclared_prefixes_of_elements_and_attributes_and_only_those() -> None:
    text = ('<robot name="r">\n'
            '<gz:plugin name="p"/>\n'                      # a prefixed element
            '<link name="a"\tfoo:bar="1">\n'               # a prefixed attribute after a tab
            '<visual><geometry><mesh filename="package://m.stl" scale="1 1 1"/></geometry></visual>\n'
            '</link>\n'
            '<link name="b" x="q:y=\'1\'"/>\n'              # inside a value, after a quote: not an attribute
            '<joint name="j" type="fixed"><parent link="a"/><child link="b"/></joint>\n'
            '</robot>')
    model = read_urdf(text)
    got = sorted(d.message.split(":")[0] for d in model.warnings if d.code == "URDF_UNDECLARED_PREFIX")
    assert got == ["the namespace prefix foo", "the namespace prefix gz"]
    assert all(d.line == 1 for d in model.warnings if d.code == "URDF_UNDECLARED_PREFIX")


def _two_visuals(origin: str) -> str:
    visual = f'<visual><origin {origin}/><geometry><box size="1 1 1"/></geometry></visual>'
    return (f'<robot name="r">\n<link name="a">\n{visual}\n{visual}\n</link>\n'
            f'<link name="b">\n{visual}\n</link>\n'
            '<joint name="j" type="fixed"><parent link="a"/><child link="b"/></joint>\n</robot>')


def test_a_repeated_origin_text_gives_equal_transforms_each_its_own() -> None:
    model = read_urdf(_two_visuals('xyz="1 2 3" rpy="0 0 1.5707963267948966"'))
    shapes = model.links["a"].visuals + model.links["b"].visuals
    assert len(shapes) == 3
    expected = np.array([[0.0, -1.0, 0.0, 1.0], [1.0, 0.0, 0.0, 2.0], [0.0, 0.0, 1.0, 3.0], [0, 0, 0, 1]])
    for s in shapes:
        np.testing.assert_allclose(s.origin, expected, atol=1e-15)
    shapes[0].origin[0, 3] = 99.0  # no array is shared between elements
    assert shapes[1].origin[0, 3] == 1.0 and shapes[2].origin[0, 3] == 1.0


def test_a_repeated_bad_origin_text_is_reported_at_every_element() -> None:
    model = read_urdf(_two_visuals('xyz="1 2 nan"'))  # urdfdom drops each such visual, with a message
    bad = [d for d in model.warnings if d.code == "URDF_BAD_NUMBER"]
    assert [d.line for d in bad] == [3, 4, 7]
    assert model.links["a"].visuals == [] and model.links["b"].visuals == []


def test_a_repeated_underflowing_text_warns_at_every_element() -> None:
    model = read_urdf(_two_visuals('xyz="1e-400 0 0"'))
    under = [d for d in model.warnings if d.code == "URDF_NUMBER_UNDERFLOW"]
    assert [d.line for d in under] == [3, 4, 7]
    assert all(s.origin[0, 3] == 0.0 for s in model.links["a"].visuals)
