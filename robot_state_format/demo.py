"""``python -m robot_state_format.demo`` (the README's ``./run demo``): see :mod:`robot_state_format.ros.demo`.

The demo drives ROS nodes, so its code lives in ``ros/``, the only subpackage that imports rclpy; it is loaded
through :mod:`robot_state_format.ros.entry`, so that without rclpy (or a message package) the demo says in one
line what to install and exits 2.
"""

from __future__ import annotations

from robot_state_format.ros.entry import demo

if __name__ == "__main__":
    demo()
