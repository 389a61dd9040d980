"""Run one function in a child process under CPU-time, memory, wall-time and reply-size limits.

Used for xacro expansion (:mod:`robot_state_format.model.xacro.expand`): xacro evaluates ``${...}`` with
Python's ``eval``, so a document can run any code, compute ``10**10**8`` or build a string of
gigabytes. The child runs ``serve(request)`` and answers with JSON (never pickle: the parent must not
run code the child chose); the parent reads at most the reply bound, kills the child at the wall-time
bound, and turns every way it can end into :class:`ChildFailed` naming the limit that was hit.

* ``confinement=None`` (a file the user asked for: xacro runs as the ``xacro`` command would, with the
  process's environment and files): a ``fork`` of this process when it runs no other Python thread and
  no ROS (a few milliseconds), else a new interpreter (~0.1 s).
* a :class:`Confinement` (a description from the network): always a new interpreter (no copy of this
  process's memory), an empty environment, an empty temporary working directory, and
  :func:`~robot_state_format.model.xacro.confine.confine` (read-only access under the allowed directories, no
  process creation, no network) before ``serve`` runs.
"""

from __future__ import annotations

import atexit
import contextlib
import gc
import importlib
import json
import os
import resource
import select
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any, NamedTuple

from robot_state_format.model.xacro.child_control import Confinement, add_interrupt, interrupted
from robot_state_format.model.xacro.confine import confine

__all__ = ["ChildEntry", "ChildFailed", "ChildLimits", "Confinement", "add_interrupt", "run_child", "serve_stdio"]

Serve = Callable[[dict[str, Any]], dict[str, Any]]


@dataclass(frozen=True)
class ChildLimits:
    cpu_seconds: int
    memory_bytes: int  # address space the child may add to what it holds when ``serve`` starts
    wall_seconds: float
    reply_bytes: int


@dataclass(frozen=True)
class ChildEntry:
    """Where a new interpreter finds the child's code: ``module``, its function ``serve`` and its function
    ``prepare`` (importing what ``serve`` needs; run in the child before confinement, or here before a fork)."""

    module: str
    serve: str
    prepare: str


class ChildFailed(Exception):
    """The child hit a limit (``limit``: ``"cpu"``, ``"memory"``, ``"wall"``, ``"output"``, ``"recursion"``),
    was stopped (``"interrupted"``, see :func:`add_interrupt`) or ended without an answer (``limit`` None;
    ``detail`` says how)."""

    def __init__(self, limit: str | None, detail: str = "") -> None:
        super().__init__(limit or detail)
        self.limit = limit
        self.detail = detail


_MEMORY_REPLY = b'{"limit": "memory"}'
_running: set[int] = set()  # children being waited for: killed at exit (a daemon thread may be waiting)


@atexit.register
def _kill_running() -> None:
    for pid in list(_running):
        with contextlib.suppress(OSError):
            os.kill(pid, signal.SIGKILL)


def _address_space() -> int:
    try:
        with open("/proc/self/statm", "rb") as f:
            return int(f.read().split()[0]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, IndexError):
        return 0


def _set_limits(limits: ChildLimits, confined: bool) -> None:
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    cpu = max(1, int(limits.cpu_seconds))
    resource.setrlimit(resource.RLIMIT_CPU, (cpu, cpu + 1))  # SIGXCPU, then SIGKILL a second later
    current = _address_space()
    if current:
        resource.setrlimit(resource.RLIMIT_AS, (current + limits.memory_bytes, current + limits.memory_bytes))
    if confined:
        resource.setrlimit(resource.RLIMIT_FSIZE, (0, 0))  # no byte written to any file


def _reply_bytes(serve: Serve, request: dict[str, Any], limits: ChildLimits) -> bytes:
    try:
        reply = serve(request)
        data = json.dumps(reply).encode("utf-8", "surrogatepass")
    except MemoryError:
        return _MEMORY_REPLY
    except RecursionError:
        return b'{"limit": "recursion"}'
    if len(data) > limits.reply_bytes:
        return b'{"limit": "output"}'
    return data


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view):]


def _limits_from(raw: dict[str, Any]) -> ChildLimits:
    return ChildLimits(int(raw["cpu_seconds"]), int(raw["memory_bytes"]), float(raw["wall_seconds"]),
                       int(raw["reply_bytes"]))


def serve_stdio() -> None:
    """The new interpreter's side: request on stdin, reply on stdout (see :func:`run_child`)."""
    envelope = json.loads(sys.stdin.buffer.read().decode("utf-8", "surrogatepass"))
    module = importlib.import_module(envelope["module"])
    serve: Serve = getattr(module, envelope["serve"])
    prepare: Callable[[], None] = getattr(module, envelope["prepare"])
    limits = _limits_from(envelope["limits"])
    out = os.dup(1)
    os.dup2(os.open(os.devnull, os.O_WRONLY), 1)  # what the code prints is not the reply
    prepare()  # every module the code needs, imported before the door closes
    confined = envelope["readable"] is not None
    _set_limits(limits, confined)
    if confined:
        confine(envelope["readable"])
    try:
        data = _reply_bytes(serve, envelope["request"], limits)
    except MemoryError:
        data = _MEMORY_REPLY
    _write_all(out, data)
    os._exit(0)


_BOOT = ("import json, sys\nsys.path[:] = json.loads(sys.argv[1])\n"
         "from robot_state_format.model.xacro.bounded_child import serve_stdio\nserve_stdio()\n")


def _can_fork() -> bool:
    """Fork only a process without other Python threads and without ROS (whose middleware threads
    hold locks a forked copy could wait on); native worker threads (OpenBLAS) never run in the child."""
    return threading.active_count() == 1 and "rclpy" not in sys.modules and hasattr(os, "fork")


@contextlib.contextmanager
def _forked(serve: Serve, request: dict[str, Any], limits: ChildLimits) -> Iterator[tuple[int, int]]:
    r, w = os.pipe()
    pid = -1
    gc.freeze()  # the child's collector leaves the parent's objects alone: fewer copied pages
    try:
        pid = os.fork()
    finally:
        if pid != 0:
            gc.unfreeze()
    if pid == 0:  # the child: never returns
        try:
            os.close(r)
            _set_limits(limits, False)
            data = _reply_bytes(serve, request, limits)
        except MemoryError:
            data = _MEMORY_REPLY
        except BaseException:  # noqa: BLE001 the child exits 70 on any escape, whatever it is
            os._exit(70)
        try:
            _write_all(w, data)
        finally:
            os._exit(0)
    os.close(w)
    try:
        yield pid, r
    finally:
        os.close(r)


@contextlib.contextmanager
def _spawned(entry: ChildEntry, request: dict[str, Any], limits: ChildLimits,
             confinement: Confinement | None) -> Iterator[tuple[int, int]]:
    envelope = {"module": entry.module, "serve": entry.serve, "prepare": entry.prepare, "request": request,
                "limits": limits.__dict__,
                "readable": None if confinement is None else [os.path.abspath(p) for p in confinement.readable]}
    with contextlib.ExitStack() as stack:
        cwd = None
        env: dict[str, str] | None = None
        if confinement is not None:
            cwd = stack.enter_context(tempfile.TemporaryDirectory(prefix="rsf-xacro-"))
            env = {}
        proc = subprocess.Popen([sys.executable, "-I", "-c", _BOOT, json.dumps(sys.path)], stdin=subprocess.PIPE,
                                stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, cwd=cwd, env=env,
                                start_new_session=True)
        assert proc.stdin is not None and proc.stdout is not None
        try:
            proc.stdin.write(json.dumps(envelope).encode("utf-8", "surrogatepass"))
            proc.stdin.close()
        except BrokenPipeError:
            pass
        try:
            yield proc.pid, proc.stdout.fileno()
        finally:
            proc.stdout.close()
            proc.returncode = 0  # reaped by run_child (os.waitpid): Popen must not wait again


class _Ended(NamedTuple):
    """How a child ended: its reply, its exit code (``-signal`` when killed), the limit this side enforced."""

    data: bytes
    status: int | None
    why: str | None


def _read_reply(pid: int, fd: int, limits: ChildLimits) -> _Ended:
    """The child's reply, its exit code (``-signal`` when killed) and the limit this side enforced."""
    deadline = time.monotonic() + limits.wall_seconds
    chunks: list[bytes] = []
    total = 0
    why: str | None = None
    status: int | None = None
    try:
        while True:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                why = "wall"
                break
            ready, _, _ = select.select([fd], [], [], min(remaining, 0.2))
            if interrupted():
                why = "interrupted"
                break
            if not ready:
                continue
            chunk = os.read(fd, 1 << 20)
            if not chunk:
                break
            total += len(chunk)
            if total > limits.reply_bytes + 64:
                why = "output"
                break
            chunks.append(chunk)
        while why is None and status is None:
            done, raw = os.waitpid(pid, os.WNOHANG)
            if done:
                status = os.waitstatus_to_exitcode(raw)
            elif time.monotonic() > deadline:
                why = "wall"
            elif interrupted():
                why = "interrupted"
            else:
                time.sleep(0.002)
    finally:
        if status is None:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
            status = os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1])
    return _Ended(b"".join(chunks), status, why)


def run_child(serve: Serve, request: dict[str, Any], limits: ChildLimits, *,
              entry: ChildEntry, confinement: Confinement | None = None) -> dict[str, Any]:
    """``serve(request)`` run in a child process under ``limits``; its JSON reply (a dict).

    ``entry`` says where a new interpreter finds ``serve`` and its ``prepare`` (a function importing what
    ``serve`` needs; run in the child before confinement, or here before a fork). Raises :class:`ChildFailed`
    when a limit is hit or the child gives no reply.
    """
    if confinement is None and _can_fork():
        getattr(importlib.import_module(entry.module), entry.prepare)()  # imported once, here, for every fork
        child = _forked(serve, request, limits)
    else:
        child = _spawned(entry, request, limits, confinement)
    with child as (pid, fd):
        _running.add(pid)
        try:
            ended = _read_reply(pid, fd, limits)
        finally:
            _running.discard(pid)
    if ended.why is not None:
        raise ChildFailed(ended.why)
    if ended.data:
        try:
            reply = json.loads(ended.data.decode("utf-8", "surrogatepass"))
        except (UnicodeDecodeError, json.JSONDecodeError):
            reply = None
        if isinstance(reply, dict):
            limit = reply.get("limit")
            if isinstance(limit, str):
                raise ChildFailed(limit)
            return reply
    status = ended.status
    if status in (-signal.SIGXCPU, -signal.SIGKILL):
        raise ChildFailed("cpu")
    how = f"was killed by signal {-status}" if status is not None and status < 0 else f"exited with status {status}"
    raise ChildFailed(None, f"the child process {how} without an answer")
