"""Launch both nodes: state_publisher (TF + world_state) and state_store (restart files, recordings).

    ros2 launch robot_state_format state_sharing.launch.py model:=/path/robot.urdf output_dir:=/tmp/states

Both read the same model; state_store subscribes to the publisher's world_state in the same namespace.
"""

from launch.actions import DeclareLaunchArgument
from launch.substitutions import LaunchConfiguration
from launch_ros.actions import Node
from launch_ros.parameter_descriptions import ParameterValue

from launch import LaunchDescription

ARGUMENTS = (
    ("model", "", "path to the robot model: .urdf, .sdf, .world or .xacro"),
    ("robot_description", "", "robot description text (instead of model)"),
    ("xacro_args", "", "xacro arguments 'name:=value ...'"),
    ("frame_prefix", "", "prefix of every published frame id (e.g. r1/)"),
    ("namespace", "", "namespace of both nodes and their topics"),
    ("use_sim_time", "false", "use /clock"),
    ("publish_frequency", "20.0", "max /tf rate per joint (Hz); 0 = every joint state"),
    ("snapshot_frequency", "10.0", "world_state snapshot rate (Hz); 0 = off"),
    ("output_dir", "restart_files", "state_store: directory of restart files and recordings (created when missing)"),
    ("checkpoint_period", "0.0", "state_store: seconds between checkpoints; 0 = off"),
    ("record", "false", "state_store: record world_state and joint_states into MCAP"),
)


def _arg(name: str, kind: type) -> ParameterValue:
    return ParameterValue(LaunchConfiguration(name), value_type=kind)


def generate_launch_description() -> LaunchDescription:
    declared = [DeclareLaunchArgument(name, default_value=default, description=text)
                for name, default, text in ARGUMENTS]
    model = {
        "model_file": _arg("model", str),
        "robot_description": _arg("robot_description", str),
        "xacro_args": _arg("xacro_args", str),
        "use_sim_time": _arg("use_sim_time", bool),
    }
    publisher = Node(
        package="robot_state_format", executable="state_publisher", name="state_publisher",
        namespace=LaunchConfiguration("namespace"), output="screen",
        parameters=[{**model,
                     "frame_prefix": _arg("frame_prefix", str),
                     "publish_frequency": _arg("publish_frequency", float),
                     "snapshot_frequency": _arg("snapshot_frequency", float)}],
    )
    store = Node(
        package="robot_state_format", executable="state_store", name="state_store",
        namespace=LaunchConfiguration("namespace"), output="screen",
        parameters=[{**model,
                     "output_dir": _arg("output_dir", str),
                     "checkpoint_period": _arg("checkpoint_period", float),
                     "record": _arg("record", bool)}],
    )
    return LaunchDescription([*declared, publisher, store])
