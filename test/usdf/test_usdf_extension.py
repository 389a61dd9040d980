"""USDF extension elements (spec §13): kept by the reader, written back, accepted by the XSD;
the simulator-state extension's own format."""

from __future__ import annotations

import pytest

from robot_state_format.errors import UsdfError
from robot_state_format.usdf.reader import read_world_state
from robot_state_format.usdf.simulator_state import (
    NAMESPACE,
    SimulatorState,
    find_simulator_state,
    from_extension,
    set_simulator_state,
    to_extension,
)
from robot_state_format.usdf.types import ExtensionElement, ModelState, WorldState
from robot_state_format.usdf.validate import validate_schema
from robot_state_format.usdf.writer import write_world_state

DOC = """<?xml version="1.0" encoding="UTF-8"?>
<world_state name="w" version="1.0" xmlns:v="urn:example:vendor">
  <model_state name="m"/>
  <v:note level="2"><v:text>kept &amp; written back</v:text></v:note>
  <frame name="f"/>
</world_state>
"""


def test_foreign_namespace_elements_are_kept_and_written_back() -> None:
    state = read_world_state(DOC).state
    assert [m.name for m in state.model_states] == ["m"] and [f.name for f in state.frames] == ["f"]
    assert state.extensions == [ExtensionElement(
        "urn:example:vendor", "note",
        '<v:note xmlns:v="urn:example:vendor" level="2"><v:text>kept &amp; written back</v:text></v:note>')]
    text = write_world_state(state)
    assert read_world_state(text).state == state
    assert write_world_state(read_world_state(text).state) == text
    assert validate_schema(DOC) == [] and validate_schema(text) == []


def test_unknown_elements_without_namespace_are_still_errors() -> None:
    with pytest.raises(UsdfError) as info:
        read_world_state('<world_state name="w" version="1.0"><note/></world_state>')
    assert info.value.diagnostics[0].code == "USDF_UNKNOWN_ELEMENT"
    assert validate_schema('<world_state name="w" version="1.0"><note/></world_state>') != []


def test_writer_refuses_an_extension_outside_a_namespace() -> None:
    bad = WorldState("w", extensions=[ExtensionElement("", "note", "<note/>")])
    with pytest.raises(UsdfError) as info:
        write_world_state(bad)
    assert info.value.diagnostics[0].code == "USDF_EXTENSION"
    broken = WorldState("w", extensions=[ExtensionElement("urn:x", "a", "<x:a xmlns:x='urn:x'>")])
    with pytest.raises(UsdfError):
        write_world_state(broken)


def test_simulator_state_round_trip_is_bit_exact() -> None:
    values = (0.1, -0.0, 1e-300, 2.0000000000000004, -123456.789e10)
    s = SimulatorState("mujoco", "abc123", 0.30000000000000004, {"qpos": values, "act": ()}, 150, "4.0.0")
    state = WorldState("w", model_states=[ModelState("m")])
    set_simulator_state(state, s)
    text = write_world_state(state)
    assert validate_schema(text) == []
    back = find_simulator_state(read_world_state(text).state, "mujoco")
    assert back == s
    assert [repr(v) for v in back.arrays["qpos"]] == [repr(v) for v in values]  # -0.0 kept
    assert find_simulator_state(read_world_state(text).state, "drake") is None
    # replacing the engine's state keeps one element
    set_simulator_state(state, SimulatorState("mujoco", "abc123", 1.0, {}, 1))
    assert len(state.extensions) == 1 and from_extension(state.extensions[0]).time == 1.0


def test_simulator_state_faults_and_schema() -> None:
    s = to_extension(SimulatorState("drake", "L", 0.5, {"q": (1.0,)}))
    bad = ExtensionElement(NAMESPACE, "simulator_state", s.xml.replace("<sim:time>0.5", "<sim:time>zero"))
    with pytest.raises(UsdfError) as info:
        from_extension(bad)
    assert info.value.diagnostics[0].code == "USDF_EXTENSION"
    doc = write_world_state(WorldState("w", extensions=[bad]))
    assert any("finiteDouble" in d.message for d in validate_schema(doc))
    no_time = ExtensionElement(NAMESPACE, "simulator_state", s.xml.replace("<sim:time>0.5</sim:time>", ""))
    with pytest.raises(UsdfError, match="missing <time>"):
        from_extension(no_time)
