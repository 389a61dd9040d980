"""Replay building blocks: CDR against rclpy's serializer, model checks, multi-DOF fields, the Player
(on a fake clock: exact wake-up times, no sleeping)."""

from __future__ import annotations

import os
import sys
import threading
from pathlib import Path

import pytest
from repo_paths import REPO_ROOT

from robot_state_format.model.loader import load_model
from robot_state_format.playback.clock import FakeClock
from robot_state_format.playback.fit import check_fit
from robot_state_format.playback.joint_arrays import joint_state_fields
from robot_state_format.playback.player import Player
from robot_state_format.playback.realtime import ProcessScheduling
from robot_state_format.playback.restamp import restamp_usdf, usdf_stamp_ns
from robot_state_format.playback.timeline import Event, timeline_from_directory
from robot_state_format.recording.cdr import cdr_string, cdr_string_text, restamp_joint_state
from robot_state_format.usdf.types import JointState, ModelState, Stamp, WorldState
from robot_state_format.usdf.writer import write_world_state

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


def test_fit_accepts_a_matching_file(model) -> None:  # type: ignore[no-untyped-def]
    fit = check_fit(_state(GOOD), model)
    assert fit.ok and fit.problems == []
    assert fit.fields == joint_state_fields(_state(GOOD), model)  # the arrays a replay publishes
    assert fit.fields.name[-2:] == ["shoulder", "grip"]


def test_replay_restart_gives_what_a_replay_publishes_once(model) -> None:  # type: ignore[no-untyped-def]
    from robot_state_format.playback.edges import replay_edges
    from robot_state_format.playback.restart_replay import Robot, replay_restart
    from robot_state_format.usdf.reader import read_world_state

    state = _state(GOOD)
    state.model_states[0].pose = (1.0, 0.0, 0.0, 0.0, 0.0, 0.0)  # the root link on /tf_static
    r = replay_restart(state, model, file="f.usdf")
    assert r.ok and r.problems == []
    assert r.joint_states == {"mobile": joint_state_fields(state, model)}
    assert r.joint_values == 9  # 7 sub-joints of the floating joint, shoulder, grip (the mimic twin left out)
    assert [(p, c) for p, c, _ in r.edges] == [(p, c) for p, c, _ in replay_edges(state, model)] == [
        ("world", "world_anchor")]
    assert read_world_state(r.text).state == state
    assert r.message == "replayed f.usdf: 9 joint values, 1 transforms, world_state"
    # a world of robots: each model_state onto its robot, the same arrays; one without a model refuses all
    w = replay_restart(state, {"mobile": Robot(model, "r1/")}, file="f.usdf")
    assert w.ok and w.joint_states == r.joint_states
    assert [(p, c) for p, c, _ in w.edges] == [("world", "r1/world_anchor")]  # the robot's frames prefixed
    assert w.message == "replayed f.usdf: 1 robots, 9 joint values, 1 transforms, world_state"
    refused = replay_restart(state, {"mobile": Robot(None, "r1/", "no model yet (why)")}, file="f.usdf")
    assert (refused.ok, refused.message, refused.joint_states, refused.edges, refused.text) == (
        False, "refused f.usdf: mobile: no model yet (why)", {}, [], "")


def test_replay_restart_refuses_a_file_that_does_not_fit(model) -> None:  # type: ignore[no-untyped-def]
    from robot_state_format.playback.restart_replay import replay_restart

    bad = _state([JointState("shoulder", (0.5,))])
    r = replay_restart(bad, model, file="f.usdf")
    assert not r.ok and r.problems == check_fit(bad, model).problems
    assert r.message == "refused f.usdf for model 'mobile': " + "; ".join(r.problems)
    assert (r.joint_states, r.edges, r.text) == ({}, [], "")  # nothing of a refused file is computed


def test_fit_lists_every_mismatch(model) -> None:  # type: ignore[no-untyped-def]
    bad = [JointState("float", (1.0, 2.0, 3.0), None), JointState("shoulder", (0.5,), (1.0, 2.0)),
           JointState("elbow", (0.1,))]
    fit = check_fit(_state(bad), model)
    assert not fit.ok
    assert fit.fields.name == []  # nothing to publish from a state that does not fit
    text = "\n".join(fit.problems)
    assert "floating joint needs 7 positions, got 3 (joint_state[name=float])" in text
    assert "revolute joint needs 1 velocities, got 2 (joint_state[name=shoulder])" in text
    assert "model 'mobile' has no joint 'elbow' (joint_state[name=elbow])" in text
    assert "no positions for moving joint(s) 'grip'" in text  # a moving joint left out
    assert "grip_twin" not in text  # a mimic follower may be left out
    assert check_fit(_state(GOOD, name="other"), model).problems == [
        "no model_state named 'mobile' (the file has 'other')"]


def test_fit_refuses_what_the_usdf_validator_refuses(model) -> None:  # type: ignore[no-untyped-def]
    # one validator: a floating joint whose quaternion is not unit length (|(0, 0, 0.6, 0.6)| = 0.6 * sqrt 2)
    joints = [JointState("float", (1.0, 2.0, 3.0, 0.0, 0.0, 0.6, 0.6)), *GOOD[1:]]
    assert check_fit(_state(joints), model).problems == [
        "quaternion (x y z w) has norm 0.848528137, not 1 (joint_state[name=float])"]


def test_joint_state_fields_use_moveit_sub_joints(model) -> None:  # type: ignore[no-untyped-def]
    f = joint_state_fields(_state(GOOD), model)
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
        assert cdr_string(text) == bytes(ser.serialize_message(String(data=text)))
        assert cdr_string_text(cdr_string(text)) == text
    msg = JointStateMsg(name=["a", "bc"], position=[1.0, 2.0])
    msg.header.stamp.sec, msg.header.stamp.nanosec = 10, 999_999_000
    data = bytes(ser.serialize_message(msg))
    moved = ser.deserialize_message(restamp_joint_state(data, 2_000_000), JointStateMsg)
    assert (moved.header.stamp.sec, moved.header.stamp.nanosec) == (11, 1_999_000)
    assert list(moved.name) == ["a", "bc"] and list(moved.position) == [1.0, 2.0]


def test_restamp_usdf_goes_through_the_writer() -> None:
    text = '<world_state name="w" version="1.0">\n  <stamp sec="1" nanosec="999999999"/>\n</world_state>'
    moved = restamp_usdf(text, 2)
    assert '<stamp sec="2" nanosec="1"/>' in moved
    assert usdf_stamp_ns(moved) == 2 * 10**9 + 1
    assert restamp_usdf(text, 0) is text  # no shift: the recorded text as it is
    assert restamp_usdf("<world_state/>", 5) == "<world_state/>"  # unreadable: played as recorded
    # every other element survives the round trip through the types
    full = write_world_state(WorldState("w", stamp=Stamp(7, 5), model_states=[ModelState("m", pose=(1, 2, 3, 0, 0, 0.5),
                                        joint_states=[JointState("j", (0.25,), (1.5,))])]))
    assert restamp_usdf(full, 10**9) == full.replace('<stamp sec="7" nanosec="5"/>', '<stamp sec="8" nanosec="5"/>')


def _events(n: int, step_ns: int) -> list[Event]:
    return [Event(10**9 + i * step_ns, "world_state",
                  cdr_string(f'<world_state name="w" version="1.0"><stamp sec="1" nanosec="{i * step_ns}"/>'
                             "</world_state>")) for i in range(n)]


T0 = 100.0  # the fake clock's start


def test_player_offset_rate_loop() -> None:
    events = _events(10, 10_000_000)  # 0..90 ms
    clock = FakeClock(T0)
    got: list[tuple[float, int]] = []

    def publish(topic: str, data: bytes) -> None:
        got.append((clock.now(), usdf_stamp_ns(cdr_string_text(data)) or 0))
        if len(got) == 15:
            p.stop()

    p = Player(events, publish, rate=2.0, loop=True, start_offset=0.05, clock=clock)
    p.start()
    assert p.wait(5)
    stamps = [s for _, s in got]
    # starts at 50 ms into the recording, then loops from the start with stamps shifted by 100 ms
    # (span 90 ms + one 10 ms step)
    assert stamps[:5] == [10**9 + k * 10_000_000 for k in range(5, 10)]
    assert stamps[5:15] == [10**9 + 100_000_000 + k * 10_000_000 for k in range(10)]
    # the first event at once; at rate 2 each 10 ms of recording is 5 ms on the clock; the second
    # pass starts 100 ms of recording (50 ms) after the first event of the recording, 25 ms after
    # the first played one (50 ms in)
    times = [t for t, _ in got]
    assert times[:5] == pytest.approx([T0 + 0.005 * j for j in range(5)], abs=1e-9, rel=0)
    assert times[5:15] == pytest.approx([T0 + 0.025 + 0.005 * i for i in range(10)], abs=1e-9, rel=0)


def test_player_pause_resume() -> None:
    events = _events(20, 10_000_000)
    clock = FakeClock(T0)
    got: list[float] = []
    paused = threading.Event()

    def publish(topic: str, data: bytes) -> None:
        got.append(clock.now())
        if len(got) == 5:
            assert p.pause() and p.paused
            paused.set()

    p = Player(events, publish, clock=clock)
    p.start()
    assert paused.wait(5)
    clock.advance(1.0)  # a second passes while paused: nothing goes out
    assert len(got) == 5 and p.running
    assert p.resume() and not p.paused
    assert p.wait(5)
    assert len(got) == 20 and p.published == 20
    # paused at 40 ms for one second: the rest of the timeline is that second later
    assert got[:5] == pytest.approx([T0 + 0.01 * i for i in range(5)], abs=1e-9, rel=0)
    assert got[5:] == pytest.approx([T0 + 1.0 + 0.01 * i for i in range(5, 20)], abs=1e-9, rel=0)
    assert not p.resume()


def test_player_rejects_bad_rate() -> None:
    with pytest.raises(ValueError):
        Player([], lambda t, d: None, rate=0.0)


def test_player_after_first_holds_the_timeline() -> None:
    # the hook runs once, after the first message; the rest keeps its spacing from there on
    events = _events(5, 10_000_000)  # 0..40 ms
    clock = FakeClock(T0)
    got: list[float] = []
    calls: list[int] = []

    def hold() -> None:  # e.g. waiting 200 ms for every subscriber to acknowledge the first message
        calls.append(len(got))
        clock.advance(0.2)

    p = Player(events, lambda t, d: got.append(clock.now()), after_first=hold, clock=clock)
    p.start()
    assert p.wait(5)
    assert calls == [1] and len(got) == 5
    # nothing went out while the hook held; the clock restarted when it returned: message k (10 k ms
    # after the first) is due 10 k ms after the release, not overdue at once
    assert got == pytest.approx([T0, T0 + 0.21, T0 + 0.22, T0 + 0.23, T0 + 0.24], abs=1e-9, rel=0)


def test_player_sleeps_exactly_until_each_message() -> None:
    # uneven steps (0, 3, 3, 10, 25 ms) at rate 0.5: each sleep ends at twice the recorded offset
    offsets_ms = [0, 3, 3, 10, 25]
    events = [Event(5 * 10**9 + ms * 1_000_000, "world_state", cdr_string("x")) for ms in offsets_ms]
    clock = FakeClock(T0)
    sent: list[tuple[int, float]] = []
    p = Player(events, lambda t, d: None, rate=0.5, clock=clock, sent=lambda topic, t, s: sent.append((t, s)))
    p.start()
    assert p.wait(5)
    assert [s for _, s in sent] == pytest.approx([T0 + 2 * ms / 1000 for ms in offsets_ms], abs=1e-9, rel=0)
    # one sleep per distinct later time, none for the repeated 3 ms
    assert [b for _, b in clock.sleeps] == pytest.approx([T0 + 0.006, T0 + 0.020, T0 + 0.050], abs=1e-9, rel=0)


def _policy_in_player(realtime: bool) -> tuple[int, str | None]:
    policy: list[int] = []
    p = Player(_events(1, 1), lambda t, d: policy.append(os.sched_getscheduler(0)), realtime=realtime,
               clock=FakeClock())
    p.start()
    assert p.wait(5)
    return policy[0], p.realtime_note


@pytest.mark.skipif(not hasattr(os, "sched_getscheduler"), reason="needs POSIX scheduling (Linux)")
def test_real_time_priority_only_when_asked() -> None:
    policy, note = _policy_in_player(False)
    assert policy == os.SCHED_OTHER and note is None  # the default: a thread like any other
    policy, note = _policy_in_player(True)
    assert (policy == os.SCHED_FIFO) != (note is not None)  # FIFO, or the reason it was refused


@pytest.mark.skipif(not hasattr(os, "sched_getscheduler"), reason="needs POSIX scheduling (Linux)")
def test_process_scheduling_is_restored() -> None:
    result: dict[str, object] = {}

    def run() -> None:  # on a thread of its own: the test runner's thread keeps its policy whatever happens
        before = (sys.getswitchinterval(), os.sched_getscheduler(0))
        sched = ProcessScheduling()
        sched.apply()
        result["during"] = (sys.getswitchinterval(), os.sched_getscheduler(0), sched.note, sched.applied)
        sched.restore()
        result["after"] = (sys.getswitchinterval(), os.sched_getscheduler(0), sched.applied)
        result["before"] = before

    t = threading.Thread(target=run)
    t.start()
    t.join(5)
    switch, policy = result["before"]  # type: ignore[misc]
    during_switch, during_policy, note, applied = result["during"]  # type: ignore[misc]
    assert during_switch == pytest.approx(0.0002, rel=0, abs=1e-12) and applied
    assert (during_policy == os.SCHED_FIFO) != (note is not None)
    assert result["after"] == (switch, policy, False)


def test_directory_timeline_skips_unreadable_files_and_says_so(tmp_path: Path) -> None:
    from robot_state_format.model.loader import load_model_file
    from robot_state_format.usdf.types import JointState as UJ
    from robot_state_format.usdf.types import ModelState, Stamp, WorldState
    from robot_state_format.usdf.writer import write_world_state

    model = load_model_file(REPO_ROOT / "robot_state_format" / "samples"
                            / "double_pendulum.urdf")

    def state(i: int, joint: str = "joint B") -> str:
        return write_world_state(WorldState("w", stamp=Stamp(10, i), model_states=[ModelState(
            "linkage", joint_states=[UJ("joint A", (0.1 * i,)), UJ(joint, (0.2,))])]))

    (tmp_path / "a.usdf").write_text(state(1))
    (tmp_path / "b.usdf").write_text("<world_state name='torn'")  # not readable
    (tmp_path / "c.usdf").write_text(state(3, joint="joint Z"))  # does not fit the model
    (tmp_path / "d.usdf").write_text(state(4))
    notes: list[str] = []
    events = timeline_from_directory(tmp_path, model, lambda t, f: b"JS", notes)
    assert [(e.t_ns - 10 * 10**9, e.topic) for e in events] == [
        (1, "world_state"), (1, "joint_states"), (3, "world_state"), (4, "world_state"), (4, "joint_states")]
    assert len(notes) == 2
    assert notes[0].startswith("b.usdf skipped: ")
    assert notes[1].startswith("c.usdf: no joint_states (does not fit model 'linkage': ") and "joint Z" in notes[1]
