"""``robot-state-format view --live`` over real DDS: a state_publisher and a joint-state source under the namespace
/r1 (frame_prefix r1/), and the view subscribing to /r1 as state_store's ``sources`` takes it. The scene a
browser is given holds the robot (named after its namespace) at the published configuration, equal to
``fk --json`` to 1e-9, with its visuals from the received robot_description, and follows new joint states."""

from __future__ import annotations

import json
import re
import time
from typing import Any

import pytest
from repo_paths import REPO_ROOT
from ros_harness import RosHarness
from view_harness import assert_same_poses, cli, node_poses, served_messages, visual_names

pytest.importorskip("viser")
pytestmark = pytest.mark.timeout(300)

ROOT = REPO_ROOT
ARM7 = str(ROOT / "robot_state_format" / "samples" / "arm7_gripper.urdf")


def _expected(positions: str) -> dict[str, Any]:
    r = cli("fk", ARM7, "--positions", positions, "--json")
    assert r.returncode == 0, r.stderr
    frames = json.loads(r.stdout)["frames"]
    # the robot is named after its namespace (its joint frames by FK of the received model)
    return {"r1" + k[len("arm7_gripper"):]: v for k, v in frames.items()}


def _wait_for(port: int, expected: dict[str, Any], visuals: int | None = None,
              timeout: float = 90.0) -> list[dict[str, Any]]:
    """The scene once it shows ``expected`` (and, when given, that many visuals: they come from the
    robot_description, which may arrive after the first poses)."""
    deadline = time.monotonic() + timeout
    last: Exception | None = None
    while time.monotonic() < deadline:
        messages = served_messages(port)
        try:
            assert_same_poses(node_poses(messages), expected)
            if visuals is not None:
                names = visual_names(messages)
                assert len(names) == visuals, f"{len(names)} visuals, not {visuals}: {sorted(names)}"
            return messages
        except AssertionError as exc:
            last = exc
            time.sleep(0.5)
    raise AssertionError(f"the live view never showed the state: {last}")


def test_live_view_follows_the_robot(ros: RosHarness) -> None:
    ns = ["-r", "__ns:=/r1"]
    ros.start_node("state_publisher", {"model_file": ARM7, "frame_prefix": "r1/"}, ros_args=ns)
    first = '{"joint1": 0.5, "joint2": -0.4, "joint4": 1.1}'
    source = ros.start_node("robot-state-format", args=["joint-states", "--model", ARM7, "--positions", first],
                            ros_args=ns)
    view = ros.start_node("robot-state-format", args=["view", "--live", "--namespace", "r1", "--port", "0"])
    deadline = time.monotonic() + 60
    port = None
    while port is None and time.monotonic() < deadline:
        m = re.search(r"http://127\.0\.0\.1:(\d+)/", view.output())
        port = int(m.group(1)) if m else None
        ros.check_processes()
        time.sleep(0.2)
    assert port is not None, view.describe()
    messages = _wait_for(port, _expected(first), visuals=11)  # arm7's visuals, from the received robot_description
    assert len(visual_names(messages)) == 11
    assert source.stop() == 0
    second = '{"joint1": -0.7, "joint3": 0.9}'
    ros.start_node("robot-state-format", args=["joint-states", "--model", ARM7, "--positions", second], ros_args=ns)
    _wait_for(port, _expected(second))  # it moves
    assert view.stop() == 0
