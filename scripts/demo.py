"""The README's main command (``./run demo [args]``): the real demo, :mod:`robot_state_format.demo`.

Arguments go to it unchanged (``./run demo --help``): a model file, ``-o/--output DIR``, ``--record-seconds S``.
"""

from __future__ import annotations

import sys


def main(argv: list[str]) -> None:
    from robot_state_format.ros.entry import demo  # one line and exit 2 when rclpy or a message is missing

    sys.argv[1:] = argv
    demo()


if __name__ == "__main__":
    main(sys.argv[1:])
