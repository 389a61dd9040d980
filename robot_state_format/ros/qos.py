"""Every QoS profile the nodes share, in one place (what each topic expects is decided here once).

TF follows tf2_ros exactly, so its listeners and broadcasters match ours (geometry2's
``TransformBroadcaster``, ``StaticTransformBroadcaster`` and ``TransformListener`` defaults):

* ``/tf`` publisher and listener: reliable, volatile, keep last 100 (:data:`TF_QOS`);
* ``/tf_static`` publisher: reliable, transient_local, keep last 1 (:data:`TF_STATIC_QOS`): one
  latched message holding the whole static set, so a late joiner gets every frame from it;
* ``/tf_static`` listener: reliable, transient_local, keep last 100 (:data:`TF_STATIC_LISTEN_QOS`):
  a reader keeps the latched message of every broadcaster it matched between two reads.

Latched state (``robot_description``, ``world_state``) is reliable, transient_local, keep last 1
(:data:`LATCHED`), as robot_state_publisher publishes ``robot_description``.
"""

from __future__ import annotations

from rclpy.qos import (
    DurabilityPolicy,
    HistoryPolicy,
    QoSProfile,
    ReliabilityPolicy,
    qos_profile_sensor_data,
    qos_profile_system_default,
)

LATCHED = QoSProfile(depth=1, history=HistoryPolicy.KEEP_LAST, reliability=ReliabilityPolicy.RELIABLE,
                     durability=DurabilityPolicy.TRANSIENT_LOCAL)
"""``robot_description``, ``world_state``: the last message, kept for late joiners."""

TF_QOS = QoSProfile(depth=100, history=HistoryPolicy.KEEP_LAST, reliability=ReliabilityPolicy.RELIABLE,
                    durability=DurabilityPolicy.VOLATILE)
"""``/tf`` (publisher and listener): tf2_ros's TransformBroadcaster / TransformListener."""

TF_STATIC_QOS = QoSProfile(depth=1, history=HistoryPolicy.KEEP_LAST, reliability=ReliabilityPolicy.RELIABLE,
                           durability=DurabilityPolicy.TRANSIENT_LOCAL)
"""``/tf_static`` publisher: tf2_ros's StaticTransformBroadcaster (one latched message, the whole set)."""

TF_STATIC_LISTEN_QOS = QoSProfile(depth=100, history=HistoryPolicy.KEEP_LAST,
                                  reliability=ReliabilityPolicy.RELIABLE,
                                  durability=DurabilityPolicy.TRANSIENT_LOCAL)
"""``/tf_static`` listener: tf2_ros's TransformListener (the latched set of each broadcaster)."""

TF_LISTEN_DEPTH = 200
"""/tf messages the state_publisher's model-pose listener keeps between two reads."""

TF_LISTEN_QOS = QoSProfile(depth=TF_LISTEN_DEPTH, history=HistoryPolicy.KEEP_LAST,
                           reliability=ReliabilityPolicy.RELIABLE, durability=DurabilityPolicy.VOLATILE)
"""``/tf`` read by the state_publisher's model-pose listener (read in batches, hence deeper than TF_QOS)."""

JOINT_STATES_QOS: dict[str, QoSProfile] = {
    "sensor_data": qos_profile_sensor_data,
    "reliable": QoSProfile(depth=100, history=HistoryPolicy.KEEP_LAST, reliability=ReliabilityPolicy.RELIABLE),
    "system_default": qos_profile_system_default,
}
"""The state_publisher's ``joint_states`` subscription, by its ``joint_states_qos`` parameter."""

JOINT_SOURCE_QOS = QoSProfile(depth=10, reliability=ReliabilityPolicy.RELIABLE)
"""``joint_states`` published by the joint-state source (joint_state_publisher's)."""

SENSOR_IN = QoSProfile(depth=100, history=HistoryPolicy.KEEP_LAST, reliability=ReliabilityPolicy.BEST_EFFORT,
                       durability=DurabilityPolicy.VOLATILE)
"""Sensor streams read (best effort, so any publisher matches), with room for a burst."""

STATE_OUT = QoSProfile(depth=10, history=HistoryPolicy.KEEP_LAST, reliability=ReliabilityPolicy.RELIABLE,
                       durability=DurabilityPolicy.TRANSIENT_LOCAL)
"""States re-published for late joiners (the last few kept)."""

STORE_JOINT_STATES_QOS: dict[str, QoSProfile] = {
    "sensor_data": SENSOR_IN,
    "reliable": QoSProfile(depth=1000, history=HistoryPolicy.KEEP_LAST, reliability=ReliabilityPolicy.RELIABLE,
                           durability=DurabilityPolicy.VOLATILE),
}
"""The state_store's ``joint_states`` subscription, by its ``joint_states_qos`` parameter (reliable: deep, so a
recording at a high rate loses nothing while the store is busy for a moment)."""

TF_PLAYBACK_QOS = QoSProfile(depth=1000, history=HistoryPolicy.KEEP_LAST, reliability=ReliabilityPolicy.RELIABLE,
                             durability=DurabilityPolicy.VOLATILE)
"""``/tf`` played back by the state_store: as tf2 publishes it (reliable, volatile) with a deeper history, so a
listener that falls behind for a moment at a high playback rate still gets every message."""

CLOCK_QOS = QoSProfile(depth=1, history=HistoryPolicy.KEEP_LAST, reliability=ReliabilityPolicy.BEST_EFFORT)
"""``/clock`` as simulators publish it."""

__all__ = ["CLOCK_QOS", "JOINT_SOURCE_QOS", "JOINT_STATES_QOS", "LATCHED", "SENSOR_IN", "STATE_OUT",
           "STORE_JOINT_STATES_QOS", "TF_LISTEN_DEPTH", "TF_LISTEN_QOS", "TF_PLAYBACK_QOS", "TF_QOS", "TF_STATIC_LISTEN_QOS", "TF_STATIC_QOS"]
