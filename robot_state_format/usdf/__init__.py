"""USDF: the world_state format (types, read, write, validate, export). No rclpy here."""
