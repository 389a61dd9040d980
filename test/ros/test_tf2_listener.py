"""A real tf2_ros Buffer + TransformListener in another process sees every link where the project's FK puts it.

state_publisher processes (mimic joints: arm7_gripper; an SDFormat world with nested models; Drake's extra
joint types; each with its own frame_prefix) get JointStates of random configurations; the helper process
test/helpers/tf2_lookup_node.py looks every link up with tf2 at the JointState's stamp. Expected: the
project's own ``forward`` (root frame, or world for trees hanging from ``world``), within 1e-9. Then a live
model reload (``model_file`` set on the running node) to a floating-base robot with a mimic joint.
"""

from __future__ import annotations

import itertools
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from repo_paths import REPO_ROOT, TEST_DIR
from ros_tools import require

require("rclpy", "tf2_ros")

from rcl_interfaces.msg import Parameter, ParameterType, ParameterValue  # noqa: E402
from rcl_interfaces.srv import SetParameters  # noqa: E402
from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy, qos_profile_sensor_data  # noqa: E402
from ros_harness import RosHarness  # noqa: E402
from sensor_msgs.msg import JointState  # noqa: E402
from std_msgs.msg import String  # noqa: E402

from robot_state_format.kinematics.fk import forward  # noqa: E402
from robot_state_format.kinematics.tree import CompiledTree, compile_model  # noqa: E402
from robot_state_format.live.joint_cache import MULTI_DOF_NAMES  # noqa: E402
from robot_state_format.model.loader import load_model  # noqa: E402
from robot_state_format.model.types import WORLD, JointType, Model  # noqa: E402
from robot_state_format.spatial import quaternion_to_matrix  # noqa: E402

ROOT = REPO_ROOT
SAMPLES = ROOT / "robot_state_format" / "samples"
HELPER = TEST_DIR / "helpers" / "tf2_lookup_node.py"
QOS = QoSProfile(depth=50, reliability=ReliabilityPolicy.RELIABLE, durability=DurabilityPolicy.VOLATILE)
TOL = 1e-9
CONFIGS = 4  # random configurations per robot
LIM = '<limit lower="-2" upper="2" effort="1" velocity="1"/>'
FLOATING_URDF = f"""<robot name="floater">
 <link name="world"/><link name="torso"/><link name="leg_l"/><link name="leg_r"/><link name="foot"/>
 <joint name="float" type="floating"><parent link="world"/><child link="torso"/>
   <origin xyz="0.1 -0.2 0.3" rpy="0.1 0.2 0.3"/></joint>
 <joint name="hip_l" type="revolute"><parent link="torso"/><child link="leg_l"/><origin xyz="0 0.1 -0.2"/>
   <axis xyz="0 1 0"/>{LIM}</joint>
 <joint name="hip_r" type="revolute"><parent link="torso"/><child link="leg_r"/><origin xyz="0 -0.1 -0.2"/>
   <axis xyz="0 1 0"/><mimic joint="hip_l" multiplier="-1.5" offset="0.25"/>{LIM}</joint>
 <joint name="ankle" type="fixed"><parent link="leg_l"/><child link="foot"/>
   <origin xyz="0 0 -0.4" rpy="0 0.3 0"/></joint>
</robot>"""
ROBOTS = {  # namespace: (model file, frame_prefix)
    "arm": (SAMPLES / "arm7_gripper.urdf", "arm/"),
    "world": (SAMPLES / "nested_world.sdf", "w1/"),
    "drake": (SAMPLES / "drake_ext.urdf", "dx/"),
}


def random_q(model: Model, tree: CompiledTree, rng: np.random.Generator) -> np.ndarray:
    """A random configuration: each coordinate within its limits (or +-1.5), quaternions uniform."""
    q = tree.neutral()
    for name in tree.joint_names:
        joint = model.joints[name]
        if joint.type is JointType.FIXED or name in tree.mimic_followers:
            continue
        sl = tree.q_slice(name)
        n = sl.stop - sl.start
        lo, hi = -1.5, 1.5
        if joint.limits is not None and joint.limits.lower is not None and joint.limits.upper is not None \
                and joint.limits.lower < joint.limits.upper:
            lo, hi = joint.limits.lower, joint.limits.upper
        values = rng.uniform(lo, hi, n)
        if joint.type in (JointType.FLOATING, JointType.BALL):
            quat = rng.normal(size=4)
            values[n - 4:] = quat / np.linalg.norm(quat)
        q[sl] = values
    return q


def joint_state(model: Model, tree: CompiledTree, q: np.ndarray, stamp_ns: int) -> JointState:
    """The JointState of ``q``: one name per single-DOF joint, ``<joint>/<dof>`` for multi-DOF ones."""
    msg = JointState()
    msg.header.stamp.sec, msg.header.stamp.nanosec = divmod(stamp_ns, 1_000_000_000)
    for name in tree.joint_names:
        joint = model.joints[name]
        if joint.type is JointType.FIXED or name in tree.mimic_followers:
            continue
        values = q[tree.q_slice(name)]
        if joint.type in MULTI_DOF_NAMES:
            for suffix, index, _ in MULTI_DOF_NAMES[joint.type]:
                msg.name.append(f"{name}/{suffix}")
                msg.position.append(float(values[index]))
        else:
            msg.name.append(name)
            msg.position.append(float(values[0]))
    return msg


def expected_lookups(model: Model, tree: CompiledTree, q: np.ndarray, prefix: str) -> dict[str, dict[str, np.ndarray]]:
    """``{target frame: {link frame: X_target_link}}`` from the project's FK, for every link of the model.

    The target is the top of the link's TF tree: ``world`` when the chain of joints reaches it (the
    pose then from ``forward(world=True)``), else the topmost link (relative poses from ``forward``).
    """
    parent_of = {model.joints[j].child: model.joints[j].parent for j in tree.joint_names}
    local, world = forward(tree, q), forward(tree, q, world=True)
    out: dict[str, dict[str, np.ndarray]] = {}
    for link in tree.link_names:
        top = link
        while top in parent_of and parent_of[top] != WORLD:
            top = parent_of[top]
        if parent_of.get(top) == WORLD:
            out.setdefault(WORLD, {})[prefix + link] = world[tree.link_index(link)]
        elif top != link:
            x = np.linalg.inv(local[tree.link_index(top)]) @ local[tree.link_index(link)]
            out.setdefault(prefix + top, {})[prefix + link] = x
    return out


def as_matrix(v: list[float]) -> np.ndarray:
    x = np.eye(4)
    x[:3, :3] = quaternion_to_matrix(v[3:7])
    x[:3, 3] = v[:3]
    return x


class Rig:
    def __init__(self, ros: RosHarness) -> None:
        self.ros = ros
        self.ids = itertools.count(1)
        self.stamp_ns = 1_700_000_000 * 1_000_000_000
        self.replies = ros.subscribe("lookup_reply", String, QOS)
        self.requests = ros.node.create_publisher(String, "lookup_request", QOS)
        self.js_pubs = {ns: ros.node.create_publisher(JointState, f"/{ns}/joint_states", qos_profile_sensor_data)
                        for ns in ROBOTS}

    def check(self, ns: str, model: Model, tree: CompiledTree, q: np.ndarray, prefix: str) -> int:
        """Send ``q`` to node ``ns``; assert tf2's view of every link equals the FK. Returns the links checked."""
        self.stamp_ns += 1_000_000_000
        js = joint_state(model, tree, q, self.stamp_ns)
        expected = expected_lookups(model, tree, q, prefix)
        requests = {next(self.ids): (target, frames) for target, frames in expected.items()}
        texts = [json.dumps({"id": i, "target": target, "sources": sorted(frames), "stamp_ns": self.stamp_ns})
                 for i, (target, frames) in requests.items()]

        def send() -> None:
            self.js_pubs[ns].publish(js)
            for text in texts:
                self.requests.publish(String(data=text))

        def answered() -> dict[int, Any]:
            got = (json.loads(m.data) for m in self.replies.messages)
            return {r["id"]: r for r in got if r["id"] in requests}

        self.ros.spin_until(lambda: len(answered()) == len(requests), timeout=30.0,
                            what=f"tf2 lookups of {ns}", every=send)
        checked = 0
        for i, reply in answered().items():
            target, frames = requests[i]
            assert "error" not in reply, f"tf2 could not look up {target} <- ...: {reply.get('error')}"
            for frame, x_expected in frames.items():
                got = as_matrix(reply["transforms"][frame])
                err = np.abs(got - x_expected).max()
                assert err <= TOL, f"{ns}: {target} <- {frame}: tf2 differs from FK by {err:.3g}\n{got}\n{x_expected}"
                checked += 1
        return checked

    def set_model_file(self, ns: str, path: Path) -> None:
        client = self.ros.wait_for_service(f"/{ns}/state_publisher/set_parameters", SetParameters, timeout=20.0)
        req = SetParameters.Request(parameters=[Parameter(name="model_file", value=ParameterValue(
            type=ParameterType.PARAMETER_STRING, string_value=str(path)))])
        (result,) = self.ros.call(client, req, timeout=30.0).results
        assert result.successful, result.reason


@pytest.fixture(scope="module")
def rig(ros_module: RosHarness) -> Iterator[Rig]:
    ros_module.start_node(str(HELPER), name="tf2_lookup")
    for ns, (path, prefix) in ROBOTS.items():
        ros_module.start_node("state_publisher", name=ns, ros_args=["-r", f"__ns:=/{ns}"],
                              params={"model_file": str(path), "frame_prefix": prefix, "publish_frequency": 0.0})
    r = Rig(ros_module)
    ros_module.wait_for_matched(r.requests, timeout=30.0)
    for pub in r.js_pubs.values():
        ros_module.wait_for_matched(pub, timeout=30.0)
    yield r


@pytest.mark.parametrize("ns", list(ROBOTS))
def test_every_link_in_tf2_equals_fk(rig: Rig, ns: str) -> None:
    path, prefix = ROBOTS[ns]
    model = load_model(path.read_bytes(), file=str(path))
    tree = compile_model(model)
    rng = np.random.default_rng(sum(map(ord, ns)))
    checked = sum(rig.check(ns, model, tree, random_q(model, tree, rng), prefix) for _ in range(CONFIGS))
    # every link that is a joint's child is looked up once per configuration (a lone link has no TF edge)
    assert checked == CONFIGS * len(tree.joint_names)


def test_live_reload_to_a_floating_base_robot(rig: Rig, tmp_path: Path) -> None:
    path = tmp_path / "floater.urdf"
    path.write_text(FLOATING_URDF)
    model = load_model(FLOATING_URDF, file=str(path))
    tree = compile_model(model)
    assert model.joints["float"].type is JointType.FLOATING and set(tree.mimic_followers) == {"hip_r"}
    rig.set_model_file("arm", path)
    rng = np.random.default_rng(7)
    for _ in range(CONFIGS):
        # every link hangs from world here (through the floating joint): 4 lookups against "world"
        assert rig.check("arm", model, tree, random_q(model, tree, rng), "arm/") == 4
