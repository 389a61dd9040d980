"""Replay as ROS messages: a restart file's joint arrays as a ``sensor_msgs/JointState`` (object or
CDR bytes), its static TF as ``geometry_msgs/TransformStamped``, and what a node keeps of a replay to
send again to late subscribers (:class:`Replayed`).

The ROS-free parts live in :mod:`robot_state_format.playback` (the replay of a restart file in
:mod:`~robot_state_format.playback.restart_replay`, timelines, the player) and
:mod:`robot_state_format.recording.cdr`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
from rclpy.serialization import serialize_message
from sensor_msgs.msg import JointState

from robot_state_format.playback.edges import Edge
from robot_state_format.playback.joint_arrays import JointStateFields
from robot_state_format.playback.restart_replay import RestartReplay
from robot_state_format.ros.messages import ns_to_stamp, transforms_to_msgs

__all__ = ["Replayed", "edge_msgs", "encode_joint_state", "joint_state_msg"]


@dataclass(frozen=True)
class Replayed:
    """What a node published of a replayed restart file, sent again when a subscriber matches:
    the ``world_state`` text, its own JointState arrays (None: the robots' went under their
    namespaces) and the static transforms."""

    text: str
    fields: JointStateFields | None
    transforms: list[Any] = field(default_factory=list)

    @classmethod
    def of(cls, replay: RestartReplay, robot: str | None, stamp_ns: int) -> Replayed:
        """What a node publishes of ``replay``: the JointState arrays of ``robot`` (None: none of its
        own) and the TF edges as messages stamped ``stamp_ns``."""
        return cls(replay.text, replay.joint_states[robot] if robot is not None else None,
                   edge_msgs(replay.edges, stamp_ns))


def joint_state_msg(fields: JointStateFields, stamp_ns: int) -> JointState:
    """A ``sensor_msgs/JointState`` holding ``fields``, stamped ``stamp_ns``."""
    msg = JointState()
    msg.header.stamp = ns_to_stamp(stamp_ns)
    msg.name = list(fields.name)
    msg.position = [float(v) for v in fields.position]
    msg.velocity = [float(v) for v in fields.velocity]
    msg.effort = [float(v) for v in fields.effort]
    return msg


def encode_joint_state(t_ns: int, fields: JointStateFields) -> bytes:
    """:func:`joint_state_msg` as CDR bytes (a played timeline event)."""
    return bytes(serialize_message(joint_state_msg(fields, t_ns)))


def edge_msgs(edges: list[Edge], stamp_ns: int) -> list[Any]:
    """Static TF edges ``(parent, child, X_parent_child)`` as ``geometry_msgs/TransformStamped``."""
    if not edges:
        return []
    return transforms_to_msgs([(p, c) for p, c, _ in edges], np.asarray([x for _, _, x in edges]), stamp_ns)
