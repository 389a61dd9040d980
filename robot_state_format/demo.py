"""``python -m robot_state_format.demo`` (the README's ``./run demo``): see :mod:`robot_state_format.ros.demo`.

The demo drives ROS nodes, so its code lives in ``ros/``, the only subpackage that imports rclpy.
"""

from __future__ import annotations

import sys

from robot_state_format.ros.demo import main

if __name__ == "__main__":
    sys.exit(main())
