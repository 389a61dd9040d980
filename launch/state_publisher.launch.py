"""Launch the state_publisher node.

    ros2 launch robot_state_format state_publisher.launch.py model:=/path/robot.urdf
    ros2 launch robot_state_format state_publisher.launch.py model:=robot.urdf.xacro xacro_args:="arm:=left"
    ros2 launch robot_state_format state_publisher.launch.py model:=a.urdf namespace:=r1 frame_prefix:=r1/

Give exactly one of ``model`` (a .urdf, .sdf, .world or .xacro path) or ``robot_description`` (the text).
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
    ("namespace", "", "namespace of the node and its topics"),
    ("use_sim_time", "false", "use /clock"),
    ("publish_frequency", "20.0", "max /tf rate per joint (Hz); 0 = every joint state"),
    ("snapshot_frequency", "10.0", "world_state snapshot rate (Hz); 0 = off"),
    ("model_parent_frame", "world", "frame the world_state model pose is given in"),
    ("ignore_timestamp", "false", "publish every joint state (no publish_frequency throttle), with its own stamp"),
)


def _arg(name: str, kind: type) -> ParameterValue:
    return ParameterValue(LaunchConfiguration(name), value_type=kind)


def generate_launch_description() -> LaunchDescription:
    declared = [DeclareLaunchArgument(name, default_value=default, description=text)
                for name, default, text in ARGUMENTS]
    node = Node(
        package="robot_state_format",
        executable="state_publisher",
        name="state_publisher",
        namespace=LaunchConfiguration("namespace"),
        output="screen",
        parameters=[{
            "model_file": _arg("model", str),
            "robot_description": _arg("robot_description", str),
            "xacro_args": _arg("xacro_args", str),
            "frame_prefix": _arg("frame_prefix", str),
            "use_sim_time": _arg("use_sim_time", bool),
            "publish_frequency": _arg("publish_frequency", float),
            "snapshot_frequency": _arg("snapshot_frequency", float),
            "model_parent_frame": _arg("model_parent_frame", str),
            "ignore_timestamp": _arg("ignore_timestamp", bool),
        }],
    )
    return LaunchDescription([*declared, node])
