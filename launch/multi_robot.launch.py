"""Launch a multi-robot system: one state_publisher per robot, each under its namespace with
``frame_prefix`` ``<ns>/``, and one state_store keeping the world of all of them (docs/networking.md).

    ros2 launch robot_state_format multi_robot.launch.py \\
        robots:="r1=/path/arm.urdf r2=/path/base.urdf.xacro" output_dir:=/tmp/world

``robots`` is a space-separated list of ``namespace=model_file``. Each robot gets its own
``state_publisher`` in ``/<namespace>`` (topics ``/<namespace>/joint_states``, ``world_state``,
``robot_description``; TF frames ``<namespace>/<link>``); the ``state_store`` (in ``store_namespace``)
gets ``sources`` = every namespace, so ``/state_store/save`` writes one world with a model_state per
robot. Robots on other machines are listed in ``remote_sources`` (namespaces only: their
state_publishers run there). Place the robots in the common frame with TF (e.g.
``static_transform_publisher`` from ``world_frame`` to ``r1/base_link``).
"""

from launch.actions import DeclareLaunchArgument, OpaqueFunction
from launch.substitutions import LaunchConfiguration
from launch_ros.actions import Node

from launch import LaunchDescription

ARGUMENTS = (
    ("robots", "", "space-separated namespace=model_file pairs, one state_publisher each"),
    ("remote_sources", "", "space-separated namespaces of robots published elsewhere (another machine)"),
    ("store_namespace", "", "namespace of the state_store"),
    ("output_dir", "restart_files", "state_store: directory of restart files and recordings (created when missing)"),
    ("stale_after", "5.0", "state_store: seconds of silence before a robot is reported stale"),
    ("world_frame", "world", "the common TF frame the robots are posed in"),
    ("world_name", "world", "name of the saved world_state"),
    ("checkpoint_period", "0.0", "state_store: seconds between checkpoints; 0 = off"),
    ("publish_frequency", "20.0", "state_publisher: max /tf rate per joint (Hz)"),
    ("use_sim_time", "false", "use /clock"),
)


def _robots(text: str) -> list[tuple[str, str]]:
    out = []
    for item in text.split():
        ns, sep, model = item.partition("=")
        if not sep or not ns.strip("/") or not model:
            raise ValueError(f"robots: {item!r} is not namespace=model_file")
        out.append((ns.strip("/"), model))
    return out


def _nodes(context, *args, **kwargs):  # type: ignore[no-untyped-def]
    def arg(name: str) -> str:
        return LaunchConfiguration(name).perform(context)

    sim = arg("use_sim_time").lower() == "true"
    robots = _robots(arg("robots"))
    remote = [ns.strip("/") for ns in arg("remote_sources").split()]
    if not robots and not remote:
        raise ValueError("give robots:=\"r1=/path/model.urdf ...\" (and/or remote_sources)")
    nodes = [Node(package="robot_state_format", executable="state_publisher", name="state_publisher",
                  namespace=ns, output="screen",
                  parameters=[{"model_file": model, "frame_prefix": f"{ns}/", "use_sim_time": sim,
                               "publish_frequency": float(arg("publish_frequency"))}])
             for ns, model in robots]
    nodes.append(Node(
        package="robot_state_format", executable="state_store", name="state_store",
        namespace=arg("store_namespace"), output="screen",
        parameters=[{"sources": [f"/{ns}" for ns, _ in robots] + [f"/{ns}" for ns in remote],
                     "output_dir": arg("output_dir"), "stale_after": float(arg("stale_after")),
                     "world_frame": arg("world_frame"), "world_name": arg("world_name"),
                     "checkpoint_period": float(arg("checkpoint_period")), "use_sim_time": sim}]))
    return nodes


def generate_launch_description() -> LaunchDescription:
    declared = [DeclareLaunchArgument(name, default_value=default, description=text)
                for name, default, text in ARGUMENTS]
    return LaunchDescription([*declared, OpaqueFunction(function=_nodes)])
