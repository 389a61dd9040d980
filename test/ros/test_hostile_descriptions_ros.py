"""Hostile robot descriptions sent to running nodes over DDS (issue 25): a description received as a
parameter or on a topic is data. xacro in it is refused unless the node allows it; when allowed it runs
confined (no environment, no files, no processes). Whatever arrives, the node keeps its model, keeps
publishing TF, answers parameter calls, republishes nothing from its environment, and stops on SIGTERM.

The payload escapes xacro's expression sandbox (it runs ``os.system`` with plain ``xacro``, see
test_xacro_bounds.py) to create a marker file: the marker must never appear.
"""

from __future__ import annotations

import signal
import subprocess
import time
from pathlib import Path
from typing import Any

import pytest

rclpy = pytest.importorskip("rclpy", reason="rclpy is not installed (run the tests through ./run test)")

from rcl_interfaces.msg import Parameter, ParameterType, ParameterValue  # noqa: E402
from rcl_interfaces.srv import SetParameters  # noqa: E402
from rclpy.qos import DurabilityPolicy, HistoryPolicy, QoSProfile, ReliabilityPolicy  # noqa: E402
from ros_harness import NodeProcess, RosHarness  # noqa: E402
from sensor_msgs.msg import JointState  # noqa: E402
from std_msgs.msg import String  # noqa: E402
from tf2_msgs.msg import TFMessage  # noqa: E402

LATCHED = QoSProfile(depth=1, history=HistoryPolicy.KEEP_LAST, reliability=ReliabilityPolicy.RELIABLE,
                     durability=DurabilityPolicy.TRANSIENT_LOCAL)
SECRET = "s3cr3t-4f9e2b"
ROBOT = ('<robot name="arm"><link name="base"/><link name="arm"/><joint name="j" type="revolute">'
         '<parent link="base"/><child link="arm"/><origin xyz="0 0 1"/><axis xyz="0 0 1"/>'
         '<limit lower="-3" upper="3" effort="1" velocity="1"/></joint></robot>')
XACRO_NS = 'xmlns:xacro="http://www.ros.org/wiki/xacro"'


def escape(marker: Path) -> str:
    """xacro that runs a shell command through the module globals of xacro.load_yaml."""
    return (f'<robot {XACRO_NS} name="evil">\n'
            '  <xacro:property name="f" value="${xacro.load_yaml}"/>\n'
            "  <xacro:property name=\"d\" value=\"${python.vars(python.type(f))['__globals__']}\"/>\n"
            "  <xacro:property name=\"g\" value=\"${python.vars(python.type(d))['__get__'](d, f, None)}\"/>\n"
            f"  <link name=\"l${{g['os'].system('touch {marker}')}}\"/>\n</robot>\n")


def secret_xacro(link: str = "leak") -> str:
    """A valid robot whose link name holds the node's environment variable RSF_TEST_SECRET, if readable."""
    return (f'<robot {XACRO_NS} name="spy"><link name="base"/><link name="{link}_$(optenv RSF_TEST_SECRET none)"/>'
            f'<joint name="j" type="fixed"><parent link="base"/><child link="{link}_$(optenv RSF_TEST_SECRET none)"/>'
            '</joint></robot>')


def set_param(ros: RosHarness, node: str, name: str, value: str) -> Any:
    client = ros.wait_for_service(f"{node}/set_parameters", SetParameters, timeout=30.0)
    req = SetParameters.Request()
    req.parameters.append(Parameter(name=name, value=ParameterValue(type=ParameterType.PARAMETER_STRING,
                                                                     string_value=value)))
    return ros.call(client, req, timeout=30.0).results[0]


def tf_flows(ros: RosHarness, ns: str, child: str) -> None:
    """A JointState to ``ns`` gives the transform of ``child`` on /tf (the node publishes for its model)."""
    pub = ros.node.create_publisher(JointState, f"/{ns}/joint_states", 10)
    inbox = ros.subscribe("/tf", TFMessage, QoSProfile(depth=100, reliability=ReliabilityPolicy.RELIABLE))
    try:
        ros.wait_for_matched(pub, timeout=30.0)

        def send() -> None:
            msg = JointState(name=["j"], position=[0.5])
            msg.header.stamp = ros.node.get_clock().now().to_msg()
            pub.publish(msg)

        ros.spin_until(lambda: any(t.child_frame_id == child for m in inbox.messages for t in m.transforms),
                       timeout=30.0, what=f"/tf of {child} from {ns}", every=send, every_period=0.2)
    finally:
        ros.node.destroy_publisher(pub)
        ros.node.destroy_subscription(inbox.subscription)


STOP_BOUND_S = 10.0  # the harness's own grace before it escalates (docs/testing.md); the nodes wait <= 0.25 s


def stops_on_sigterm(proc: NodeProcess) -> None:
    proc.stopping = True
    start = time.monotonic()
    proc.proc.send_signal(signal.SIGTERM)
    try:
        code = proc.proc.wait(timeout=STOP_BOUND_S)
    except subprocess.TimeoutExpired:
        pytest.fail(f"still running {time.monotonic() - start:.1f} s after SIGTERM\n{proc.describe()}")
    assert code == 0, proc.describe()


def warned(proc: NodeProcess, text: str) -> bool:
    return text in proc.output()


@pytest.mark.timeout(300)
def test_state_publisher_never_runs_a_description_from_the_network(ros: RosHarness, tmp_path: Path) -> None:
    marker = tmp_path / "MARKER"
    env = {"RSF_TEST_SECRET": SECRET}
    pub_node = ros.start_node("state_publisher", {"robot_description": ROBOT, "frame_prefix": "hp/"},
                              ros_args=["-r", "__ns:=/hp"], env=env, name="publisher")
    topic_node = ros.start_node("state_publisher", {"robot_description": ROBOT, "frame_prefix": "ht/",
                                                    "use_robot_description_topic": True},
                                ros_args=["-r", "__ns:=/ht"], env={**env, "RSF_MAX_DOCUMENT_BYTES": "1000000"},
                                name="from-topic")
    # a parameter: refused, saying how to allow it; the latched description is still the start one
    result = set_param(ros, "/hp/state_publisher", "robot_description", escape(marker))
    assert not result.successful and "allow_xacro_descriptions" in result.reason
    result = set_param(ros, "/hp/state_publisher", "robot_description", secret_xacro())
    assert not result.successful and "allow_xacro_descriptions" in result.reason
    texts = ros.collect("/hp/robot_description", String, LATCHED, count=1, timeout=30.0)
    assert [m.data for m in texts] == [ROBOT]
    # the topic (use_robot_description_topic): refused with a warning, the model stays
    hostile = ros.node.create_publisher(String, "/ht/robot_description", LATCHED)
    ros.wait_for_matched(hostile, timeout=30.0)
    hostile.publish(String(data=escape(marker)))
    ros.spin_until(lambda: warned(topic_node, "allow_xacro_descriptions"), timeout=30.0, what="refusal warning")
    hostile.publish(String(data="<robot>" + "x" * 2_000_000 + "</robot>"))  # over its RSF_MAX_DOCUMENT_BYTES
    ros.spin_until(lambda: warned(topic_node, "RSF_MAX_DOCUMENT_BYTES"), timeout=30.0, what="size warning")
    assert warned(topic_node, "[XML_TOO_LARGE] ")  # docs/robustness.md's code, as for a file
    for ns in ("hp", "ht"):
        tf_flows(ros, ns, f"{ns}/arm")
    assert not marker.exists()
    assert set_param(ros, "/ht/state_publisher", "frame_prefix", "ht/").successful  # still answers
    for proc in (pub_node, topic_node):
        stops_on_sigterm(proc)
    assert SECRET not in pub_node.output() + topic_node.output()


@pytest.mark.timeout(300)
def test_allowed_xacro_runs_confined_and_bounded(ros: RosHarness, tmp_path: Path) -> None:
    marker = tmp_path / "MARKER"
    node = ros.start_node("state_publisher", {"robot_description": ROBOT, "frame_prefix": "hx/",
                                              "allow_xacro_descriptions": True},
                          ros_args=["-r", "__ns:=/hx"], name="allowed",
                          env={"RSF_TEST_SECRET": SECRET, "RSF_MAX_XACRO_CPU_SECONDS": "2"})
    result = set_param(ros, "/hx/state_publisher", "robot_description", escape(marker))
    assert not result.successful and "os.system is not allowed" in result.reason
    result = set_param(ros, "/hx/state_publisher", "robot_description",
                       f'<robot {XACRO_NS} name="cpu"><link name="l${{10**10**8}}"/></robot>')
    assert not result.successful and "RSF_MAX_XACRO_CPU_SECONDS" in result.reason
    tf_flows(ros, "hx", "hx/arm")  # the start model still publishes
    # a valid xacro is expanded, but $(optenv) sees no environment: the latched text holds no secret
    assert set_param(ros, "/hx/state_publisher", "robot_description", secret_xacro()).successful
    texts = ros.collect("/hx/robot_description", String, LATCHED, count=1, timeout=30.0)
    assert "leak_none" in texts[0].data and SECRET not in texts[0].data
    assert not marker.exists()
    stops_on_sigterm(node)


@pytest.mark.timeout(300)
def test_state_store_without_a_model_refuses_xacro_from_the_topic(ros: RosHarness, tmp_path: Path) -> None:
    marker = tmp_path / "MARKER"
    store = ros.start_node("state_store", {"output_dir": str(tmp_path / "out")}, ros_args=["-r", "__ns:=/hs"],
                           env={"RSF_TEST_SECRET": SECRET}, name="store")
    hostile = ros.node.create_publisher(String, "/hs/robot_description", LATCHED)
    ros.wait_for_matched(hostile, timeout=30.0)
    hostile.publish(String(data=escape(marker)))
    ros.spin_until(lambda: warned(store, "allow_xacro_descriptions"), timeout=30.0, what="refusal warning")
    client = ros.wait_for_service("/hs/state_store/set_parameters", SetParameters, timeout=30.0)
    req = SetParameters.Request()
    req.parameters.append(Parameter(name="keep_last", value=ParameterValue(type=ParameterType.PARAMETER_INTEGER,
                                                                           integer_value=3)))
    assert ros.call(client, req, timeout=30.0).results[0].successful
    assert not set_param(ros, "/hs/state_store", "robot_description", secret_xacro()).successful
    # the read-only switch cannot be turned on by a peer
    req = SetParameters.Request()
    req.parameters.append(Parameter(name="allow_xacro_descriptions",
                                    value=ParameterValue(type=ParameterType.PARAMETER_BOOL, bool_value=True)))
    assert not ros.call(client, req, timeout=30.0).results[0].successful
    assert not marker.exists()
    stops_on_sigterm(store)
    assert SECRET not in store.output()


def _children(pid: int, word: str) -> list[int]:
    """The processes whose parent is ``pid`` and whose command line holds ``word``."""
    out = []
    for entry in Path("/proc").iterdir():
        try:
            if entry.name.isdigit() and int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1]) == pid \
                    and word.encode() in (entry / "cmdline").read_bytes():
                out.append(int(entry.name))
        except (OSError, IndexError, ValueError):
            continue
    return out


def _alive(pid: int) -> bool:
    """``pid`` runs (a zombie waiting for its parent does not)."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except (OSError, IndexError):
        return False


@pytest.mark.timeout(300)
def test_sigterm_stops_a_node_waiting_for_a_xacro_expansion(ros: RosHarness) -> None:
    """The expansion runs off the executor: TF keeps flowing while it runs; SIGTERM ends the node and its
    child (whose own limits would let it run for 100 s)."""
    node = ros.start_node("state_publisher", {"robot_description": ROBOT, "frame_prefix": "hw/",
                                              "use_robot_description_topic": True, "allow_xacro_descriptions": True},
                          ros_args=["-r", "__ns:=/hw"], name="waiting",
                          env={"RSF_MAX_XACRO_CPU_SECONDS": "100", "RSF_MAX_XACRO_SECONDS": "200"})
    hostile = ros.node.create_publisher(String, "/hw/robot_description", LATCHED)
    ros.wait_for_matched(hostile, timeout=30.0)
    hostile.publish(String(data=f'<robot {XACRO_NS} name="cpu"><link name="l${{10**10**8}}"/></robot>'))
    children: list[int] = []
    ros.spin_until(lambda: bool(children.extend(_children(node.pid, "serve_stdio")) or children), timeout=30.0,
                   what="the xacro child process")
    tf_flows(ros, "hw", "hw/arm")  # while the child computes
    assert set_param(ros, "/hw/state_publisher", "frame_prefix", "hw/").successful
    stops_on_sigterm(node)
    ros.spin_until(lambda: not any(_alive(pid) for pid in children), timeout=30.0, what="the child's end")
    assert "CPU-time limit" not in node.output()  # ended with the node, not by its limit


@pytest.mark.timeout(300)
def test_a_model_file_set_at_runtime_is_read_as_data(ros: RosHarness, tmp_path: Path) -> None:
    """model_file set by a peer on the running node names a file on the node's disk: a xacro file is
    refused unless allowed, and when allowed its $(optenv) sees none of the node's environment."""
    start = tmp_path / "arm.urdf"
    start.write_text(ROBOT)
    spy = tmp_path / "spy.xacro"
    spy.write_text(secret_xacro())
    env = {"RSF_TEST_SECRET": SECRET}
    refusing = ros.start_node("state_publisher", {"model_file": str(start), "frame_prefix": "mr/"},
                              ros_args=["-r", "__ns:=/mr"], env=env, name="refusing")
    allowing = ros.start_node("state_publisher", {"model_file": str(start), "frame_prefix": "ma/",
                                                  "allow_xacro_descriptions": True},
                              ros_args=["-r", "__ns:=/ma"], env=env, name="allowing")
    store = ros.start_node("state_store", {"output_dir": str(tmp_path / "out"), "model_file": str(start)},
                           ros_args=["-r", "__ns:=/ms"], env=env, name="store")
    result = set_param(ros, "/mr/state_publisher", "model_file", str(spy))
    assert not result.successful and "allow_xacro_descriptions" in result.reason and str(spy) in result.reason
    result = set_param(ros, "/ms/state_store", "model_file", str(spy))
    assert not result.successful and "allow_xacro_descriptions" in result.reason
    texts = ros.collect("/mr/robot_description", String, LATCHED, count=1, timeout=30.0)
    assert [m.data for m in texts] == [ROBOT]  # the model stays
    tf_flows(ros, "mr", "mr/arm")
    # a file that is no model: the reply names the path and the line and code, never the file's text
    secret_file = tmp_path / "notes.urdf"
    secret_file.write_text(f'<robot name="r"><link name="a"/>\n<joint name="{SECRET}"/></robot>')
    result = set_param(ros, "/mr/state_publisher", "model_file", str(secret_file))
    assert not result.successful and f"{secret_file}:2: [URDF_" in result.reason and SECRET not in result.reason
    # allowed: expanded confined, the latched description holds no secret
    assert set_param(ros, "/ma/state_publisher", "model_file", str(spy)).successful
    texts = ros.collect("/ma/robot_description", String, LATCHED, count=1, timeout=30.0,
                        predicate=lambda m: "spy" in m.data)
    assert "leak_none" in texts[0].data and SECRET not in texts[0].data
    # a plain URDF set at runtime is read as before
    (tmp_path / "moved.urdf").write_text(ROBOT.replace('name="arm"', 'name="arm2"').replace('link="arm"', 'link="arm2"'))
    assert set_param(ros, "/mr/state_publisher", "model_file", str(tmp_path / "moved.urdf")).successful
    tf_flows(ros, "mr", "mr/arm2")
    for proc in (refusing, allowing, store):
        stops_on_sigterm(proc)
        assert SECRET not in proc.output()


@pytest.mark.timeout(300)
def test_long_text_parameters_are_refused_at_once(ros: RosHarness) -> None:
    """xacro_args is split as a shell would, in time that grows with the square of its length (2 MB once held
    the node's executor 38 s); frame_prefix and model_parent_frame go out with every transform. Past their
    bounds a peer's value is refused at once, in a line that does not repeat it, and TF flows on."""
    node = ros.start_node("state_publisher", {"robot_description": ROBOT, "frame_prefix": "lt/"},
                          ros_args=["-r", "__ns:=/lt"], name="long-text")
    huge = "x" * 2_000_000
    for name, bound in (("xacro_args", "RSF_MAX_XACRO_ARGS_CHARS"), ("frame_prefix", "RSF_MAX_FRAME_ID_CHARS"),
                        ("model_parent_frame", "RSF_MAX_FRAME_ID_CHARS")):
        start = time.monotonic()
        result = set_param(ros, "/lt/state_publisher", name, huge)
        assert time.monotonic() - start < 5.0, name
        assert not result.successful and bound in result.reason and len(result.reason) < 300, result.reason[:300]
    # a long malformed argument under the bound: refused, quoted only in part
    result = set_param(ros, "/lt/state_publisher", "xacro_args", "y" * 60_000)
    assert not result.successful and "60000 characters" in result.reason and len(result.reason) < 400, \
        result.reason[:400]
    tf_flows(ros, "lt", "lt/arm")
    assert huge[:1000] not in node.output() and "y" * 1000 not in node.output()
    stops_on_sigterm(node)
