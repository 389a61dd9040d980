"""A peer on the DDS domain sends descriptions that name the node's files (issue 33): each is refused in
one line, within 10 s, quoting nothing of any file; the node keeps its last good model and answers.

A secret file holds ``MARKER``, and so do the names of valid models outside the node's packages: the
marker must never appear in a SetParameters reason, on /rosout, in the node's output, on /tf_static,
``world_state`` or ``robot_description``.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import pytest

rclpy = pytest.importorskip("rclpy", reason="rclpy is not installed (run the tests through ./run test)")

from rcl_interfaces.msg import Log, Parameter, ParameterType, ParameterValue  # noqa: E402
from rcl_interfaces.srv import SetParameters  # noqa: E402
from rclpy.qos import DurabilityPolicy, HistoryPolicy, QoSProfile, ReliabilityPolicy  # noqa: E402
from ros_harness import Inbox, NodeProcess, RosHarness  # noqa: E402
from std_msgs.msg import String  # noqa: E402
from test_hostile_descriptions_ros import ROBOT, set_param, stops_on_sigterm, tf_flows  # noqa: E402
from tf2_msgs.msg import TFMessage  # noqa: E402

MARKER = "SECRETMARKER5519"
LATCHED = QoSProfile(depth=1, history=HistoryPolicy.KEEP_LAST, reliability=ReliabilityPolicy.RELIABLE,
                     durability=DurabilityPolicy.TRANSIENT_LOCAL)
ALL = QoSProfile(depth=1000, reliability=ReliabilityPolicy.RELIABLE, durability=DurabilityPolicy.TRANSIENT_LOCAL)
URDF_T = ('<robot name="{n}"><link name="{n}_base"/><link name="{n}_arm"/><joint name="{n}_j" type="revolute">'
          '<parent link="{n}_base"/><child link="{n}_arm"/><axis xyz="0 0 1"/>'
          '<limit lower="-1" upper="1" effort="1" velocity="1"/></joint></robot>')


def disk(tmp: Path) -> dict[str, Any]:
    """The node's disk: secrets and models outside any package, and one package ``goodpkg``."""
    out, pkg = tmp / "outside", tmp / "ws" / "goodpkg"
    out.mkdir()
    pkg.mkdir(parents=True)
    (out / "shadow").write_text(f"root:{MARKER}:19000:0:99999:7:::\n")
    (out / "robot.urdf").write_text(URDF_T.format(n=MARKER))
    (out / "robot.xml").write_text(f'<mujoco><worldbody><body name="{MARKER}"><geom size="1"/></body></worldbody>'
                                   "</mujoco>")
    (out / "mesh.obj").write_text("v 0 0 0\nv 1 0 0\nv 0 1 0\nf 1 2 3\n")
    (out / "m").mkdir()
    (out / "m" / "model.sdf").write_text(f'<sdf version="1.9"><model name="{MARKER}"><link name="{MARKER}_l"/>'
                                         "</model></sdf>")
    (out / "m" / "model.config").write_text("<model><sdf version='1.9'>model.sdf</sdf></model>")
    (pkg / "package.xml").write_text('<package format="3"><name>goodpkg</name></package>')
    (pkg / "arm.urdf").write_text(URDF_T.format(n="pkgarm"))
    (pkg / "leak.urdf").symlink_to(out / "robot.urdf")
    (pkg / "broken.urdf").write_text(f'<robot name="{MARKER}"><link name="{MARKER}"/><link name="{MARKER}"/></robot>')
    chain = ['<robot name="c"><link name="c0"/>'] + [
        f'<link name="c{i}"/><joint name="cj{i}" type="fixed"><parent link="c{i - 1}"/><child link="c{i}"/></joint>'
        for i in range(1, 40)]
    (pkg / "c40.urdf").write_text("".join(chain) + "</robot>")
    return {"out": out, "env": {"ROS_PACKAGE_PATH": str(tmp / "ws"), "RSF_MAX_LINKS": "100"}}


def hostile(out: Path) -> list[str]:
    def dmd(key: str, uri: str) -> str:
        return (f"directives:\n- add_directives:\n    file: {uri}\n" if key == "d"
                else f"directives:\n- add_model:\n    name: m\n    file: {uri}\n")

    def sdf(uri: str) -> str:
        return f'<sdf version="1.9"><world name="w"><include><uri>{uri}</uri></include></world></sdf>'

    return [dmd("d", f"file://{out}/shadow"), dmd("m", f"file://{out}/robot.urdf"),
            dmd("m", "package://goodpkg/../../outside/robot.urdf"), dmd("m", "package://goodpkg/leak.urdf"),
            dmd("m", "model://goodpkg/../../outside/robot.urdf"),
            f'<mujoco><include file="{out}/robot.xml"/></mujoco>', '<mujoco><include file="outside/robot.xml"/></mujoco>',
            f'<mujoco><worldbody><flexcomp name="f" type="mesh" file="{out}/mesh.obj" dim="2"/></worldbody></mujoco>',
            sdf(f"file://{out}/m"), sdf(str(out / "m")), sdf("outside/m"), sdf("model://m"),
            sdf("package://goodpkg/../../outside/m")]


def refused_in_one_line(ros: RosHarness, node: str, text: str, code: str) -> str:
    start = time.monotonic()
    result = set_param(ros, node, "robot_description", text)
    assert time.monotonic() - start < 10.0
    assert not result.successful
    assert code in result.reason, result.reason
    assert "\n" not in result.reason and MARKER not in result.reason
    return str(result.reason)


def no_marker(proc: NodeProcess, *inboxes: Inbox) -> None:
    assert MARKER not in proc.output()
    for inbox in inboxes:
        for msg in inbox.messages:
            assert MARKER not in str(msg), inbox.topic


@pytest.mark.timeout(400)
def test_state_publisher_refuses_every_file_a_peer_names(ros: RosHarness, tmp_path: Path) -> None:
    d = disk(tmp_path)
    rosout = ros.subscribe("/rosout", Log, ALL)
    static = ros.subscribe("/tf_static", TFMessage, LATCHED)
    world = ros.subscribe("/fa/world_state", String, LATCHED)
    desc = ros.subscribe("/fa/robot_description", String, LATCHED)
    node = ros.start_node("state_publisher", {"robot_description": ROBOT, "frame_prefix": "fa/"},
                          ros_args=["-r", "__ns:=/fa"], env=d["env"], name="files")
    for text in hostile(d["out"]):
        refused_in_one_line(ros, "/fa/state_publisher", text, "MODEL_FILE_REFUSED")
    # a package file that does not load: its code and file, never its text
    reason = refused_in_one_line(ros, "/fa/state_publisher",
                                 "directives:\n- add_model:\n    name: m\n    file: package://goodpkg/broken.urdf\n",
                                 "URDF_DUPLICATE_LINK")
    assert "withheld" in reason
    # more than RSF_MAX_LINKS (100 in this node) links through three add_models of one 40-link file
    fan = "directives:\n" + "".join(f"- add_model:\n    name: m{i}\n    file: package://goodpkg/c40.urdf\n"
                                    for i in range(3))
    refused_in_one_line(ros, "/fa/state_publisher", fan, "RSF_MAX_LINKS")
    # the peer cannot widen the policy
    client = ros.wait_for_service("/fa/state_publisher/set_parameters", SetParameters, timeout=30.0)
    req = SetParameters.Request()
    req.parameters.append(Parameter(name="description_files", value=ParameterValue(
        type=ParameterType.PARAMETER_STRING, string_value="any")))
    assert not ros.call(client, req, timeout=30.0).results[0].successful
    tf_flows(ros, "fa", "fa/arm")  # the last good model still publishes
    # a package:// model on the package path is what a peer may load
    ok = "directives:\n- add_model:\n    name: m\n    file: package://goodpkg/arm.urdf\n"
    assert set_param(ros, "/fa/state_publisher", "robot_description", ok).successful
    ros.spin_until(lambda: any(m.data == ok for m in desc.messages), timeout=30.0, what="the package model")
    ros.spin_until(lambda: "2 links" in node.output().rsplit("description refused", 1)[-1], timeout=30.0,
                   what="the package model loaded")
    ros.spin_for(1.0)
    stops_on_sigterm(node)
    no_marker(node, rosout, static, world, desc)


@pytest.mark.timeout(400)
def test_state_store_refuses_files_named_on_the_topic_and_as_parameters(ros: RosHarness, tmp_path: Path) -> None:
    d = disk(tmp_path)
    rosout = ros.subscribe("/rosout", Log, ALL)
    world = ros.subscribe("/sa/world_state", String, LATCHED)
    store = ros.start_node("state_store", {"output_dir": str(tmp_path / "store")}, ros_args=["-r", "__ns:=/sa"],
                           env=d["env"], name="store-files")
    hostile_pub = ros.node.create_publisher(String, "/sa/robot_description", LATCHED)
    ros.wait_for_matched(hostile_pub, timeout=30.0)
    texts = hostile(d["out"])
    for text in texts[:3]:
        hostile_pub.publish(String(data=text))
        ros.spin_for(0.5)
    ros.spin_until(lambda: "MODEL_FILE_REFUSED" in store.output(), timeout=30.0, what="refusal warning")
    for text in texts[5:8]:
        refused_in_one_line(ros, "/sa/state_store", text, "MODEL_FILE_REFUSED")
    client = ros.wait_for_service("/sa/state_store/set_parameters", SetParameters, timeout=30.0)
    req = SetParameters.Request()
    req.parameters.append(Parameter(name="keep_last", value=ParameterValue(type=ParameterType.PARAMETER_INTEGER,
                                                                           integer_value=3)))
    assert ros.call(client, req, timeout=30.0).results[0].successful  # still answers
    req = SetParameters.Request()
    req.parameters.append(Parameter(name="description_files", value=ParameterValue(
        type=ParameterType.PARAMETER_STRING, string_value="any")))
    assert not ros.call(client, req, timeout=30.0).results[0].successful
    ros.spin_for(1.0)
    stops_on_sigterm(store)
    no_marker(store, rosout, world)


@pytest.mark.timeout(400)
def test_a_5000_link_chain_loads_in_the_node(ros: RosHarness, tmp_path: Path) -> None:
    n = 5000
    chain = ['<robot name="deep"><link name="l0"/>'] + [
        f'<link name="l{i}"/><joint name="j{i}" type="fixed"><parent link="l{i - 1}"/><child link="l{i}"/>'
        f'<origin xyz="0.001 0 0"/></joint>' for i in range(1, n)]
    static = ros.subscribe("/tf_static", TFMessage, LATCHED)
    node = ros.start_node("state_publisher", {"robot_description": ROBOT, "frame_prefix": "dc/"},
                          ros_args=["-r", "__ns:=/dc"], name="deep")
    result = set_param(ros, "/dc/state_publisher", "robot_description", "".join(chain) + "</robot>")
    assert result.successful, result.reason
    ros.spin_until(lambda: any(t.child_frame_id == f"dc/l{n - 1}" for m in static.messages for t in m.transforms),
                   timeout=60.0, what="the last link of the chain on /tf_static")
    assert "Recursion" not in node.output()
    stops_on_sigterm(node)


def _trigger(ros: RosHarness, service: str) -> Any:
    from std_srvs.srv import Trigger

    return ros.call(ros.wait_for_service(service, Trigger, timeout=30.0), Trigger.Request(), timeout=30.0)


def secret_files(out: Path) -> dict[str, Path]:
    """Files of the node's disk a stranger names in a file parameter: each holds MARKER where a reader's
    error would quote it (a root tag, a joint name, an MCAP file's first bytes)."""
    files = {"xml": out / "config.xml", "usdf": out / "state.usdf", "text": out / "notes.txt"}
    files["xml"].write_text(f"<{MARKER}><password>x</password></{MARKER}>\n")
    files["usdf"].write_text(f'<world_state name="w" version="1.0"><model_state name="arm"><joint_state name="{MARKER}">'
                             "<positions>0.5</positions></joint_state></model_state></world_state>\n")
    files["text"].write_text(f"{MARKER} and more text\n")
    return files


@pytest.mark.timeout(300)
def test_file_parameters_set_on_the_running_store_quote_nothing_of_the_file(ros: RosHarness, tmp_path: Path) -> None:
    """replay_file and playback_path set by a peer name files of the node's disk: the answers say the path and
    the error's code, never the file's words; the same files given at start get the whole error."""
    d = disk(tmp_path)
    files = secret_files(d["out"])
    rosout = ros.subscribe("/rosout", Log, ALL)
    store = ros.start_node("state_store", {"robot_description": ROBOT, "output_dir": str(tmp_path / "o")},
                           ros_args=["-r", "__ns:=/pf"], name="peer-files")
    answers = []
    for name, service in (("replay_file", "replay"), ("playback_path", "play")):
        for f in files.values():
            assert set_param(ros, "/pf/state_store", name, str(f)).successful
            r = _trigger(ros, f"/pf/state_store/{service}")
            assert not r.success and str(f) in r.message, r.message
            answers.append(r.message)
    assert not [a for a in answers if MARKER in a], answers
    assert any("[USDF_ROOT]" in a for a in answers) and any("details withheld" in a for a in answers), answers
    assert store.alive()
    stops_on_sigterm(store)
    no_marker(store, rosout)
    # the user's own paths (given at start): the whole error, which names what the file holds
    own = ros.start_node("state_store", {"robot_description": ROBOT, "output_dir": str(tmp_path / "o"),
                                         "replay_file": str(files["usdf"])},
                         ros_args=["-r", "__ns:=/own"], name="own-files")
    r = _trigger(ros, "/own/state_store/replay")
    assert not r.success and MARKER in r.message, r.message
    stops_on_sigterm(own)


@pytest.mark.timeout(300)
def test_a_restart_file_set_on_the_running_sim_bridge_quotes_nothing_of_the_file(ros: RosHarness,
                                                                                 tmp_path: Path) -> None:
    pytest.importorskip("mujoco", reason="the mujoco package is not installed")
    model = tmp_path / "arm.urdf"
    model.write_text(ROBOT)
    files = secret_files(tmp_path)
    bridge = ros.start_node("sim_bridge", {"model_file": str(model), "paused": True, "world_state_frequency": 0.0},
                            ros_args=["-r", "__ns:=/sb"], name="bridge")
    answers = []
    for f in files.values():
        assert set_param(ros, "/sb/sim_bridge", "restart_file", str(f)).successful
        r = _trigger(ros, "/sb/sim_bridge/restart")
        assert not r.success and str(f) in r.message, r.message
        answers.append(r.message)
    assert not [a for a in answers if MARKER in a], answers
    assert any("[USDF_ROOT]" in a for a in answers), answers
    assert bridge.alive() and MARKER not in bridge.output()
    stops_on_sigterm(bridge)
