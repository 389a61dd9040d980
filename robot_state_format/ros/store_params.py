"""The ``state_store`` node's parameters: names, defaults, descriptions and ranges
(docs/state_store.md, "Parameters"), declared on a node, and the value checks every change passes.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from typing import Any

from rcl_interfaces.msg import FloatingPointRange, IntegerRange, ParameterDescriptor, ParameterType
from rclpy.exceptions import ParameterException
from rclpy.node import Node
from rclpy.parameter import Parameter

from robot_state_format.errors import RobotStateFormatError
from robot_state_format.playback.tf_source import TF_SOURCES
from robot_state_format.ros.description import DESCRIPTION_FILES

MAX_PERIOD_S = 86400.0

PARAMS: dict[str, tuple[Any, str]] = {
    "robot_description": ("", "robot description text (URDF, SDFormat, xacro): replay checks against it"),
    "model_file": ("", "path to a model file (instead of robot_description)"),
    "xacro_args": ("", "xacro arguments 'name:=value ...'"),
    "allow_xacro_descriptions": (False, "expand xacro in a robot_description text (parameter or topic) or a "
                                 "model_file set at runtime; xacro "
                                 "runs code: off by default, and when on it runs in a confined, bounded child "
                                 "process; read-only"),
    "xacro_include_paths": ("", "directories (separated by ':') an allowed xacro description may read includes "
                            "and YAML from; nothing else is readable; read-only"),
    "description_files": ("package", "files a robot_description text (parameter or topic) may open through its "
                          "references (add_model, <include>): package (package:// files inside packages on the "
                          "package path) or any (every file the node can read: a risk, see docs/state_store.md); "
                          "read-only"),
    "output_dir": ("restart_files", "directory of restart files and recordings (created when missing)"),
    "checkpoint_period": (0.0, "seconds between checkpoints; 0 = off"),
    "allow_partial": (False, "save and checkpoint also when some moving joints were never reported: only the "
                      "measured joints (and the links they place) are written, never zeros"),
    "max_snapshot_age": (10.0, "seconds: once its publisher is gone, a snapshot received longer ago is not "
                         "saved as the current state; 0 = no limit"),
    "keep_last": (10, "checkpoints kept (the newest); 0 = keep all"),
    "record": (False, "record record_topics into an MCAP directory"),
    "record_topics": (["/tf", "/tf_static", "robot_description", "joint_states", "world_state"],
                      "topics recorded (relative names resolve in the node's namespace)"),
    "joint_states_qos": ("sensor_data", "joint_states subscription: sensor_data (best effort, matches any "
                         "publisher) or reliable (nothing lost, reliable publishers only); read-only"),
    "recording_dir": ("", "where recordings go (default: output_dir; created when missing)"),
    "replay_file": ("", "restart file published by ~/replay"),
    "replay_on_start": (False, "replay replay_file once the node has started"),
    "publish_link_tf": (False, "on replay, also publish every joint's transform (no state_publisher running)"),
    "playback_path": ("", "MCAP recording or directory of restart files played by ~/play"),
    "rate": (1.0, "playback speed factor"),
    "loop": (False, "play the recording again and again (stamps keep increasing)"),
    "start_offset": (0.0, "seconds into the recording where playback starts"),
    "publish_clock": (False, "publish /clock during playback (needs rosgraph_msgs)"),
    "play_on_start": (False, "start playback of playback_path once the node has started"),
    "tf_source": ("auto", "TF during playback: auto, recorded, computed (from joint_states and the model) or none"),
    "realtime_playback": (False, "during playback, real-time scheduling (SCHED_FIFO, when permitted) for the "
                          "player thread and the executor, and a short GIL switch interval; restored after"),
}

READ_ONLY = frozenset({"joint_states_qos", "allow_xacro_descriptions", "xacro_include_paths", "description_files"})
_KINDS = {str: ParameterType.PARAMETER_STRING, float: ParameterType.PARAMETER_DOUBLE,
          int: ParameterType.PARAMETER_INTEGER, bool: ParameterType.PARAMETER_BOOL,
          list: ParameterType.PARAMETER_STRING_ARRAY}
_FLOAT_RANGES = {"checkpoint_period": (0.0, MAX_PERIOD_S), "rate": (0.001, 1000.0), "start_offset": (0.0, 1e9),
                 "max_snapshot_age": (0.0, MAX_PERIOD_S)}


class StateStoreConfigError(RobotStateFormatError):
    """The node was started with a parameter it cannot work with."""


def descriptor(name: str) -> ParameterDescriptor:
    """The descriptor of parameter ``name``: type, description, range, read-only."""
    default, text = PARAMS[name]
    d = ParameterDescriptor(description=text, type=_KINDS[type(default)])
    if name in _FLOAT_RANGES:
        low, high = _FLOAT_RANGES[name]
        d.floating_point_range = [FloatingPointRange(from_value=low, to_value=high, step=0.0)]
    elif name in READ_ONLY:
        d.read_only = True
    elif name == "keep_last":
        d.integer_range = [IntegerRange(from_value=0, to_value=1_000_000, step=1)]
    return d


def declare(node: Node, overrides: dict[str, Parameter[Any]], has_clock: Callable[[], bool]) -> None:
    """Declare every parameter on ``node``; StateStoreConfigError on a value given at start that is
    refused. ``overrides``: the node's parameter overrides (an integer given for a double, as
    ``-p rate:=2`` gives, becomes the double it means)."""
    for name, (default, _) in PARAMS.items():
        given = overrides.get(name)
        if isinstance(default, float) and given is not None and given.type_ is Parameter.Type.INTEGER:
            overrides[name] = Parameter(name, Parameter.Type.DOUBLE, float(given.value))
    try:
        node.declare_parameters("", [(name, default, descriptor(name)) for name, (default, _) in PARAMS.items()])
    except ParameterException as exc:  # a value given at start that the descriptor refuses
        raise StateStoreConfigError(f"parameter refused: {exc}") from None
    # (publish_clock without rosgraph_msgs is not a start-up error: playback refuses it, saying why)
    problem = check_values({n: node.get_parameter(n).value for n in PARAMS if n != "publish_clock"}, has_clock)
    if problem is not None:
        raise StateStoreConfigError(problem)


def _seconds(v: Any, low: float, high: float) -> bool:
    return isinstance(v, float) and math.isfinite(v) and low <= v <= high


def check_values(changes: Mapping[str, Any], has_clock: Callable[[], bool]) -> str | None:
    """Why these parameter values are refused (None: they are fine); no side effects.
    ``has_clock()``: whether ``/clock`` can be published (rosgraph_msgs installed)."""
    v = changes.get("checkpoint_period", 0.0)
    if not _seconds(v, 0.0, MAX_PERIOD_S):
        return f"checkpoint_period must be a number of seconds in 0..{MAX_PERIOD_S:g} (0 = off), got {v!r}"
    if "keep_last" in changes and (not isinstance(changes["keep_last"], int) or changes["keep_last"] < 0):
        return f"keep_last must be an integer >= 0 (0 = keep all), got {changes['keep_last']!r}"
    v = changes.get("rate", 1.0)
    if not _seconds(v, 0.001, 1000.0):
        return f"rate must be a number in 0.001..1000, got {v!r}"
    v = changes.get("start_offset", 0.0)
    if not _seconds(v, 0.0, math.inf):
        return f"start_offset must be a number of seconds >= 0, got {v!r}"
    v = changes.get("max_snapshot_age", 0.0)
    if not _seconds(v, 0.0, MAX_PERIOD_S):
        return f"max_snapshot_age must be a number of seconds in 0..{MAX_PERIOD_S:g} (0 = no limit), got {v!r}"
    if "output_dir" in changes and not str(changes["output_dir"]).strip():
        return "output_dir must not be empty"
    if "record_topics" in changes and (not changes["record_topics"]
                                       or not all(str(t).strip() for t in changes["record_topics"])):
        return f"record_topics must name at least one topic, got {list(changes['record_topics'])!r}"
    if "description_files" in changes and changes["description_files"] not in DESCRIPTION_FILES:
        return f"description_files must be one of {', '.join(DESCRIPTION_FILES)}, got {changes['description_files']!r}"
    if "tf_source" in changes and changes["tf_source"] not in TF_SOURCES:
        return f"tf_source must be one of {', '.join(TF_SOURCES)}, got {changes['tf_source']!r}"
    if "publish_clock" in changes and changes["publish_clock"] and not has_clock():
        return ("publish_clock needs rosgraph_msgs, which is not installed "
                "(pip install ros-rosgraph-msgs, or source a ROS 2 distro)")
    return None
