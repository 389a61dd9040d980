"""Figures every benchmark reports: ``{"ours", "anchor", "ratio", "unit"}``, printed as a table and,
with ``--json``, as one line ``BENCH_JSON {...}`` that ``bench/run_all.py`` collects."""

from __future__ import annotations

import json
import math
from typing import Any

MARK = "BENCH_JSON "


class Figures:
    """The figures of one benchmark run, by name."""

    def __init__(self) -> None:
        self.items: dict[str, dict[str, Any]] = {}

    def add(self, name: str, ours: float, anchor: float | None, unit: str, *, anchor_is: str = "",
            goal: str = "", ratio: float | None = None) -> None:
        """``ratio`` defaults to ours / anchor (pass it when measured otherwise, e.g. interleaved)."""
        if ratio is None and anchor:
            ratio = ours / anchor
        self.items[name] = {"ours": _num(ours), "anchor": _num(anchor), "ratio": _num(ratio), "unit": unit,
                            "anchor_is": anchor_is, "goal": goal}

    def emit(self, as_json: bool) -> None:
        print("figures (ours / anchor = ratio):")
        for name, f in self.items.items():
            r = f["ratio"]
            print(f"  {name:58s} {f['ours']!s:>12} / {f['anchor']!s:>12} {f['unit']:6s} = "
                  f"{'-' if r is None else f'{r:.3f}'}  [{f['anchor_is']}]{' goal ' + f['goal'] if f['goal'] else ''}")
        if as_json:
            print(MARK + json.dumps(self.items), flush=True)


def _num(x: float | None) -> float | None:
    if x is None:
        return None
    x = float(x)
    return round(x, 6 if abs(x) < 1 else 3) if math.isfinite(x) else None
