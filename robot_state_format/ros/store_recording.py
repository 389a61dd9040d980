"""Recording of the ``state_store`` node: ``record``, ``~/start_recording`` and ``~/stop_recording``.

A mixin of :class:`robot_state_format.ros.state_store.StateStore` (it uses the node's parameters,
its input subscriptions and its latched snapshot). The session (``record_topics``) goes into a
rosbag2 MCAP directory (:mod:`robot_state_format.recording`, :mod:`robot_state_format.ros.recorder`);
the node's own inputs are written from its subscriptions under the names it resolved for them.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from rclpy.parameter import Parameter
from std_srvs.srv import Trigger

from robot_state_format.errors import error_text
from robot_state_format.output_dirs import ensure_directory
from robot_state_format.playback.outcome import Outcome
from robot_state_format.playback.restart_files import recording_directory
from robot_state_format.recording import JOINT_STATE_TYPE, STRING_TYPE, RecordingWriter
from robot_state_format.recording.cdr import cdr_string
from robot_state_format.ros.recorder import SessionRecorder


class StoreRecording:
    """``start_recording`` / ``stop_recording``, their services and the ``record`` parameter."""

    # provided by StateStore (and rclpy's Node)
    _recorder: SessionRecorder | None
    _record_error: str | None
    _topic_names: dict[str, str]
    _snapshot_text: str | None
    _model: Any
    _world: Any
    _p: Any
    _subscribe_inputs: Any
    get_logger: Any
    resolve_topic_name: Any
    set_parameters: Any

    def start_recording(self) -> Outcome:
        """Open a recording of ``record_topics``; the message is its directory (or why not)."""
        if self._recorder is not None:
            return Outcome(True, f"already recording to {self._recorder.directory}")
        self._subscribe_inputs()
        base = Path(str(self._p("recording_dir") or self._p("output_dir"))).expanduser()
        created, why = ensure_directory(base, "recording directory")
        if why is not None:
            return Outcome(False, why)
        if created:
            self.get_logger().info(f"created recording directory {str(base)!r}")
        try:
            topics = [self.resolve_topic_name(str(t).strip()) for t in self._p("record_topics")]
        except Exception as exc:  # noqa: BLE001 any name error is the service's answer, never fatal
            return Outcome(False, f"record_topics: {error_text(exc)}")
        directory = recording_directory(base, self._model.name if self._model is not None else "state",
                                        time.time_ns())
        self._topic_names = {"/world_state": self.resolve_topic_name("world_state"),
                             "/joint_states": self.resolve_topic_name("joint_states")}
        inputs = {self._topic_names["/world_state"]: STRING_TYPE, self._topic_names["/joint_states"]: JOINT_STATE_TYPE}
        for world_topic, kind in self._world.recording_topics() if self._world is not None else []:
            topics.append(world_topic)  # each source's world_state / joint_states, under its own name
            inputs[world_topic] = STRING_TYPE if kind == "world_state" else JOINT_STATE_TYPE
        try:
            rec = SessionRecorder(self, RecordingWriter(directory), topics, inputs,  # type: ignore[arg-type]
                                  self._recording_failed)
        except Exception as exc:  # noqa: BLE001 any writer error is the service's answer, never fatal
            return Outcome(False, f"cannot start recording: {error_text(exc)}")
        self._recorder = rec
        self._record_error = None
        if self._snapshot_text is not None:  # the latched snapshot starts the recording
            self._record("/world_state", cdr_string(self._snapshot_text))
        self.get_logger().info(f"recording {', '.join(topics)} to {directory}")
        return Outcome(True, str(directory))

    def stop_recording(self) -> Outcome:
        """Close the recording; the message is its directory and message count (or why not)."""
        rec, self._recorder = self._recorder, None
        if rec is None:
            return Outcome(False, self._record_error or "not recording")
        try:
            directory = rec.close()
        except Exception as exc:  # noqa: BLE001 any writer error is the service's answer, never fatal
            return Outcome(False, f"recording could not be finished: {error_text(exc)}")
        return Outcome(True, f"{directory} ({rec.message_count} messages)")

    def _record(self, topic: str, raw: bytes) -> None:
        """Write one message; ``topic`` is ``/world_state`` or ``/joint_states``, recorded under the
        name the node resolved for it (namespace and remappings applied)."""
        if self._recorder is not None:
            self._recorder.write_input(self._topic_names.get(topic, topic), raw)

    def _recording_failed(self, exc: BaseException) -> None:
        self._record_error = f"recording stopped: {error_text(exc)}"
        self.get_logger().error(self._record_error)
        self._recorder = None
        self._sync_record_parameter()

    def _sync_record_parameter(self) -> None:
        """Keep the ``record`` parameter equal to whether the node records (services, failures)."""
        recording = self._recorder is not None
        if bool(self._p("record")) != recording:
            self.set_parameters([Parameter("record", value=recording)])

    def _srv_start_recording(self, request: Trigger.Request, response: Trigger.Response) -> Trigger.Response:
        self.start_recording().answer(response)
        self._sync_record_parameter()
        return response

    def _srv_stop_recording(self, request: Trigger.Request, response: Trigger.Response) -> Trigger.Response:
        self.stop_recording().answer(response)
        self._sync_record_parameter()
        return response
