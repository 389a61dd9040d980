"""Publish TF: dynamic transforms on ``/tf`` and static ones on ``/tf_static``.

``TfPublisher`` uses ``tf2_ros.TransformBroadcaster`` / ``StaticTransformBroadcaster`` when tf2_ros
imports; otherwise (the PyPI kilted wheels have no tf2_ros) it publishes ``tf2_msgs/TFMessage`` itself
with the topics and QoS tf2_ros uses, which nothing on the wire can tell apart:

* ``/tf``: reliable, volatile, keep last 100;
* ``/tf_static``: reliable, transient_local, keep last 1. The static set is one accumulated
  ``TFMessage`` keyed by ``child_frame_id``; sending a frame again overwrites it in place, and the
  whole set is republished so late joiners get every static frame from the one latched message.

``send_serialized`` publishes an already serialised ``TFMessage`` on ``/tf`` (no Python message built).

``replace_static`` drops the accumulated set first, so frames removed from a model vanish for late
joiners too; an emptied set is published as an empty message.

Both backends have exactly these semantics. The ``tf2_ros`` backend creates its publishers through
``tf2_ros.TransformBroadcaster`` / ``StaticTransformBroadcaster`` but builds the ``/tf_static`` message
itself: upstream tf2_ros_py 0.39.1's ``StaticTransformBroadcaster.sendTransform`` keeps the first
transform per child frame (ros2/geometry2 issue #818), cannot drop a frame and sends no empty set.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from types import ModuleType
from typing import Any

from geometry_msgs.msg import TransformStamped
from rclpy.node import Node
from rclpy.serialization import deserialize_message
from tf2_msgs.msg import TFMessage

from robot_state_format.ros.qos import TF_QOS, TF_STATIC_QOS

TF_TOPIC = "/tf"
TF_STATIC_TOPIC = "/tf_static"

BACKENDS = ("auto", "tf2_ros", "native")

__all__ = ["BACKENDS", "TF_STATIC_TOPIC", "TF_TOPIC", "TfPublisher", "tf2_ros_available"]


def _tf2_ros() -> ModuleType | None:
    """``tf2_ros`` (a ROS distro's, optional: the PyPI wheels have none), or None."""
    try:
        import tf2_ros
    except ImportError:
        return None
    module: ModuleType = tf2_ros
    return module


def tf2_ros_available() -> bool:
    """True when ``tf2_ros`` (a ROS distro's) can be imported."""
    return _tf2_ros() is not None


def _as_list(transforms: TransformStamped | Iterable[TransformStamped]) -> list[TransformStamped]:
    if isinstance(transforms, TransformStamped):
        return [transforms]
    return list(transforms)


class TfPublisher:
    """Send dynamic and static transforms from ``node``.

    ``backend``: ``"auto"`` (tf2_ros when importable, else native), ``"tf2_ros"`` or ``"native"``.
    """

    def __init__(self, node: Node, backend: str = "auto") -> None:
        if backend not in BACKENDS:
            raise ValueError(f"backend must be one of {BACKENDS}, not {backend!r}")
        tf2_ros = _tf2_ros() if backend != "native" else None
        if backend == "auto":
            backend = "tf2_ros" if tf2_ros is not None else "native"
        elif backend == "tf2_ros" and tf2_ros is None:
            raise ImportError("backend 'tf2_ros': tf2_ros cannot be imported (no ROS distro sourced)")
        self._node = node
        self.backend = backend
        self._tf2_ros = tf2_ros
        self._static: dict[str, TransformStamped] = {}
        self._static_broadcaster: Any = None
        self._static_pub: Any = None
        if tf2_ros is not None and backend == "tf2_ros":
            self._broadcaster: Any = tf2_ros.TransformBroadcaster(node, qos=TF_QOS)
            self._tf_pub: Any = None
        else:
            self._broadcaster = None
            self._tf_pub = node.create_publisher(TFMessage, TF_TOPIC, TF_QOS)

    # -- dynamic -------------------------------------------------------------------------------
    def send(self, transforms: TransformStamped | Iterable[TransformStamped]) -> None:
        """Publish ``transforms`` (one message) on ``/tf``."""
        items = _as_list(transforms)
        if not items:
            return
        if self._broadcaster is not None:
            self._broadcaster.sendTransform(items)
        else:
            self._tf_pub.publish(TFMessage(transforms=items))

    def send_serialized(self, data: bytes) -> None:
        """Publish one pre-serialised ``tf2_msgs/TFMessage`` (CDR bytes, e.g. from
        ``rclpy.serialization.serialize_message``) on ``/tf`` without decoding it."""
        pub = self._tf_pub
        if pub is None:  # tf2_ros backend: the broadcaster's own publisher (one /tf writer per object)
            pub = getattr(self._broadcaster, "pub_tf", None)
        if pub is not None:
            pub.publish(bytes(data))
            return
        self.send(deserialize_message(bytes(data), TFMessage).transforms)

    def raw_sender(self) -> Callable[[bytes | bytearray], None]:
        """:meth:`send_serialized` without its checks and copy: the publisher's own ``publish_raw``
        (it copies the bytes before it returns, so a buffer may be rewritten afterwards)."""
        pub = self._tf_pub if self._broadcaster is None else getattr(self._broadcaster, "pub_tf", None)
        if pub is None:
            return lambda data: self.send_serialized(bytes(data))
        publish_raw: Callable[[bytes | bytearray], None] = pub.handle.publish_raw
        return publish_raw

    # -- static --------------------------------------------------------------------------------
    @property
    def static_transforms(self) -> list[TransformStamped]:
        """The accumulated static set, in first-sent order."""
        return list(self._static.values())

    def send_static(self, transforms: TransformStamped | Iterable[TransformStamped]) -> None:
        """Add or overwrite (by ``child_frame_id``) static transforms and republish the whole set."""
        for t in _as_list(transforms):
            self._static[t.child_frame_id] = t
        self._publish_static()

    def replace_static(self, transforms: TransformStamped | Iterable[TransformStamped]) -> None:
        """Make ``transforms`` the whole static set (frames not in it are dropped) and republish.

        An empty set is published too (an empty ``TFMessage``): late joiners then get no old frame.
        """
        self._static = {}
        for t in _as_list(transforms):
            self._static[t.child_frame_id] = t
        self._publish_static()

    def _static_writer(self) -> Any:
        if self._static_pub is None:
            if self._tf2_ros is not None and self.backend == "tf2_ros":
                # The broadcaster makes the /tf_static publisher (tf2_ros's topic and QoS); the message is
                # ours. Its own sendTransform cannot give the native semantics: tf2_ros_py <= 0.39.1 keeps
                # the FIRST transform sent per child frame (ros2/geometry2#818, fixed after 0.39.1), it
                # never drops a frame, and it sends nothing new for an empty set.
                self._static_broadcaster = self._tf2_ros.StaticTransformBroadcaster(self._node, qos=TF_STATIC_QOS)
                self._static_pub = self._static_broadcaster.pub_tf
            else:
                self._static_pub = self._node.create_publisher(TFMessage, TF_STATIC_TOPIC, TF_STATIC_QOS)
        return self._static_pub

    def _publish_static(self) -> None:
        # One latched message (depth 1) holding the whole set: it replaces the previous one for late joiners.
        self._static_writer().publish(TFMessage(transforms=list(self._static.values())))

    def destroy(self) -> None:
        """Destroy this object's publishers (the node stays)."""
        tf_pub = self._tf_pub if self._broadcaster is None else getattr(self._broadcaster, "pub_tf", None)
        for pub in (tf_pub, self._static_pub):
            if pub is not None:
                self._node.destroy_publisher(pub)
        self._tf_pub = None
        self._broadcaster = None
        self._static_pub = None
        self._static_broadcaster = None
