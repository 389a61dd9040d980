"""Playback of a whole recorded session: its TF as recorded, or computed from the joint states.

``tf_source`` (parameter of ``state_store``, ``--tf-source`` of ``robot-state-format replay``):

* ``recorded``: the recording's ``/tf`` and ``/tf_static`` are played as they were recorded (stamps
  shifted by whole loop lengths when looping), and its ``robot_description`` too;
* ``computed``: TF is computed from each played ``joint_states`` with the node's model
  (:class:`ComputedTf`, as state_publisher does; fixed joints on ``/tf_static`` once);
* ``none``: no TF (a state_publisher fed by the played joint_states makes it);
* ``auto`` (default): ``recorded`` when the recording holds ``/tf`` or ``/tf_static``, else ``none``.

Imports no rclpy at module level (the JointState decoding uses ``rclpy.serialization`` when called).
"""

from __future__ import annotations

import os
import struct
from collections.abc import Callable, Mapping
from typing import Any

import numpy as np
from numpy.typing import NDArray

from robot_state_format.model.types import WORLD, JointType, Model
from robot_state_format.ros.messages import TfEncoder, joint_state_arrays
from robot_state_format.ros.replay import NS, STATE_TOPICS

TF_TOPICS = frozenset({"tf", "tf_static"})
SESSION_TOPICS = TF_TOPICS | {"robot_description"}
TF_SOURCES = ("auto", "recorded", "computed", "none")


def plan_tf(source: str, kinds: set[str] | None, have_model: bool) -> tuple[str, frozenset[str]]:
    """``(tf source in effect, topic kinds to play)`` for a recording holding ``kinds`` (None: a
    directory of restart files); ValueError saying why when ``source`` cannot be honoured."""
    if source not in TF_SOURCES:
        raise ValueError(f"tf_source must be one of {', '.join(TF_SOURCES)}, got {source!r}")
    recorded = (kinds or set()) & TF_TOPICS
    if source == "auto":
        source = "recorded" if recorded else "none"
    if source == "recorded":
        if not recorded:
            raise ValueError("tf_source recorded: the recording holds no /tf or /tf_static")
        return source, STATE_TOPICS | ((kinds or set()) & SESSION_TOPICS)
    if source == "computed" and not have_model:
        raise ValueError("tf_source computed needs a model (model_file or robot_description)")
    return source, STATE_TOPICS


def restamp_tf(data: bytes, shift_ns: int) -> bytes:
    """``tf2_msgs/TFMessage`` CDR with every ``header.stamp`` moved by ``shift_ns`` (the layout walked:
    count, then per transform stamp, frame_id, child_frame_id, seven 8-aligned doubles)."""
    if shift_ns == 0:
        return data
    buf = bytearray(data)
    (count,) = struct.unpack_from("<I", buf, 4)
    pos = 8  # absolute; CDR alignment counts from byte 4 (after the encapsulation header)
    for _ in range(count):
        pos += (-(pos - 4)) % 4
        sec, nsec = struct.unpack_from("<iI", buf, pos)
        s_, n_ = divmod(sec * NS + nsec + shift_ns, NS)
        struct.pack_into("<iI", buf, pos, s_, n_)
        pos += 8
        for _string in range(2):  # frame_id, child_frame_id
            pos += (-(pos - 4)) % 4
            (n,) = struct.unpack_from("<I", buf, pos)
            pos += 4 + n
        pos += (-(pos - 4)) % 8
        pos += 56
    return bytes(buf)




def recording_topic_kinds(path: str | os.PathLike[str]) -> set[str]:
    """The last parts of the topic names of a recording (``{"tf", "joint_states", ...}``)."""
    from robot_state_format.recording import recording_channels

    return {t.rsplit("/", 1)[-1] for t in recording_channels(path)}


class ComputedTf:
    """Joint transforms of ``model`` from JointState CDR bytes: :meth:`dynamic` gives the ``/tf``
    TFMessage bytes for one message, :meth:`static` the fixed joints (for ``/tf_static``)."""

    def __init__(self, model: Model) -> None:
        from robot_state_format.kinematics.tree import compile_model
        from robot_state_format.playback.state_cache import JointStateCache

        self.model = model
        self.tree = compile_model(model)
        self.cache = JointStateCache(model, self.tree)
        frames: list[tuple[str, str]] = []
        world: list[int] = []
        fixed: list[int] = []
        for i, name in enumerate(self.tree.joint_names):
            joint = model.joints[name]
            frames.append((joint.parent, joint.child))
            if joint.parent == WORLD:
                world.append(i)
            if joint.type is JointType.FIXED:
                fixed.append(i)
        self.frames = frames
        self.world = np.array(world, dtype=np.intp)
        self.fixed = np.array(fixed, dtype=np.intp)
        self.encoder = TfEncoder(frames)

    def _transforms(self) -> NDArray[np.float64]:
        from robot_state_format.kinematics.fk import joint_transforms

        x = joint_transforms(self.tree, self.cache.q)
        if len(self.world):
            x = x.copy()
            x[self.world] = np.asarray(self.model.pose, dtype=np.float64) @ x[self.world]
        return x

    def static(self, stamp_ns: int) -> bytes:
        """TFMessage bytes of every fixed joint."""
        return self.encoder.encode(self.fixed, self._transforms()[self.fixed], stamp_ns)

    def dynamic(self, joint_state_cdr: bytes, now_ns: int) -> bytes | None:
        """TFMessage bytes of the joints this JointState moves (None: nothing to send)."""
        from rclpy.serialization import deserialize_message
        from sensor_msgs.msg import JointState

        msg: Any = deserialize_message(joint_state_cdr, JointState)
        names, pos, vel, eff, stamp = joint_state_arrays(msg)
        up = self.cache.update(names, pos, vel, eff, stamp, now_ns)
        if not len(up.send):
            return None
        return self.encoder.encode(up.send, self._transforms()[up.send], up.stamp_ns)


def session_publish(publishers: Mapping[str, Any], computed: ComputedTf | None,
                    now_ns: Callable[[], int]) -> Callable[[str, bytes], None]:
    """The player's ``publish(topic, data)``: each played message on its publisher and, with
    ``computed``, the TF of each played joint_states on ``/tf``."""
    def publish(topic: str, data: bytes) -> None:
        publishers[topic].publish(data)
        if computed is not None and topic == "joint_states":
            tf = computed.dynamic(data, now_ns())
            if tf is not None:
                publishers["tf"].publish(tf)
    return publish
