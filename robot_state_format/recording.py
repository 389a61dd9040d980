"""MCAP recordings of world_state and joint_states that rosbag2 and Foxglove read (no rclpy).

A recording is a rosbag2-style directory ``NAME/`` holding ``NAME_0.mcap`` (profile ``ros2``,
schemas ``ros2msg``, messages ``cdr``) and, once closed, ``metadata.yaml`` (rosbag2 version 9),
so ``ros2 bag info NAME`` and ``rosbags`` open the directory and any MCAP reader the file.

Crash safety: messages are grouped in chunks; a chunk is written in one ``write`` to an
unbuffered file as soon as it is full or ``flush_period`` has passed, so a process killed at
any moment leaves a file whose complete chunks :func:`read_recording` still reads.
"""

from __future__ import annotations

import os
import time
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml
from mcap.exceptions import InvalidMagic
from mcap.records import Channel, Message, Schema
from mcap.stream_reader import StreamReader
from mcap.writer import CompressionType, Writer

from robot_state_format.errors import RobotStateFormatError

STRING_TYPE = "std_msgs/msg/String"
JOINT_STATE_TYPE = "sensor_msgs/msg/JointState"
CLOCK_TYPE = "rosgraph_msgs/msg/Clock"

_SEP = "=" * 80 + "\n"
_TIME = "int32 sec\nuint32 nanosec\n"
_HEADER = "builtin_interfaces/Time stamp\nstring frame_id\n"

MSGDEFS: dict[str, str] = {
    STRING_TYPE: "string data\n",
    JOINT_STATE_TYPE: (
        "std_msgs/Header header\n\nstring[] name\nfloat64[] position\nfloat64[] velocity\nfloat64[] effort\n\n"
        + _SEP + "MSG: std_msgs/Header\n" + _HEADER + "\n"
        + _SEP + "MSG: builtin_interfaces/Time\n" + _TIME
    ),
    CLOCK_TYPE: "builtin_interfaces/Time clock\n\n" + _SEP + "MSG: builtin_interfaces/Time\n" + _TIME,
}
"""ros2msg schema text (the message definition with its dependencies, as rosbag2 writes it)."""

RELIABLE_TRANSIENT_LOCAL = {"history": "keep_last", "depth": 1, "reliability": "reliable",
                            "durability": "transient_local"}
BEST_EFFORT_VOLATILE = {"history": "keep_last", "depth": 5, "reliability": "best_effort",
                        "durability": "volatile"}


class RecordingError(RobotStateFormatError):
    """A recording cannot be written or read (with the path and the reason)."""


def qos_yaml(profile: Mapping[str, Any]) -> str:
    """The ``offered_qos_profiles`` YAML rosbag2 stores per topic (version 9 spelling)."""
    full = {
        "history": profile.get("history", "keep_last"),
        "depth": int(profile.get("depth", 10)),
        "reliability": profile.get("reliability", "reliable"),
        "durability": profile.get("durability", "volatile"),
        "deadline": {"sec": 9223372036, "nsec": 854775807},
        "lifespan": {"sec": 9223372036, "nsec": 854775807},
        "liveliness": "automatic",
        "liveliness_lease_duration": {"sec": 9223372036, "nsec": 854775807},
        "avoid_ros_namespace_conventions": False,
    }
    return yaml.safe_dump([full], sort_keys=False)


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


@dataclass
class _Topic:
    name: str
    type: str
    qos: str
    channel_id: int
    count: int = 0


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
        comp = {"zstd": CompressionType.ZSTD, "lz4": CompressionType.LZ4, "none": CompressionType.NONE}
        self._writer = Writer(self._file, chunk_size=chunk_size, compression=comp[compression])  # type: ignore[arg-type]
        self._writer.start(profile="ros2", library="robot_state_format")
        self._flush_period = flush_period
        self._last_flush = time.monotonic()
        self._schemas: dict[str, int] = {}
        self._topics: dict[str, _Topic] = {}
        self._start_ns: int | None = None
        self._end_ns = 0
        self._count = 0
        self._pending = False
        self.closed = False

    def add_topic(self, topic: str, type_name: str, qos: Mapping[str, Any] | None = None) -> None:
        """Declare a topic (its schema must be in :data:`MSGDEFS`)."""
        if topic in self._topics:
            return
        if type_name not in MSGDEFS:
            raise RecordingError(f"no message definition for {type_name}")
        if type_name not in self._schemas:
            self._schemas[type_name] = self._writer.register_schema(
                type_name, "ros2msg", MSGDEFS[type_name].encode())
        qtext = qos_yaml(qos or {})
        cid = self._writer.register_channel(topic, "cdr", self._schemas[type_name],
                                            {"offered_qos_profiles": qtext})
        self._topics[topic] = _Topic(topic, type_name, qtext, cid)

    def write(self, topic: str, data: bytes, log_time_ns: int, publish_time_ns: int | None = None) -> None:
        """Add one CDR-serialised message (with its 4-byte encapsulation header)."""
        t = self._topics.get(topic)
        if t is None:
            raise RecordingError(f"topic {topic} was not added")
        self._writer.add_message(t.channel_id, log_time=int(log_time_ns), data=bytes(data),
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
        from mcap_ros2._dynamic import serialize_dynamic

        t = self._topics[topic]
        encoder = serialize_dynamic(t.type, MSGDEFS[t.type])[t.type]
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

    def close(self) -> Path:
        """Finish the MCAP (summary and index), fsync, write ``metadata.yaml``; return the directory."""
        if self.closed:
            return self.directory
        self.closed = True
        try:
            self._writer.finish()
            self._file.fsync()
        finally:
            self._file.close()
        write_metadata(self.directory, self.path.name, list(self._topics.values()),
                       self._start_ns or 0, self._end_ns, self._count)
        return self.directory


def write_metadata(directory: Path, file_name: str, topics: list[_Topic], start_ns: int, end_ns: int,
                   count: int) -> Path:
    """``metadata.yaml`` (rosbag2 version 9) beside the MCAP file."""
    duration = max(0, end_ns - start_ns)
    info = {
        "rosbag2_bagfile_information": {
            "version": 9,
            "storage_identifier": "mcap",
            "duration": {"nanoseconds": duration},
            "starting_time": {"nanoseconds_since_epoch": start_ns},
            "message_count": count,
            "topics_with_message_count": [
                {
                    "topic_metadata": {
                        "name": t.name, "type": t.type, "serialization_format": "cdr",
                        "offered_qos_profiles": yaml.safe_load(t.qos), "type_description_hash": "",
                    },
                    "message_count": t.count,
                }
                for t in topics
            ],
            "compression_format": "",
            "compression_mode": "",
            "relative_file_paths": [file_name],
            "files": [{"path": file_name, "starting_time": {"nanoseconds_since_epoch": start_ns},
                       "duration": {"nanoseconds": duration}, "message_count": count}],
            "custom_data": {"writer": "robot_state_format"},
            "ros_distro": "kilted",
        }
    }
    path = directory / "metadata.yaml"
    tmp = directory / ".metadata.yaml.tmp"
    tmp.write_text(yaml.safe_dump(info, sort_keys=False))
    os.replace(tmp, path)
    return path


@dataclass
class RecordedMessage:
    topic: str
    type: str
    log_time_ns: int
    publish_time_ns: int
    data: bytes
    sequence: int = 0
    schema: Schema | None = field(default=None, repr=False)


def mcap_file(path: str | os.PathLike[str]) -> Path:
    """The MCAP file of a recording given as the file itself or its rosbag2 directory."""
    p = Path(path)
    if p.is_dir():
        files = sorted(p.glob("*.mcap"))
        if not files:
            raise RecordingError(f"{p}: no .mcap file in the recording directory")
        return files[0]
    return p


def read_recording(path: str | os.PathLike[str], *, complete: list[bool] | None = None) -> Iterator[RecordedMessage]:
    """Every message of a recording in file order, reading sequentially.

    A file cut off by a crash yields the messages of every complete chunk and then stops; pass
    ``complete=[]`` to learn whether the file ended properly (``complete[0]``).
    """
    p = mcap_file(path)
    if p.exists() and not p.is_file():  # a FIFO or device would block or never end
        raise RecordingError(f"{p}: cannot read recording: not a regular file")
    try:
        stream = open(p, "rb")  # noqa: SIM115 - closed below
    except OSError as exc:
        raise RecordingError(f"{p}: cannot read recording: {exc.strerror or exc}") from None
    schemas: dict[int, Schema] = {}
    channels: dict[int, Channel] = {}
    ended = False
    try:
        reader = StreamReader(stream, record_size_limit=1 << 30)
        try:
            for rec in reader.records:
                if isinstance(rec, Schema):
                    schemas[rec.id] = rec
                elif isinstance(rec, Channel):
                    channels[rec.id] = rec
                elif isinstance(rec, Message):
                    ch = channels.get(rec.channel_id)
                    if ch is None:
                        continue
                    sc = schemas.get(ch.schema_id)
                    yield RecordedMessage(ch.topic, sc.name if sc else "", rec.log_time, rec.publish_time,
                                          bytes(rec.data), rec.sequence, sc)
            ended = True
        except InvalidMagic as exc:
            raise RecordingError(f"{p}: not an MCAP file: {exc}") from None
        except Exception:  # noqa: BLE001 - a torn tail (EndOfFile, zstd, struct): stop at the last chunk
            ended = False
    finally:
        stream.close()
    if complete is not None:
        complete.append(ended)


def decoder_for(schema: Schema) -> Any:
    """A function decoding CDR bytes of ``schema`` into a message object (mcap_ros2's decoder)."""
    from mcap_ros2._dynamic import generate_dynamic

    return generate_dynamic(schema.name, schema.data.decode())[schema.name]


def decode_all(path: str | os.PathLike[str]) -> list[tuple[str, int, Any]]:
    """``(topic, log_time_ns, decoded message)`` for every message (tests, tools)."""
    decoders: dict[int, Any] = {}
    out = []
    for m in read_recording(path):
        if m.schema is None:
            continue
        dec = decoders.get(m.schema.id)
        if dec is None:
            dec = decoders[m.schema.id] = decoder_for(m.schema)
        out.append((m.topic, m.log_time_ns, dec(m.data)))
    return out
