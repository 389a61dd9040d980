"""ros2cli against the nodes started by `ros2 launch robot_state_format state_sharing.launch.py`.

One launch for the module (arm7 sample, namespace /cli, frame_prefix c/); then the real `ros2` commands:
`ros2 node list` (every name once: the state_publisher's TF helper node is not renamed by the launch
remap), `ros2 topic echo` of /tf_static and /cli/world_state, `ros2 param set`, `ros2 service call`, and
`./run ros2 pkg executables` (the run script's environment puts the package in the ament index).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import yaml
from repo_paths import REPO_ROOT
from ros_tools import require

require("rclpy", "ros2cli", "ros2topic", "ros2node", "ros2param", "ros2service", "ros2launch", "launch_ros",
        "rosidl_runtime_py", executables=("ros2",))

from ros_harness import RosHarness  # noqa: E402
from tf2_msgs.msg import TFMessage  # noqa: E402

from robot_state_format.model.loader import load_model  # noqa: E402
from robot_state_format.ros.qos import TF_STATIC_QOS  # noqa: E402
from robot_state_format.usdf.reader import read_world_state, read_world_state_file  # noqa: E402

ROOT = REPO_ROOT
SAMPLE = ROOT / "robot_state_format" / "samples" / "arm7_gripper.urdf"
ROS2 = str(Path(sys.executable).parent / "ros2")
# what the joint-state source sends: only measured state is shared, so world_state and saves need it
POSITIONS = {"joint1": 0.25, "joint2": -0.5, "joint3": 0.75, "joint4": -1.0, "joint5": 1.25, "joint6": -1.5,
             "joint7": 1.75, "finger_left_joint": 0.02}


def ros2(*args: str, timeout: float = 60.0) -> subprocess.CompletedProcess[str]:
    """Run the ros2 CLI with this session's ROS environment (domain, localhost, DDS profile)."""
    return subprocess.run([ROS2, *args], capture_output=True, text=True, timeout=timeout, env=dict(os.environ),
                          check=False)


class Launched:
    def __init__(self, ros: RosHarness, out: Path) -> None:
        self.ros = ros
        self.out = out


@pytest.fixture(scope="module")
def launched(ros_module: RosHarness, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Launched]:
    out = tmp_path_factory.mktemp("restart_files")
    ros_module.start_node("ros2", name="ros2-launch", args=[
        "launch", "robot_state_format", "state_sharing.launch.py", f"model:={SAMPLE}", "namespace:=cli",
        "frame_prefix:=c/", f"output_dir:={out}"])
    ros_module.start_node("joint_state_source", name="joint-source", args=[
        "--model", str(SAMPLE), "--positions", json.dumps(POSITIONS), "--rate", "20"], ros_args=["-r", "__ns:=/cli"])
    ros_module.wait_for_service("/cli/state_store/save", timeout=60.0)
    ros_module.wait_for_publisher("/cli/world_state", timeout=30.0)
    yield Launched(ros_module, out)


def test_node_list_names_each_node_once(launched: Launched) -> None:
    wanted = {"/cli/state_publisher", "/cli/state_store"}
    for _ in range(5):  # discovery within --spin-time; retried on a loaded machine
        result = ros2("node", "list", "--no-daemon", "--spin-time", "3")
        assert result.returncode == 0, result.stderr
        names = result.stdout.split()
        if wanted <= set(names):
            break
    assert wanted <= set(names), result.stdout
    assert len(names) == len(set(names)), f"duplicate node names: {names}"
    assert "share an exact name" not in result.stdout + result.stderr
    # the TF helper keeps its own name in the launch's namespace
    assert "/cli/state_publisher_tf_listener" in names


def echoed(stdout: str) -> list[Any]:
    """The messages ``ros2 topic echo`` printed. It ends every document with ``---``; a message-lost event
    (e.g. a latched depth-1 writer moved on while this reader was matching) is a document of its own,
    ``A message was lost!!!`` and its counts, which is not a message."""
    documents = [d for d in stdout.split("---\n") if d.strip()]
    messages = [yaml.safe_load(d) for d in documents if not d.startswith("A message was lost")]
    assert messages, stdout
    return messages


def test_topic_echo_tf_static_gives_the_fixed_joints(launched: Launched) -> None:
    result = ros2("topic", "echo", "--no-daemon", "--once", "--qos-durability", "transient_local", "--qos-reliability", "reliable",
                  "/tf_static", "tf2_msgs/msg/TFMessage", timeout=60.0)
    assert result.returncode == 0, result.stderr
    msg = echoed(result.stdout)[0]
    model = load_model(SAMPLE.read_bytes(), file=str(SAMPLE))
    fixed = {j.child: j for j in model.joints.values() if j.type.name == "FIXED"}
    got = {t["child_frame_id"]: t for t in msg["transforms"]}
    assert set(got) == {"c/" + child for child in fixed}
    for child, joint in fixed.items():
        t = got["c/" + child]
        assert t["header"]["frame_id"] == "c/" + joint.parent
        xyz = [t["transform"]["translation"][k] for k in "xyz"]
        np.testing.assert_allclose(xyz, (joint.origin @ joint.child_offset)[:3, 3], atol=1e-12, rtol=0)


def test_topic_echo_world_state(launched: Launched) -> None:
    result = ros2("topic", "echo", "--no-daemon", "--once", "--qos-durability", "transient_local", "--qos-reliability", "reliable",
                  "--full-length", "/cli/world_state", "std_msgs/msg/String", timeout=60.0)
    assert result.returncode == 0, result.stderr
    state = read_world_state(echoed(result.stdout)[0]["data"]).state
    assert [m.name for m in state.model_states] == ["arm7_gripper"]
    joints = {j.name: j.positions for j in state.model_states[0].joint_states}
    assert {name: joints[name] for name in POSITIONS} == {name: (value,) for name, value in POSITIONS.items()}
    assert state.stamp is not None  # when it was measured


def test_param_set_changes_the_published_frames(launched: Launched) -> None:
    for _ in range(3):  # "Node not found" when discovery took longer than --spin-time (loaded machine)
        result = ros2("param", "set", "--no-daemon", "--spin-time", "3", "/cli/state_publisher", "frame_prefix", "r1/")
        if "Node not found" not in result.stderr:
            break
    assert result.returncode == 0, result.stdout + result.stderr
    assert "Set parameter successful" in result.stdout
    latched = launched.ros.collect("/tf_static", TFMessage, TF_STATIC_QOS, count=1, timeout=20.0,
                                   predicate=lambda m: any(t.child_frame_id == "r1/hand" for t in m.transforms))
    assert {t.child_frame_id for t in latched[0].transforms} == {"r1/hand", "r1/tool_frame"}
    got = ros2("param", "get", "--no-daemon", "--spin-time", "3", "/cli/state_publisher", "frame_prefix")
    assert "r1/" in got.stdout, got.stdout + got.stderr


def test_service_call_save_writes_a_restart_file(launched: Launched) -> None:
    result = ros2("service", "call", "/cli/state_store/save", "std_srvs/srv/Trigger", timeout=60.0)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "success=True" in result.stdout, result.stdout
    saved = [p for p in launched.out.iterdir() if p.suffix == ".usdf"]
    assert len(saved) == 1 and str(saved[0]) in result.stdout
    state = read_world_state_file(saved[0]).state
    assert [m.name for m in state.model_states] == ["arm7_gripper"]
    joints = {j.name: j.positions for j in state.model_states[0].joint_states}
    assert {name: joints[name] for name in POSITIONS} == {name: (value,) for name, value in POSITIONS.items()}


def test_run_script_puts_the_package_in_the_ament_index() -> None:
    env: dict[str, Any] = {k: v for k, v in os.environ.items() if k != "AMENT_PREFIX_PATH"}
    result = subprocess.run([str(ROOT / "run"), "ros2", "pkg", "executables", "robot_state_format"],
                            capture_output=True, text=True, timeout=120, env=env, check=False)
    assert result.returncode == 0, result.stderr
    assert sorted(result.stdout.split("\n")[:-1]) == [
        "robot_state_format joint_state_source", "robot_state_format robot-state-format",
        "robot_state_format sim_bridge", "robot_state_format state_publisher", "robot_state_format state_store"]
