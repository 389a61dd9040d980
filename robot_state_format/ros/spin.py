"""Spin nodes until SIGINT/SIGTERM without rclpy's shutdown races (docs/testing.md).

A plain ``rclpy.spin`` with rclpy's own signal handlers sometimes loses the wake-up (``spin`` then
blocks until another message arrives) or raises ``RCLError: context is not valid`` when the context is
shut down between two waits. Here rclpy is initialised without its handlers; SIGINT/SIGTERM only set a
:class:`Stop` flag, and :func:`spin` waits in bounded steps (``timeout_sec``), so a stop is seen within
one step and the context is shut down by :func:`finish`, after the node's own clean-up.

Typical ``main``::

    stop = init(args)
    node = None
    try:
        node = MyNode()
        spin(node, stop)
    finally:
        finish(stop, node)
"""

from __future__ import annotations

import os
import re
import signal
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Sequence
from types import FrameType
from typing import Any, TypeVar

import rclpy
from rclpy.exceptions import NameValidationException
from rclpy.executors import ExternalShutdownException, SingleThreadedExecutor
from rclpy.node import Node
from rclpy.signals import SignalHandlerOptions

from robot_state_format.lazy_modules import MissingDependencyError
from robot_state_format.limits import os_error_text, read_input_file, shown_path
from robot_state_format.model.xacro.child_control import add_interrupt
from robot_state_format.ros import log_sites
from robot_state_format.ros.memory import release_free_memory

STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM)
# A stop not acted on within this many seconds (the main thread blocked outside the spin loop, or in
# a callback) is forced: KeyboardInterrupt in the main thread, then, the same time later, exit.
FORCE_STOP_SECONDS = 4.0
ROS_PATH_OPTIONS = ("--params-file", "--log-config-file")  # files rcl opens itself (a FIFO would block it)


class Interrupted(KeyboardInterrupt):
    """A stop forced in the main thread (a second SIGINT/SIGTERM, or one not acted on in time)."""

    def __init__(self, signum: int) -> None:
        super().__init__(signum)
        self.signum = signum


class RosArgumentsError(Exception):
    """rcl refuses the ROS arguments (a params file that cannot be read or parsed): one line, exit 2."""


class Stop:
    """A flag set by SIGINT/SIGTERM (once :meth:`install` ran) or by :meth:`request`."""

    def __init__(self) -> None:
        self.requested = False
        self.signum: int | None = None
        self._old: dict[int, Any] = {}
        self._watchdog: threading.Thread | None = None
        self._unhook: Callable[[], None] | None = None

    def request(self, signum: int | None = None) -> None:
        self.requested = True
        if signum is not None and self.signum is None:
            self.signum = signum

    def _handler(self, signum: int, frame: FrameType | None) -> None:
        if self._watchdog is not None and self._old:  # a second signal, or the watchdog's: not acted on
            raise Interrupted(self.signum or signum)
        self.request(signum)
        if self._old:
            self._watchdog = threading.Thread(target=self._force, args=(signum,), daemon=True,
                                              name="stop-watchdog")
            self._watchdog.start()

    def _force(self, signum: int) -> None:
        """The stop not acted on in time (the main thread is blocked): interrupt it, then exit."""
        time.sleep(FORCE_STOP_SECONDS)
        main = threading.main_thread().ident
        if self._old and main is not None:
            signal.pthread_kill(main, signum)  # EINTR in the blocked call; the handler raises
        time.sleep(FORCE_STOP_SECONDS)
        if self._old:
            print(f"{sys.argv[0]}: stopped by signal {signum} (blocked for {2 * FORCE_STOP_SECONDS:g} s)",
                  file=sys.stderr)
            os._exit(128 + signum)

    def install(self) -> Stop:
        """Handle SIGINT and SIGTERM with this flag (main thread only); returns self."""
        for s in STOP_SIGNALS:
            self._old[s] = signal.signal(s, self._handler)
        if self._unhook is None:  # a xacro expansion being waited for stops too (model/xacro/bounded_child.py)
            self._unhook = add_interrupt(lambda: self.requested)
        return self

    def restore(self) -> None:
        """Put back the handlers :meth:`install` replaced."""
        for s, h in self._old.items():
            signal.signal(s, h)
        self._old.clear()
        if self._unhook is not None:
            self._unhook()
            self._unhook = None


def ros_args_problem(args: Sequence[str] | None) -> str | None:
    """Why a file the ROS arguments name (``--params-file``, ``--log-config-file``) cannot be given
    to rcl, which opens it blocking and reads it whole: missing, a FIFO, a device, too large."""
    words = list(args or ())
    for i, word in enumerate(words[:-1]):
        if word in ROS_PATH_OPTIONS:
            try:
                read_input_file(words[i + 1])  # the gate: a regular file, bounded, never a blocking open
            except OSError as exc:
                return f"{word} {shown_path(words[i + 1])}: {os_error_text(exc)}"
    return None


def name_error_line(exc: BaseException) -> str:
    """rclpy's name error (``Invalid node name: ...:\n  'bad-name'\n      ^``) as one line."""
    return " ".join(part.strip() for part in str(exc).splitlines() if part.strip() and part.strip() != "^")


def _rcl_error_line(exc: BaseException) -> str:
    """rcl's error as one line, without its C source locations (``..., at /src/parse.c:885``)."""
    text = " ".join(str(exc).split())
    return re.sub(r"(,? at /\S+:\d+)+", "", text).strip()


def init(args: list[str] | None = None) -> Stop:
    """``rclpy.init`` without rclpy's signal handlers, and a :class:`Stop` handling SIGINT/SIGTERM.

    Raises :class:`RosArgumentsError` (one line) when rcl refuses the ROS arguments."""
    problem = ros_args_problem(args)
    if problem is not None:
        raise RosArgumentsError(problem)
    stop = Stop().install()
    sys.stderr.flush()
    try:
        saved = os.dup(2)
    except OSError:  # no standard error at all: nothing to keep quiet
        saved = -1
    with tempfile.TemporaryFile() as logged:  # rcl logs its refusal too: the error is said once, below
        if saved >= 0:
            os.dup2(logged.fileno(), 2)
        try:
            rclpy.init(args=args, signal_handler_options=SignalHandlerOptions.NO)
        except RuntimeError as exc:  # rclpy's RCLError: a params file rcl cannot parse (a YAML alias)
            stop.restore()
            raise RosArgumentsError(_rcl_error_line(exc)) from None
        except BaseException:
            stop.restore()
            raise
        finally:
            if saved >= 0:
                os.dup2(saved, 2)
                os.close(saved)
        logged.seek(0)
        said = logged.read(1 << 16)
        if said and saved >= 0:
            os.write(2, said)  # what rcl said on a good start (warnings) goes out as it was
    return stop


def spin(nodes: Node | list[Node], stop: Stop, *, until: float | None = None,
         done: Callable[[], bool] | None = None, timeout_sec: float = 0.25) -> bool:
    """Execute the callbacks of ``nodes`` until ``stop`` is requested, monotonic ``until`` passes,
    ``done()`` is true or the context is shut down; returns ``stop.requested``.

    Waits last at most ``timeout_sec``. An error raised once the stop was requested or the context is
    down is a side effect of stopping and ignored; earlier ones propagate.
    """
    node_list = nodes if isinstance(nodes, list) else [nodes]
    context = node_list[0].context if node_list else None
    executor = SingleThreadedExecutor(context=context)
    for n in node_list:
        executor.add_node(n)
    try:
        while not stop.requested and context is not None and context.ok():
            if until is not None and time.monotonic() >= until:
                break
            if done is not None and done():
                break
            wait = timeout_sec if until is None else max(0.0, min(timeout_sec, until - time.monotonic()))
            executor.spin_once(timeout_sec=wait)
    except (KeyboardInterrupt, ExternalShutdownException):
        stop.request()
    except Exception:
        if not stop.requested and context is not None and context.ok():
            raise
    finally:
        for n in node_list:
            executor.remove_node(n)
        executor.shutdown(timeout_sec=0)
    if context is not None and not context.ok():
        stop.request()
    return stop.requested


def finish(stop: Stop, *nodes: Node | None) -> None:
    """Destroy ``nodes``, shut rclpy down and restore the signal handlers (errors of a context that is
    already down are ignored)."""
    try:
        for n in nodes:
            if n is not None:
                try:
                    n.destroy_node()
                except Exception:
                    if rclpy.ok():
                        raise
        rclpy.try_shutdown()
    finally:
        stop.restore()


Failure = tuple["type[BaseException] | tuple[type[BaseException], ...]", str, int]
N = TypeVar("N", bound=Node)


def run_main(prog: str, make: Callable[[], N], args: list[str] | None, failures: Sequence[Failure],
             on_exit: Callable[[N], None] | None = None, *,
             until: Callable[[N], float | None] | None = None,
             spin_node: Callable[[N, Stop, float | None], bool] | None = None) -> int:
    """A node's console script: init, make the node, spin until SIGINT/SIGTERM, finish.

    ``failures``: ``(exception types, text before the error, exit code)``, the first that matches an
    exception raised while making or spinning the node is printed as ``PROG: error: TEXT<exc>`` on
    stderr and gives the exit code; any other exception propagates. ``on_exit(node)`` runs before
    the node is destroyed (when it was made). ``until(node)``: a monotonic time to stop at (None: never).
    ``spin_node(node, stop, until)``: runs the node instead of :func:`spin` (the same contract).
    """
    try:
        stop = init(args if args is not None else sys.argv)
    except RosArgumentsError as exc:
        print(f"{prog}: error: {exc}", file=sys.stderr)
        return 2
    log_sites.prime()  # the node's first log line without inspect's walk over every module (~13 ms)
    node: N | None = None
    code = 0
    try:
        node = make()
        release_free_memory()  # what start-up freed (ros/memory.py)
        stop_at = until(node) if until is not None else None
        if spin_node is not None:
            spin_node(node, stop, stop_at)
        else:
            spin(node, stop, until=stop_at)
    except Interrupted:  # stopped while blocked outside the spin loop: a stop all the same (exit 0)
        code = 0
    except Exception as exc:
        # one cause, one code; -r __node:=bad-name
        for types, lead, exit_code in [(MissingDependencyError, "", 2), *failures, (NameValidationException, "", 2)]:
            if isinstance(exc, types):
                text = name_error_line(exc) if isinstance(exc, NameValidationException) else f"{exc}"
                print(f"{prog}: error: {lead}{text}", file=sys.stderr)
                code = exit_code
                break
        else:
            raise
    finally:
        try:
            if node is not None and on_exit is not None:
                on_exit(node)
        except Interrupted:  # the clean-up itself blocked past the watchdog: the node goes all the same
            pass
        finally:
            finish(stop, node)
    return code
