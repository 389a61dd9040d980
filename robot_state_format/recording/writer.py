"""The MCAP recording writer: a rosbag2 directory that rosbag2, rosbags, Foxglove and any MCAP reader open.

A recording is a directory ``NAME/`` holding ``NAME_0.mcap`` (profile ``ros2``, schemas ``ros2msg``
with the full message definitions, messages ``cdr``) and, once closed, ``metadata.yaml``. As
rosbag2's MCAP storage does, every channel carries ``offered_qos_profiles`` and ``topic_type_hash``
and the closed file holds the ``rosbag2`` metadata record (the bag information as YAML).

Crash safety: messages are grouped in chunks; a chunk is written in one ``write`` to an
unbuffered file as soon as it is full or ``flush_period`` has passed, so a process killed at
any moment leaves a file whose complete chunks :func:`~robot_state_format.recording.read_recording`
still reads, and ``robot-state-format reindex`` rebuilds its ``metadata.yaml``.
"""

from __future__ import annotations

import os
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from robot_state_format.errors import RobotStateFormatError
from robot_state_format.lazy_modules import optional_module
from robot_state_format.recording import bagmeta, msgdefs
from robot_state_format.recording.bagmeta import FileInfo, TopicInfo

# optional (the ``record`` extra): without them this module imports and opening a recording says what is missing
mcap_writer = optional_module("mcap.writer")
mcap_ros2_dynamic = optional_module("mcap_ros2._dynamic")

LIBRARY = "robot_state_format"


class RecordingError(RobotStateFormatError):
    """A recording cannot be written or read (with the path and the reason)."""


class RecordingFormatError(RecordingError):
    """A file of the recording is read but is not MCAP (invalid input, not an I/O failure)."""


class _UnbufferedFile:
    """A write-only file whose every ``write`` goes straight to the OS (one syscall per chunk)."""

    def __init__(self, path: Path) -> None:
        self._fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
        self._pos = 0

    def write(self, data: bytes | bytearray | memoryview) -> int:
        view = memoryview(data)
        while view:
            n = os.write(self._fd, view)
            view = view[n:]
            self._pos += n
        return len(data)

    def tell(self) -> int:
        return self._pos

    def flush(self) -> None:
        pass

    def fsync(self) -> None:
        os.fsync(self._fd)

    def removed(self) -> bool:
        """Whether the file was deleted (its directory removed) while open: writes would be lost."""
        return self._fd >= 0 and os.fstat(self._fd).st_nlink == 0

    def close(self) -> None:
        if self._fd >= 0:
            os.close(self._fd)
            self._fd = -1


QosArg = Mapping[str, Any] | Sequence[Mapping[str, Any]] | None


class RecordingWriter:
    """Write a rosbag2 MCAP directory; ``write`` takes CDR bytes (e.g. ``serialize_message``).

    ``directory`` must not exist yet (or be an empty directory).  ``chunk_size`` bytes or
    ``flush_period`` seconds, whichever comes first, end a chunk.
    """

    def __init__(
        self,
        directory: str | os.PathLike[str],
        *,
        chunk_size: int = 256 * 1024,
        flush_period: float = 0.5,
        compression: str = "zstd",
        custom_data: Mapping[str, str] | None = None,
    ) -> None:
        self.directory = Path(directory)
        try:
            self.directory.mkdir(parents=True, exist_ok=True)
            if any(self.directory.iterdir()):
                raise RecordingError(f"{self.directory}: recording directory is not empty")
            self.path = self.directory / f"{self.directory.name}_0.mcap"
            self._file = _UnbufferedFile(self.path)
        except OSError as exc:
            raise RecordingError(f"{self.directory}: cannot create recording: {exc.strerror or exc}") from None
        kinds = mcap_writer.CompressionType
        comp = {"zstd": kinds.ZSTD, "lz4": kinds.LZ4, "none": kinds.NONE}
        self._writer = mcap_writer.Writer(self._file, chunk_size=chunk_size, compression=comp[compression])
        self._writer.start(profile="ros2", library=LIBRARY)
        self._flush_period = flush_period
        self._last_flush = time.monotonic()
        self._schemas: dict[str, int] = {}
        self._topics: dict[str, TopicInfo] = {}
        self._channels: dict[str, int] = {}
        self._decoders: dict[str, Any] = {}
        self._custom = {"writer": LIBRARY, **(custom_data or {})}
        self._start_ns: int | None = None
        self._end_ns = 0
        self._count = 0
        self._pending = False
        self.closed = False

    def add_topic(self, topic: str, type_name: str, qos: QosArg = None, *, type_hash: str | None = None,
                  definition: str | None = None) -> None:
        """Declare a topic: its schema (``definition``, default :func:`msgdefs.definition`), the offered
        QoS (one profile or one per publisher) and the type hash (default: computed from the definition)."""
        if topic in self._topics:
            return
        try:
            text = definition if definition is not None else msgdefs.definition(type_name)
            thash = type_hash or msgdefs.type_hash(type_name, text)
        except msgdefs.MessageDefinitionError as exc:
            raise RecordingError(str(exc)) from None
        if type_name not in self._schemas:
            self._schemas[type_name] = self._writer.register_schema(type_name, "ros2msg", text.encode())
        profiles = bagmeta.qos_list(qos)
        cid = self._writer.register_channel(topic, "cdr", self._schemas[type_name], {
            "offered_qos_profiles": bagmeta.qos_yaml(profiles), "topic_type_hash": thash})
        self._topics[topic] = TopicInfo(topic, type_name, profiles, thash)
        self._channels[topic] = cid

    def has_topic(self, topic: str) -> bool:
        return topic in self._topics

    @property
    def topics(self) -> list[TopicInfo]:
        return list(self._topics.values())

    def write(self, topic: str, data: bytes, log_time_ns: int, publish_time_ns: int | None = None) -> None:
        """Add one CDR-serialised message (with its 4-byte encapsulation header)."""
        t = self._topics.get(topic)
        if t is None:
            raise RecordingError(f"topic {topic} was not added")
        self._writer.add_message(self._channels[topic], log_time=int(log_time_ns), data=bytes(data),
                                 publish_time=int(publish_time_ns if publish_time_ns is not None else log_time_ns),
                                 sequence=t.count)
        t.count += 1
        self._count += 1
        self._start_ns = log_time_ns if self._start_ns is None else min(self._start_ns, log_time_ns)
        self._end_ns = max(self._end_ns, log_time_ns)
        self._pending = True
        self.maybe_flush()

    def write_message(self, topic: str, fields: Any, log_time_ns: int) -> None:
        """Encode ``fields`` (a dict or object with the message's fields) with the topic's schema."""
        t = self._topics[topic]
        encoder = self._decoders.get(t.type)
        if encoder is None:
            encoder = self._decoders[t.type] = mcap_ros2_dynamic.serialize_dynamic(t.type, msgdefs.definition(t.type))[t.type]
        self.write(topic, encoder(fields), log_time_ns)

    def maybe_flush(self, now: float | None = None) -> None:
        """End the current chunk if ``flush_period`` has passed since the last one."""
        now = time.monotonic() if now is None else now
        if self._pending and now - self._last_flush >= self._flush_period:
            self.flush()

    def flush(self) -> None:
        """Write the chunk in progress to the file now."""
        if self._pending:
            self._writer.flush()
            self._pending = False
        self._last_flush = time.monotonic()
        if self._file.removed():
            raise RecordingError(f"{self.path} was removed while recording (its directory vanished?)")

    @property
    def message_count(self) -> int:
        return self._count

    def info(self) -> dict[str, Any]:
        """The bag information (what metadata.yaml holds) of what was written so far."""
        start = self._start_ns or 0
        return bagmeta.bag_info(self.topics, [FileInfo(self.path.name, start, self._end_ns, self._count)],
                                custom_data=self._custom)

    def close(self) -> Path:
        """Write the ``rosbag2`` metadata record, finish the MCAP (summary and index), fsync, write
        ``metadata.yaml``; return the directory."""
        if self.closed:
            return self.directory
        self.closed = True
        info = self.info()
        try:
            self._writer.add_metadata("rosbag2", {"serialized_metadata": bagmeta.serialized_metadata(info)})
            self._writer.finish()
            self._file.fsync()
        finally:
            self._file.close()
        bagmeta.write_metadata_yaml(self.directory, info)
        return self.directory
