"""The main demo (``python -m robot_state_format.demo``, ``./run demo``): save, record and replay a robot.

On a bundled robot (default ``arm7_gripper.urdf``) it starts, as real processes on a private ROS
domain: ``state_publisher``, the joint-state source (a sweep whose values follow from the message
stamp) and ``state_store``.  Then it saves a restart file and checks its joint values against what the
source sent at the saved stamp, records a few seconds, stops them, replays the restart file into a fresh
``state_publisher`` and checks that the TF it publishes equals the saved state (the max error is
printed), writes a PNG of the saved state, restarts a MuJoCo simulation from a restart file saved
mid-run (robot_state_format/sim/demo_part.py) and prints where everything went.  Every child is stopped
with SIGINT.  Exit 0 on success, 1 when the TF check fails, 2 on a set-up error; stopped by Ctrl-C
(SIGINT) or SIGTERM it stops its nodes and exits 130 or 143 (as a shell reports those signals), with
no traceback.
"""

from __future__ import annotations

import copy
import math
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import rclpy
import yaml
from rclpy.signals import SignalHandlerOptions
from std_srvs.srv import Trigger
from tf2_msgs.msg import TFMessage

from robot_state_format import options
from robot_state_format.lazy_modules import MissingDependencyError, first_missing
from robot_state_format.limits import input_problem, shown_path
from robot_state_format.model.loader import load_model_file
from robot_state_format.model.types import Model
from robot_state_format.playback.joint_arrays import joint_state_fields
from robot_state_format.playback.trajectory import channels, sample_at_stamp
from robot_state_format.ros.messages import transform_msg_to_matrix
from robot_state_format.ros.qos import TF_QOS, TF_STATIC_LISTEN_QOS
from robot_state_format.sim.demo_part import demo_summary
from robot_state_format.spatial import inverse, pose6_to_transform
from robot_state_format.usdf.plot import plot_world_state
from robot_state_format.usdf.reader import read_world_state_file
from robot_state_format.usdf.types import WorldState
from robot_state_format.usdf.validate import validate_against_model

SAMPLES = Path(__file__).resolve().parent.parent / "samples"
DEFAULT_MODEL = "arm7_gripper.urdf"
FASTDDS_PROFILE = """<?xml version="1.0" encoding="UTF-8"?>
<dds xmlns="http://www.eprosima.com"><profiles>
  <participant profile_name="rsf_demo_participant" is_default_profile="true"><rtps><builtin>
    <discovery_config><initialAnnouncements><count>20</count>
      <period><sec>0</sec><nanosec>100000000</nanosec></period></initialAnnouncements></discovery_config>
  </builtin></rtps></participant>
</profiles></dds>
"""
TOLERANCE = 1e-6


class DemoError(Exception):
    pass


class Interrupted(KeyboardInterrupt):
    """SIGINT or SIGTERM arrived: the demo stops its nodes and exits ``128 + signum``."""

    def __init__(self, signum: int) -> None:
        super().__init__(signum)
        self.signum = signum


def _interrupt(signum: int, frame: object) -> None:
    raise Interrupted(signum)


def _say(msg: str) -> None:
    print(f"[demo] {msg}", flush=True)


class Children:
    """Node processes of the demo, each logging to a file, all stopped with SIGINT at the end."""

    def __init__(self, logdir: Path) -> None:
        self.logdir = logdir
        self.procs: list[tuple[str, subprocess.Popen[bytes]]] = []

    def start(self, name: str, cmd: list[str]) -> subprocess.Popen[bytes]:
        log = (self.logdir / f"{name}.log").open("wb")
        proc = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
        log.close()
        self.procs.append((name, proc))
        return proc

    def stop(self, proc: subprocess.Popen[bytes], timeout: float = 5.0) -> int:
        if proc.poll() is None:
            for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGKILL):
                proc.send_signal(sig)
                try:
                    return proc.wait(timeout)
                except subprocess.TimeoutExpired:
                    continue
        return proc.wait()

    def check(self) -> None:
        for name, proc in self.procs:
            if proc.poll() is not None and proc.returncode != 0 and not getattr(proc, "_stopped", False):
                tail = (self.logdir / f"{name}.log").read_text(errors="replace").splitlines()[-15:]
                raise DemoError(f"{name} exited with {proc.returncode}:\n  " + "\n  ".join(tail))

    def stop_all(self) -> None:
        for _, proc in reversed(self.procs):
            proc._stopped = True  # type: ignore[attr-defined]
            self.stop(proc)


def _environment(out: Path) -> None:
    profile = out / "fastdds_profile.xml"
    profile.write_text(FASTDDS_PROFILE)
    os.environ.setdefault("ROS_DOMAIN_ID", str(101 + os.getpid() % 100))  # 101-200: away from the tests' 1-100
    os.environ["ROS_AUTOMATIC_DISCOVERY_RANGE"] = "LOCALHOST"
    os.environ["FASTDDS_DEFAULT_PROFILES_FILE"] = str(profile)


def _params_file(path: Path, params: dict[str, Any]) -> str:
    path.write_text(yaml.safe_dump({"/**": {"ros__parameters": params}}, sort_keys=True))
    return str(path)


def _node_cmd(module: str, params: str, *ros_args: str) -> list[str]:
    return [sys.executable, "-m", module, "--ros-args", "--params-file", params, *ros_args]


class Observer:
    """The demo's own rclpy node: service calls and TF collection."""

    def __init__(self) -> None:
        # rclpy's own handlers would shut the context down under a running spin (an RCLError traceback
        # on SIGTERM): main() handles SIGINT/SIGTERM itself
        rclpy.init(signal_handler_options=SignalHandlerOptions.NO)
        self.node = rclpy.create_node("rsf_demo")
        self.edges: dict[tuple[str, str], Any] = {}

    def spin_until(self, cond: Callable[[], bool], timeout: float, what: str, children: Children) -> None:
        deadline = time.monotonic() + timeout
        while not cond():
            children.check()
            if time.monotonic() > deadline:
                raise DemoError(f"timed out after {timeout:.0f} s waiting for {what}")
            rclpy.spin_once(self.node, timeout_sec=0.05)

    def trigger(self, service: str, children: Children, timeout: float = 30.0) -> tuple[bool, str]:
        client: Any = self.node.create_client(Trigger, service)
        self.spin_until(client.service_is_ready, timeout, f"service {service}", children)
        future = client.call_async(Trigger.Request())
        self.spin_until(future.done, timeout, f"answer of {service}", children)
        self.node.destroy_client(client)
        r: Any = future.result()
        return bool(r.success), str(r.message)

    def listen_tf(self) -> None:
        def on_tf(msg: Any) -> None:
            for t in msg.transforms:
                self.edges[(t.header.frame_id, t.child_frame_id)] = transform_msg_to_matrix(t.transform)

        self.node.create_subscription(TFMessage, "/tf", on_tf, TF_QOS)
        self.node.create_subscription(TFMessage, "/tf_static", on_tf, TF_STATIC_LISTEN_QOS)

    def close(self) -> None:
        self.node.destroy_node()
        if rclpy.ok():
            rclpy.try_shutdown()


def expected_edges(state: WorldState, model: Model) -> dict[tuple[str, str], Any]:
    """Joint transforms (parent link → child link) implied by the saved link poses."""
    ms = state.model(model.name) or state.model_states[0]
    poses = {ls.name: pose6_to_transform(ls.pose) for ls in ms.link_states if ls.pose is not None}
    out = {}
    for joint in model.joints.values():
        if joint.parent in poses and joint.child in poses:
            out[(joint.parent, joint.child)] = inverse(poses[joint.parent]) @ poses[joint.child]
    return out


def compare_with_sent(state: WorldState, model: Model) -> tuple[float, int]:
    """Largest difference between the saved joint positions and the sweep the source sent at the saved
    ``<stamp>`` (its values are a function of the stamp), and how many values were compared. A file
    without a stamp, or missing a joint the source sends, differs by infinity."""
    if state.stamp is None:
        return math.inf, 0
    names, want, _ = sample_at_stamp(*channels(model), state.stamp.sec * 1_000_000_000 + state.stamp.nanosec)
    fields = joint_state_fields(state, model)
    got = dict(zip(fields.name, fields.position))
    if any(n not in got for n in names):
        return math.inf, 0
    return max((abs(got[n] - w) for n, w in zip(names, want)), default=0.0), len(names)


def tf_error(a: Any, b: Any) -> tuple[float, float]:
    """(translation error m, rotation angle error rad) between two 4x4 transforms."""
    d = np.linalg.inv(a) @ b
    angle = math.acos(max(-1.0, min(1.0, (np.trace(d[:3, :3]) - 1.0) / 2.0)))
    return float(np.linalg.norm(a[:3, 3] - b[:3, 3])), angle


def write_png(state: WorldState, model: Model, path: Path) -> str:
    """A picture of the saved state (usdf.plot; a model without a pose is drawn at the world origin): the line
    the demo prints for it, which says what to install when matplotlib is missing."""
    shown = copy.deepcopy(state)
    unposed = [ms for ms in shown.model_states if ms.pose is None]
    for ms in unposed:  # no model pose in the snapshot (no TF to the world): draw it at the origin
        ms.pose = (0.0, 0.0, 0.0, 0.0, 0.0, 0.0)
    try:
        plot_world_state(shown, path, model=model)
    except MissingDependencyError as exc:
        return f"not drawn: {exc}"
    return f"{path} (usdf.plot" + (", model placed at the world origin)" if unposed else ")")


def moving_joints_text(model: Model) -> str:
    """"9 moving joints: 8 independent, finger_right_joint mimics another": the nodes count (and replay) the
    independent ones; a restart file also holds each mimic follower's value, derived from its leader."""
    moving = len(list(model.moving_joints()))
    followers = [j.name for j in model.moving_joints() if j.mimic]
    text = f"{moving} moving joint{'s' if moving != 1 else ''}"
    if followers:
        text += (f": {moving - len(followers)} independent, {', '.join(followers)} "
                 f"{'mimics' if len(followers) == 1 else 'mimic'} another")
    return text


def run(model_path: Path, out: Path, record_s: float) -> int:  # noqa: PLR0915 (95 statements): to be split, issue 38
    t_start = time.monotonic()
    model = load_model_file(model_path)
    out.mkdir(parents=True, exist_ok=True)
    restart_dir, logs = out / "restart_files", out / "logs"
    restart_dir.mkdir(exist_ok=True)
    logs.mkdir(exist_ok=True)
    _environment(out)
    _say(f"robot {model.name!r} from {model_path} ({moving_joints_text(model)}); "
         f"ROS_DOMAIN_ID={os.environ['ROS_DOMAIN_ID']}")
    children = Children(logs)
    observer = Observer()
    try:
        pub_params = _params_file(logs / "state_publisher.yaml", {"model_file": str(model_path)})
        store_params = _params_file(logs / "state_store.yaml", {
            "model_file": str(model_path), "output_dir": str(restart_dir), "recording_dir": str(out)})
        publisher = children.start("state_publisher", _node_cmd("robot_state_format.ros.state_publisher", pub_params))
        source = children.start("joint_state_source", [sys.executable, "-m", "robot_state_format.ros.trajectory_source",
                                                       "--model", str(model_path), "--sweep", "--rate", "50"])
        store = children.start("state_store", _node_cmd("robot_state_format.ros.state_store", store_params))
        _say("started state_publisher, joint_state_source (a sweep), state_store")

        # 1. save a restart file (retried until the first snapshot has arrived)
        result: dict[str, tuple[bool, str]] = {}

        def saved() -> bool:
            result["save"] = observer.trigger("/state_store/save", children)
            return result["save"][0]

        observer.spin_until(saved, 40.0, "a first snapshot to save", children)
        saved_path = Path(result["save"][1])
        state = read_world_state_file(saved_path).state
        errors = [d for d in validate_against_model(state, model, check_poses=True) if d.severity.value == "error"]
        if errors:
            raise DemoError(f"saved file does not validate: {errors[0]}")
        sent_err, n_sent = compare_with_sent(state, model)
        if not sent_err <= TOLERANCE:
            raise DemoError(f"saved file differs from what the source sent at its stamp by {sent_err:.3g}")
        _say(f"saved {saved_path} (validates against the model; its {n_sent} joint values equal what the source "
             f"sent at its stamp, max error {sent_err:.3g})")

        # 2. record a few seconds (MCAP: the `record` extra; without it the demo says so and goes on)
        no_mcap = first_missing("mcap.writer", "mcap_ros2")
        if no_mcap is not None:
            rec_msg = f"not made: {no_mcap}"
        else:
            ok, rec = observer.trigger("/state_store/start_recording", children)
            if not ok:
                raise DemoError(f"start_recording: {rec}")
            t_end = time.monotonic() + record_s
            observer.spin_until(lambda: time.monotonic() >= t_end, record_s + 5, "recording", children)
            ok, rec_msg = observer.trigger("/state_store/stop_recording", children)
            if not ok:
                raise DemoError(f"stop_recording: {rec_msg}")
            _say(f"recorded {rec_msg}")
        for proc in (source, publisher, store):
            children.stop(proc)
        _say("stopped the live nodes (SIGINT)")

        # 3. replay the restart file into a fresh state_publisher
        observer.listen_tf()
        fresh = children.start("state_publisher_fresh", _node_cmd("robot_state_format.ros.state_publisher", pub_params))
        replay_params = _params_file(logs / "replay.yaml", {
            "model_file": str(model_path), "output_dir": str(restart_dir), "replay_file": str(saved_path)})
        replayer = children.start("state_store_replay", _node_cmd("robot_state_format.ros.state_store", replay_params))
        want = expected_edges(state, model)

        def fresh_listening() -> bool:
            infos = observer.node.get_subscriptions_info_by_topic("/joint_states")
            return any(i.node_name == "state_publisher" for i in infos)

        observer.spin_until(fresh_listening, 20.0, "the fresh state_publisher", children)
        for attempt in range(4):  # the replayed state is also re-sent to late joiners by the store itself
            ok, msg = observer.trigger("/state_store/replay", children)
            if not ok:
                raise DemoError(f"replay refused: {msg}")
            if attempt == 0:
                _say(msg)
            try:
                observer.spin_until(lambda: all(k in observer.edges for k in want), 5.0, "TF", children)
                break
            except DemoError:
                continue
        missing = [k for k in want if k not in observer.edges]
        if missing:
            raise DemoError(f"no TF from the fresh state_publisher for {len(missing)} of {len(want)} joints "
                            f"(e.g. {missing[0][0]} -> {missing[0][1]})")
        observer.spin_until(lambda: max(tf_error(observer.edges[k], want[k])[0] for k in want) < TOLERANCE,
                            5.0, "TF equal to the saved state", children)
        errs = [tf_error(observer.edges[k], want[k]) for k in want]
        max_t, max_r = max(e[0] for e in errs), max(e[1] for e in errs)
        _say(f"fresh state_publisher TF vs saved state over {len(want)} joints: "
             f"max error {max_t:.3g} m, {max_r:.3g} rad")
        for proc in (replayer, fresh):
            children.stop(proc)

        # 4. a picture of the saved state
        png = out / f"{saved_path.stem}.png"
        how = write_png(state, model, png)
        ok_tf = max_t < TOLERANCE and max_r < TOLERANCE
        sim_ok, sim_line = demo_summary(model_path, out, say=_say)  # 5. simulation restart (sim/demo_part.py)
        print()
        print(f"restart file : {saved_path}")
        print(f"recording    : {rec_msg}")
        print(f"picture      : {how}")
        print(f"logs         : {logs}")
        print(f"TF check     : {'equal' if ok_tf else 'DIFFERENT'} (max {max_t:.3g} m, {max_r:.3g} rad)")
        print(f"simulation   : {sim_line}")
        print(f"time         : {time.monotonic() - t_start:.1f} s")
        return 0 if ok_tf and sim_ok else 1
    finally:
        if threading.current_thread() is threading.main_thread():  # a second signal must not cut the clean-up
            held = {s: signal.signal(s, signal.SIG_IGN) for s in (signal.SIGINT, signal.SIGTERM)}
        else:
            held = {}
        try:
            children.stop_all()
            observer.close()
        finally:
            for s, handler in held.items():
                signal.signal(s, handler)


def main(argv: list[str] | None = None) -> int:
    parser = options.Parser(prog="python -m robot_state_format.demo", description=__doc__.split("\n\n")[0])
    parser.add_argument("model", nargs="?", default=str(SAMPLES / DEFAULT_MODEL), help="robot model file")
    out = parser.add_argument("-o", "--output", dest="out", default="demo_output", metavar="DIR",
                              help="output directory (default ./demo_output)")
    options.old_spelling(parser, out, "--out")  # the previous release's spelling
    parser.add_argument("--record-seconds", type=options.positive_seconds, default=3.0, help="length of the recording (default 3)")
    args = parser.parse_args(argv)
    problem = input_problem(args.model)  # never raises (a name too long) nor opens (a FIFO)
    if problem is not None:
        print(f"demo: error: {shown_path(args.model)}: {problem}", file=sys.stderr)
        return 2
    model = Path(args.model).resolve()
    previous = {s: signal.signal(s, _interrupt) for s in (signal.SIGINT, signal.SIGTERM)}
    try:
        return run(model, Path(args.out).resolve(), args.record_seconds)
    except DemoError as exc:
        print(f"demo: error: {exc}", file=sys.stderr)
        return 2
    except Interrupted as exc:
        print(f"demo: stopped by {signal.Signals(exc.signum).name}", file=sys.stderr)
        return 128 + exc.signum
    except KeyboardInterrupt:
        return 130
    finally:
        for s, handler in previous.items():
            signal.signal(s, handler)


if __name__ == "__main__":
    sys.exit(main())
