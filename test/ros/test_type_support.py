"""ros/type_support.py: message type support without rosidl_generator_py's code generator, in a fresh process
(the light package must be in place before any message type support is imported)."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest
from repo_paths import REPO_ROOT

pytest.importorskip("rclpy", reason="rclpy is not installed (run the tests through ./run test)")

ROOT = REPO_ROOT

SCRIPT = """
import sys
from robot_state_format.ros.type_support import light_rosidl_generator_py
assert light_rosidl_generator_py()
assert not light_rosidl_generator_py()  # once only
import rclpy
from rclpy.node import Node
from rclpy.serialization import deserialize_message, serialize_message
from sensor_msgs.msg import JointState
rclpy.init(args=[])
node = Node("type_support_check", start_parameter_services=True)
pub = node.create_publisher(JointState, "js", 10)
msg = JointState(name=["a"], position=[1.5])
assert list(deserialize_message(serialize_message(msg), JointState).position) == [1.5]
print("parser before:", "rosidl_parser.parser" in sys.modules, "lark" in sys.modules)
import rosidl_generator_py
print("generate_py:", callable(rosidl_generator_py.generate_py), "rosidl_parser.parser" in sys.modules)
node.destroy_node()
rclpy.shutdown()
"""


def test_nodes_and_messages_work_without_the_code_generator_which_still_loads_on_demand() -> None:
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in (str(ROOT), os.environ.get("PYTHONPATH", "")) if p))
    out = subprocess.run([sys.executable, "-c", SCRIPT], capture_output=True, text=True, env=env, timeout=120)
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    assert "parser before: False False" in lines  # a node, a publisher, (de)serialisation: no parser, no lark
    assert "generate_py: True True" in lines  # the real package behind any other name
