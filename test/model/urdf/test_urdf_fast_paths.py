"""The URDF reader's fast paths (issue 17) read what the checked paths read: undeclared prefixes found
by the linear scans, texts read once per document and reused, never hiding a diagnostic."""

from __future__ import annotations

import dataclasses
import itertools

import numpy as np
import pytest
from lxml import etree
from real_robots import SKIP_REASON, real_urdfs, robots_dir, romeo_urdf
from repo_paths import REPO_ROOT

from robot_state_format.errors import ModelError, Severity
from robot_state_format.model.types import Model
from robot_state_format.model.urdf.fast import FastReader
from robot_state_format.model.urdf.reader import read_urdf

ROOT = REPO_ROOT


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
        np.testing.assert_allclose(s.origin, expected, atol=1e-15, rtol=0)
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


# -- the fast path of links and joints (urdf_fast.py) reads what the checked reader reads ------------------------


def _dump(x: object) -> object:
    """Everything a value holds, comparable with == (arrays by their exact numbers)."""
    if isinstance(x, np.ndarray):
        return ("array", x.shape, x.tolist())
    if dataclasses.is_dataclass(x) and not isinstance(x, type):
        return (type(x).__name__, [(f.name, _dump(getattr(x, f.name))) for f in dataclasses.fields(x)])
    if isinstance(x, dict):
        return [(k, _dump(v)) for k, v in x.items()]
    if isinstance(x, (list, tuple)):
        return [_dump(v) for v in x]
    return x


def _checked_only(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(FastReader, "fast_link", lambda self, model, el: False)
    monkeypatch.setattr(FastReader, "fast_joint", lambda self, model, el: False)


def _counting(monkeypatch: pytest.MonkeyPatch) -> dict[str, int]:
    taken = {"link": 0, "joint": 0}
    link, joint = FastReader.fast_link, FastReader.fast_joint

    def fast_link(self: FastReader, model: Model, el: etree._Element) -> bool:
        ok = link(self, model, el)
        taken["link"] += ok
        return ok

    def fast_joint(self: FastReader, model: Model, el: etree._Element) -> bool:
        ok = joint(self, model, el)
        taken["joint"] += ok
        return ok

    monkeypatch.setattr(FastReader, "fast_link", fast_link)
    monkeypatch.setattr(FastReader, "fast_joint", fast_joint)
    return taken


def _documents() -> list[tuple[str, bytes]]:
    paths = sorted((ROOT / "robot_state_format" / "samples").glob("*.urdf"))
    paths += sorted((ROOT / "test" / "fixtures" / "urdf" / "tolerated").glob("*.urdf"))
    paths += real_urdfs()[:8]
    return [(p.name, p.read_bytes()) for p in paths]


def test_the_fast_path_reads_real_robots_as_the_checked_reader(monkeypatch: pytest.MonkeyPatch) -> None:
    if robots_dir() is None:  # its robots are what makes over 100 of each element (data only: no module to import)
        pytest.skip(SKIP_REASON)
    docs = _documents()
    with monkeypatch.context() as m:
        taken = _counting(m)
        fast = [_dump(read_urdf(data, file=name)) for name, data in docs]
    assert taken["link"] > 100 and taken["joint"] > 100  # the fast path did read most elements
    _checked_only(monkeypatch)
    checked = [_dump(read_urdf(data, file=name)) for name, data in docs]
    for (name, _), a, b in zip(docs, fast, checked):
        assert a == b, name


def test_romeo_is_read_on_the_fast_path_each_array_its_own(monkeypatch: pytest.MonkeyPatch) -> None:
    path = romeo_urdf()
    if path is None:
        pytest.skip(SKIP_REASON)
    taken = _counting(monkeypatch)
    model = read_urdf(path.read_bytes(), file=str(path))
    assert taken == {"link": 82, "joint": 81}
    arrays = [j.origin for j in model.joints.values()] + [j.child_offset for j in model.joints.values()]
    arrays += [link.pose for link in model.links.values()]
    arrays += [s.origin for link in model.links.values() for s in link.visuals + link.collisions]
    arrays += [link.inertial.origin for link in model.links.values() if link.inertial is not None]
    assert all(a.shape == (4, 4) and a.flags.writeable for a in arrays)
    spans = sorted((a.__array_interface__["data"][0], a.nbytes) for a in arrays)
    assert all(lo + n <= nxt for (lo, n), (nxt, _) in itertools.pairwise(spans))  # no two share memory
    joint = model.joints["NeckYaw"]  # origin xyz="0 0 0.0835": written to, it changes no other element
    joint.origin[2, 3] = 5.0
    assert model.links["NeckYawLink"].inertial is not None
    assert model.links["NeckYawLink"].inertial.origin[2, 3] == -0.03074


def test_an_element_the_fast_path_refuses_is_read_with_its_diagnostics(monkeypatch: pytest.MonkeyPatch) -> None:
    text = ('<robot name="r">\n'
            '<link name="a"><inertial><mass value="1"/><inertia ixx="1" ixy="0" ixz="0" iyy="1" iyz="0" izz="1"/>'
            '</inertial><sensor_hint kind="imu"/></link>\n'  # an extension child: the checked reader keeps it
            '<link name="b"/>\n'
            '<joint name="j" type="revolute"><parent link="a"/><child link="b"/>\n'
            '<origin xyz="1e-400 0 0"/><axis xyz="0 0 1"/><limit effort="1" velocity="1" lower="-1" upper="1"/>'
            '</joint>\n</robot>')
    taken = _counting(monkeypatch)
    model = read_urdf(text)
    assert taken == {"link": 1, "joint": 0}  # link b on the fast path; link a and joint j checked
    assert [(e.tag, e.owner) for e in model.extensions] == [("sensor_hint", "a")]
    assert [(d.code, d.line, d.element) for d in model.warnings] == [("URDF_NUMBER_UNDERFLOW", 5, "origin")]
    assert model.joints["j"].origin[0, 3] == 0.0 and model.joints["j"].axis == (0.0, 0.0, 1.0)
    assert model.links["a"].inertial is not None and model.links["a"].inertial.mass == 1.0


@pytest.mark.parametrize("blank", [" ", "&#9;", "&#10;", "&#13;"])
def test_a_number_followed_by_any_blank_is_reported_on_every_path(blank: str) -> None:
    """urdfdom refuses a number followed by white space (a tab or line break written as a character
    reference survives XML's attribute normalisation): the inertia is ignored with a warning, a limit is an
    error, whichever path reads the element."""
    text = ('<robot name="r">\n<link name="a">\n<inertial><mass value="1"/>'
            f'<inertia ixx="1{blank}" ixy="0" ixz="0" iyy="1" iyz="0" izz="1"/></inertial>\n</link>\n'
            '<link name="b"/>\n<joint name="j" type="revolute"><parent link="a"/><child link="b"/>\n'
            f'<axis xyz="0 0 1"/><limit lower="-1" upper="1" effort="10{blank}" velocity="1"/></joint>\n</robot>')
    with pytest.raises(ModelError) as info:
        read_urdf(text)
    errors = [(d.code, d.line, d.element) for d in info.value.diagnostics if d.severity is Severity.ERROR]
    assert errors == [("URDF_BAD_NUMBER", 7, "limit")]
    warnings = [(d.code, d.line, d.element) for d in info.value.diagnostics if d.severity is Severity.WARNING]
    assert ("URDF_BAD_NUMBER", 3, "inertia") in warnings
    ok = read_urdf(text.replace(f'effort="10{blank}"', 'effort="10"'))
    assert ok.links["a"].inertial is None  # ignored, as urdfdom does
    assert [(d.code, d.line) for d in ok.warnings if d.code == "URDF_BAD_NUMBER"] == [("URDF_BAD_NUMBER", 3)]
