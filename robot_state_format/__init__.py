"""robot_state_format: one truth about a robot's state, shared across ROS 2 and simulators."""

__version__ = "0.1.0"
