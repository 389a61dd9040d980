"""A simulator in a child process, behind the :class:`~robot_state_format.sim.adapter.Simulation`
interface (docs/simulation.md, "Engines in their own process").

A native engine that crashes (a segmentation fault in a C++ library, an abort) ends the process
it runs in.  :class:`IsolatedSim` runs the engine's adapter in a child Python process
(:mod:`robot_state_format.sim.worker`) and forwards every call over a pipe; if the child dies,
the call raises :class:`EngineCrash` (a :class:`~robot_state_format.errors.ConversionError`
naming the engine, the signal and the call) and the caller (the CLI, ``sim_bridge``) goes on.
The child imports only this package, numpy, lxml and the engine, so a library the caller loaded
(rclpy, numba, pinocchio...) cannot clash with the engine's.

The model is sent to the child as it is (the child does not reread the file); captured states
and restored states cross the pipe as :class:`~robot_state_format.usdf.types.WorldState` objects,
so nothing is rounded.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import weakref
from dataclasses import dataclass
from multiprocessing.connection import Connection
from typing import Any

from robot_state_format.errors import ConversionError, DiagnosticError, RobotStateFormatError
from robot_state_format.model.types import Model
from robot_state_format.sim.adapter import JointValues, LinkMotions
from robot_state_format.sim.mapping import FloatArray, WorldMap
from robot_state_format.sim.mjcf_writer import DEFAULT_DT, floating_roots
from robot_state_format.usdf.types import WorldState

START_TIMEOUT = 120.0  # s: importing an engine and building a large model


class EngineCrash(ConversionError):
    """The engine's process died (a signal or an exit) while it ran a call."""


@dataclass(frozen=True)
class StepValues:
    """The child's joint and root values of one step: ``Simulation.joint_values()`` and ``root_coordinates()``."""

    positions: dict[str, FloatArray]
    velocities: dict[str, FloatArray]
    roots: dict[str, FloatArray]


@dataclass(frozen=True)
class StepReply:
    """The child's answer to ``step``: its step count and time, and the joint values when asked for."""

    step_count: int
    time: float
    values: StepValues | None


@dataclass(frozen=True)
class RestoreReply:
    """The child's answer to ``restore``: the warnings of ``Simulation.restore``, its step count and time."""

    warnings: list[str]
    step_count: int
    time: float


def rebuild_error(kind: type[BaseException], payload: Any) -> BaseException:
    """The exception the child raised, rebuilt in the caller (see :func:`error_payload`)."""
    return kind(payload)


def error_payload(exc: BaseException) -> tuple[type[BaseException], Any]:
    """``(class, arguments)`` of ``exc`` for :func:`rebuild_error`; errors that are not the
    package's own become a ConversionError with their text."""
    if isinstance(exc, DiagnosticError):
        return type(exc), exc.diagnostics
    if isinstance(exc, RobotStateFormatError):
        return type(exc), str(exc)
    return ConversionError, f"{type(exc).__name__}: {exc}"


def _describe(returncode: int | None) -> str:
    if returncode is None:
        return "stopped answering"
    if returncode < 0:
        try:
            name = signal.Signals(-returncode).name
        except ValueError:
            name = "an unknown signal"
        return f"died with signal {-returncode} ({name})"
    return f"exited with status {returncode}"


def _stop(proc: subprocess.Popen[bytes], conns: tuple[Connection, Connection]) -> None:
    for c in conns:
        c.close()  # the child sees end of file and exits
    try:
        proc.wait(timeout=5)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


class IsolatedSim:
    """``engine``'s adapter for ``model``, run in a child process (the same arguments as
    :func:`~robot_state_format.sim.run.make_sim`).  :meth:`close` ends the child (also done when
    the object is collected or the program exits)."""

    def __init__(self, engine: str, model: Model, *, dt: float = DEFAULT_DT,
                 floating_base: bool | None = None) -> None:
        self.engine = engine
        self.model = model
        self.dt = float(dt)
        self.map = WorldMap(model, floating_roots(model, floating_base))
        self._dead: str | None = None
        self._values: StepValues | None = None  # of the current step, when fetched
        self._prefetch = False
        self._used = False
        to_child_r, to_child_w = os.pipe()
        from_child_r, from_child_w = os.pipe()
        try:
            # -P: the caller's working directory does not shadow modules
            self._proc = subprocess.Popen(
                [sys.executable, "-P", "-m", "robot_state_format.sim.worker", str(to_child_r), str(from_child_w)],
                pass_fds=(to_child_r, from_child_w), stdin=subprocess.DEVNULL)
        finally:
            os.close(to_child_r)
            os.close(from_child_w)
        self._send = Connection(to_child_w, readable=False)
        self._recv = Connection(from_child_r, writable=False)
        self._finalizer = weakref.finalize(self, _stop, self._proc, (self._send, self._recv))
        self.pid = self._proc.pid
        info = self._call("start", (engine, model, self.dt, floating_base), timeout=START_TIMEOUT)
        self.notes: list[str] = info["notes"]
        self.layout_signature: str = info["layout_signature"]
        self.step_count: int = info["step_count"]
        self._time: float = info["time"]

    def _call(self, what: str, args: tuple[Any, ...] = (), *, timeout: float | None = None) -> Any:
        if self._dead is not None:
            raise EngineCrash(self._dead)
        try:
            self._send.send((what, args))
            if timeout is not None and not self._recv.poll(timeout):
                self._proc.kill()
                raise EOFError
            kind, value = self._recv.recv()
        except (EOFError, OSError):
            try:
                rc: int | None = self._proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                rc = None
            self._dead = f"{self.engine}: the simulator process {_describe(rc)} during {what}"
            self._finalizer()
            raise EngineCrash(self._dead) from None
        if kind == "error":
            raise rebuild_error(*value)
        return value

    def close(self) -> None:
        """End the child process (the simulation is gone afterwards)."""
        if self._dead is None:
            self._dead = f"{self.engine}: the simulation was closed"
        self._finalizer()

    @property
    def time(self) -> float:
        return self._time

    def step(self, n: int = 1) -> None:
        # Joint values come back with the step while the caller reads them after every step (a
        # trajectory): one round trip instead of three; on a step whose values went unread, not.
        if self._prefetch and not self._used:
            self._prefetch = False
        reply: StepReply = self._call("step", (n, self._prefetch))
        self.step_count, self._time, self._values = reply.step_count, reply.time, reply.values
        self._used = False

    def _joint_and_root_values(self) -> StepValues:
        if self._values is None:
            self._values = self._call("values")
            self._prefetch = True
        self._used = True
        return self._values

    def joint_values(self) -> JointValues:
        values = self._joint_and_root_values()
        pos, vel = values.positions, values.velocities
        return JointValues({k: v.copy() for k, v in pos.items()}, {k: v.copy() for k, v in vel.items()})

    def root_coordinates(self) -> dict[str, FloatArray]:
        return {k: v.copy() for k, v in self._joint_and_root_values().roots.items()}

    def link_motions(self) -> LinkMotions:
        """World poses ``(nlinks, 4, 4)`` and twists ``(nlinks, 6)`` in tree link order."""
        poses, twists = self._call("link_motions")
        return LinkMotions(poses, twists)

    def capture(self) -> WorldState:
        state: WorldState = self._call("capture")
        return state

    def restore(self, state: WorldState, *, file: str = "<state>") -> list[str]:
        self._values = None
        reply: RestoreReply = self._call("restore", (state, file))
        self.step_count, self._time = reply.step_count, reply.time
        return list(reply.warnings)
