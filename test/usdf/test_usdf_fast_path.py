"""The USDF reader's bulk fast path gives exactly what the element-by-element path gives.

``read_bulk.fast_model`` reads plain model_states in bulk and returns None whenever anything is off, so
that the detailed path reports the fault. Each document below is read twice, with the fast path and
with it switched off, strict and lenient, from str and bytes: the states, warnings and diagnostics
(code, line, message) must be equal.
"""

from __future__ import annotations

import random
from typing import Any

import pytest

from robot_state_format.errors import UsdfError
from robot_state_format.usdf import read_elements
from robot_state_format.usdf import reader as R
from robot_state_format.usdf.read_bulk import fast_model

SMALL = '''<?xml version="1.0" encoding="UTF-8"?>
<world_state name="w" version="1.0">
  <model_state name="m">
    <parent>world</parent>
    <pose>1 2 3 0 0 0</pose>
    <twist>0 0 0 0 0 1</twist>
    <link_state name="a"><pose>1 2 3 4 5 6</pose><twist>1 2 3 4 5 6</twist></link_state>
    <link_state name="b"><twist>1 2 3 4 5 6</twist></link_state>
    <link_state name="c"/>
    <joint_state name="j"><positions>1 2</positions><velocities>1 2</velocities><torques>3 4</torques></joint_state>
    <joint_state name="k"><positions>1</positions></joint_state>
    <joint_state name="l"><velocities></velocities><torques/></joint_state>
  </model_state>
</world_state>
'''

MUTATIONS = [
 ('<pose>1 2 3 4 5 6</pose>', '<pose x="1">1 2 3 4 5 6</pose>'),
 ('<pose>1 2 3 4 5 6</pose>', '<pose>1 2 3<!-- c --> 4 5 6</pose>'),
 ('<pose>1 2 3 4 5 6</pose>', '<pose>1 2 3 4 5 6<x/></pose>'),
 ('<pose>1 2 3 4 5 6</pose>', '<pose>1 2 3 4 5</pose>'),
 ('<pose>1 2 3 4 5 6</pose>', '<pose>1 2 3 4 5 nan</pose>'),
 ('<pose>1 2 3 4 5 6</pose>', '<pose>1 2 3 4 5 1e999</pose>'),
 ('<pose>1 2 3 4 5 6</pose>', '<pose>1 2 3 4 5 1_0</pose>'),
 ('<pose>1 2 3 4 5 6</pose>', '<pose>1 2 3 4 5 \u0661</pose>'),
 ('<pose>1 2 3 4 5 6</pose>', '<pose><![CDATA[1 2 3 4 5 6]]></pose>'),
 ('<pose>1 2 3 4 5 6</pose>', '<pose>1&#32;2 3 4 5 6</pose>'),
 ('<pose>1 2 3 4 5 6</pose>', '<pose>\n1\t2 3 4 5 6 </pose>'),
 ('<pose>1 2 3 4 5 6</pose><twist>1 2 3 4 5 6</twist>', '<twist>1 2 3 4 5 6</twist><pose>1 2 3 4 5 6</pose>'),
 ('<pose>1 2 3 4 5 6</pose><twist>1 2 3 4 5 6</twist>', '<pose>1 2 3 4 5 6</pose><pose>1 2 3 4 5 6</pose>'),
 ('<pose>1 2 3 4 5 6</pose><twist>1 2 3 4 5 6</twist>', '<pose>1 2 3 4 5 6</pose>x<twist>1 2 3 4 5 6</twist>'),
 ('<pose>1 2 3 4 5 6</pose><twist>1 2 3 4 5 6</twist>', '<pose>1 2 3 4 5 6</pose><twist>1 2 3 4 5 6</twist><foo/>'),
 ('<pose>1 2 3 4 5 6</pose><twist>1 2 3 4 5 6</twist>', '<pose>1 2 3 4 5 6</pose><wrench>1 2 3 4 5 6</wrench>'),
 ('<link_state name="a">', '<link_state name="a" y="2">'),
 ('<link_state name="a">', '<link_state name=" a">'),
 ('<link_state name="a">', '<link_state name="b">'),
 ('<link_state name="a">', '<link_state name="">'),
 ('<link_state name="a">', '<link_state>'),
 ('<link_state name="a">', '<link_state name="x::y">'),
 ('<link_state name="a">', '<link_state name="a">hello'),
 ('</link_state>', '</link_state>tail', 1),
 ('<joint_state name="k">', '<joint_state name="j">'),
 ('<joint_state name="k">', '<joint_state name="k"><!-- c -->'),
 ('<torques>3 4</torques>', '<torques>3</torques>'),
 ('<torques>3 4</torques>', '<torques>3 4 5</torques>'),
 ('<positions>1 2</positions>', '<positions>1 2 inf</positions>'),
 ('<positions>1 2</positions>', '<positions>1 x</positions>'),
 ('<positions>1 2</positions>', '<positions>+.5 -2. 1E3 .5e-3</positions>'),
 ('<positions>1 2</positions>', '<positions>0x10</positions>'),
 ('<positions>1</positions>', '<positions>1</positions><positions>2</positions>'),
 ('<velocities></velocities>', '<torques></torques><velocities></velocities>'),
 ('<parent>world</parent>', ''),
 ('<parent>world</parent>', '<parent> f </parent>'),
 ('<parent>world</parent>', '<parent a="1">world</parent>'),
 ('<parent>world</parent>\n    <pose>1 2 3 0 0 0</pose>', '<pose>1 2 3 0 0 0</pose><parent>world</parent>'),
 ('<twist>0 0 0 0 0 1</twist>', '<twist>0 0 0 0 0 1</twist><twist>0 0 0 0 0 1</twist>'),
 ('<link_state name="c"/>', '<link_state name="c"/><pose>1 2 3 4 5 6</pose>'),
 ('<link_state name="c"/>', '<link_state name="c"/><model_state name="n"><link_state name="z"/></model_state>'),
 ('<link_state name="c"/>', '<link_state name="c"/><model_state name="n"><parent>x</parent></model_state>'),
 ('<link_state name="c"/>', '<link_state name="c"/><?pi x?>'),
 ('<link_state name="c"/>', '<link_state name="c"/><!-- x -->'),
 ('<model_state name="m">', '<model_state name="world">'),
 ('<model_state name="m">', '<model_state name="a::b">'),
 ('<model_state name="m">', '<model_state name="m" q="1">'),
 ('<model_state name="m">', '<model_state name="m">text'),
 ('<model_state name="m">', '<model_state>'),
 ('<model_state name="m">', '<model_state name="m"><stamp sec="1"/>'),
 ('<parent>world</parent>', '<parent>world<x/></parent>'),
 ('<pose>1 2 3 0 0 0</pose>', '<pose>1 2 3 0 0</pose>'),
 ('<pose>1 2 3 0 0 0</pose>', '<pose/>'),
]



def _read(doc: str | bytes, lenient: bool) -> Any:
    try:
        r = R.read_world_state(doc, lenient=lenient)
        return ("ok", r.state, [(d.code, d.line, d.message) for d in r.warnings])
    except UsdfError as e:
        return ("err", [(d.code, d.line, d.message) for d in e.diagnostics])


def _same_both_ways(doc: str, monkeypatch: pytest.MonkeyPatch) -> None:
    for lenient in (False, True):
        for d in (doc, doc.encode()):
            fast = _read(d, lenient)
            with monkeypatch.context() as m:
                m.setattr(read_elements, "fast_model", lambda el, top: None)
                slow = _read(d, lenient)
            assert fast == slow, doc


def test_plain_document_reads_the_same(monkeypatch: pytest.MonkeyPatch) -> None:
    taken: list[bool] = []
    real = fast_model

    def spy(el: Any, top: bool) -> Any:
        out = real(el, top)
        taken.append(out is not None)
        return out

    monkeypatch.setattr(read_elements, "fast_model", spy)
    R.read_world_state(SMALL)
    assert taken == [True]  # the plain document really goes through the fast path
    monkeypatch.setattr(read_elements, "fast_model", real)
    _same_both_ways(SMALL, monkeypatch)


@pytest.mark.parametrize("old,new", [m[:2] for m in MUTATIONS])
def test_each_fault_is_reported_as_by_the_detailed_path(old: str, new: str, monkeypatch: pytest.MonkeyPatch) -> None:
    assert old in SMALL
    _same_both_ways(SMALL.replace(old, new, 1), monkeypatch)
    _same_both_ways(SMALL.replace(old, new), monkeypatch)


def test_random_one_character_changes(monkeypatch: pytest.MonkeyPatch) -> None:
    rnd = random.Random(1)
    for _ in range(300):
        pos = rnd.randrange(len(SMALL))
        ch = rnd.choice(["x", " ", "<", "1", "e", "-", ".", "\n", "", "/", '"', "a"])
        _same_both_ways(SMALL[:pos] + ch + SMALL[pos + 1:], monkeypatch)
