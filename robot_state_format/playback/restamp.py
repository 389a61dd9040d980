"""Stamps moved by whole loop lengths, so that time never runs backwards when a recording loops.

A ``world_state`` is read into a :class:`WorldState`, its stamp changed and written again by the
one USDF writer; JointState and TFMessage CDR carry their stamps at known offsets (moved in place).
"""

from __future__ import annotations

from robot_state_format.errors import RobotStateFormatError
from robot_state_format.playback.timeline import Event
from robot_state_format.recording.cdr import NS, cdr_string, cdr_string_text, restamp_joint_state, restamp_tf
from robot_state_format.usdf.reader import read_world_state
from robot_state_format.usdf.types import Stamp
from robot_state_format.usdf.writer import write_world_state


def restamp_usdf(text: str, shift_ns: int) -> str:
    """USDF text with its ``<stamp>`` moved by ``shift_ns`` (never before 0), written by the USDF
    writer; ``text`` as it is when it has no stamp or cannot be read."""
    if shift_ns == 0:
        return text
    try:
        state = read_world_state(text).state
    except RobotStateFormatError:  # played as recorded
        return text
    if state.stamp is None:
        return text
    state.stamp = Stamp(*divmod(max(state.stamp.sec * NS + state.stamp.nanosec + shift_ns, 0), NS))
    return write_world_state(state)


def usdf_stamp_ns(text: str) -> int | None:
    """The ``<stamp>`` of USDF text in nanoseconds (None: it has none or cannot be read)."""
    try:
        stamp = read_world_state(text).state.stamp
    except RobotStateFormatError:
        return None
    return stamp.sec * NS + stamp.nanosec if stamp is not None else None


def shifted(event: Event, shift_ns: int) -> bytes:
    """The CDR bytes of ``event`` with its stamps moved by ``shift_ns``."""
    if shift_ns == 0:
        return event.data
    kind = event.topic.rsplit("/", 1)[-1]  # full names in a world recording ("/r1/joint_states")
    if kind == "joint_states":
        return restamp_joint_state(event.data, shift_ns)
    if kind in ("tf", "tf_static"):
        return restamp_tf(event.data, shift_ns)
    if kind == "world_state":
        return cdr_string(restamp_usdf(cdr_string_text(event.data), shift_ns))
    return event.data
