"""Where the state_publisher's model is: TF from other publishers, without tf2_ros.

:class:`TfTree` keeps the newest transform per child frame and walks a chain of them
(:meth:`TfTree.lookup`). :class:`TfListener` fills it from ``/tf`` and ``/tf_static``: its
subscriptions live on a helper node that no executor spins and are read in batches
(:meth:`TfListener.drain`), so the node's own 1 kHz ``/tf`` never goes through an executor; messages
from the node's own publishers are skipped (by publisher gid, and by frame as a fallback).
"""

from __future__ import annotations

from collections.abc import Callable, Collection
from typing import Any

import numpy as np
from numpy.typing import NDArray
from rclpy.node import Node
from rclpy.serialization import deserialize_message
from tf2_msgs.msg import TFMessage

from robot_state_format.ros.messages import transform_msg_to_matrix
from robot_state_format.ros.qos import TF_LISTEN_DEPTH, TF_LISTEN_QOS, TF_STATIC_LISTEN_QOS

MAX_CHAIN = 256  # frames walked by one lookup (a loop in foreign TF ends there)


class TfTree:
    """Latest transform per child frame; enough to find a frame in another along a chain of parents."""

    def __init__(self) -> None:
        self.edges: dict[str, tuple[str, NDArray[np.float64]]] = {}
        self.version = 0

    def add(self, transforms: Any) -> None:
        """Take ``geometry_msgs/TransformStamped`` objects (leading slashes of frame ids ignored)."""
        for t in transforms:
            child = t.child_frame_id.lstrip("/")
            self.edges[child] = (t.header.frame_id.lstrip("/"), transform_msg_to_matrix(t.transform))
        self.version += 1

    def lookup(self, target: str, source: str) -> NDArray[np.float64] | None:
        """X_target_source by walking parents from ``source`` up to ``target``; None when not connected."""
        x = np.eye(4)
        frame = source
        for _ in range(MAX_CHAIN):
            if frame == target:
                return x
            edge = self.edges.get(frame)
            if edge is None:
                return None
            frame, x_pf = edge[0], edge[1]
            x = x_pf @ x
        return None


def gid_key(info: Any) -> bytes | None:
    """The publisher gid of a raw take's message info, as bytes (None when rclpy does not give it)."""
    if not info:
        return None
    gid = info.get("publisher_gid") if isinstance(info, dict) else None
    if not gid:
        return None
    data: Any = gid.get("data") if isinstance(gid, dict) else gid
    if data is None:
        return None
    try:
        return bytes(data)
    except (TypeError, ValueError):
        return None


class TfListener:
    """``/tf`` and ``/tf_static`` from every publisher but ``node``'s own, into a :class:`TfTree`.

    ``warn(key, text)`` reports unreadable messages (the node throttles it).
    """

    def __init__(self, node: Node, warn: Callable[[str, str], None]) -> None:
        self.tree = TfTree()
        self._node = node
        self._warn = warn
        self._own: set[bytes] = set()
        self._foreign: set[bytes] = set()
        # use_global_arguments=False: `ros2 launch` passes `-r __node:=NAME`, a process-wide remap that
        # would rename the helper to the node's name (two nodes of one name in `ros2 node list`). The
        # helper subscribes to the names as the node resolves them, so the user's remaps still apply.
        self._helper = Node(f"{node.get_name()}_tf_listener", namespace=node.get_namespace(),
                            context=node.context, start_parameter_services=False, enable_rosout=False,
                            use_global_arguments=False)
        self._subs = [
            self._helper.create_subscription(TFMessage, node.resolve_topic_name("/tf"), self._ignore, TF_LISTEN_QOS,
                                             raw=True),
            self._helper.create_subscription(TFMessage, node.resolve_topic_name("/tf_static"), self._ignore,
                                             TF_STATIC_LISTEN_QOS, raw=True),
        ]

    @staticmethod
    def _ignore(_msg: bytes) -> None:  # read by drain(), never by an executor
        return None

    def drain(self, own_frames: Collection[str]) -> None:
        """Take every message waiting; transforms of ``own_frames`` are dropped too (should the gid
        check be unavailable)."""
        for sub in self._subs:
            for _ in range(4 * TF_LISTEN_DEPTH):
                try:
                    with sub.handle:
                        taken = sub.handle.take_message(sub.msg_type, True)
                except Exception as exc:  # noqa: BLE001 rclpy's take errors: warned, the node keeps running
                    self._warn("tf-take", f"TF listener: {exc}")
                    break
                if taken is None:
                    break
                self.receive(taken[0], taken[1], own_frames)

    def receive(self, raw: bytes, info: Any, own_frames: Collection[str]) -> None:
        """One serialised TFMessage with its message info."""
        if self._is_own(gid_key(info)):
            return
        try:
            msg = deserialize_message(raw, TFMessage)
        except Exception as exc:  # noqa: BLE001 bytes rclpy cannot decode: warned, the node keeps running
            self._warn("tf-decode", f"TF message unreadable: {exc}")
            return
        self.tree.add([t for t in msg.transforms if t.child_frame_id not in own_frames])

    def _is_own(self, gid: bytes | None) -> bool:
        if gid is None:
            return False
        if gid in self._own:
            return True
        if gid not in self._foreign:
            self._classify()
            if gid in self._own:
                return True
            self._foreign.add(gid)
        return False

    def _classify(self) -> None:
        me, ns = self._node.get_name(), self._node.get_namespace()
        for topic in ("/tf", "/tf_static"):
            for info in self._node.get_publishers_info_by_topic(topic):
                if info.node_name == me and info.node_namespace == ns:
                    self._own.add(bytes(info.endpoint_gid))

    def destroy(self) -> None:
        self._helper.destroy_node()


__all__ = ["TfListener", "TfTree", "gid_key"]
