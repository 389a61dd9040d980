"""Load native libraries into one process in a given order, using each, then step Drake
(test_native_orders.py): ``python native_orders.py GROUP,GROUP,...``; prints ``ok`` at the end.

Groups (what the product, or a test, loads and runs):
  ros       rclpy with a node and the message types the nodes use, tf2_ros (tf2_py)
  numba     the compiled kinematics kernels (numba, llvmlite, and scipy, which numba probes), run
  mujoco    a MuJoCo simulation, stepped
  drake     a Drake simulation as the product runs it (make_sim: in its own child process), stepped
  pinocchio Pinocchio and coal (tests only), a model built and its kinematics run
After the last group, Drake and MuJoCo are built and stepped once more (every library loaded).
"""

from __future__ import annotations

import faulthandler
import sys
from pathlib import Path

faulthandler.enable()
HERE = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(HERE))

import numpy as np  # noqa: E402

from robot_state_format.model import load_model_file  # noqa: E402

ARM = HERE.parent / "robot_state_format" / "samples" / "arm7_gripper.urdf"
WORLD = HERE / "fixtures" / "sim" / "legged_world.sdf"


def ros() -> None:
    import rclpy
    import tf2_ros
    from sensor_msgs.msg import JointState
    from std_msgs.msg import String
    from tf2_msgs.msg import TFMessage

    ctx = rclpy.Context()
    rclpy.init(context=ctx)
    node = rclpy.create_node("native_orders", context=ctx)
    buf = tf2_ros.Buffer()
    assert buf is not None and JointState and String and TFMessage
    node.destroy_node()
    rclpy.shutdown(context=ctx)


def numba() -> None:
    from robot_state_format.kinematics import compiled
    from robot_state_format.kinematics.fk import forward
    from robot_state_format.kinematics.tree import compile_model

    compiled.use_kernel(True)
    assert compiled.warm(), "numba is installed but the kernels did not load"
    tree = compile_model(load_model_file(ARM))
    assert np.isfinite(forward(tree, np.zeros(tree.nq))).all()


def mujoco() -> None:
    from robot_state_format.sim.mujoco_sim import MujocoSim

    sim = MujocoSim(load_model_file(WORLD))
    sim.step(50)
    assert np.isfinite(sim.d.qpos).all()


def drake() -> None:
    """Each model stepped in a Drake child (make_sim's default). drake 1.51.1 itself kills a child with
    SIGSEGV now and then, with or without other libraries (docs/simulation.md): that must come back as
    EngineCrash, this process goes on, and a new engine (as sim_bridge's ~/restart starts) steps it."""
    from robot_state_format.sim.isolated import EngineCrash
    from robot_state_format.sim.run import make_sim

    for path in (ARM, WORLD):
        for attempt in range(1, 4):
            sim = make_sim("drake", load_model_file(path))  # isolated, as the CLI and sim_bridge run it
            try:
                sim.step(50)
            except EngineCrash as exc:
                print(f"{path.name}: attempt {attempt}: {exc}", file=sys.stderr)
                continue
            positions, _ = sim.joint_values()
            assert all(np.isfinite(v).all() for v in positions.values())
            break
        else:
            raise AssertionError(f"{path.name}: the Drake child crashed three times in a row")


def pinocchio() -> None:
    import coal
    import pinocchio as pin

    model = pin.buildModelFromUrdf(str(ARM))
    data = model.createData()
    pin.forwardKinematics(model, data, pin.neutral(model))
    assert coal is not None and np.isfinite(data.oMi[model.njoints - 1].translation).all()


GROUPS = {"ros": ros, "numba": numba, "mujoco": mujoco, "drake": drake, "pinocchio": pinocchio}

if __name__ == "__main__":
    for group in sys.argv[1].split(","):
        GROUPS[group]()
    drake()
    mujoco()
    print("ok")
