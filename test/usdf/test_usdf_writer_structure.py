"""The writer refuses the states its own reader (and the XSD) would refuse: a restart file must read back.

Each bad state is also written by hand as XML: the strict reader refuses that document with the
same code, so the writer and the reader agree on what a valid world_state is.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from robot_state_format.errors import UsdfError
from robot_state_format.usdf.reader import read_world_state
from robot_state_format.usdf.types import FrameState, JointState, LinkState, ModelState, WorldState
from robot_state_format.usdf.validate import validate_schema
from robot_state_format.usdf.writer import write_world_state, write_world_state_file

POSE = (0.0, 0.0, 1.0, 0.0, 0.0, 0.0)
HEAD = '<world_state name="w" version="1.0">'

# name: (state, the same state written by hand, code, text the message must hold)
CASES: dict[str, tuple[WorldState, str, str, str]] = {
    "frame_and_model_same_name": (
        WorldState("w", frames=[FrameState("a")], model_states=[ModelState("a")]),
        f'{HEAD}<frame name="a"/><model_state name="a"/></world_state>',
        "USDF_DUPLICATE_NAME", "'a'"),
    "two_model_states": (
        WorldState("w", model_states=[ModelState("m"), ModelState("m")]),
        f'{HEAD}<model_state name="m"/><model_state name="m"/></world_state>',
        "USDF_DUPLICATE_NAME", "'m'"),
    "duplicate_link": (
        WorldState("w", model_states=[ModelState("m", link_states=[LinkState("l"), LinkState("k"),
                                                                   LinkState("l", pose=POSE)])]),
        f'{HEAD}<model_state name="m"><link_state name="l"/><link_state name="k"/>'
        '<link_state name="l"><pose>0 0 1 0 0 0</pose></link_state></model_state></world_state>',
        "USDF_DUPLICATE_NAME", "link_state name 'l'"),
    "duplicate_joint": (
        WorldState("w", model_states=[ModelState("m", joint_states=[JointState("j", (1.0,)),
                                                                    JointState("j", (2.0,))])]),
        f'{HEAD}<model_state name="m"><joint_state name="j"><positions>1</positions></joint_state>'
        '<joint_state name="j"><positions>2</positions></joint_state></model_state></world_state>',
        "USDF_DUPLICATE_NAME", "joint_state name 'j'"),
    "duplicate_nested_model": (
        WorldState("w", model_states=[ModelState("m", model_states=[ModelState("g"), ModelState("g")])]),
        f'{HEAD}<model_state name="m"><model_state name="g"/><model_state name="g"/></model_state></world_state>',
        "USDF_DUPLICATE_NAME", "model_state name 'g'"),
    "duplicate_inside_nested_model": (
        WorldState("w", model_states=[ModelState("m", model_states=[
            ModelState("g", link_states=[LinkState("f"), LinkState("f")])])]),
        f'{HEAD}<model_state name="m"><model_state name="g"><link_state name="f"/><link_state name="f"/>'
        '</model_state></model_state></world_state>',
        "USDF_DUPLICATE_NAME", "link_state name 'f' in model_state 'g'"),
    "unknown_parent": (
        WorldState("w", model_states=[ModelState("m", parent="odom")]),
        f'{HEAD}<model_state name="m"><parent>odom</parent></model_state></world_state>',
        "USDF_UNKNOWN_PARENT", "'odom'"),
    "unknown_link_parent": (
        WorldState("w", model_states=[ModelState("m", parent="m::l")]),
        f'{HEAD}<model_state name="m"><parent>m::l</parent></model_state></world_state>',
        "USDF_UNKNOWN_PARENT", "'m::l'"),
    "own_link_cycle": (
        WorldState("w", model_states=[ModelState("m", parent="m::l", link_states=[LinkState("l", pose=POSE)])]),
        f'{HEAD}<model_state name="m"><parent>m::l</parent><link_state name="l"><pose>0 0 1 0 0 0</pose>'
        '</link_state></model_state></world_state>',
        "USDF_PARENT_CYCLE", "m -> m::l -> m"),
    "frame_cycle": (
        WorldState("w", frames=[FrameState("a", parent="b"), FrameState("b", parent="a")]),
        f'{HEAD}<frame name="a"><parent>b</parent></frame><frame name="b"><parent>a</parent></frame></world_state>',
        "USDF_PARENT_CYCLE", "a -> b -> a"),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_writer_refuses_what_the_reader_refuses(case: str) -> None:
    state, by_hand, code, text = CASES[case]
    with pytest.raises(UsdfError) as read_exc:
        read_world_state(by_hand)
    assert read_exc.value.code == code  # the reader's verdict on the same document
    with pytest.raises(UsdfError) as exc:
        write_world_state(state)
    assert exc.value.code == code
    assert text in exc.value.diagnostics[0].message
    assert exc.value.diagnostics[0].file == "<output>"
    with pytest.raises(UsdfError):
        write_world_state(state, pretty=False)


def test_refused_state_leaves_an_existing_restart_file_intact(tmp_path: Path) -> None:
    path = tmp_path / "restart.usdf"
    good = WorldState("w", model_states=[ModelState("m", pose=POSE)])
    write_world_state_file(good, path)
    before = path.read_bytes()
    with pytest.raises(UsdfError) as exc:
        write_world_state_file(CASES["own_link_cycle"][0], path)
    assert exc.value.code == "USDF_PARENT_CYCLE"
    assert path.read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["restart.usdf"]  # no temporary file left
    assert read_world_state(before).state == good


def test_valid_parents_and_repeated_names_in_different_scopes_still_write() -> None:
    # the same link/joint name in two models, a model named like a link, parents through a
    # frame chain, another model's link and a nested model: all valid
    state = WorldState("w", frames=[FrameState("odom", parent="map", pose=POSE), FrameState("map", parent="world")],
                       model_states=[
                           ModelState("pr2", parent="odom", pose=POSE,
                                      link_states=[LinkState("palm", pose=POSE), LinkState("l")],
                                      joint_states=[JointState("j", (0.5,))],
                                      model_states=[ModelState("gripper", pose=POSE,
                                                               link_states=[LinkState("l", pose=POSE)],
                                                               joint_states=[JointState("j", (0.25,))])]),
                           ModelState("cup", parent="pr2::palm", pose=POSE, link_states=[LinkState("l")]),
                           ModelState("plate", parent="pr2::gripper::l", pose=POSE),
                           ModelState("l", parent="pr2::gripper")])
    text = write_world_state(state)
    assert read_world_state(text).state == state
    assert validate_schema(text) == []
