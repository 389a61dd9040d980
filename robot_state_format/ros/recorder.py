"""The node side of a recording: which topics, subscribed how, written into a :class:`RecordingWriter`.

As ``ros2 bag record`` does, a topic is added once a publisher of it is seen in the ROS graph
(checked at start and on every :meth:`SessionRecorder.poll`): its type and type hash come from the
publishers' endpoint information, the offered QoS profiles of all its publishers go into the
channel metadata, and the subscription asks for what every publisher offers (reliable only when
all are reliable; transient_local only when all are: ``/tf_static`` and ``robot_description``, whose
publishers are transient_local, are received even when published before the recording began).
Topics the node already subscribes to (``world_state``, ``joint_states``) are written from the
node's own subscriptions through :meth:`SessionRecorder.write_input`.
"""

from __future__ import annotations

import importlib
import time
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from rclpy.node import Node
from rclpy.qos import DurabilityPolicy, HistoryPolicy, QoSProfile, ReliabilityPolicy

from robot_state_format.recording import TOPIC_TYPES, RecordingWriter
from robot_state_format.recording.bagmeta import (
    BEST_EFFORT_VOLATILE,
    RELIABLE_TRANSIENT_LOCAL,
    RELIABLE_VOLATILE,
)

VOLATILE_DEPTH = 1000  # bursts of /tf at 1 kHz are kept while the executor is busy
LATCHED_DEPTH = 100

# the QoS recorded for a topic whose publisher is not in the graph yet when its first message arrives
_CONVENTIONAL = {"world_state": RELIABLE_TRANSIENT_LOCAL, "joint_states": BEST_EFFORT_VOLATILE,
                 "tf": RELIABLE_VOLATILE, "tf_static": {**RELIABLE_TRANSIENT_LOCAL},
                 "robot_description": RELIABLE_TRANSIENT_LOCAL}


def _duration(d: Any) -> dict[str, int]:
    sec, nsec = divmod(int(d.nanoseconds), 1_000_000_000)
    return {"sec": sec, "nsec": nsec}


def qos_dict(q: QoSProfile) -> dict[str, Any]:
    """An rclpy QoS profile in rosbag2's spelling (``keep_last``, ``transient_local``, durations)."""
    return {
        "history": q.history.name.lower(),
        "depth": int(q.depth),
        "reliability": q.reliability.name.lower(),
        "durability": q.durability.name.lower(),
        "deadline": _duration(q.deadline),
        "lifespan": _duration(q.lifespan),
        "liveliness": q.liveliness.name.lower(),
        "liveliness_lease_duration": _duration(q.liveliness_lease_duration),
        "avoid_ros_namespace_conventions": bool(q.avoid_ros_namespace_conventions),
    }


def request_qos(offered: Iterable[QoSProfile]) -> QoSProfile:
    """The subscription QoS that matches every publisher (rosbag2's ``adapt_request_to_offers``)."""
    offers = list(offered)
    reliable = bool(offers) and all(q.reliability == ReliabilityPolicy.RELIABLE for q in offers)
    latched = bool(offers) and all(q.durability == DurabilityPolicy.TRANSIENT_LOCAL for q in offers)
    return QoSProfile(history=HistoryPolicy.KEEP_LAST, depth=LATCHED_DEPTH if latched else VOLATILE_DEPTH,
                      reliability=ReliabilityPolicy.RELIABLE if reliable else ReliabilityPolicy.BEST_EFFORT,
                      durability=DurabilityPolicy.TRANSIENT_LOCAL if latched else DurabilityPolicy.VOLATILE)


def message_class(type_name: str) -> Any:
    """The Python class of ``pkg/msg/Type`` (ImportError/AttributeError when not installed)."""
    pkg, _, name = type_name.split("/")
    return getattr(importlib.import_module(f"{pkg}.msg"), name)


class SessionRecorder:
    """Record ``topics`` (resolved names) into ``writer`` from ``node``.

    ``inputs`` maps the resolved names the node subscribes to itself to their types; their messages
    arrive through :meth:`write_input`.  ``on_error(exc)`` is called when writing fails (full disk):
    the recording is over then.
    """

    def __init__(self, node: Node, writer: RecordingWriter, topics: Iterable[str], inputs: Mapping[str, str],
                 on_error: Callable[[BaseException], None]) -> None:
        self.node = node
        self.writer = writer
        self.topics = list(dict.fromkeys(topics))
        self.inputs = dict(inputs)
        self.pending = list(self.topics)
        self._subs: dict[str, Any] = {}
        self._on_error = on_error
        self._warned: set[str] = set()
        self.failed = False
        self.poll()

    @property
    def directory(self) -> Any:
        return self.writer.directory

    @property
    def message_count(self) -> int:
        return self.writer.message_count

    def _warn_once(self, topic: str, text: str) -> None:
        if topic not in self._warned:
            self._warned.add(topic)
            self.node.get_logger().warning(f"record {topic}: {text}")

    def poll(self) -> None:
        """Add every pending topic that has a publisher now."""
        for topic in list(self.pending):
            self._try_add(topic)

    def _try_add(self, topic: str) -> bool:
        infos = self.node.get_publishers_info_by_topic(topic)
        if not infos:
            return False
        type_name = self.inputs.get(topic) or infos[0].topic_type
        same = [i for i in infos if i.topic_type == type_name]
        thash = str(same[0].topic_type_hash) if same else ""
        self._add(topic, type_name, [qos_dict(i.qos_profile) for i in same],
                  thash if thash.startswith("RIHS01_") else None, request_qos(i.qos_profile for i in same))
        return True

    def _add(self, topic: str, type_name: str, offered: list[dict[str, Any]], type_hash: str | None,
             qos: QoSProfile | None) -> None:
        self.pending.remove(topic)
        cls = None
        if topic not in self.inputs:
            try:
                cls = message_class(type_name)
            except (ImportError, AttributeError, ValueError):
                self._warn_once(topic, f"message type {type_name} is not installed: not recorded")
                return
        try:
            self.writer.add_topic(topic, type_name, offered, type_hash=type_hash)
        except Exception as exc:  # noqa: BLE001 a topic the writer refuses is warned about, never fatal
            self._warn_once(topic, f"not recorded: {exc}")
            return
        if cls is not None:
            def on_message(raw: bytes, info: Any, t: str = topic) -> None:
                self._write(t, raw, info.get("source_timestamp") if isinstance(info, dict) else None)

            self._subs[topic] = self.node.create_subscription(cls, topic, on_message, qos or 10, raw=True)

    def write_input(self, topic: str, raw: bytes) -> None:
        """A message the node received on one of its own subscriptions (ignored unless recorded)."""
        if topic in self.pending and not self._try_add(topic) and topic in self.pending:
            kind = topic.rsplit("/", 1)[-1]
            self._add(topic, self.inputs[topic], [_CONVENTIONAL.get(kind, {})], None, None)
        if self.writer.has_topic(topic):
            self._write(topic, raw, None)

    def _write(self, topic: str, raw: bytes, publish_ns: int | None) -> None:
        if self.writer.closed or self.failed:
            return
        try:
            self.writer.write(topic, raw, time.time_ns(), publish_ns or None)
        except Exception as exc:  # noqa: BLE001 a failed write stops the recording, never the node
            self.failed = True
            self.unsubscribe()
            self._on_error(exc)

    def maybe_flush(self) -> None:
        """Look for publishers of pending topics and end the chunk when its time has come."""
        if self.pending:
            self.poll()
        self.writer.maybe_flush()

    def unsubscribe(self) -> None:
        """Drop this recording's own subscriptions (rclpy defers the destruction of one in use)."""
        for sub in self._subs.values():
            self.node.destroy_subscription(sub)
        self._subs.clear()

    def close(self) -> Any:
        """Unsubscribe and close the recording; returns its directory."""
        self.unsubscribe()
        return self.writer.close()


def default_type(topic: str) -> str | None:
    """The type of one of the default topics, by the last part of its name."""
    return TOPIC_TYPES.get(topic.rsplit("/", 1)[-1])
