"""state_store configuration over real DDS: namespaced recording, the record parameter kept in step
with the services, integer values for double parameters, and refused values at start."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from optional import MCAP, needs

pytest.importorskip("rclpy", reason="rclpy is not installed (run the tests through ./run test)")

from rclpy.qos import DurabilityPolicy, HistoryPolicy, QoSProfile, ReliabilityPolicy
from ros_harness import RosHarness

from robot_state_format.recording import decode_all

LATCHED = QoSProfile(depth=1, history=HistoryPolicy.KEEP_LAST, reliability=ReliabilityPolicy.RELIABLE,
                     durability=DurabilityPolicy.TRANSIENT_LOCAL)
TEXT = '<world_state name="w" version="1.0"><stamp sec="7" nanosec="8"/></world_state>'


def _trigger(ros: RosHarness, node: str, name: str) -> Any:
    from std_srvs.srv import Trigger

    return ros.call(ros.wait_for_service(f"{node}/{name}", Trigger), Trigger.Request())


def _get(ros: RosHarness, node: str, name: str) -> Any:
    from rcl_interfaces.srv import GetParameters
    from rclpy.parameter import parameter_value_to_python

    client = ros.wait_for_service(f"{node}/get_parameters", GetParameters)
    return parameter_value_to_python(ros.call(client, GetParameters.Request(names=[name])).values[0])


def _set(ros: RosHarness, node: str, name: str, value: Any) -> Any:
    from rcl_interfaces.srv import SetParameters
    from rclpy.parameter import Parameter

    client = ros.wait_for_service(f"{node}/set_parameters", SetParameters)
    req = SetParameters.Request(parameters=[Parameter(name, value=value).to_parameter_msg()])
    return ros.call(client, req).results[0]


@needs(*MCAP)
def test_recording_under_a_namespace_keeps_the_namespaced_topics(ros: RosHarness, tmp_path: Path) -> None:
    from std_msgs.msg import String

    ros.start_node("state_store", {"output_dir": str(tmp_path), "record": True}, ros_args=["-r", "__ns:=/robot"])
    pub = ros.node.create_publisher(String, "/robot/world_state", LATCHED)
    ros.wait_for_matched(pub)
    pub.publish(String(data=TEXT))
    # the snapshot arrives and is recorded (chunks are flushed while recording); stopping closes the file
    ros.spin_until(lambda: bool(list(tmp_path.glob("*/*.mcap"))), 10, "a recording file")
    bag = next(tmp_path.glob("*_recording_*"))
    ros.spin_until(lambda: bool(decode_all(bag)), 10, "the snapshot in the recording")
    r = _trigger(ros, "/robot/state_store", "stop_recording")
    assert r.success, r.message
    assert [(t, m.data) for t, _, m in decode_all(bag)] == [("/robot/world_state", TEXT)]


@needs(*MCAP)
def test_record_parameter_follows_the_services(ros: RosHarness, tmp_path: Path) -> None:
    ros.start_node("state_store", {"output_dir": str(tmp_path)})
    node = "/state_store"
    assert _get(ros, node, "record") is False
    assert _trigger(ros, node, "start_recording").success
    assert _get(ros, node, "record") is True
    # the parameter now stops what the service started
    assert _set(ros, node, "record", False).successful
    r = _trigger(ros, node, "stop_recording")
    assert not r.success and r.message == "not recording"
    # and starts again; the service stops it and the parameter says so
    assert _set(ros, node, "record", True).successful
    assert _trigger(ros, node, "stop_recording").success
    assert _get(ros, node, "record") is False
    assert len(list(tmp_path.glob("*_recording_*"))) == 2


def test_integer_values_for_double_parameters_are_taken(ros: RosHarness, tmp_path: Path) -> None:
    ros.start_node("state_store", {"output_dir": str(tmp_path), "rate": 2, "checkpoint_period": 30,
                                   "start_offset": 0})
    assert _get(ros, "/state_store", "rate") == 2.0
    assert isinstance(_get(ros, "/state_store", "checkpoint_period"), float)


@pytest.mark.parametrize("params,says", [
    ({"rate": 0.0}, "rate"),
    ({"checkpoint_period": -1.0}, "checkpoint_period"),
    ({"keep_last": -2}, "keep_last"),
    ({"output_dir": " "}, "output_dir must not be empty"),
    ({"tf_source": "sometimes"}, "tf_source must be one of auto, recorded, computed, none"),
    ({"record_topics": ["/tf", " "]}, "record_topics must name at least one topic"),
])
def test_refused_values_at_start_exit_2_with_the_reason(ros: RosHarness, tmp_path: Path,
                                                        params: dict[str, Any], says: str) -> None:
    proc = ros.start_node("state_store", params)
    ros.spin_until(lambda: not proc.alive(), 20, "state_store to refuse its parameters")
    proc.stop()
    out = proc.output()
    assert proc.returncode == 2, out
    assert "state_store: error:" in out and says in out and "Traceback" not in out
