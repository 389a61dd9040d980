from robot_state_format.cli import entry_point

entry_point()
