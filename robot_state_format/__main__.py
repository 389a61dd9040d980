"""``python -m robot_state_format``: the ``robot-state-format`` command line."""

from robot_state_format.cli import entry_point

if __name__ == "__main__":
    entry_point()
