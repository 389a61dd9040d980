"""Where playback's TF comes from (``tf_source``: a parameter of ``state_store``, ``--tf-source``
of ``robot-state-format replay``):

* ``recorded``: the recording's ``/tf`` and ``/tf_static`` are played as they were recorded (stamps
  shifted by whole loop lengths when looping), and its ``robot_description`` too;
* ``computed``: TF is computed from each played ``joint_states`` with the node's model (as
  state_publisher does; fixed joints on ``/tf_static`` once);
* ``none``: no TF (a state_publisher fed by the played joint_states makes it);
* ``auto`` (default): ``recorded`` when the recording holds ``/tf`` or ``/tf_static``, else ``none``.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

from robot_state_format.playback.timeline import STATE_TOPICS
from robot_state_format.recording.reader import recording_channels

TF_TOPICS = frozenset({"tf", "tf_static"})
SESSION_TOPICS = TF_TOPICS | {"robot_description"}
TF_SOURCES = ("auto", "recorded", "computed", "none")


@dataclass(frozen=True)
class TfPlan:
    """Playback's TF: the source in effect (``recorded``, ``computed`` or ``none``) and the topic
    kinds to play."""

    tf: str
    kinds: frozenset[str]


def plan_tf(source: str, kinds: set[str] | None, have_model: bool) -> TfPlan:
    """The :class:`TfPlan` for a recording holding ``kinds`` (None: a directory of restart files);
    ValueError saying why when ``source`` cannot be honoured."""
    if source not in TF_SOURCES:
        raise ValueError(f"tf_source must be one of {', '.join(TF_SOURCES)}, got {source!r}")
    recorded = (kinds or set()) & TF_TOPICS
    if source == "auto":
        source = "recorded" if recorded else "none"
    if source == "recorded":
        if not recorded:
            raise ValueError("tf_source recorded: the recording holds no /tf or /tf_static")
        return TfPlan(source, STATE_TOPICS | ((kinds or set()) & SESSION_TOPICS))
    if source == "computed" and not have_model:
        raise ValueError("tf_source computed needs a model (model_file or robot_description)")
    return TfPlan(source, STATE_TOPICS)


def recording_topic_kinds(path: str | os.PathLike[str]) -> set[str]:
    """The last parts of the topic names of a recording (``{"tf", "joint_states", ...}``)."""
    return {t.rsplit("/", 1)[-1] for t in recording_channels(path)}
