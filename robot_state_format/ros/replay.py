"""Replay as ROS messages: a restart file's joint arrays as a ``sensor_msgs/JointState`` (object or
CDR bytes), its static TF as ``geometry_msgs/TransformStamped``.

The ROS-free parts live in :mod:`robot_state_format.playback` (joint arrays, replay edges, the fit
check, timelines, the player) and :mod:`robot_state_format.recording.cdr`.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from rclpy.serialization import serialize_message
from sensor_msgs.msg import JointState

from robot_state_format.model.types import Model
from robot_state_format.playback.edges import replay_edges
from robot_state_format.playback.joint_arrays import JointStateFields
from robot_state_format.ros.messages import ns_to_stamp, transforms_to_msgs
from robot_state_format.usdf.types import WorldState

__all__ = ["encode_joint_state", "joint_state_msg", "replay_transforms"]


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


def replay_transforms(state: WorldState, model: Model, stamp_ns: int, *, link_tf: bool) -> list[Any]:
    """Static TF of a restart file (:func:`robot_state_format.playback.edges.replay_edges`) as messages."""
    edges = replay_edges(state, model, link_tf=link_tf)
    if not edges:
        return []
    return transforms_to_msgs([(p, c) for p, c, _ in edges], np.asarray([x for _, _, x in edges]), stamp_ns)
