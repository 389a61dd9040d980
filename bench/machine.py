"""The machine line every benchmark prints beside its figures."""

from __future__ import annotations

import os
import platform
from pathlib import Path


def describe_machine() -> str:
    """CPU model, CPU count, Python version and load average, e.g. for ``machine: ...`` lines."""
    cpu = platform.processor() or platform.machine()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    load = os.getloadavg()
    return (f"{cpu}, {os.cpu_count()} CPUs, {platform.system()} {platform.machine()}, "
            f"Python {platform.python_version()}, load average {load[0]:.1f} {load[1]:.1f} {load[2]:.1f}")
