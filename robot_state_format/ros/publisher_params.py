"""The state_publisher's parameters: declared once, read as one typed value, changes planned without ROS.

:func:`declare` declares them (descriptions, ranges, read-only flags) and checks the start values;
:func:`read` gives a :class:`PublisherParams`; :func:`plan_change` decides, from the changed values
alone, whether a ``set_parameters`` call is refused (and why) and what it asks of the model
(:class:`ChangePlan`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from enum import Enum
from typing import Any

from rcl_interfaces.msg import FloatingPointRange, ParameterDescriptor, ParameterType
from rclpy.node import Node

from robot_state_format import limits
from robot_state_format.errors import RobotStateFormatError
from robot_state_format.ros.description import DESCRIPTION_FILES, XacroPolicy
from robot_state_format.ros.qos import JOINT_STATES_QOS

FREQUENCY_PARAMS = ("publish_frequency", "snapshot_frequency")
EVERY_JOINT_STATE = -1.0  # snapshot_frequency: a world_state after every JointState that changed the state
DESCRIPTION_PARAMS = frozenset({"robot_description", "model_file", "xacro_args"})
NAMES = ("robot_description", "model_file", "xacro_args", "publish_frequency", "ignore_timestamp",
         "frame_prefix", "snapshot_frequency", "model_parent_frame", "use_robot_description_topic",
         "joint_states_qos", "allow_xacro_descriptions", "xacro_include_paths", "description_files")


class StatePublisherConfigError(RobotStateFormatError):
    """The node was started with a parameter value it cannot use."""


@dataclass(frozen=True)
class PublisherParams:
    """The values of the state_publisher's parameters (frequencies as floats)."""

    robot_description: str = ""
    model_file: str = ""
    xacro_args: str = ""
    publish_frequency: float = 20.0
    ignore_timestamp: bool = False
    frame_prefix: str = ""
    snapshot_frequency: float = 10.0
    model_parent_frame: str = "world"
    use_robot_description_topic: bool = False
    joint_states_qos: str = "sensor_data"
    allow_xacro_descriptions: bool = False
    xacro_include_paths: str = ""
    description_files: str = "package"

    @property
    def xacro_policy(self) -> XacroPolicy:
        """What xacro in a description text (parameter or topic) may do."""
        return XacroPolicy.from_params(self.allow_xacro_descriptions, self.xacro_include_paths, self.description_files)

    @property
    def has_description(self) -> bool:
        """A description text or a model file is given."""
        return bool(self.robot_description.strip() or self.model_file.strip())

    @property
    def publish_period_ns(self) -> int:
        return period_ns(self.publish_frequency)

    @property
    def parent_frame(self) -> str:
        """``model_parent_frame`` without a leading slash."""
        return self.model_parent_frame.lstrip("/")


class Load(Enum):
    """What a parameter change asks of the model."""

    NOTHING = "nothing"
    RELOAD = "reload"  # read the description again (robot_description, model_file or xacro_args changed)
    REBUILD = "rebuild"  # the same description, compiled again (frame_prefix changed)


@dataclass(frozen=True)
class ChangePlan:
    """The outcome of :func:`plan_change`: ``refused`` (the reason) or what to do with the model."""

    refused: str | None = None
    load: Load = Load.NOTHING


def period_ns(freq: float) -> int:
    """The period of a rate in Hz (0: no period), in whole milliseconds as robot_state_publisher takes
    it (``1000 / publish_frequency`` truncated: 30 Hz is 33 ms)."""
    return int(1000.0 / freq) * 1_000_000 if freq > 0 else 0


def check_frequency(key: str, value: Any) -> str | None:
    """Why ``value`` is not a valid rate for ``key`` (a number in 0..1000 Hz; snapshot_frequency
    also -1: every JointState), or None."""
    if key == "snapshot_frequency" and not isinstance(value, bool) and value == EVERY_JOINT_STATE:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value) \
            or not 0.0 <= value <= 1000.0:
        extra = ", or -1 (every JointState)" if key == "snapshot_frequency" else ""
        return f"{key} must be a number in 0..1000 Hz{extra}, got {value!r}"
    return None


def _descriptor(text: str, kind: int, *, read_only: bool = False, lo: float | None = None,
                hi: float | None = None) -> ParameterDescriptor:
    d = ParameterDescriptor(description=text, type=kind, read_only=read_only)
    if lo is not None and hi is not None:
        # integers too ("publish_frequency: 50" in a params file), checked in check_frequency
        d.dynamic_typing = True
        d.floating_point_range = [FloatingPointRange(from_value=lo, to_value=hi, step=0.0)]
    return d


def declare(node: Node) -> PublisherParams:
    """Declare the parameters on ``node`` and return their values; StatePublisherConfigError for a
    start value the node cannot use."""
    s, d, b = ParameterType.PARAMETER_STRING, ParameterType.PARAMETER_DOUBLE, ParameterType.PARAMETER_BOOL
    node.declare_parameters("", [
        ("robot_description", "", _descriptor("robot description text: URDF, SDFormat or xacro", s)),
        ("model_file", "", _descriptor("path to a .urdf, .sdf, .world or .xacro file (instead of robot_description)",
                                       s)),
        ("xacro_args", "", _descriptor("xacro arguments for a xacro description: 'name:=value ...'", s)),
        ("publish_frequency", 20.0, _descriptor("max rate (Hz) of /tf per joint; 0 = every message", d, lo=0.0,
                                                hi=1000.0)),
        ("ignore_timestamp", False, _descriptor("publish every joint state (no publish_frequency throttle); "
                                                "stamps stay the messages'", b)),
        ("frame_prefix", "", _descriptor("prefix of every published frame id", s)),
        ("snapshot_frequency", 10.0, _descriptor("rate (Hz) of world_state snapshots; 0 = off; -1 = after every "
                                                 "JointState", d, lo=EVERY_JOINT_STATE, hi=1000.0)),
        ("model_parent_frame", "world", _descriptor("frame the world_state model pose is given in", s)),
        ("use_robot_description_topic", False,
         _descriptor("read the description from the robot_description topic instead of publishing it", b,
                     read_only=True)),
        ("joint_states_qos", "sensor_data",
         _descriptor("QoS of the joint_states subscription: sensor_data, reliable or system_default", s,
                     read_only=True)),
        ("allow_xacro_descriptions", False,
         _descriptor("expand xacro in a robot_description text (parameter or topic) or a model_file set at "
                     "runtime; xacro runs code: off by "
                     "default, and when on it runs in a confined, bounded child process", b, read_only=True)),
        ("xacro_include_paths", "",
         _descriptor("directories (separated by ':') an allowed xacro description may read includes and YAML "
                     "from; nothing else is readable", s, read_only=True)),
        ("description_files", "package",
         _descriptor("files a robot_description text (parameter or topic) may open through its references "
                     "(add_model, <include>): package (package:// files inside packages on the package path) "
                     "or any (every file the node can read: a risk, see docs/state_publisher.md)", s,
                     read_only=True)),
    ])
    raw = _values(node)
    for key in FREQUENCY_PARAMS:
        problem = check_frequency(key, raw[key])
        if problem:
            raise StatePublisherConfigError(problem)
    if raw["description_files"] not in DESCRIPTION_FILES:
        raise StatePublisherConfigError(f"description_files {raw['description_files']!r}: expected one of "
                                        f"{', '.join(DESCRIPTION_FILES)}")
    if raw["joint_states_qos"] not in JOINT_STATES_QOS:
        raise StatePublisherConfigError(f"joint_states_qos {raw['joint_states_qos']!r}: expected one of "
                                        f"{', '.join(JOINT_STATES_QOS)}")
    return _typed(raw)


def _values(node: Node, overrides: dict[str, Any] | None = None) -> dict[str, Any]:
    out = {n: node.get_parameter(n).value for n in NAMES}
    out.update(overrides or {})
    return out


def _typed(raw: dict[str, Any]) -> PublisherParams:
    return PublisherParams(
        robot_description=str(raw["robot_description"]), model_file=str(raw["model_file"]),
        xacro_args=str(raw["xacro_args"]), publish_frequency=float(raw["publish_frequency"]),
        ignore_timestamp=bool(raw["ignore_timestamp"]), frame_prefix=str(raw["frame_prefix"]),
        snapshot_frequency=float(raw["snapshot_frequency"]), model_parent_frame=str(raw["model_parent_frame"]),
        use_robot_description_topic=bool(raw["use_robot_description_topic"]),
        joint_states_qos=str(raw["joint_states_qos"]),
        allow_xacro_descriptions=bool(raw["allow_xacro_descriptions"]),
        xacro_include_paths=str(raw["xacro_include_paths"]), description_files=str(raw["description_files"]))


def read(node: Node) -> PublisherParams:
    """The current values of the parameters declared by :func:`declare`."""
    return _typed(_values(node))


def plan_change(changes: dict[str, Any], current: PublisherParams, has_model: bool
                ) -> tuple[ChangePlan, PublisherParams | None]:
    """Check the ``changes`` of one ``set_parameters`` call against ``current`` and say what they ask for;
    with the parameters as they will be (None when refused)."""
    for key in FREQUENCY_PARAMS:
        if key in changes:
            problem = check_frequency(key, changes[key])
            if problem:
                return ChangePlan(refused=problem), None
    frame = changes.get("model_parent_frame", current.model_parent_frame)
    if "model_parent_frame" in changes and (not isinstance(frame, str) or not frame.strip()):
        return ChangePlan(refused="model_parent_frame must be a non-empty frame id"), None
    prefix = changes.get("frame_prefix", current.frame_prefix)
    if "frame_prefix" in changes and (not isinstance(prefix, str) or prefix != prefix.strip()):
        return ChangePlan(refused="frame_prefix must not have surrounding white space"), None
    for key in ("frame_prefix", "model_parent_frame"):
        if key in changes and len(changes[key]) > limits.MAX_FRAME_ID_CHARS:  # every transform carries it
            return ChangePlan(refused=f"{key}: {len(changes[key])} characters, over the {limits.MAX_FRAME_ID_CHARS}-"
                              "character limit (RSF_MAX_FRAME_ID_CHARS)"), None
    merged = {n: getattr(current, n) for n in NAMES}
    merged.update(changes)
    after = _typed(merged)
    keys = changes.keys()
    if not keys & (DESCRIPTION_PARAMS | {"frame_prefix"}):
        return ChangePlan(), after
    if keys & DESCRIPTION_PARAMS or not has_model:
        if not after.has_description and after.use_robot_description_topic and not has_model:
            return ChangePlan(), after  # still waiting for the topic
        return ChangePlan(load=Load.RELOAD), after
    return ChangePlan(load=Load.REBUILD), after


__all__ = ["EVERY_JOINT_STATE", "FREQUENCY_PARAMS", "ChangePlan", "Load", "PublisherParams",
           "StatePublisherConfigError", "check_frequency", "declare", "period_ns", "plan_change", "read"]
