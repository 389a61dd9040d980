"""Test harness for real ROS 2 processes over real DDS (no mocks).

What it gives (see docs/testing.md; the pytest fixtures live in test/conftest.py):

* ``configure_ros_environment()``: a private ``ROS_DOMAIN_ID`` (1-100, held by a lock file so parallel
  test runs on this machine never share one), ``ROS_AUTOMATIC_DISCOVERY_RANGE=LOCALHOST`` and
  ``FASTDDS_DEFAULT_PROFILES_FILE`` (fast initial announcements) in ``os.environ``, inherited by every
  node process started from the tests.
* ``RosHarness``: an in-process rclpy node plus helpers that spin until a condition holds (never fixed
  sleeps): ``spin_until``, ``wait_for_publisher``, ``wait_for_subscriber``, ``wait_for_service``,
  ``wait_for_matched``, ``subscribe`` (an ``Inbox``) and ``collect``; and ``start_node``, which runs a node
  as a subprocess with a parameters YAML file and stops it with SIGINT (then SIGTERM).

Any wait that times out raises ``HarnessTimeout`` (an ``AssertionError``) with the output of every node
process started by the test, and a node process that dies while the test waits fails the wait at once.
"""

from __future__ import annotations

import fcntl
import itertools
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterable, Mapping, MutableMapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TextIO

import yaml

HERE = Path(__file__).resolve().parent
FASTDDS_PROFILE = HERE / "fastdds_profile.xml"
DOMAIN_RANGE = range(1, 101)
DEFAULT_TIMEOUT = 10.0
# Every wait's bound is multiplied by this (``RSF_TEST_WAIT_SCALE``, default 3): a wait ends as soon as its event
# happens, so the bound only decides how long a failure takes to be reported; on a loaded machine (a full
# `colcon test` run serially beside other work) 10 s for a service or a save has been seen to run out.
WAIT_SCALE = max(1.0, float(os.environ.get("RSF_TEST_WAIT_SCALE", "") or 3.0))
# Grace period per signal. A node normally exits 0.2-0.5 s after SIGINT; Fast DDS teardown on a loaded
# 2-core machine has been seen to take over 5 s.
STOP_TIMEOUT = 10.0

_domain_lock: TextIO | None = None
_domain_id: int | None = None


class HarnessTimeout(AssertionError):
    """A harness wait ran out of time; the message says what was awaited and shows node output."""


class NodeProcessDied(AssertionError):
    """A node process started by the test exited while the test was waiting on something."""


# -- environment --------------------------------------------------------------------------------
def _claim_domain() -> int:
    """Pick a free ROS_DOMAIN_ID in 1-100 (starting from the pid) and hold its lock for this process."""
    global _domain_lock
    lock_dir = Path(tempfile.gettempdir())
    start = os.getpid() % len(DOMAIN_RANGE)
    for i in range(len(DOMAIN_RANGE)):
        domain = DOMAIN_RANGE[(start + i) % len(DOMAIN_RANGE)]
        handle = (lock_dir / f"rsf-ros-domain-{domain}.lock").open("w")
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            handle.close()
            continue
        handle.write(str(os.getpid()))
        handle.flush()
        _domain_lock = handle  # kept open (and locked) until this process exits
        return domain
    raise RuntimeError("no free ROS_DOMAIN_ID in 1-100: over 100 test runs at once?")


def ros_domain_id() -> int:
    """This test run's ROS_DOMAIN_ID, claimed on first use."""
    global _domain_id
    if _domain_id is None:
        _domain_id = _claim_domain()
    return _domain_id


def configure_ros_environment(environ: MutableMapping[str, str] | None = None) -> dict[str, str]:
    """Set the per-run DDS environment in ``environ`` (default ``os.environ``); return what was set.

    Idempotent (the domain is claimed once per process). Must run before ``rclpy.init``.
    """
    env: MutableMapping[str, str] = os.environ if environ is None else environ
    settings = {
        "ROS_DOMAIN_ID": str(ros_domain_id()),
        "ROS_AUTOMATIC_DISCOVERY_RANGE": "LOCALHOST",
        "FASTDDS_DEFAULT_PROFILES_FILE": str(FASTDDS_PROFILE),
        "RCUTILS_COLORIZED_OUTPUT": "0",
        "PYTHONUNBUFFERED": "1",
    }
    # This package's ament index entry (and, without a distro, the tools the set-up built) live in the
    # venv prefix: ros2 launch / launch_ros find the package there. (PATH is left alone: `./run` started
    # from a test must find the outer python3, not the venv's.)
    # An ament prefix already holding the package (a colcon workspace's install/, `colcon test`) is kept first.
    prefix = Path(sys.prefix)
    marker = Path("share", "ament_index", "resource_index", "packages", "robot_state_format")
    if (prefix / marker).exists():
        paths = [p for p in env.get("AMENT_PREFIX_PATH", "").split(os.pathsep) if p]
        if not any((Path(p) / marker).exists() for p in paths):
            settings["AMENT_PREFIX_PATH"] = os.pathsep.join([str(prefix), *paths])
    env.update(settings)
    env.pop("ROS_LOCALHOST_ONLY", None)  # deprecated; kilted ignores it, older distros would conflict
    return settings


# -- node processes -----------------------------------------------------------------------------
@dataclass
class NodeProcess:
    """A node running as a subprocess; its stdout and stderr go to ``log_path``."""

    name: str
    command: list[str]
    log_path: Path
    proc: subprocess.Popen[bytes]
    params_path: Path | None = None
    stopping: bool = False
    stopped_by: str | None = None
    stop_seconds: float | None = None

    @property
    def pid(self) -> int:
        return self.proc.pid

    @property
    def returncode(self) -> int | None:
        return self.proc.poll()

    def alive(self) -> bool:
        return self.proc.poll() is None

    def output(self) -> str:
        """Everything the process has written so far (stdout and stderr interleaved)."""
        try:
            return self.log_path.read_text(errors="replace")
        except OSError:
            return ""

    def describe(self, tail_lines: int = 60) -> str:
        lines = self.output().splitlines()
        shown = "\n".join(lines[-tail_lines:]) if lines else "<no output>"
        state = "running" if self.alive() else f"exited {self.returncode}"
        if self.stopped_by:
            state += f" after {self.stopped_by}, {self.stop_seconds:.1f} s"
        return (f"--- node process {self.name!r} (pid {self.pid}, {state}) ---\n"
                f"$ {' '.join(self.command)}\n{shown}\n--- log: {self.log_path} ---")

    def stop(self, timeout: float = STOP_TIMEOUT) -> int:
        """Stop with SIGINT, then SIGTERM after ``timeout`` s; SIGKILL only if it refuses both.

        Returns the exit code; ``stopped_by`` names the signal that ended it (None if it had exited)
        and ``stop_seconds`` how long that took.
        """
        self.stopping = True
        if self.proc.poll() is not None:
            return self.proc.returncode
        start = time.monotonic()
        for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGKILL):
            try:
                self.proc.send_signal(sig)
            except ProcessLookupError:
                break
            try:
                self.proc.wait(timeout=timeout)
            except subprocess.TimeoutExpired:
                continue
            self.stopped_by = signal.Signals(sig).name
            break
        self.stop_seconds = time.monotonic() - start
        return self.proc.wait()


def _resolve_command(target: str, python: str) -> list[str]:
    """``pkg.module`` → ``python -m``; ``*.py`` or a path → ``python path``; else a console script."""
    if target.endswith(".py") or os.sep in target:
        return [python, str(Path(target).resolve())]
    bindir = Path(python).parent
    exe = bindir / target
    if exe.exists():
        return [str(exe)]
    if "." in target:
        return [python, "-m", target]
    found = shutil.which(target) or _ament_executable(target)
    if found is None:
        raise FileNotFoundError(
            f"no console script {target!r} in {bindir}, on PATH, or in lib/robot_state_format/ of an "
            f"AMENT_PREFIX_PATH prefix ({os.environ.get('AMENT_PREFIX_PATH', 'unset')}), and not a module name")
    return [found]


def node_command(target: str) -> list[str]:
    """The command line of a console script (``state_publisher`` ...): beside this Python, on PATH, or in
    ``lib/robot_state_format/`` of an ament prefix (a colcon workspace's install/)."""
    return _resolve_command(target, sys.executable)


def _ament_executable(target: str, package: str = "robot_state_format") -> str | None:
    """Where ``colcon build`` installs a package's console scripts (``ros2 run`` and launch look there):
    ``PREFIX/lib/PACKAGE/TARGET`` for each prefix of ``AMENT_PREFIX_PATH`` that indexes the package."""
    marker = Path("share", "ament_index", "resource_index", "packages", package)
    for prefix in filter(None, os.environ.get("AMENT_PREFIX_PATH", "").split(os.pathsep)):
        exe = Path(prefix) / "lib" / package / target
        if (Path(prefix) / marker).exists() and exe.is_file() and os.access(exe, os.X_OK):
            return str(exe)
    return None


def write_params_file(path: Path, params: Mapping[str, Any], node_name: str = "/**") -> Path:
    """Write ``params`` as a ROS 2 parameters file (``yaml.safe_dump``: multi-line XML survives intact)."""
    doc = {node_name: {"ros__parameters": dict(params)}}
    path.write_text(yaml.safe_dump(doc, default_flow_style=False, sort_keys=True, allow_unicode=True))
    return path


# -- in-process side ----------------------------------------------------------------------------
@dataclass
class Inbox:
    """Messages received by a subscription made with ``RosHarness.subscribe``."""

    topic: str
    subscription: Any
    messages: list[Any] = field(default_factory=list)

    def __len__(self) -> int:
        return len(self.messages)

    def clear(self) -> None:
        self.messages.clear()


class RosHarness:
    """An rclpy node in this process plus helpers to wait on the ROS graph and to run node processes.

    Made by the ``ros`` fixture (test/conftest.py), which also stops every started process and destroys
    the node after the test. ``workdir`` holds params files and process logs.
    """

    _counter = itertools.count()

    def __init__(self, context: Any, workdir: Path, name: str | None = None) -> None:
        from rclpy.executors import SingleThreadedExecutor
        from rclpy.node import Node

        self.context = context
        self.workdir = workdir
        self.node: Node = Node(name or f"rsf_test_{os.getpid()}_{next(self._counter)}", context=context)
        self.executor = SingleThreadedExecutor(context=context)
        self.executor.add_node(self.node)
        self.processes: list[NodeProcess] = []
        self._clients: dict[tuple[str, Any], Any] = {}

    # -- spinning ------------------------------------------------------------------------------
    def spin_once(self, timeout: float = 0.05) -> None:
        self.executor.spin_once(timeout_sec=timeout)

    def spin_for(self, seconds: float) -> None:
        """Spin for ``seconds`` (for "nothing else arrives" checks only; never to wait for readiness)."""
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            self.spin_once(min(0.05, max(0.0, deadline - time.monotonic())))
            self.check_processes()

    def spin_until(self, condition: Callable[[], bool], timeout: float = DEFAULT_TIMEOUT,
                   what: str = "condition", every: Callable[[], None] | None = None,
                   every_period: float = 0.1) -> None:
        """Spin until ``condition()`` is true; raise ``HarnessTimeout`` after ``timeout`` s.

        ``every`` (optional) is called about every ``every_period`` s while waiting, e.g. to re-publish.
        A started node process that exits meanwhile raises ``NodeProcessDied`` at once.
        """
        timeout *= WAIT_SCALE
        deadline = time.monotonic() + timeout
        next_every = time.monotonic()
        while True:
            if condition():
                return
            self.check_processes()
            now = time.monotonic()
            if now >= deadline:
                raise HarnessTimeout(f"timed out after {timeout:.1f} s waiting for {what}\n" + self.report())
            if every is not None and now >= next_every:
                every()
                next_every = now + every_period
            self.spin_once(min(0.05, deadline - now))

    def check_processes(self) -> None:
        for p in self.processes:
            if not p.stopping and not p.alive():
                p.stopping = True  # report once
                raise NodeProcessDied(f"node process {p.name!r} exited with {p.returncode}\n" + p.describe())

    def report(self) -> str:
        """Output of every node process this harness started (for failure messages)."""
        return "\n".join(p.describe() for p in self.processes) or "(no node processes started)"

    # -- graph waits ---------------------------------------------------------------------------
    def wait_for_publisher(self, topic: str, count: int = 1, timeout: float = DEFAULT_TIMEOUT) -> None:
        """Wait until the graph shows at least ``count`` publishers on ``topic``."""
        self.spin_until(lambda: self.node.count_publishers(topic) >= count, timeout,
                        f"{count} publisher(s) on {topic}")

    def wait_for_subscriber(self, topic: str, count: int = 1, timeout: float = DEFAULT_TIMEOUT) -> None:
        """Wait until the graph shows at least ``count`` subscribers on ``topic``."""
        self.spin_until(lambda: self.node.count_subscribers(topic) >= count, timeout,
                        f"{count} subscriber(s) on {topic}")

    def wait_for_service(self, name: str, srv_type: Any = None, timeout: float = DEFAULT_TIMEOUT) -> Any:
        """Wait for service ``name``; with ``srv_type``, until a client is ready, and return that client."""
        if srv_type is None:
            self.spin_until(lambda: self.node.count_services(name) >= 1, timeout, f"service {name}")
            return None
        # One client per (service, type): every new client is a new response reader that the server
        # must match before it can answer (see ``call``), so calls in a loop reuse theirs.
        client: Any = self._clients.get((name, srv_type))
        if client is None:
            client = self._clients[(name, srv_type)] = self.node.create_client(srv_type, name)
        self.spin_until(client.service_is_ready, timeout, f"service {name} ready")
        return client

    def wait_for_matched(self, endpoint: Any, count: int = 1, timeout: float = DEFAULT_TIMEOUT) -> None:
        """Wait until our publisher/subscription has matched ``count`` remote endpoints (QoS-compatible)."""
        if hasattr(endpoint, "get_subscription_count"):
            get = endpoint.get_subscription_count
        else:
            get = endpoint.get_publisher_count
        self.spin_until(lambda: get() >= count, timeout, f"{count} match(es) on {endpoint.topic_name}")

    def call(self, client: Any, request: Any, timeout: float = DEFAULT_TIMEOUT) -> Any:
        """Call a service and spin until the response arrives.

        rmw_fastrtps answers only once the server's response writer has matched this client's response
        reader, which can lag the client's "service is ready" on a loaded machine; past the writer's
        max_blocking_time it drops the answer and the server prints ``failed to send response``. When
        one of our node processes prints that during the call and no answer came, the request is sent
        again (at most three times): the server did run it, the transport lost only the reply.
        """
        deadline = time.monotonic() + timeout * WAIT_SCALE
        for _attempt in range(4):
            dropped_before = self._dropped_responses()
            future = client.call_async(request)

            def answered_or_dropped(future: Any = future, before: int = dropped_before) -> bool:
                return bool(future.done()) or self._dropped_responses() > before

            self.spin_until(answered_or_dropped, max(0.0, deadline - time.monotonic()) / WAIT_SCALE,
                            f"response from {client.srv_name}")
            if future.done():
                return future.result()
            self.spin_for(0.2)  # the reply may still be on its way
            if future.done():
                return future.result()
            client.remove_pending_request(future)
        raise HarnessTimeout(f"{client.srv_name}: the server dropped the response four times\n" + self.report())

    def _dropped_responses(self) -> int:
        return sum(p.output().count("failed to send response") for p in self.processes)

    # -- messages ------------------------------------------------------------------------------
    def subscribe(self, topic: str, msg_type: Any, qos: Any = 10) -> Inbox:
        """Subscribe ``topic``; received messages accumulate in the returned ``Inbox`` while spinning."""
        messages: list[Any] = []
        sub = self.node.create_subscription(msg_type, topic, messages.append, qos)
        return Inbox(topic, sub, messages)

    def collect(self, topic: str, msg_type: Any, qos: Any = 10, count: int = 1,
                predicate: Callable[[Any], bool] | None = None, timeout: float = DEFAULT_TIMEOUT,
                every: Callable[[], None] | None = None) -> list[Any]:
        """Subscribe ``topic`` and return the first ``count`` messages satisfying ``predicate``.

        Raises ``HarnessTimeout`` if fewer arrive within ``timeout`` s. The subscription is destroyed
        afterwards. ``every`` is called about every 0.1 s while waiting (e.g. to keep publishing input).
        """
        inbox = self.subscribe(topic, msg_type, qos)
        try:
            try:
                self.spin_until(lambda: len(_matching(inbox.messages, predicate)) >= count, timeout,
                                f"{count} message(s) on {topic}", every=every)
            except HarnessTimeout as exc:
                got = len(_matching(inbox.messages, predicate))
                raise HarnessTimeout(f"{exc.args[0].splitlines()[0]}: received {len(inbox.messages)}, "
                                     f"{got} matching\n" + self.report()) from None
            return _matching(inbox.messages, predicate)[:count]
        finally:
            self.node.destroy_subscription(inbox.subscription)

    # -- node processes ------------------------------------------------------------------------
    def start_node(self, target: str, params: Mapping[str, Any] | None = None,
                   ros_args: Sequence[str] = (), args: Sequence[str] = (), name: str | None = None,
                   env: Mapping[str, str] | None = None, cwd: Path | None = None,
                   prefix: Sequence[str] = ()) -> NodeProcess:
        """Start a node process and return at once (then wait on the graph for what you need).

        ``target``: a console script (e.g. ``state_publisher``, looked up beside this Python first), a
        module (``robot_state_format.ros.state_publisher``, run with ``python -m``) or a ``.py`` path.
        ``params`` are written to a params file with ``yaml.safe_dump`` under ``/**`` (so any node name
        matches) and passed as ``--ros-args --params-file``; ``ros_args`` are appended after it (e.g.
        ``["-r", "__node:=foo"]``); ``args`` go before ``--ros-args``. The child gets this process's
        whole environment (required by the wheels' LD_LIBRARY_PATH bootstrap) plus ``env``. ``prefix`` goes
        before the command (e.g. ``["ip", "netns", "exec", NAME]``, which execs it: the pid stays the node's).
        """
        index = len(self.processes)
        label = name or f"{Path(target).stem if target.endswith('.py') else target}-{index}"
        safe = "".join(c if c.isalnum() or c in "-_." else "_" for c in label)
        command = list(prefix) + _resolve_command(target, sys.executable) + list(args)
        params_path = None
        extra_ros = list(ros_args)
        if params:
            params_path = write_params_file(self.workdir / f"{safe}.params.yaml", params)
        if params_path is not None or extra_ros:
            command.append("--ros-args")
            if params_path is not None:
                command += ["--params-file", str(params_path)]
            command += extra_ros
        child_env = dict(os.environ)
        configure_ros_environment(child_env)
        if env:
            child_env.update(env)
        log_path = self.workdir / f"{safe}.log"
        with log_path.open("wb") as log:
            proc = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                    env=child_env, cwd=str(cwd) if cwd else None)
        node_proc = NodeProcess(label, command, log_path, proc, params_path)
        self.processes.append(node_proc)
        return node_proc

    def stop_all(self, timeout: float = STOP_TIMEOUT) -> None:
        """Stop every started process (SIGINT, then SIGTERM); called by the fixture after each test."""
        for p in reversed(self.processes):
            p.stop(timeout)

    def close(self) -> None:
        self.stop_all()
        self.executor.remove_node(self.node)
        self.executor.shutdown(timeout_sec=1.0)
        self.node.destroy_node()


def _matching(messages: Iterable[Any], predicate: Callable[[Any], bool] | None) -> list[Any]:
    return [m for m in messages if predicate is None or predicate(m)]


def init_context() -> Any:
    """A fresh rclpy context (not the global one), initialised with the harness environment."""
    import rclpy
    from rclpy.context import Context

    configure_ros_environment()
    context = Context()
    rclpy.init(context=context)
    return context


def shutdown_context(context: Any) -> None:
    import rclpy

    if context.ok():
        rclpy.shutdown(context=context)
