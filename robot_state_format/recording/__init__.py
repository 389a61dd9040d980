"""MCAP recordings of a robot session that rosbag2, rosbags and Foxglove read (no rclpy).

* :mod:`.writer`: :class:`RecordingWriter` (a rosbag2 MCAP directory, crash-safe chunks);
* :mod:`.reader`: :func:`read_recording`, :func:`decode_all`, :func:`recording_channels`, :func:`message_summary`;
* :mod:`.cdr`: ``std_msgs/String`` CDR built and read, JointState and TFMessage stamps moved in place;
* :mod:`.bagmeta`: rosbag2 bag metadata (``metadata.yaml``, the MCAP ``rosbag2`` record, QoS text);
* :mod:`.msgdefs`: message definitions and REP-2011 type hashes;
* :mod:`.reindex`: ``metadata.yaml`` rebuilt from the readable chunks (``robot-state-format reindex``).
"""

from robot_state_format.recording.bagmeta import (
    BEST_EFFORT_VOLATILE,
    RELIABLE_TRANSIENT_LOCAL,
    RELIABLE_VOLATILE,
    qos_yaml,
)
from robot_state_format.recording.msgdefs import (
    CLOCK_TYPE,
    JOINT_STATE_TYPE,
    STRING_TYPE,
    TF_TYPE,
    definition,
    type_hash,
)
from robot_state_format.recording.reader import (
    RecordedMessage,
    decode_all,
    decoder_for,
    mcap_file,
    read_recording,
    recording_channels,
)
from robot_state_format.recording.reindex import reindex
from robot_state_format.recording.writer import RecordingError, RecordingFormatError, RecordingWriter

DEFAULT_TOPICS = ("/tf", "/tf_static", "robot_description", "joint_states", "world_state")
"""What ``record`` records unless told otherwise (relative names resolve in the node's namespace)."""

TOPIC_TYPES = {"tf": TF_TYPE, "tf_static": TF_TYPE, "robot_description": STRING_TYPE,
               "joint_states": JOINT_STATE_TYPE, "world_state": STRING_TYPE}
"""The type of each default topic, by the last part of its name."""

__all__ = [
    "BEST_EFFORT_VOLATILE", "CLOCK_TYPE", "DEFAULT_TOPICS", "JOINT_STATE_TYPE", "RELIABLE_TRANSIENT_LOCAL",
    "RELIABLE_VOLATILE", "STRING_TYPE", "TF_TYPE", "TOPIC_TYPES", "RecordedMessage", "RecordingError",
    "RecordingFormatError", "RecordingWriter", "decode_all", "decoder_for", "definition", "mcap_file", "qos_yaml", "read_recording",
    "recording_channels", "reindex", "type_hash",
]
