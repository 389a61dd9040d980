"""Launch a simulation and share its state: sim_bridge + state_publisher + state_store.

    ros2 launch robot_state_format sim_sharing.launch.py model:=/path/robot.urdf output_dir:=/tmp/states

sim_bridge runs the passive simulation and publishes joint_states and world_state (with the
simulator-state extension); state_publisher turns joint_states into TF (its own world_state is
off, so state_store saves the simulator's); state_store's ~/save writes restart files that
sim_bridge's ~/restart (parameter restart_file) puts the simulation back into.
"""

from launch.actions import DeclareLaunchArgument
from launch.substitutions import LaunchConfiguration
from launch_ros.actions import Node
from launch_ros.parameter_descriptions import ParameterValue

from launch import LaunchDescription

ARGUMENTS = (
    ("model", "", "path to the model: .urdf, .sdf, .world or .xacro"),
    ("xacro_args", "", "xacro arguments 'name:=value ...'"),
    ("namespace", "", "namespace of the three nodes and their topics"),
    ("engine", "mujoco", "sim_bridge: mujoco or drake"),
    ("dt", "0.002", "sim_bridge: time step (s)"),
    ("floating_base", "false", "sim_bridge: a URDF robot's root link floats"),
    ("restart_file", "", "sim_bridge: restart file (~/restart reads it; set, the run starts from it)"),
    ("real_time_factor", "1.0", "sim_bridge: simulated seconds per second; 0 = as fast as possible"),
    ("publish_clock", "false", "sim_bridge: publish /clock (then use_sim_time:=true)"),
    ("use_sim_time", "false", "state_publisher and state_store use /clock"),
    ("output_dir", "restart_files", "state_store: directory of restart files and recordings (created when missing)"),
    ("checkpoint_period", "0.0", "state_store: seconds between checkpoints; 0 = off"),
)


def _arg(name: str, kind: type) -> ParameterValue:
    return ParameterValue(LaunchConfiguration(name), value_type=kind)


def generate_launch_description() -> LaunchDescription:
    declared = [DeclareLaunchArgument(name, default_value=default, description=text)
                for name, default, text in ARGUMENTS]
    ns = LaunchConfiguration("namespace")
    model = {"model_file": _arg("model", str), "xacro_args": _arg("xacro_args", str)}
    bridge = Node(
        package="robot_state_format", executable="sim_bridge", name="sim_bridge", namespace=ns, output="screen",
        parameters=[{**model,
                     "engine": _arg("engine", str),
                     "dt": _arg("dt", float),
                     "floating_base": _arg("floating_base", bool),
                     "restart_file": _arg("restart_file", str),
                     "real_time_factor": _arg("real_time_factor", float),
                     "publish_clock": _arg("publish_clock", bool)}],
    )
    publisher = Node(
        package="robot_state_format", executable="state_publisher", name="state_publisher", namespace=ns,
        output="screen",
        parameters=[{**model, "use_sim_time": _arg("use_sim_time", bool), "snapshot_frequency": 0.0}],
    )
    store = Node(
        package="robot_state_format", executable="state_store", name="state_store", namespace=ns, output="screen",
        parameters=[{**model, "use_sim_time": _arg("use_sim_time", bool),
                     "output_dir": _arg("output_dir", str),
                     "checkpoint_period": _arg("checkpoint_period", float)}],
    )
    return LaunchDescription([*declared, bridge, publisher, store])
