"""The DDS test harness itself, over real processes: JointState in, /tf and /tf_static out."""

from __future__ import annotations

import math
import os
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from repo_paths import TEST_DIR

pytest.importorskip("rclpy", reason="rclpy is not installed (run the tests through ./run test)")

from geometry_msgs.msg import TransformStamped
from ros_harness import FASTDDS_PROFILE, HarnessTimeout, NodeProcessDied, RosHarness
from sensor_msgs.msg import JointState
from std_msgs.msg import String
from std_srvs.srv import Trigger
from tf2_msgs.msg import TFMessage

from robot_state_format.ros.qos import TF_QOS, TF_STATIC_QOS

HERE = TEST_DIR
ECHO_NODE = str(HERE / "helpers" / "tf_echo_node.py")
LATCHED = TF_STATIC_QOS


def by_child(msg: TFMessage) -> dict[str, TransformStamped]:
    return {t.child_frame_id: t for t in msg.transforms}


def test_environment_is_private_and_local() -> None:
    domain = int(os.environ["ROS_DOMAIN_ID"])
    assert 1 <= domain <= 100
    assert os.environ["ROS_AUTOMATIC_DISCOVERY_RANGE"] == "LOCALHOST"
    assert Path(os.environ["FASTDDS_DEFAULT_PROFILES_FILE"]) == FASTDDS_PROFILE
    ns = {"d": "http://www.eprosima.com"}
    ann = ET.parse(FASTDDS_PROFILE).getroot().find(".//d:initialAnnouncements", ns)
    assert ann is not None
    assert ann.findtext("d:count", namespaces=ns) == "20"
    assert ann.findtext("d:period/d:nanosec", namespaces=ns) == "100000000"
    # A second test run on this machine at the same time must get another domain.
    other = subprocess.run(
        [sys.executable, "-c", "import ros_harness; print(ros_harness.ros_domain_id())"],
        cwd=HERE, capture_output=True, text=True, check=True, env=dict(os.environ),
    )
    assert int(other.stdout) != domain


def test_joint_states_become_tf_in_another_process(ros: RosHarness) -> None:
    node = ros.start_node(ECHO_NODE, params={"parent_frame": "world", "static_frames": ["fixed_a"]})
    pub = ros.node.create_publisher(JointState, "joint_states", 10)
    tf_inbox = ros.subscribe("/tf", TFMessage, TF_QOS)
    ros.wait_for_subscriber("/joint_states")
    ros.wait_for_matched(pub)
    ros.wait_for_matched(tf_inbox.subscription)

    js = JointState(name=["j1", "j2"], position=[0.5, -1.25])
    js.header.stamp.sec = 7
    js.header.stamp.nanosec = 11
    # joint_states is best effort on the node's side: re-publish until the answer comes.
    ros.spin_until(lambda: len(tf_inbox) > 0, what="/tf after JointState", every=lambda: pub.publish(js))

    frames = by_child(tf_inbox.messages[0])
    assert sorted(frames) == ["j1", "j2"]
    j1, j2 = frames["j1"], frames["j2"]
    assert j1.header.frame_id == "world" and j2.header.frame_id == "world"
    assert (j1.header.stamp.sec, j1.header.stamp.nanosec) == (7, 11)
    assert j1.transform.translation.x == 0.5
    assert j2.transform.translation.x == -1.25
    # rotation of q about z: (0, 0, sin(q/2), cos(q/2))
    assert j1.transform.rotation.z == pytest.approx(math.sin(0.25), abs=1e-12, rel=0)
    assert j1.transform.rotation.w == pytest.approx(math.cos(0.25), abs=1e-12, rel=0)
    assert j2.transform.rotation.z == pytest.approx(math.sin(-0.625), abs=1e-12, rel=0)

    assert node.stop() == 0
    assert node.stopped_by == "SIGINT", node.describe()


def test_tf_static_reaches_late_joiners_and_keeps_one_set(ros: RosHarness) -> None:
    ros.start_node(ECHO_NODE, params={"parent_frame": "base", "static_frames": ["a", "b", "c"]})
    # description_echo is created after the static frames were sent: once it shows, we are late.
    ros.wait_for_publisher("/description_echo")
    ros.wait_for_publisher("/tf_static")

    (first,) = ros.collect("/tf_static", TFMessage, TF_STATIC_QOS, count=1)
    frames = by_child(first)
    assert sorted(frames) == ["a", "b", "c"]
    assert [frames[n].transform.translation.x for n in "abc"] == [1.0, 2.0, 3.0]
    assert all(t.header.frame_id == "base" for t in first.transforms)

    # Sending a frame again overwrites it: the latched set still has three frames.
    move = ros.wait_for_service("/tf_echo/move_first_static", Trigger)
    assert ros.call(move, Trigger.Request()).success
    (moved,) = ros.collect("/tf_static", TFMessage, TF_STATIC_QOS, count=1)
    assert len(moved.transforms) == 3
    assert {n: t.transform.translation.x for n, t in by_child(moved).items()} == {"a": 10.0, "b": 2.0, "c": 3.0}

    # replace_static drops the other frames, also for later joiners.
    keep = ros.wait_for_service("/tf_echo/keep_first_static", Trigger)
    assert ros.call(keep, Trigger.Request()).success
    (replaced,) = ros.collect("/tf_static", TFMessage, TF_STATIC_QOS, count=1)
    assert [(t.child_frame_id, t.transform.translation.x) for t in replaced.transforms] == [("a", 1.0)]


def test_params_file_keeps_xml_text_intact(ros: RosHarness) -> None:
    # What `-p robot_description:=...` would damage: ': ' in comments, ' #', newlines, > 128 KiB.
    filler = "".join(f'  <link name="l{i}"/>  <!-- note: link {i} # not a YAML comment -->\n' for i in range(3000))
    urdf = f'<?xml version="1.0"?>\n<robot name="r">\n{filler}</robot>\n'
    assert len(urdf) > 128 * 1024
    ros.start_node(ECHO_NODE, params={"description": urdf, "static_frames": ["x"]})
    (echo,) = ros.collect("/description_echo", String, LATCHED, count=1, timeout=20)
    assert echo.data == urdf


def test_node_that_dies_fails_the_wait_with_its_output(ros: RosHarness) -> None:
    ros.start_node("robot_state_format.no_such_module_for_harness_test")
    with pytest.raises(NodeProcessDied) as info:
        ros.wait_for_publisher("/never_published", timeout=30)
    assert "No module named robot_state_format.no_such_module_for_harness_test" in str(info.value)


def test_wait_for_absent_service_times_out(ros: RosHarness) -> None:
    with pytest.raises(HarnessTimeout, match="service /no_such_service"):
        ros.wait_for_service("/no_such_service", timeout=0.3)


def test_call_resends_when_the_server_reports_a_dropped_reply(ros: RosHarness) -> None:
    ros.start_node(str(HERE / "helpers" / "dropping_server.py"))
    client = ros.wait_for_service("/dropping_server/trigger", Trigger, timeout=30)
    assert ros.wait_for_service("/dropping_server/trigger", Trigger) is client  # one client per service
    reply = ros.call(client, Trigger.Request(), timeout=30)
    assert reply.message == "request 2"  # the first ran, its reply was lost, the second came back
    assert ros.call(client, Trigger.Request(), timeout=30).message == "request 3"
