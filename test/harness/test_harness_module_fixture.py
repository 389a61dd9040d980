"""The module-scoped harness fixture ``ros_module``: one harness and its node processes for a module."""

from __future__ import annotations

from typing import Any

import pytest
from repo_paths import TEST_DIR

pytest.importorskip("rclpy", reason="rclpy is not installed (run the tests through ./run test)")

from ros_harness import RosHarness
from tf2_msgs.msg import TFMessage

from robot_state_format.ros.qos import TF_STATIC_QOS

ECHO_NODE = str(TEST_DIR / "helpers" / "tf_echo_node.py")
SEEN: dict[str, Any] = {}


def test_a_node_started_in_one_test(ros_module: RosHarness) -> None:
    SEEN["harness"] = ros_module
    SEEN["proc"] = ros_module.start_node(ECHO_NODE, params={"parent_frame": "base", "static_frames": ["m1"]})
    (msg,) = ros_module.collect("/tf_static", TFMessage, TF_STATIC_QOS, count=1)
    assert [t.child_frame_id for t in msg.transforms] == ["m1"]


def test_still_runs_in_the_next_test(ros_module: RosHarness, ros: RosHarness) -> None:
    assert ros_module is SEEN["harness"] and ros is not ros_module
    proc = SEEN["proc"]
    assert proc.alive()
    (msg,) = ros_module.collect("/tf_static", TFMessage, TF_STATIC_QOS, count=1)  # a late joiner
    assert [t.child_frame_id for t in msg.transforms] == ["m1"]
    assert proc.stop() == 0 and proc.stopped_by == "SIGINT"
