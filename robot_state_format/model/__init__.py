"""Robot models: the Model types, one reader per format (urdf/, xacro/, sdf/, mjcf/, directives/), their validation. No rclpy."""

from robot_state_format.model.loader import detect_format, load_model, load_model_file
from robot_state_format.model.types import (
    WORLD,
    Frame,
    Joint,
    JointType,
    Link,
    Mimic,
    Model,
    ModelFrame,
)

__all__ = [
    "WORLD", "Frame", "Joint", "JointType", "Link", "Mimic", "Model", "ModelFrame",
    "detect_format", "load_model", "load_model_file",
]
