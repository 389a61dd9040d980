"""A lean wait loop for a node with one hot subscription: its messages taken raw, everything else by rclpy.

rclpy's ``SingleThreadedExecutor.spin_once`` rebuilds a wait set from every entity of every node, wraps
each ready callback in a task and converts the message to a Python object: at a JointState per
millisecond that costs more than the state_publisher's own work (docs/performance.md "against
robot_state_publisher"). :func:`spin_hot` waits instead on one ``rclpy`` wait set holding the hot
subscription, the node's other subscriptions, timers, services, clients and guard conditions:

* when the hot subscription is ready, every message waiting is taken raw (bytes) and handed to
  ``on_raw``, without an executor;
* when anything else woke the wait (a timer due, a service request, a parameter change, a guard
  condition; or the wait timed out), the executor's ``spin_once(timeout_sec=0)`` runs what is ready,
  as ``rclpy.spin`` would: timers, services and parameters are answered as before. Guard conditions
  the wait consumed are triggered again first, so the executor sees them;
* waitables (QoS event handlers) are left to that ``spin_once``, which also runs every
  :data:`POLL_S` while the hot subscription keeps the loop busy;
* while hot messages keep coming (one within :data:`BUSY_S`), most waits leave the services out (seven
  parameter services and the type description service: rmw attaches each to every wait, ~15 us a
  message at 1 kHz on the project's VM); the first wait after :data:`SERVICE_POLL_S` has them again. A
  request is answered within about that much while the node is busy (within :data:`BUSY_S` once the
  stream stops), at once while it is idle. Timers, subscriptions, clients and guard conditions stay in
  every wait;
* the entities are read again after every ``spin_once`` (its callbacks may create or destroy some).

Stopping is :func:`robot_state_format.ros.spin.spin`'s: a :class:`~robot_state_format.ros.spin.Stop`
flag seen within ``timeout_sec``, errors raised once stopping ignored.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from rclpy.executors import ExternalShutdownException, SingleThreadedExecutor
from rclpy.impl.implementation_singleton import rclpy_implementation as _rclpy
from rclpy.node import Node
from rclpy.subscription import Subscription

from robot_state_format.ros.spin import Stop

POLL_S = 0.5  # the executor runs at least this often while hot messages keep the loop busy
DRAIN = 1000  # hot messages taken per wake-up at most (then the rest of the node gets its turn)
BUSY_S = 0.1  # a hot message within this long: the node is busy (services looked at every SERVICE_POLL_S)
BUSY_NS = int(BUSY_S * 1e9)
SERVICE_POLL_S = 0.05


class _Entities:
    """The handles of a node's entities, apart from the hot subscription, and a wait set for them."""

    def __init__(self, node: Node, hot: Subscription[Any]) -> None:
        self._node = node
        self._hot = hot
        self.refresh()

    def refresh(self) -> None:
        node = self._node
        self.guards = list(node.guards)
        self.subs = [s.handle for s in node.subscriptions if s is not self._hot]
        self.timers = [t.handle for t in node.timers]
        self.services = [s.handle for s in node.services]
        self.clients = [c.handle for c in node.clients]
        self.guard_handles = [g.handle for g in self.guards]
        context = node.context.handle
        if context is None:
            raise RuntimeError("the node's context is shut down")
        self.wait_set = _rclpy.WaitSet(1 + len(self.subs), len(self.guards), len(self.timers), len(self.clients),
                                       len(self.services), 0, context)

    def fill(self, services: bool = True) -> Any:
        """The wait set with every entity added again (a wait leaves only the ready ones in it); without the
        services when ``services`` is false."""
        ws = self.wait_set
        ws.clear_entities()
        ws.add_subscription(self._hot.handle)  # index 0
        for s in self.subs:
            ws.add_subscription(s)
        for t in self.timers:
            ws.add_timer(t)
        if services:
            for srv in self.services:
                ws.add_service(srv)
        for c in self.clients:
            ws.add_client(c)
        for g in self.guard_handles:
            ws.add_guard_condition(g)
        return ws


def _any_ready(ws: Any) -> bool:
    """Whether a subscription, timer, guard condition or client is ready after a wait (else it timed out)."""
    return any(ws.get_ready_entities(kind) for kind in ("subscription", "timer", "guard_condition", "client"))


def spin_hot(node: Node, stop: Stop, hot: Subscription[Any], on_raw: Callable[[bytes], None], *,
             until: float | None = None, timeout_sec: float = 0.25) -> bool:
    """Run ``node`` until ``stop`` is requested, monotonic ``until`` passes or the context is shut down;
    messages of ``hot`` go to ``on_raw`` as CDR bytes. Returns ``stop.requested``."""
    context = node.context
    executor = SingleThreadedExecutor(context=context)
    executor.add_node(node)
    entities = _Entities(node, hot)
    timeout_ns = int(timeout_sec * 1e9)
    take = hot.handle.take_message
    msg_type = hot.msg_type
    now = time.monotonic()
    next_poll = now + POLL_S
    last_hot = -BUSY_S  # when a hot message was last taken
    next_services = now  # while busy: when the services are looked at next
    try:
        while not stop.requested and context.ok():
            now = time.monotonic()
            wait_ns = timeout_ns
            if until is not None:
                left = until - now
                if left <= 0:
                    break
                wait_ns = min(wait_ns, int(left * 1e9))
            services = now - last_hot >= BUSY_S or now >= next_services
            if services:
                next_services = now + SERVICE_POLL_S
            else:  # if the stream stops, the services are back in the wait within BUSY_S
                wait_ns = min(wait_ns, BUSY_NS)
            ws = entities.fill(services)
            ws.wait(wait_ns)
            run_executor = not ws.is_ready("subscription", 0)
            if run_executor and not services and not _any_ready(ws):
                continue  # a wait without the services ran out: they are looked at next
            if not run_executor:
                for _ in range(DRAIN):
                    taken = take(msg_type, True)
                    if taken is None:
                        break
                    on_raw(taken[0])
                last_hot = time.monotonic()
                if entities.guards:
                    ready = ws.get_ready_entities("guard_condition")
                    if ready:
                        for g in entities.guards:
                            if g.handle.pointer in ready:
                                g.trigger()  # the wait consumed it: the executor's wait must see it too
                        run_executor = True
                if not run_executor and time.monotonic() >= next_poll:
                    run_executor = True
            if run_executor:
                executor.spin_once(timeout_sec=0)
                entities.refresh()
                next_poll = time.monotonic() + POLL_S
    except (KeyboardInterrupt, ExternalShutdownException):
        stop.request()
    except Exception:
        if not stop.requested and context.ok():
            raise
    finally:
        executor.remove_node(node)
        executor.shutdown(timeout_sec=0)
    if not context.ok():
        stop.request()
    return stop.requested


__all__ = ["BUSY_S", "DRAIN", "POLL_S", "SERVICE_POLL_S", "spin_hot"]
