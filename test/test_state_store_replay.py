"""Replay building blocks: CDR against rclpy's serializer, model checks, multi-DOF fields, the Player."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from robot_state_format.model.loader import load_model
from robot_state_format.ros import replay as rp
from robot_state_format.usdf.types import JointState, ModelState, Stamp, WorldState

FLOATING_URDF = """<robot name="mobile">
  <link name="world_anchor"/><link name="base"/><link name="arm"/><link name="finger"/><link name="twin"/>
  <joint name="float" type="floating"><parent link="world_anchor"/><child link="base"/></joint>
  <joint name="shoulder" type="revolute"><parent link="base"/><child link="arm"/><axis xyz="0 0 1"/>
    <limit lower="-1" upper="1" effort="1" velocity="1"/></joint>
  <joint name="grip" type="prismatic"><parent link="arm"/><child link="finger"/><axis xyz="1 0 0"/>
    <limit lower="0" upper="0.1" effort="1" velocity="1"/></joint>
  <joint name="grip_twin" type="prismatic"><parent link="arm"/><child link="twin"/><axis xyz="-1 0 0"/>
    <limit lower="0" upper="0.1" effort="1" velocity="1"/><mimic joint="grip"/></joint>
</robot>"""


@pytest.fixture(scope="module")
def model():  # type: ignore[no-untyped-def]
    return load_model(FLOATING_URDF)


def _state(joints: list[JointState], name: str = "mobile") -> WorldState:
    return WorldState("w", stamp=Stamp(3, 4), model_states=[ModelState(name, joint_states=joints)])


GOOD = [
    JointState("float", (1.0, 2.0, 3.0, 0.0, 0.0, 0.6, 0.8), (0.1, 0.2, 0.3, 0.4, 0.5, 0.6)),
    JointState("shoulder", (0.5,), (-0.5,)),
    JointState("grip", (0.05,), (0.01,)),
    JointState("grip_twin", (0.05,), (0.01,)),
]


def test_check_state_accepts_a_matching_file(model) -> None:  # type: ignore[no-untyped-def]
    assert rp.check_state(_state(GOOD), model) == []


def test_check_state_lists_every_mismatch(model) -> None:  # type: ignore[no-untyped-def]
    bad = [JointState("float", (1.0, 2.0, 3.0), None), JointState("shoulder", (0.5,), (1.0, 2.0)),
           JointState("elbow", (0.1,))]
    problems = rp.check_state(_state(bad), model)
    text = "\n".join(problems)
    assert "'float' (floating) needs 7 positions, the file has 3" in text
    assert "'shoulder' (revolute) needs 1 velocities, the file has 2" in text
    assert "'elbow' is not in model 'mobile'" in text
    assert "'grip'" in text and "no positions" in text  # a moving joint left out
    assert "grip_twin" not in text  # a mimic follower may be left out
    assert rp.check_state(_state(GOOD, name="other"), model) == [
        "no model_state named 'mobile' (the file has 'other')"]


def test_joint_state_fields_use_moveit_sub_joints(model) -> None:  # type: ignore[no-untyped-def]
    f = rp.joint_state_fields(_state(GOOD), model)
    assert f.name == ["float/trans_x", "float/trans_y", "float/trans_z", "float/rot_x", "float/rot_y",
                      "float/rot_z", "float/rot_w", "shoulder", "grip"]
    assert f.position == [1.0, 2.0, 3.0, 0.0, 0.0, 0.6, 0.8, 0.5, 0.05]
    # the quaternion's w has no rate of its own: 0 there, the angular rates on rot_x..rot_z
    assert f.velocity == [0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.0, -0.5, 0.01]
    assert f.effort == []  # no torques in the file


def test_cdr_matches_rclpy() -> None:
    ser = pytest.importorskip("rclpy.serialization", reason="rclpy is not installed (run the tests through ./run test)")
    from sensor_msgs.msg import JointState as JointStateMsg
    from std_msgs.msg import String

    for text in ["", "a", "<world_state name=\"é\"/>", "x" * 1001]:
        assert rp.cdr_string(text) == bytes(ser.serialize_message(String(data=text)))
        assert rp.cdr_string_text(rp.cdr_string(text)) == text
    msg = JointStateMsg(name=["a", "bc"], position=[1.0, 2.0])
    msg.header.stamp.sec, msg.header.stamp.nanosec = 10, 999_999_000
    data = bytes(ser.serialize_message(msg))
    moved = ser.deserialize_message(rp.restamp_joint_state(data, 2_000_000), JointStateMsg)
    assert (moved.header.stamp.sec, moved.header.stamp.nanosec) == (11, 1_999_000)
    assert list(moved.name) == ["a", "bc"] and list(moved.position) == [1.0, 2.0]


def test_restamp_usdf() -> None:
    text = '<world_state name="w" version="1.0">\n  <stamp sec="1" nanosec="999999999"/>\n</world_state>'
    assert '<stamp sec="2" nanosec="1"/>' in rp.restamp_usdf(text, 2)
    assert rp.usdf_stamp_ns(rp.restamp_usdf(text, 2)) == 2 * 10**9 + 1
    assert rp.restamp_usdf("<world_state/>", 5) == "<world_state/>"


def _events(n: int, step_ns: int) -> list[rp.Event]:
    return [rp.Event(10**9 + i * step_ns, "world_state",
                     rp.cdr_string(f'<world_state name="w" version="1.0"><stamp sec="1" nanosec="{i * step_ns}"/>'
                                   "</world_state>")) for i in range(n)]


def test_player_offset_rate_loop() -> None:
    events = _events(10, 10_000_000)  # 0..90 ms
    got: list[tuple[float, int]] = []
    p = rp.Player(events, lambda t, d: got.append((time.monotonic(), rp.usdf_stamp_ns(rp.cdr_string_text(d)) or 0)),
                  rate=2.0, loop=True, start_offset=0.05)
    t0 = time.monotonic()
    p.start()
    deadline = time.monotonic() + 5
    while len(got) < 15 and time.monotonic() < deadline:
        time.sleep(0.005)
    p.stop()
    stamps = [s for _, s in got]
    # starts at 50 ms into the recording, then loops from the start with stamps shifted by 100 ms
    assert stamps[:5] == [10**9 + k * 10_000_000 for k in range(5, 10)]
    assert stamps[5:15] == [10**9 + 100_000_000 + k * 10_000_000 for k in range(10)]
    # the first event is due at once, the fifth 40 ms of recording = 20 ms of wall time later
    assert got[4][0] - got[0][0] == pytest.approx(0.020, abs=0.015)
    assert got[0][0] - t0 < 0.05


def test_player_pause_resume() -> None:
    events = _events(20, 10_000_000)
    got: list[float] = []
    p = rp.Player(events, lambda t, d: got.append(time.monotonic()))
    p.start()
    time.sleep(0.05)
    assert p.pause() and p.paused
    time.sleep(0.02)
    n = len(got)
    time.sleep(0.15)
    assert len(got) == n
    assert p.resume()
    assert p.wait(5)
    assert len(got) == 20 and p.published == 20
    assert not p.resume()


def test_player_rejects_bad_rate() -> None:
    with pytest.raises(ValueError):
        rp.Player([], lambda t, d: None, rate=0.0)


def test_player_after_first_holds_the_timeline() -> None:
    # the hook runs once, after the first message; the rest keeps its spacing from there on
    events = _events(5, 10_000_000)  # 0..40 ms
    got: list[float] = []
    calls: list[int] = []

    released: list[float] = []

    def hold() -> None:
        calls.append(len(got))
        time.sleep(0.2)
        released.append(time.monotonic())

    p = rp.Player(events, lambda t, d: got.append(time.monotonic()), after_first=hold, realtime=False)
    p.start()
    assert p.wait(5)
    assert calls == [1] and len(got) == 5
    assert got[1] - got[0] >= 0.2  # nothing went out while the hook held
    # the clock restarted when the hook returned: message 4 (40 ms after the first) is not due before
    # then + 40 ms (a lower bound: lateness cannot break it), rather than overdue at once
    assert got[4] >= released[0] + 0.040 - 0.0005


def test_directory_timeline_skips_unreadable_files_and_says_so(tmp_path: Path) -> None:
    from robot_state_format.model.loader import load_model_file
    from robot_state_format.usdf.types import JointState as UJ
    from robot_state_format.usdf.types import ModelState, Stamp, WorldState
    from robot_state_format.usdf.writer import write_world_state

    model = load_model_file(Path(__file__).resolve().parents[1] / "robot_state_format" / "samples"
                            / "double_pendulum.urdf")

    def state(i: int, joint: str = "joint B") -> str:
        return write_world_state(WorldState("w", stamp=Stamp(10, i), model_states=[ModelState(
            "linkage", joint_states=[UJ("joint A", (0.1 * i,)), UJ(joint, (0.2,))])]))

    (tmp_path / "a.usdf").write_text(state(1))
    (tmp_path / "b.usdf").write_text("<world_state name='torn'")  # not readable
    (tmp_path / "c.usdf").write_text(state(3, joint="joint Z"))  # does not fit the model
    (tmp_path / "d.usdf").write_text(state(4))
    notes: list[str] = []
    events = rp.timeline_from_directory(tmp_path, model, lambda t, f: b"JS", notes)
    assert [(e.t_ns - 10 * 10**9, e.topic) for e in events] == [
        (1, "world_state"), (1, "joint_states"), (3, "world_state"), (4, "world_state"), (4, "joint_states")]
    assert len(notes) == 2
    assert notes[0].startswith("b.usdf skipped: ")
    assert notes[1].startswith("c.usdf: no joint_states (does not fit model 'linkage': ") and "joint Z" in notes[1]
