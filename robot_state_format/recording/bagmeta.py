"""rosbag2 bag metadata (version 9): ``metadata.yaml``, the MCAP ``rosbag2`` metadata record, QoS text.

rosbag2 keeps the same bag information in two places: ``metadata.yaml`` beside the files
(``rosbag2_bagfile_information: {...}``) and, in MCAP storage, a Metadata record named ``rosbag2``
whose one key ``serialized_metadata`` holds the same mapping as YAML (written when the bag is closed).
Each channel's metadata carries ``offered_qos_profiles`` (the publishers' QoS as a YAML list) and
``topic_type_hash`` (``RIHS01_...``).
"""

from __future__ import annotations

import contextlib
import os
import tempfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

VERSION = 9
ROS_DISTRO = "kilted"
INFINITE = {"sec": 9223372036, "nsec": 854775807}  # RMW_DURATION_INFINITE as rosbag2 writes it

RELIABLE_TRANSIENT_LOCAL = {"history": "keep_last", "depth": 1, "reliability": "reliable",
                            "durability": "transient_local"}
BEST_EFFORT_VOLATILE = {"history": "keep_last", "depth": 5, "reliability": "best_effort",
                        "durability": "volatile"}
RELIABLE_VOLATILE = {"history": "keep_last", "depth": 100, "reliability": "reliable", "durability": "volatile"}


def qos_profile(profile: Mapping[str, Any]) -> dict[str, Any]:
    """One QoS profile with every field rosbag2 writes (missing ones: its defaults)."""
    return {
        "history": profile.get("history", "keep_last"),
        "depth": int(profile.get("depth", 10)),
        "reliability": profile.get("reliability", "reliable"),
        "durability": profile.get("durability", "volatile"),
        "deadline": dict(profile.get("deadline", INFINITE)),
        "lifespan": dict(profile.get("lifespan", INFINITE)),
        "liveliness": profile.get("liveliness", "automatic"),
        "liveliness_lease_duration": dict(profile.get("liveliness_lease_duration", INFINITE)),
        "avoid_ros_namespace_conventions": bool(profile.get("avoid_ros_namespace_conventions", False)),
    }


def qos_list(profiles: Mapping[str, Any] | Sequence[Mapping[str, Any]] | None) -> list[dict[str, Any]]:
    """A profile, a list of profiles (one per publisher) or None (one default profile) → full profiles."""
    if profiles is None:
        return [qos_profile({})]
    if isinstance(profiles, Mapping):
        return [qos_profile(profiles)]
    return [qos_profile(p) for p in profiles]


def qos_yaml(profiles: Mapping[str, Any] | Sequence[Mapping[str, Any]] | None) -> str:
    """The ``offered_qos_profiles`` channel metadata text (a YAML list, version 9 spelling)."""
    text: str = yaml.safe_dump(qos_list(profiles), sort_keys=False)
    return text


@dataclass
class TopicInfo:
    """One topic of a bag: what metadata.yaml says about it."""

    name: str
    type: str
    qos: list[dict[str, Any]]
    type_hash: str = ""
    count: int = 0
    serialization_format: str = "cdr"


@dataclass
class FileInfo:
    path: str
    start_ns: int
    end_ns: int
    count: int


def bag_info(topics: Sequence[TopicInfo], files: Sequence[FileInfo], *,
             custom_data: Mapping[str, str] | None = None, ros_distro: str = ROS_DISTRO) -> dict[str, Any]:
    """The ``rosbag2_bagfile_information`` mapping (rosbag2 metadata version 9)."""
    counted = [f for f in files if f.count]
    start = min((f.start_ns for f in counted), default=0)
    end = max((f.end_ns for f in counted), default=0)
    return {
        "version": VERSION,
        "storage_identifier": "mcap",
        "duration": {"nanoseconds": max(0, end - start)},
        "starting_time": {"nanoseconds_since_epoch": start},
        "message_count": sum(f.count for f in files),
        "topics_with_message_count": [
            {"topic_metadata": {"name": t.name, "type": t.type, "serialization_format": t.serialization_format,
                                "offered_qos_profiles": t.qos, "type_description_hash": t.type_hash},
             "message_count": t.count}
            for t in topics
        ],
        "compression_format": "",
        "compression_mode": "",
        "relative_file_paths": [f.path for f in files],
        "files": [{"path": f.path, "starting_time": {"nanoseconds_since_epoch": f.start_ns if f.count else 0},
                   "duration": {"nanoseconds": max(0, f.end_ns - f.start_ns) if f.count else 0},
                   "message_count": f.count} for f in files],
        "custom_data": dict(custom_data or {}),
        "ros_distro": ros_distro,
    }


def serialized_metadata(info: Mapping[str, Any]) -> str:
    """The ``serialized_metadata`` value of the MCAP ``rosbag2`` metadata record."""
    text: str = yaml.safe_dump(dict(info), sort_keys=False)
    return text


def write_metadata_yaml(directory: Path, info: Mapping[str, Any]) -> Path:
    """``metadata.yaml`` beside the MCAP file(s), written atomically (temporary file, rename)."""
    path = directory / "metadata.yaml"
    data = yaml.safe_dump({"rosbag2_bagfile_information": dict(info)}, sort_keys=False).encode("utf-8")
    # a new temporary of its own (O_EXCL): a FIFO planted under a fixed temporary name would block the write
    fd, tmp = tempfile.mkstemp(prefix=".metadata.yaml.", suffix=".tmp", dir=directory)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    return path
