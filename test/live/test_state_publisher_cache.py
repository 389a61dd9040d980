"""JointStateCache: the merge, mimic, stamp and bad-input rules of the state publisher (no ROS needed)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from robot_state_format.kinematics.tree import compile_model
from robot_state_format.live.joint_cache import JointStateCache
from robot_state_format.model.loader import load_model

S = 1_000_000_000
LIM = '<limit lower="-3" upper="3" effort="1" velocity="1"/>'
URDF = f"""<robot name="r">
 <link name="base"/><link name="a"/><link name="b"/><link name="c"/><link name="d"/><link name="tool"/>
 <link name="body"/>
 <joint name="ja" type="revolute"><parent link="base"/><child link="a"/><axis xyz="0 0 1"/>{LIM}</joint>
 <joint name="jb" type="revolute"><parent link="a"/><child link="b"/><axis xyz="0 1 0"/>{LIM}</joint>
 <joint name="jc" type="revolute"><parent link="b"/><child link="c"/><axis xyz="0 1 0"/>
   <mimic joint="jb" multiplier="2" offset="0.1"/>{LIM}</joint>
 <joint name="jd" type="prismatic"><parent link="c"/><child link="d"/><axis xyz="1 0 0"/>
   <mimic joint="jc" multiplier="-1"/>{LIM}</joint>
 <joint name="jt" type="fixed"><parent link="d"/><child link="tool"/></joint>
 <joint name="fl" type="floating"><parent link="base"/><child link="body"/></joint>
</robot>"""


@pytest.fixture()
def cache() -> JointStateCache:
    model = load_model(URDF)
    return JointStateCache(model, compile_model(model))


def sent(c: JointStateCache, up) -> list[str]:  # type: ignore[no-untyped-def]
    return sorted(c.tree.joint_names[i] for i in up.send)


def pos(c: JointStateCache) -> dict[str, list[float]]:
    return {k: [round(float(x), 12) for x in v] for k, v in c.tree.all_joint_positions(c.q).items()}


def test_partial_messages_merge_and_mimic_chain(cache: JointStateCache) -> None:
    up = cache.update(["ja"], [0.3], [], [], 1 * S, 1 * S)
    assert sent(cache, up) == ["ja"] and up.changed and up.stamp_ns == 1 * S
    up = cache.update(["jb"], [0.2], [0.5], [1.5], 2 * S, 2 * S)
    # jc = 2 * 0.2 + 0.1, jd = -jc: followers computed and sent with their leader
    assert sent(cache, up) == ["jb", "jc", "jd"]
    p = pos(cache)
    assert p["ja"] == [0.3] and p["jb"] == [0.2] and p["jc"] == [0.5] and p["jd"] == [-0.5]
    assert cache.joint_values("jb")[1].tolist() == [0.5] and cache.joint_values("jb")[2].tolist() == [1.5]
    # a follower named alone: its value is ignored, its transform is re-sent from the cached leader
    up = cache.update(["jc"], [99.0], [], [], 3 * S, 3 * S)
    assert sent(cache, up) == ["jc", "jd"] and pos(cache)["jc"] == [0.5]


def test_follower_without_leader_value_is_not_sent(cache: JointStateCache) -> None:
    up = cache.update(["jc"], [1.0], [], [], 1 * S, 1 * S)
    assert len(up.send) == 0 and not up.problems


def test_repeated_stamp_never_resent_and_throttle(cache: JointStateCache) -> None:
    assert sent(cache, cache.update(["ja"], [0.1], [], [], 5 * S, 5 * S)) == ["ja"]
    up = cache.update(["ja"], [0.2], [], [], 5 * S, 5 * S)
    assert len(up.send) == 0 and up.changed and cache.q[cache.tree.q_slice("ja")][0] == 0.2
    cache.publish_period_ns = S // 10
    assert len(cache.update(["ja"], [0.3], [], [], 5 * S + S // 20, 6 * S).send) == 0  # 50 ms < 100 ms
    assert sent(cache, cache.update(["ja"], [0.4], [], [], 5 * S + S // 10, 6 * S)) == ["ja"]
    # robot_state_publisher's rule: the least recently sent joint the message names decides; jb was never
    # sent, so the message goes out whole (ja too, 25 ms after its last stamp)
    assert sent(cache, cache.update(["ja", "jb"], [0.5, 0.1], [], [], 5 * S + S // 8, 6 * S)) == ["ja", "jb", "jc", "jd"]


def test_zero_stamp_uses_now(cache: JointStateCache) -> None:
    up = cache.update(["ja"], [0.1], [], [], 0, 7 * S)
    assert up.stamp_ns == 7 * S and sent(cache, up) == ["ja"]


def test_ignore_timestamp_lifts_the_throttle_and_keeps_message_stamps(cache: JointStateCache) -> None:
    cache.publish_period_ns = S  # 1 Hz: without ignore_timestamp only the first of these would go out
    cache.ignore_timestamp = True
    for k in range(3):
        up = cache.update(["ja"], [0.1 * k], [], [], 3 * S + k * 1000, 7 * S + k)
        assert up.stamp_ns == 3 * S + k * 1000 and sent(cache, up) == ["ja"]  # the message's stamp
    # a repeated stamp is still never re-sent (tf2 would log TF_REPEATED_DATA); the value is merged
    up = cache.update(["ja"], [0.9], [], [], 3 * S + 2000, 7 * S + 3)
    assert len(up.send) == 0 and pos(cache)["ja"] == [0.9]
    # a zero stamp still means now
    up = cache.update(["ja"], [0.4], [], [], 0, 8 * S)
    assert up.stamp_ns == 8 * S and sent(cache, up) == ["ja"]
    # the same messages with ignore_timestamp off: throttled to the first
    cache.ignore_timestamp = False
    assert sent(cache, cache.update(["jb"], [0.1], [], [], 9 * S, 9 * S)) == ["jb", "jc", "jd"]
    assert len(cache.update(["jb"], [0.2], [], [], 9 * S + 1000, 9 * S).send) == 0


def test_time_jump_backwards_resets(cache: JointStateCache) -> None:
    cache.update(["ja", "jb"], [0.3, 0.2], [], [], 100 * S, 100 * S)
    up = cache.update(["ja"], [0.1], [], [], 50 * S, 101 * S)  # bag loop
    assert up.reset is not None and "backwards" in up.reset
    assert sent(cache, up) == ["ja"]
    assert pos(cache)["jb"] == [0.0]  # reset to the neutral configuration
    up = cache.update(["ja"], [0.2], [], [], 0, 10 * S)  # node clock went back (simulation reset)
    assert up.reset is not None and "clock" in up.reset


def test_small_reordering_is_dropped_not_reset(cache: JointStateCache) -> None:
    cache.update(["ja"], [0.3], [], [], 10 * S, 10 * S)
    up = cache.update(["ja"], [0.9], [], [], 10 * S - S // 100, 10 * S)  # 10 ms older
    assert up.reset is None and len(up.send) == 0 and pos(cache)["ja"] == [0.3]


@pytest.mark.parametrize("names,p,v,e,key", [
    ([], [], [], [], "empty"),
    (["ja", "jb"], [0.1], [], [], "length-position"),
    (["ja"], [0.1], [1.0, 2.0], [], "length-velocity"),
    (["ja"], [0.1], [], [1.0, 2.0], "length-effort"),
    (["ja", "ja"], [0.1, 0.2], [], [], "duplicate"),
])
def test_malformed_messages_are_dropped(cache: JointStateCache, names, p, v, e, key) -> None:  # type: ignore[no-untyped-def]
    cache.update(["ja"], [0.5], [], [], 1 * S, 1 * S)
    up = cache.update(names, p, v, e, 2 * S, 2 * S)
    assert [pr.key for pr in up.problems] == [key] and len(up.send) == 0 and not up.changed
    assert pos(cache)["ja"] == [0.5]


def test_nonfinite_and_unknown_entries_are_dropped_rest_applied(cache: JointStateCache) -> None:
    cache.update(["ja", "jb"], [0.5, 0.4], [], [], 1 * S, 1 * S)
    up = cache.update(["ja", "jb", "nope"], [math.nan, 0.25, 1.0], [], [], 2 * S, 2 * S)
    keys = sorted(pr.key.split(":")[0] for pr in up.problems)
    assert keys == ["nonfinite", "unknown"]
    assert any("ja" in pr.text for pr in up.problems if pr.key == "nonfinite")
    assert pos(cache)["ja"] == [0.5] and pos(cache)["jb"] == [0.25]
    assert sent(cache, up) == ["jb", "jc", "jd"]
    up = cache.update(["ja"], [math.inf], [], [], 3 * S, 3 * S)
    assert len(up.send) == 0 and not up.changed


def test_floating_joint_from_named_sub_joints(cache: JointStateCache) -> None:
    names = [f"fl/{s}" for s in ("trans_x", "trans_y", "trans_z", "rot_x", "rot_y", "rot_z", "rot_w")]
    up = cache.update(names, [1, 2, 3, 0, 0, 2, 2], [0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 9.0], [], 1 * S, 1 * S)
    assert sent(cache, up) == ["fl"]
    h = math.sqrt(0.5)
    np.testing.assert_allclose(pos(cache)["fl"], [1, 2, 3, 0, 0, h, h], atol=1e-12, rtol=0)  # normalised
    np.testing.assert_allclose(cache.joint_values("fl")[1], [0.1, 0.2, 0.3, 0.4, 0.5, 0.6],
                               rtol=0, atol=1e-12)  # rot_w has no v
    up = cache.update(names[3:], [0, 0, 0, 0], [], [], 2 * S, 2 * S)  # zero quaternion: refused
    assert [pr.key for pr in up.problems] == ["quaternion"]
    np.testing.assert_allclose(pos(cache)["fl"], [1, 2, 3, 0, 0, h, h], atol=1e-12, rtol=0)


def test_model_change_keeps_values_and_never_resends_a_stamp(cache: JointStateCache) -> None:
    cache.update(["ja", "jb"], [0.3, 0.2], [0.1, 0.0], [], 100 * S, 100 * S)
    # the same model plus one link and a new joint jz (as a robot_description update)
    bigger = load_model(URDF.replace("</robot>", '<link name="z"/><joint name="jz" type="revolute"><parent '
                                     f'link="tool"/><child link="z"/><axis xyz="0 0 1"/>{LIM}</joint></robot>'))
    new = JointStateCache(bigger, compile_model(bigger))
    new.adopt(cache)
    assert pos(new)["ja"] == [0.3] and pos(new)["jb"] == [0.2] and pos(new)["jc"] == [0.5]
    assert new.joint_values("ja")[1].tolist() == [0.1]
    assert new.joint_has_value("ja") and not new.joint_has_value("jz")
    # the same message again (same stamp): nothing is re-sent (tf2 would log TF_REPEATED_DATA)
    up = new.update(["ja", "jb"], [0.3, 0.2], [], [], 100 * S, 101 * S)
    assert len(up.send) == 0 and up.reset is None
    # a newer stamp goes out; jz, never sent before, goes out with its first value
    assert sent(new, new.update(["ja", "jz"], [0.4, 1.0], [], [], 101 * S, 101 * S)) == ["ja", "jz"]


def test_non_finite_velocity_and_effort_are_dropped_with_a_warning(cache: JointStateCache) -> None:
    cache.update(["ja", "jb"], [0.1, 0.2], [1.0, 2.0], [3.0, 4.0], 1 * S, 1 * S)
    up = cache.update(["ja", "jb"], [0.1, 0.2], [math.nan, 5.0], [6.0, math.inf], 2 * S, 2 * S)
    keys = {p.key: p.text for p in up.problems}
    assert "ja" in keys["nonfinite_velocity"] and "jb" not in keys["nonfinite_velocity"]
    assert "jb" in keys["nonfinite_effort"] and "ja" not in keys["nonfinite_effort"]
    # the bad entries keep their old values, the good ones are taken
    assert cache.joint_values("ja")[1].tolist() == [1.0] and cache.joint_values("jb")[1].tolist() == [5.0]
    assert cache.joint_values("ja")[2].tolist() == [6.0] and cache.joint_values("jb")[2].tolist() == [4.0]


def test_ignore_timestamp_stamp_jump_keeps_values(cache: JointStateCache) -> None:
    # two publishers on different clocks (1000 s apart): with ignore_timestamp their joints both stay
    cache.ignore_timestamp = True
    cache.update(["ja"], [0.3], [], [], 1000 * S, 5 * S)
    up = cache.update(["jb"], [0.2], [], [], 5 * S, 5 * S + 1)
    assert up.reset is not None and "joint values kept" in up.reset
    assert sent(cache, up) == ["jb", "jc", "jd"]
    assert pos(cache)["ja"] == [0.3] and cache.joint_has_value("ja")
    # without ignore_timestamp the same jump resets the joint state (bag loop, simulation reset)
    cache.ignore_timestamp = False
    up = cache.update(["ja"], [0.1], [], [], 1000 * S, 5 * S + 2)
    up = cache.update(["jb"], [0.25], [], [], 5 * S, 5 * S + 3)
    assert up.reset is not None and "joint values kept" not in up.reset
    assert not cache.joint_has_value("ja")


def test_values_outside_the_limits_are_used_and_named(cache: JointStateCache) -> None:
    """ja and jb are limited to [-3, 3]: 4 is used as given, and a Problem names joint, value and limits
    (keyed by joint, so the node's throttled warning is per joint); in-limit values and the floating joint
    (no limits) raise nothing; a mimic follower's own value is ignored, so it is not checked."""
    up = cache.update(["ja", "jb"], [4.0, -3.0], [], [], 1 * S, 1 * S)
    assert pos(cache)["ja"] == [4.0] and pos(cache)["jb"] == [-3.0]
    assert [(p.key, p.text) for p in up.problems] == [
        ("limits:ja", "JointState value(s) outside the joint limits, used as given: "
                      "joint 'ja' = 4 is outside its limits [-3, 3]")]
    assert sent(cache, up) == ["ja", "jb", "jc", "jd"]
    up = cache.update(["jb", "ja"], [-3.5, 3.0], [], [], 2 * S, 2 * S)
    assert [p.key for p in up.problems] == ["limits:jb"] and "'jb' = -3.5" in up.problems[0].text
    up = cache.update(["ja", "jb", "jc", "fl/trans_x"], [2.9, 0.0, 50.0, 1e6], [], [], 3 * S, 3 * S)
    assert not up.problems
    # the same joints out again: the key is the pattern's, the text this message's own values (written when read,
    # after the next message has been merged)
    up1 = cache.update(["ja", "jb"], [4.5, -7.25], [], [], 4 * S, 4 * S)
    up2 = cache.update(["ja", "jb"], [5.0, -8.0], [], [], 5 * S, 5 * S)
    assert [p.key for p in up1.problems] == [p.key for p in up2.problems] == ["limits:ja,jb"]
    assert up1.problems[0].text == ("JointState value(s) outside the joint limits, used as given: "
                                    "joint 'ja' = 4.5 is outside its limits [-3, 3]; "
                                    "joint 'jb' = -7.25 is outside its limits [-3, 3]")
    assert "'ja' = 5 is" in up2.problems[0].text and "'jb' = -8 is" in up2.problems[0].text
