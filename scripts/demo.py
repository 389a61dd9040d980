"""The README's main command (``./run demo``): load the bundled sample model and print its frames.

This is the placeholder demo; it grows into the node demo once state_publisher exists.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

SAMPLES = Path(__file__).resolve().parent.parent / "robot_state_format" / "samples"
DEFAULT_SAMPLE = "double_pendulum.urdf"


def main(argv: list[str]) -> int:
    model = Path(argv[0]) if argv else SAMPLES / DEFAULT_SAMPLE
    if not model.exists():
        print(f"demo: sample model {model} not found", file=sys.stderr)
        return 2
    print(f"# frames of {model.name}", flush=True)
    return subprocess.call([sys.executable, "-m", "robot_state_format", "frames", str(model)])


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
