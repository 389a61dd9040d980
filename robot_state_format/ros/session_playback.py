"""Playback of a whole recorded session with TF computed from the joint states (``tf_source``
``computed``, :mod:`robot_state_format.playback.tf_source`): JointState CDR decoded with rclpy,
joint transforms encoded as TFMessage CDR.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import numpy as np
from numpy.typing import NDArray
from rclpy.serialization import deserialize_message
from sensor_msgs.msg import JointState

from robot_state_format.kinematics.fk import joint_transforms
from robot_state_format.kinematics.tree import compile_model
from robot_state_format.live.joint_cache import JointStateCache
from robot_state_format.model.types import WORLD, JointType, Model
from robot_state_format.playback.tf_source import (
    SESSION_TOPICS,
    TF_SOURCES,
    TF_TOPICS,
    plan_tf,
    recording_topic_kinds,
)
from robot_state_format.ros.messages import TfEncoder, joint_state_arrays

__all__ = ["SESSION_TOPICS", "TF_SOURCES", "TF_TOPICS", "ComputedTf", "plan_tf", "recording_topic_kinds",
           "session_publish"]


class ComputedTf:
    """Joint transforms of ``model`` from JointState CDR bytes: :meth:`dynamic` gives the ``/tf``
    TFMessage bytes for one message, :meth:`static` the fixed joints (for ``/tf_static``)."""

    def __init__(self, model: Model) -> None:
        self.model = model
        self.tree = compile_model(model)
        self.cache = JointStateCache(model, self.tree)
        frames: list[tuple[str, str]] = []
        world: list[int] = []
        fixed: list[int] = []
        for i, name in enumerate(self.tree.joint_names):
            joint = model.joints[name]
            frames.append((joint.parent, joint.child))
            if joint.parent == WORLD:
                world.append(i)
            if joint.type is JointType.FIXED:
                fixed.append(i)
        self.frames = frames
        self.world = np.array(world, dtype=np.intp)
        self.fixed = np.array(fixed, dtype=np.intp)
        self.encoder = TfEncoder(frames)

    def _transforms(self) -> NDArray[np.float64]:
        x = joint_transforms(self.tree, self.cache.q)
        if len(self.world):
            x = x.copy()
            x[self.world] = np.asarray(self.model.pose, dtype=np.float64) @ x[self.world]
        return x

    def static(self, stamp_ns: int) -> bytes:
        """TFMessage bytes of every fixed joint."""
        return self.encoder.encode(self.fixed, self._transforms()[self.fixed], stamp_ns)

    def dynamic(self, joint_state_cdr: bytes, now_ns: int) -> bytes | None:
        """TFMessage bytes of the joints this JointState moves (None: nothing to send)."""
        msg: Any = deserialize_message(joint_state_cdr, JointState)
        names, pos, vel, eff, stamp = joint_state_arrays(msg)
        up = self.cache.update(names, pos, vel, eff, stamp, now_ns)
        if not len(up.send):
            return None
        return self.encoder.encode(up.send, self._transforms()[up.send], up.stamp_ns)


def session_publish(publishers: Mapping[str, Any], computed: ComputedTf | None,
                    now_ns: Callable[[], int]) -> Callable[[str, bytes], None]:
    """The player's ``publish(topic, data)``: each played message on its publisher and, with
    ``computed``, the TF of each played joint_states on ``/tf``."""
    def publish(topic: str, data: bytes) -> None:
        publishers[topic].publish(data)
        if computed is not None and topic == "joint_states":
            tf = computed.dynamic(data, now_ns())
            if tf is not None:
                publishers["tf"].publish(tf)
    return publish
