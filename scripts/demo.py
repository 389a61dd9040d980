"""The README's main command (``./run demo [args]``): the real demo, :mod:`robot_state_format.demo`.

Arguments go to it unchanged (``./run demo --help``): a model file, ``--out DIR``, ``--record-seconds S``.
"""

from __future__ import annotations

import sys


def main(argv: list[str]) -> int:
    from robot_state_format.demo import main as demo_main

    return demo_main(argv)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
