"""TfPublisher in one process: topics, QoS and both static semantics (overwrite, replace)."""

from __future__ import annotations

import time

import pytest

pytest.importorskip("rclpy", reason="rclpy is not installed (run the tests through ./run test)")

from geometry_msgs.msg import TransformStamped
from rclpy.node import Node
from rclpy.qos import DurabilityPolicy, ReliabilityPolicy
from ros_harness import RosHarness
from tf2_msgs.msg import TFMessage

from robot_state_format.ros.qos import TF_QOS, TF_STATIC_LISTEN_QOS, TF_STATIC_QOS
from robot_state_format.ros.tf_publisher import TfPublisher, tf2_ros_available

BACKENDS = [
    "native",
    pytest.param("tf2_ros", marks=pytest.mark.skipif(not tf2_ros_available(), reason="tf2_ros is not installed")),
]


def tf(child: str, x: float, parent: str = "base") -> TransformStamped:
    t = TransformStamped()
    t.header.frame_id = parent
    t.child_frame_id = child
    t.transform.translation.x = x
    t.transform.rotation.w = 1.0
    return t


def xs(msg: TFMessage) -> list[tuple[str, float]]:
    return [(t.child_frame_id, t.transform.translation.x) for t in msg.transforms]


def test_unknown_backend_is_refused(ros: RosHarness) -> None:
    with pytest.raises(ValueError, match="backend"):
        TfPublisher(ros.node, backend="tf3")


@pytest.mark.parametrize("backend", BACKENDS)
def test_topics_and_qos(ros: RosHarness, backend: str) -> None:
    pub = TfPublisher(ros.node, backend=backend)
    pub.send_static(tf("s", 1.0))
    infos = {name: ros.node.get_publishers_info_by_topic(name) for name in ("/tf", "/tf_static")}
    assert len(infos["/tf"]) == 1 and len(infos["/tf_static"]) == 1
    dyn, static = infos["/tf"][0].qos_profile, infos["/tf_static"][0].qos_profile
    assert dyn.reliability == ReliabilityPolicy.RELIABLE
    assert dyn.durability == DurabilityPolicy.VOLATILE
    assert static.reliability == ReliabilityPolicy.RELIABLE
    assert static.durability == DurabilityPolicy.TRANSIENT_LOCAL
    assert infos["/tf"][0].topic_type == "tf2_msgs/msg/TFMessage"


@pytest.mark.parametrize("backend", BACKENDS)
def test_send_publishes_one_message_on_tf(ros: RosHarness, backend: str) -> None:
    pub = TfPublisher(ros.node, backend=backend)
    inbox = ros.subscribe("/tf", TFMessage, TF_QOS)
    ros.wait_for_matched(inbox.subscription)
    pub.send([tf("a", 1.5), tf("b", -2.0, parent="a")])
    pub.send(tf("a", 3.0))
    ros.spin_until(lambda: len(inbox) >= 2, what="two /tf messages")
    assert xs(inbox.messages[0]) == [("a", 1.5), ("b", -2.0)]
    assert inbox.messages[0].transforms[1].header.frame_id == "a"
    assert xs(inbox.messages[1]) == [("a", 3.0)]


@pytest.mark.parametrize("backend", BACKENDS)
def test_static_overwrites_by_child_frame(ros: RosHarness, backend: str) -> None:
    pub = TfPublisher(ros.node, backend=backend)
    pub.send_static([tf("a", 1.0), tf("b", 2.0)])
    pub.send_static(tf("a", 5.0))
    pub.send_static(tf("c", 3.0))
    assert [(t.child_frame_id, t.transform.translation.x) for t in pub.static_transforms] == [
        ("a", 5.0), ("b", 2.0), ("c", 3.0)]
    # A late joiner gets exactly one message: the whole accumulated set.
    (latched,) = ros.collect("/tf_static", TFMessage, TF_STATIC_QOS, count=1)
    assert sorted(xs(latched)) == [("a", 5.0), ("b", 2.0), ("c", 3.0)]
    ros.spin_for(0.2)  # nothing else is latched


@pytest.mark.parametrize("backend", BACKENDS)
def test_replace_static_drops_removed_frames_for_late_joiners(ros: RosHarness, backend: str) -> None:
    pub = TfPublisher(ros.node, backend=backend)
    pub.send_static([tf("a", 1.0), tf("b", 2.0), tf("c", 3.0)])
    pub.replace_static([tf("b", 7.0)])
    assert [t.child_frame_id for t in pub.static_transforms] == ["b"]
    late = ros.subscribe("/tf_static", TFMessage, TF_STATIC_QOS)
    ros.spin_until(lambda: len(late) >= 1, what="latched /tf_static")
    ros.spin_for(0.3)
    assert [xs(m) for m in late.messages] == [[("b", 7.0)]]
    pub.replace_static([])
    ros.spin_until(lambda: len(late) >= 2, what="emptied /tf_static")
    assert late.messages[-1].transforms == []
    # a joiner after the emptying gets the one empty latched message, none of the old frames
    (latched,) = ros.collect("/tf_static", TFMessage, TF_STATIC_QOS, count=1)
    assert latched.transforms == []
    ros.spin_for(0.2)


def test_listener_qos_keeps_every_broadcasters_latched_set(ros: RosHarness) -> None:
    """Two broadcasters (two robots' state_publishers), one late listener that reads after both sets
    arrived: ``TF_STATIC_LISTEN_QOS`` keeps both. (``/tf_static`` is keyless, so a keep-last-1 reader
    keeps one message across all writers and loses the other set for good: no broadcaster re-sends.)"""
    other = Node("second_broadcaster", context=ros.context)
    try:
        TfPublisher(ros.node, backend="native").send_static(tf("r1/a", 1.0))
        TfPublisher(other, backend="native").send_static(tf("r2/b", 2.0))
        late = ros.subscribe("/tf_static", TFMessage, TF_STATIC_LISTEN_QOS)
        time.sleep(1.0)  # both latched sets land in the reader before it is first taken from
        ros.spin_until(lambda: len(late) >= 2, what="both latched sets")
        assert sorted(x for m in late.messages for x in xs(m)) == [("r1/a", 1.0), ("r2/b", 2.0)]
    finally:
        other.destroy_node()


@pytest.mark.parametrize("backend", BACKENDS)
def test_send_serialized_arrives_as_the_same_message(ros: RosHarness, backend: str) -> None:
    from rclpy.serialization import serialize_message

    pub = TfPublisher(ros.node, backend=backend)
    sent = TFMessage(transforms=[tf("a", 1.25), tf("b", -0.5, parent="a")])
    sent.transforms[1].header.stamp.sec = 17
    sent.transforms[1].header.stamp.nanosec = 999_999_999
    sent.transforms[1].transform.rotation.z = 0.6
    sent.transforms[1].transform.rotation.w = 0.8
    data = serialize_message(sent)
    assert isinstance(data, bytes)
    inbox = ros.subscribe("/tf", TFMessage, TF_QOS)
    ros.wait_for_matched(inbox.subscription)
    pub.send_serialized(data)
    ros.spin_until(lambda: len(inbox) >= 1, what="the serialised /tf message")
    ros.spin_for(0.2)
    assert len(inbox) == 1
    assert inbox.messages[0] == sent
    assert xs(inbox.messages[0]) == [("a", 1.25), ("b", -0.5)]
    # it went out on the TfPublisher's one /tf writer, no second publisher was made
    assert len(ros.node.get_publishers_info_by_topic("/tf")) == 1
