"""The plain-float path of short name lists (ros/publisher_scalar.py, JointStateCache.merge_values) against the numpy
path it stands in for: the same /tf bytes as TfWriter over random configurations inside, near and far outside
the limits (KDL's signs included), the same cache after the same messages, and the lists it takes."""

from __future__ import annotations

import numpy as np
import pytest
from real_robots import romeo_urdf
from repo_paths import REPO_ROOT

pytest.importorskip("rclpy", reason="rclpy is not installed (run the tests through ./run test)")

from rclpy.serialization import serialize_message
from sensor_msgs.msg import JointState
from test_state_publisher_pose import CHAIN
from tie_models import TIES

from robot_state_format.model.loader import load_model
from robot_state_format.ros.description import LoadedDescription
from robot_state_format.ros.publisher_runtime import Runtime
from robot_state_format.ros.publisher_scalar import SCALAR_MAX
from robot_state_format.ros.publisher_wire import JointStateReader

SAMPLES = REPO_ROOT / "robot_state_format" / "samples"


def _small_models() -> list[tuple[str, str, list[str] | None]]:
    out: list[tuple[str, str, list[str] | None]] = [
        ("mimic", CHAIN.replace('<mimic joint="jc" multiplier="0.5"/>', '<mimic joint="jb" multiplier="0.5"/>'), None),
        ("arm7_gripper", (SAMPLES / "arm7_gripper.urdf").read_text(), None), ("ties", TIES, None)]
    p = romeo_urdf()
    if p is not None:  # a short list of a large robot: its head and left arm
        text = p.read_text()
        model = load_model(text)
        names = [n for n in Runtime(LoadedDescription(text, model, "romeo"), "", 0, True).tree.moving_joint_names
                 if n.startswith(("Head", "Neck", "LShoulder", "LElbow", "LWrist"))]
        out.append(("romeo_head_left_arm", text, names))
    return out


def _decoded(reader: JointStateReader, names: list[str], pos: np.ndarray, stamp: int,
             vel: np.ndarray | None = None, eff: np.ndarray | None = None) -> object:
    msg = JointState(name=names, position=pos.tolist())
    if vel is not None:
        msg.velocity = vel.tolist()
    if eff is not None:
        msg.effort = eff.tolist()
    msg.header.stamp.sec, msg.header.stamp.nanosec = divmod(stamp, 1_000_000_000)
    d = reader.read(serialize_message(msg))
    assert d is not None
    return d


@pytest.mark.parametrize("name,text,names", _small_models(), ids=[m[0] for m in _small_models()])
def test_scalar_writer_writes_the_numpy_writers_bytes(name: str, text: str, names: list[str] | None) -> None:
    rt = Runtime(LoadedDescription(text, load_model(text), name), "", 0, True)
    names = names or list(rt.tree.moving_joint_names)
    assert 0 < len(names) <= SCALAR_MAX
    reader = JointStateReader()
    h = rt.hot._hot(_decoded(reader, names, np.zeros(len(names)), 1))  # type: ignore[arg-type]
    assert h is not None and h.writer is not None and h.scalar is not None
    cache = rt.cache
    rng = np.random.default_rng(11)
    lo, hi = h.plan.lim_lo, h.plan.lim_hi
    flips = 0
    for k in range(600):
        span = (0.5, 3.0, 9.0)[k % 3]  # inside, near and far past the limits (past 120 degrees: KDL's signs)
        cache.q[:] = rng.uniform(-span, span, len(cache.q))
        v = cache.q[h.plan.qdst[h.plan.lim_src]] if len(h.plan.lim_src) else np.zeros(0)
        in_limits = bool(((v >= lo) & (v <= hi)).all()) and k % 2 == 0  # else the writers check it themselves
        stamp = 1_700_000_000_000_000_000 + k
        want = bytes(h.writer.write(cache.q, stamp, in_limits))
        got = bytes(h.scalar.write(cache.views.q, stamp, in_limits))
        assert got == want, f"{name} configuration {k}"
        flips += bool(np.frombuffer(want[4:4 + 8 * ((len(want) - 4) // 8)], "<f8").min() < -0.5)
    assert flips  # some quaternions turned past 120 degrees were written


def test_merge_values_leaves_the_cache_merge_leaves() -> None:
    text = (SAMPLES / "arm7_gripper.urdf").read_text()
    a = Runtime(LoadedDescription(text, load_model(text), "a"), "", 0, True).cache
    b = Runtime(LoadedDescription(text, load_model(text), "b"), "", 0, True).cache
    reader = JointStateReader()
    moving = list(a.moving_names)
    lists = [moving, moving[::-1], moving[:3], ["unknown_joint", *moving[2:]]]
    rng = np.random.default_rng(3)
    for k in range(200):
        names = lists[k % len(lists)]
        n = len(names)
        pos = rng.uniform(-1, 1, n)
        vel = rng.normal(size=n) if k % 3 else None
        eff = rng.normal(size=n) if k % 4 == 1 else None
        stamp = 10**18 + k * 1000
        d = _decoded(reader, names, pos, stamp, vel, eff)
        plan_a, plan_b = a.plan(tuple(names)), b.plan(tuple(names))
        a.merge(plan_a, d.position, d.velocity, d.effort, stamp)  # type: ignore[attr-defined]
        b.merge_values(plan_b, d.values(0), d.values(1), d.values(2), stamp)  # type: ignore[attr-defined]
        for field in ("q", "v", "effort", "value_stamp", "has_value", "tree_has_value", "has_velocity",
                      "has_effort", "last_sent"):
            assert getattr(a, field).tobytes() == getattr(b, field).tobytes(), (k, field)
        for field in ("stamp_ns", "newest_ns", "max_value_stamp", "seen_velocity", "seen_effort"):
            assert getattr(a, field) == getattr(b, field), (k, field)
    a.reset()  # new arrays: the views follow them
    b.reset()
    assert b.views.q.obj is b.q and b.views.last_sent.obj is b.last_sent
    d = _decoded(reader, moving, np.full(len(moving), 0.25), 10**18)
    b.merge_values(b.plan(tuple(moving)), d.values(0), (), (), 10**18)  # type: ignore[attr-defined]
    assert b.q[b.plan(tuple(moving)).qdst].tolist() == [0.25] * len(moving)


def test_the_lists_taken_one_float_at_a_time() -> None:
    text = (SAMPLES / "arm7_gripper.urdf").read_text()
    rt = Runtime(LoadedDescription(text, load_model(text), "arm7"), "", 0, True)
    reader = JointStateReader()
    moving = list(rt.tree.moving_joint_names)
    h = rt.hot._hot(_decoded(reader, moving, np.zeros(len(moving)), 1))  # type: ignore[arg-type]
    assert h is not None and h.scalar is not None
    # a value outside its limits or not finite goes the numpy way (it has a problem to report or is refused)
    out = np.zeros(len(moving))
    out[0] = 50.0
    assert not rt.hot._merge_scalar(h, _decoded(reader, moving, out, 2))  # type: ignore[arg-type]
    out[0] = np.nan
    assert not rt.hot._merge_scalar(h, _decoded(reader, moving, out, 3))  # type: ignore[arg-type]
    n = SCALAR_MAX + 6  # a longer list: numpy's batches
    links = "".join(f'<link name="l{i}"/>' for i in range(n + 1))
    joints = "".join(f'<joint name="j{i}" type="continuous"><parent link="l{i}"/><child link="l{i + 1}"/>'
                     f'<origin xyz="0 0 0.1"/><axis xyz="0 1 0"/></joint>' for i in range(n))
    text = f'<robot name="long">{links}{joints}</robot>'
    rt = Runtime(LoadedDescription(text, load_model(text), "long"), "", 0, True)
    moving = list(rt.tree.moving_joint_names)
    h = rt.hot._hot(_decoded(reader, moving, np.zeros(n), 1))  # type: ignore[arg-type]
    assert h is not None and h.writer is not None and h.scalar is None
    h = rt.hot._hot(_decoded(reader, moving[:SCALAR_MAX], np.zeros(SCALAR_MAX), 2))  # type: ignore[arg-type]
    assert h is not None and h.scalar is not None
