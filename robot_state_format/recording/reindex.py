"""``metadata.yaml`` rebuilt from the MCAP files of a recording (as ``ros2 bag reindex`` does).

A recording cut off by a crash has no ``metadata.yaml`` (it is written on close) and no MCAP
summary. :func:`reindex` reads every ``.mcap`` file of the directory up to its last complete chunk
and writes the bag information from what it read: the topics (name, type, offered QoS and type
hash from each channel's metadata), the message count per topic and per file, and the start and
duration of each file and of the whole bag.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from robot_state_format.lazy_modules import optional_module
from robot_state_format.limits import directory_problem, shown_path
from robot_state_format.recording import bagmeta
from robot_state_format.recording.bagmeta import FileInfo, TopicInfo
from robot_state_format.recording.reader import scan
from robot_state_format.recording.writer import RecordingError

mcap_records = optional_module("mcap.records")  # optional (the ``record`` extra)


@dataclass
class ReindexResult:
    """What :func:`reindex` wrote and found."""

    path: Path  # metadata.yaml
    info: dict[str, Any]
    complete: dict[str, bool] = field(default_factory=dict)  # file name -> ended properly


def _file_index(p: Path) -> tuple[int, str]:
    m = re.search(r"_(\d+)\.mcap$", p.name)
    return (int(m.group(1)) if m else 0, p.name)


def _qos(text: str) -> list[dict[str, Any]]:
    try:
        value = yaml.safe_load(text) if text else None
    except yaml.YAMLError:
        return []
    return list(value) if isinstance(value, list) else []


def bag_files(directory: Path) -> list[Path]:
    """The MCAP files of a recording directory in rosbag2 order (by their ``_N`` index)."""
    problem = directory_problem(directory)
    if problem is not None:
        what = problem if problem.startswith("is ") else f"not a directory: {problem}"
        raise RecordingError(f"{shown_path(directory)}: {what} (give the recording directory)")
    files = sorted(directory.glob("*.mcap"), key=_file_index)
    if not files:
        raise RecordingError(f"{directory}: no .mcap file in the recording directory")
    return files


def reindex(directory: str | os.PathLike[str], *, write: bool = True) -> ReindexResult:
    """Rebuild ``directory/metadata.yaml`` from its MCAP files' readable chunks (``write=False``: only compute)."""
    d = Path(directory)
    files = bag_files(d)
    topics: dict[str, TopicInfo] = {}
    infos: list[FileInfo] = []
    complete: dict[str, bool] = {}
    custom: dict[str, str] = {}
    distro = bagmeta.ROS_DISTRO
    for path in files:
        schemas: dict[int, str] = {}
        channels: dict[int, TopicInfo] = {}
        start: int | None = None
        end = 0
        count = 0
        ended: list[bool] = []
        for rec in scan(path, complete=ended):
            if isinstance(rec, mcap_records.Schema):
                schemas[rec.id] = rec.name
            elif isinstance(rec, mcap_records.Channel):
                t = topics.get(rec.topic)
                if t is None:
                    t = topics[rec.topic] = TopicInfo(
                        rec.topic, schemas.get(rec.schema_id, ""), _qos(rec.metadata.get("offered_qos_profiles", "")),
                        rec.metadata.get("topic_type_hash", ""), 0, rec.message_encoding)
                channels[rec.id] = t
            elif isinstance(rec, mcap_records.Message):
                t = channels.get(rec.channel_id)
                if t is None:
                    continue
                t.count += 1
                count += 1
                start = rec.log_time if start is None else min(start, rec.log_time)
                end = max(end, rec.log_time)
            elif isinstance(rec, mcap_records.Metadata) and rec.name == "rosbag2":
                saved = _saved_info(rec.metadata.get("serialized_metadata", ""))
                custom = {str(k): str(v) for k, v in (saved.get("custom_data") or {}).items()}
                distro = str(saved.get("ros_distro") or distro)
        infos.append(FileInfo(path.name, start or 0, end, count))
        complete[path.name] = bool(ended and ended[0])
    info = bagmeta.bag_info(list(topics.values()), infos, custom_data=custom, ros_distro=distro)
    out = d / "metadata.yaml"
    if write:
        try:
            out = bagmeta.write_metadata_yaml(d, info)
        except OSError as exc:
            raise RecordingError(f"{out}: cannot write: {exc.strerror or exc}") from None
    return ReindexResult(out, info, complete)


def _saved_info(text: str) -> dict[str, Any]:
    try:
        value = yaml.safe_load(text) if text else None
    except yaml.YAMLError:
        return {}
    return value if isinstance(value, dict) else {}
