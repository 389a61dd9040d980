"""Reading recordings back: every message in file order, tolerant of a file cut off by a crash."""

from __future__ import annotations

import logging
import os
import stat
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from robot_state_format.lazy_modules import optional_module
from robot_state_format.limits import open_input_file, os_error_text, shown_path
from robot_state_format.log_throttle import LogThrottle, emit
from robot_state_format.recording.writer import RecordingError, RecordingFormatError

if TYPE_CHECKING:
    from mcap.records import Channel, Schema

# optional (the ``record`` extra): without them this module imports and reading a recording says what is missing
mcap_exceptions = optional_module("mcap.exceptions")
mcap_reader = optional_module("mcap.reader")
mcap_records = optional_module("mcap.records")
mcap_stream_reader = optional_module("mcap.stream_reader")
mcap_ros2_dynamic = optional_module("mcap_ros2._dynamic")

_log = logging.getLogger(__name__)
_throttle = LogThrottle()  # a recording played in a loop is read again on every pass: one line per period


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
    try:
        is_dir = stat.S_ISDIR(os.stat(p).st_mode)
    except (OSError, ValueError):  # missing, a name too long: the open below says why
        is_dir = False
    if is_dir:
        files = sorted(p.glob("*.mcap"))
        if not files:
            raise RecordingError(f"{p}: no .mcap file in the recording directory")
        return files[0]
    return p


def scan(path: str | os.PathLike[str], *, complete: list[bool] | None = None) -> Iterator[Any]:
    """Every Schema, Channel, Message and Metadata record of an MCAP file in file order (chunks opened).

    A file cut off by a crash yields the records of every complete chunk and then stops; pass
    ``complete=[]`` to learn whether the file ended properly (``complete[0]``).
    """
    p = mcap_file(path)
    kinds = (mcap_records.Schema, mcap_records.Channel, mcap_records.Message, mcap_records.Metadata)  # mcap or a clear error
    try:  # a FIFO or device would block or never end: refused by the gate, before any read
        stream = open_input_file(p)
    except OSError as exc:
        raise RecordingError(f"{shown_path(p)}: cannot read recording: {os_error_text(exc)}") from None
    ended = False
    try:
        reader = mcap_stream_reader.StreamReader(stream, record_size_limit=1 << 30)
        try:
            for rec in reader.records:
                if isinstance(rec, kinds):
                    yield rec
            ended = True
        except mcap_exceptions.InvalidMagic as exc:
            raise RecordingFormatError(f"{p}: not an MCAP file: {exc}") from None
        except Exception:  # noqa: BLE001 an unreadable end is 'not ended', whatever mcap raises
            ended = False
    finally:
        stream.close()
    if complete is not None:
        complete.append(ended)


def read_recording(path: str | os.PathLike[str], *, complete: list[bool] | None = None) -> Iterator[RecordedMessage]:
    """Every message of a recording in file order, reading sequentially.

    A message on a channel the file never declared cannot be placed: it is left out, counted, and
    the count logged as a warning (:func:`warn_dropped`) when the file has been read through.

    A file cut off by a crash yields the messages of every complete chunk and then stops; pass
    ``complete=[]`` to learn whether the file ended properly (``complete[0]``).
    """
    schemas: dict[int, Schema] = {}
    channels: dict[int, Channel] = {}
    unknown = 0
    for rec in scan(path, complete=complete):
        if isinstance(rec, mcap_records.Schema):
            schemas[rec.id] = rec
        elif isinstance(rec, mcap_records.Channel):
            channels[rec.id] = rec
        elif isinstance(rec, mcap_records.Message):
            ch = channels.get(rec.channel_id)
            if ch is None:
                unknown += 1
                continue
            sc = schemas.get(ch.schema_id)
            yield RecordedMessage(ch.topic, sc.name if sc else "", rec.log_time, rec.publish_time,
                                  bytes(rec.data), rec.sequence, sc)
    if unknown:
        warn_dropped(path, "unknown-channel", f"{unknown} message(s) on a channel the file never declares "
                     "(no Channel record before them): left out")


def warn_dropped(path: str | os.PathLike[str], kind: str, text: str) -> None:
    """Say that messages of ``path`` were left out (a warning on this module's logger, at most one line
    per kind and file every few seconds, with the count of those held back)."""
    line = _throttle.text(f"{kind}:{os.fspath(path)}", f"{os.fspath(path)}: {text}")
    if line is not None:
        emit(_log, "warning", line)


def recording_channels(path: str | os.PathLike[str]) -> dict[str, str]:
    """``{topic: type}`` of every channel of a recording: from the summary, or (a file cut off by a
    crash) by reading it through."""
    p = mcap_file(path)
    try:
        with open_input_file(p) as f:
            summary = mcap_reader.make_reader(f).get_summary()
    except Exception:  # noqa: BLE001 no readable summary, whatever mcap raises: read without it
        summary = None
    if summary is not None:
        return {ch.topic: (summary.schemas[ch.schema_id].name if ch.schema_id in summary.schemas else "")
                for ch in summary.channels.values()}
    schemas: dict[int, str] = {}
    out: dict[str, str] = {}
    for rec in scan(p):
        if isinstance(rec, mcap_records.Schema):
            schemas[rec.id] = rec.name
        elif isinstance(rec, mcap_records.Channel):
            out[rec.topic] = schemas.get(rec.schema_id, "")
    return out


@dataclass(frozen=True)
class MessageSummary:
    """What the summary section of a recording says about some of its topics."""

    count: int  # messages on those topics
    start_ns: int  # log time of the first message (of any topic)
    end_ns: int  # log time of the last message (of any topic)


def message_summary(path: str | os.PathLike[str], kinds: frozenset[str]) -> MessageSummary | None:
    """Message count on the topics whose last name part is in ``kinds``, and the time span, from the
    MCAP summary section of ``path``; None when it has none (a recording cut off before it was
    closed), or ``path`` is not a regular file (a FIFO would block)."""
    try:
        with open_input_file(path) as f:
            summary = mcap_reader.make_reader(f).get_summary()
    except Exception:  # noqa: BLE001 no readable summary, whatever mcap raises
        return None
    if summary is None or summary.statistics is None:
        return None
    ids = [cid for cid, ch in summary.channels.items() if ch.topic.rsplit("/", 1)[-1] in kinds]
    stats = summary.statistics
    count = sum(stats.channel_message_counts.get(cid, 0) for cid in ids)
    return MessageSummary(count, stats.message_start_time, stats.message_end_time)


def decoder_for(schema: Schema) -> Any:
    """A function decoding CDR bytes of ``schema`` into a message object (mcap_ros2's decoder)."""
    return mcap_ros2_dynamic.generate_dynamic(schema.name, schema.data.decode())[schema.name]


def decode_all(path: str | os.PathLike[str]) -> list[tuple[str, int, Any]]:
    """``(topic, log_time_ns, decoded message)`` for every message (tests, tools); messages without a
    schema are left out, counted and warned about (:func:`warn_dropped`)."""
    decoders: dict[int, Any] = {}
    out = []
    schemaless = 0
    for m in read_recording(path):
        if m.schema is None:
            schemaless += 1
            continue
        dec = decoders.get(m.schema.id)
        if dec is None:
            dec = decoders[m.schema.id] = decoder_for(m.schema)
        out.append((m.topic, m.log_time_ns, dec(m.data)))
    if schemaless:
        warn_dropped(path, "no-schema", f"{schemaless} message(s) on a channel without a schema cannot be "
                     "decoded: left out")
    return out
