"""ROS 2 nodes, TF and message conversion: the only subpackage that imports rclpy."""
