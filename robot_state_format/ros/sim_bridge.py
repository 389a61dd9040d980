"""``sim_bridge``: a passive simulation (MuJoCo or Drake) run in step with the clock, shared over ROS.

Publishes ``joint_states`` (sensor_msgs/JointState, the simulator's joints; multi-DOF joints as
``<joint>/<dof>`` like MoveIt) and ``world_state`` (std_msgs/String, USDF of the whole simulated
world with the simulator-state extension, reliable transient_local), and offers ``~/restart``
(std_srvs/Trigger): put the simulation into the restart file named by the ``restart_file``
parameter and go on from there.  With state_store's ``~/save`` this closes the loop: a restart
file saved over ROS restarts the simulation exactly (docs/simulation.md).

The engine runs in its own process for Drake (:mod:`robot_state_format.sim.isolated`): if it
crashes, the node logs the error and pauses, keeps answering, and ``~/restart`` starts a new
simulation from ``restart_file``.

Time: the simulation follows the wall clock times ``real_time_factor`` (0: as fast as it can);
``publish_clock`` publishes the simulation time on ``/clock`` for nodes run with
``use_sim_time``.  Stamps of joint_states and world_state are the simulation time.
"""

from __future__ import annotations

import math
import sys
import time
from typing import Any

from rcl_interfaces.msg import ParameterDescriptor
from rclpy.exceptions import ParameterException
from rclpy.node import Node
from rclpy.qos import qos_profile_sensor_data
from rosgraph_msgs.msg import Clock
from sensor_msgs.msg import JointState
from std_msgs.msg import String
from std_srvs.srv import Trigger

from robot_state_format.errors import ModelError, ModelIOError, RobotStateFormatError
from robot_state_format.model.loader import load_model_file
from robot_state_format.model.types import Model
from robot_state_format.playback.outcome import Outcome
from robot_state_format.playback.sub_joints import MULTI_DOF_SUFFIXES
from robot_state_format.ros import spin
from robot_state_format.ros.description import file_error_text, xacro_args_from_text
from robot_state_format.ros.messages import ns_to_stamp
from robot_state_format.ros.qos import CLOCK_QOS, LATCHED
from robot_state_format.sim.adapter import Simulation
from robot_state_format.sim.isolated import EngineCrash
from robot_state_format.sim.run import make_sim
from robot_state_format.usdf.reader import read_world_state_file
from robot_state_format.usdf.writer import write_world_state

_RANGES = {"dt": (1e-6, 1.0), "real_time_factor": (0.0, 1000.0), "publish_frequency": (0.001, 1000.0),
           "world_state_frequency": (0.0, 1000.0)}  # (the start-up values: changes later take no effect)
MAX_STEPS_PER_TICK = 2000  # a slow machine falls behind the clock instead of stalling the executor

PARAMS: dict[str, tuple[Any, str]] = {
    "model_file": ("", "URDF, SDFormat or xacro file to simulate"),
    "xacro_args": ("", "xacro arguments 'name:=value ...'"),
    "engine": ("mujoco", "simulator: mujoco or drake"),
    "dt": (0.002, "simulation time step (s)"),
    "floating_base": (False, "give a URDF robot's root link a free joint (SDFormat models float unless static)"),
    "restart_file": ("", "USDF restart file: ~/restart reads it; set at start, the run starts from it"),
    "paused": (False, "do not step (nor publish) until ~/restart"),
    "real_time_factor": (1.0, "simulated seconds per wall-clock second; 0 = as fast as possible"),
    "publish_frequency": (50.0, "joint_states rate (Hz)"),
    "world_state_frequency": (10.0, "world_state rate (Hz); 0 = only after ~/restart"),
    "publish_clock": (False, "publish the simulation time on /clock"),
}


class SimBridge(Node):
    def __init__(self, node_name: str = "sim_bridge", **kwargs: Any) -> None:
        super().__init__(node_name, **kwargs)
        for name, (default, text) in PARAMS.items():
            self.declare_parameter(name, default, ParameterDescriptor(description=text))
        p = self._p
        for name, (low, high) in _RANGES.items():  # a number a peer or a params file gives: finite, in range
            value = p(name)
            if isinstance(value, bool) or not isinstance(value, (int, float)) or not (
                    math.isfinite(value) and low <= value <= high):
                raise RobotStateFormatError(f"parameter {name} must be a number in {low:g}..{high:g}, got {value!r}")
        model = load_model_file(str(p("model_file")), xacro_args=xacro_args_from_text(str(p("xacro_args"))))
        self.sim = self._make_sim(model)
        self._crash: str | None = None  # why the engine's process ended, until ~/restart
        self._names, self._slots = self._joint_layout()
        self._js_pub = self.create_publisher(JointState, "joint_states", qos_profile_sensor_data)
        self._ws_pub = self.create_publisher(String, "world_state", LATCHED)
        self._clock_pub = self.create_publisher(Clock, "/clock", CLOCK_QOS) if p("publish_clock") else None
        self.create_service(Trigger, "~/restart", self._srv_restart)
        self.paused = bool(p("paused"))
        self.last_restart: Outcome | None = None
        self._own_restart_file = str(p("restart_file"))  # the user's; one set later may be a stranger's
        if str(p("restart_file")) and not self.paused:
            restarted = self.restart()
            if not restarted.ok:
                raise RobotStateFormatError(restarted.message)
        self._sync_clock()
        self._next_world = 0.0
        freq = float(p("publish_frequency"))
        self._period = 1.0 / freq if freq > 0 else 0.02
        self.create_timer(self._period, self._tick)

    def _make_sim(self, model: Model) -> Simulation:
        p = self._p
        return make_sim(str(p("engine")), model, dt=float(p("dt")), floating_base=True if p("floating_base") else None)

    def _p(self, name: str) -> Any:
        return self.get_parameter(name).value

    def _joint_layout(self) -> tuple[list[str], list[tuple[str, int]]]:
        names: list[str] = []
        slots: list[tuple[str, int]] = []
        for n in self.sim.map.tree.moving_joint_names + self.sim.map.tree.mimic_followers:
            jt = self.sim.model.joints[n].type
            suffixes = MULTI_DOF_SUFFIXES.get(jt)
            if suffixes is None:
                names.append(n)
                slots.append((n, 0))
            else:
                for i, s in enumerate(suffixes):
                    names.append(f"{n}/{s}")
                    slots.append((n, i))
        return names, slots

    def _sync_clock(self) -> None:
        """Wall-clock reference for the current simulation time."""
        self._wall0 = time.monotonic()
        self._sim0 = self.sim.time

    # ---- running ------------------------------------------------------------------------------

    def _tick(self) -> None:
        if self.paused:
            return
        try:
            self._advance()
        except EngineCrash as exc:  # the engine's process died: this node goes on, paused
            self._engine_lost(exc)

    def _engine_lost(self, exc: EngineCrash) -> None:
        self.paused = True
        self._crash = str(exc)
        self.get_logger().error(f"{exc}; paused: ~/restart starts a new simulation from restart_file")

    def _advance(self) -> None:
        rtf = float(self._p("real_time_factor"))
        steps = 0
        if rtf > 0:
            target = self._sim0 + (time.monotonic() - self._wall0) * rtf
            while self.sim.time + 0.5 * self.sim.dt <= target and steps < MAX_STEPS_PER_TICK:
                self.sim.step()
                steps += 1
        else:  # as fast as possible: step for most of the timer period, then let callbacks run
            deadline = time.monotonic() + 0.8 * self._period
            while steps < MAX_STEPS_PER_TICK:
                self.sim.step()
                steps += 1
                if time.monotonic() >= deadline:
                    break
        if steps:
            self.publish_joint_states()
            if self._clock_pub is not None:
                self._clock_pub.publish(Clock(clock=ns_to_stamp(int(round(self.sim.time * 1e9)))))
        wf = float(self._p("world_state_frequency"))
        now = time.monotonic()
        if wf > 0 and now >= self._next_world:
            self._next_world = now + 1.0 / wf
            self.publish_world_state()

    def publish_joint_states(self) -> None:
        pos, vel = self.sim.joint_values()
        msg = JointState()
        msg.header.stamp = ns_to_stamp(int(round(self.sim.time * 1e9)))
        msg.name = list(self._names)
        msg.position = [float(pos[n][i]) for n, i in self._slots]
        if all(len(pos[n]) == len(vel[n]) for n, _ in self._slots):
            msg.velocity = [float(vel[n][i]) for n, i in self._slots]
        self._js_pub.publish(msg)

    def publish_world_state(self) -> None:
        self._ws_pub.publish(String(data=write_world_state(self.sim.capture(), pretty=False)))

    # ---- restart ------------------------------------------------------------------------------

    def restart(self) -> Outcome:
        """Restore the ``restart_file``; publish its state at once; ok and what was restored, or why not."""
        path = str(self._p("restart_file"))
        if not path:
            return Outcome(False, "the restart_file parameter is empty")
        peer = path != self._own_restart_file  # set on the running node: its errors quote nothing of the file
        try:
            state = read_world_state_file(path).state
            if self._crash is not None:  # a new engine process for the same model
                self.sim = self._make_sim(self.sim.model)
                self._crash = None
            warnings = self.sim.restore(state, file=path)
            if peer and warnings:
                self.get_logger().warning(f"{path}: {len(warnings)} warning(s) (withheld: restart_file was set on "
                                          "the running node and may name any file)")
            for w in [] if peer else warnings:
                self.get_logger().warning(f"{path}: {w}")
            self.paused = False
            self._sync_clock()
            self.publish_world_state()
            self.publish_joint_states()
        except EngineCrash as exc:
            self._engine_lost(exc)
            return Outcome(False, str(exc))
        except RobotStateFormatError as exc:
            return Outcome(False, f"{path}: {file_error_text(exc, peer=True) if peer else exc}")
        return Outcome(True, f"restored {path}: step {self.sim.step_count}, time {self.sim.time!r} s")

    def _srv_restart(self, request: Trigger.Request, response: Trigger.Response) -> Trigger.Response:
        restarted = self.last_restart = self.restart()
        (self.get_logger().info if restarted.ok else self.get_logger().warning)(f"restart: {restarted.message}")
        return restarted.answer(response)


def main(args: list[str] | None = None) -> int:
    """Console script ``sim_bridge``: spin the node until SIGINT/SIGTERM."""
    # the command line's exit-code table: an unreadable model file 2, an invalid model 1, the rest 2
    return spin.run_main("sim_bridge", SimBridge, args, [
        (ModelIOError, "", 2), (ModelError, "cannot load the model:\n", 1), (RobotStateFormatError, "", 2),
        (ParameterException, "parameter refused: ", 2)])  # a value of the wrong type (-p dt:=2)


if __name__ == "__main__":
    sys.exit(main())
