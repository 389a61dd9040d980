"""Run every benchmark and print one JSON object with all their figures and the machine.

    .venv/bin/python bench/run_all.py --json               # every bench once (about 5-10 min)
    .venv/bin/python bench/run_all.py --json --repeat 3    # each bench 3 times: median ratio, all ratios kept
    .venv/bin/python bench/run_all.py --json --smoke       # tiny iterations: checks that everything runs

Each bench (``bench/bench_*.py``) runs as its own process with ``--json`` and prints its figures as
one ``BENCH_JSON`` line; every figure is ``{"ours", "anchor", "ratio", "unit"}`` (plus what the anchor
is and the goal), the anchor measured in the same process run as ``ours``.  The object printed:

    {"machine": {...}, "figures": {name: {...figure, "bench": ..., "runs": [ratio, ...]}},
     "benches": {bench: {"seconds": ..., "returncode": ..., "error": ...}}}

With ``--repeat N`` a figure holds the run with the median ratio and ``runs`` every run's ratio.
Without ``--json`` a table is printed instead (``--markdown``: the table of docs/performance.md;
``--from FILE`` formats a saved JSON result instead of running).  ``--only fk,usdf`` runs some benches.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from figures import MARK
from machine import describe_machine

BENCH = Path(__file__).resolve().parent
# bench name -> extra arguments of a normal run (the smoke run passes --smoke instead)
BENCHES: dict[str, list[str]] = {
    "usdf": [],
    "fk": ["--quick"],
    "urdf_load": [],
    "cli": [],
    "state_publisher": [],
    "scale": [],
    "replay": [],
    "playback_memory": ["--messages", "100000"],
    "restamp": [],
    "footprint": ["--quick"],
    "vs_rsp": [],
    "xacro_child": ["--repeat", "5"],  # the full run (3 start-ups, 60 s soak): bench_footprint.py alone
}


def machine() -> dict[str, Any]:
    load = os.getloadavg()
    return {"description": describe_machine(), "cpus": os.cpu_count(), "python": platform.python_version(),
            "system": f"{platform.system()} {platform.release()} {platform.machine()}",
            "load_average_at_start": [round(x, 2) for x in load]}


def run_bench(name: str, smoke: bool, timeout: float) -> tuple[dict[str, Any], dict[str, Any]]:
    """(figures, run info) of one bench process."""
    cmd = [sys.executable, str(BENCH / f"bench_{name}.py"), "--json", *(["--smoke"] if smoke else BENCHES[name])]
    t0 = time.monotonic()
    try:
        out = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, check=False)
    except subprocess.TimeoutExpired:
        return {}, {"seconds": round(time.monotonic() - t0, 1), "returncode": None, "error": f"timed out after {timeout} s"}
    info: dict[str, Any] = {"seconds": round(time.monotonic() - t0, 1), "returncode": out.returncode}
    figures: dict[str, Any] = {}
    for line in out.stdout.splitlines():
        if line.startswith(MARK):
            figures = json.loads(line[len(MARK):])
    if out.returncode != 0 or not figures:
        info["error"] = (out.stderr or out.stdout).strip().splitlines()[-5:]
    return figures, info


def markdown(result: dict[str, Any]) -> str:
    """The figures as the Markdown table of docs/performance.md."""
    m = result["machine"]
    lines = [f"Machine: {m['description'].split(', load average')[0]}; load average {m['load_average_at_start']} at "
             f"the start, {m.get('load_average_at_end')} at the end.", "",
             "| figure | ours | anchor | unit | ratio | all runs | anchor is | goal |", "|---|---|---|---|---|---|---|---|"]
    for n, f in result["figures"].items():
        r = "-" if f["ratio"] is None else f"{f['ratio']:.3g}"
        runs = ", ".join("-" if x is None else f"{x:.3g}" for x in f.get("runs", []))
        lines.append(f"| {n} | {f['ours']:.4g} | {'-' if f['anchor'] is None else format(f['anchor'], '.4g')} | "
                     f"{f['unit']} | **{r}** | {runs} | {f.get('anchor_is', '')} | {f.get('goal', '')} |")
    return "\n".join(lines)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--json", action="store_true", help="print one JSON object (else a table)")
    ap.add_argument("--smoke", action="store_true", help="tiny iterations (checks that every bench runs)")
    ap.add_argument("--repeat", type=int, default=1, help="runs of each bench (median ratio kept)")
    ap.add_argument("--only", default="", help="comma-separated bench names (default: all)")
    ap.add_argument("--timeout", type=float, default=1800.0, help="seconds per bench run")
    ap.add_argument("--markdown", action="store_true", help="print the result as a Markdown table")
    ap.add_argument("--from", dest="from_file", type=Path, help="format this saved --json result (no run)")
    args = ap.parse_args()
    if args.from_file is not None:
        print(markdown(json.loads(args.from_file.read_text())))
        return 0
    names = [n for n in args.only.split(",") if n] or list(BENCHES)
    unknown = [n for n in names if n not in BENCHES]
    if unknown:
        ap.error(f"unknown bench(es) {', '.join(unknown)}; known: {', '.join(BENCHES)}")
    result: dict[str, Any] = {"machine": machine(), "figures": {}, "benches": {}}
    runs: dict[str, list[dict[str, Any]]] = {}
    for _ in range(max(1, args.repeat)):
        for name in names:
            figures, info = run_bench(name, args.smoke, args.timeout)
            result["benches"].setdefault(name, []).append(info)
            for fig_name, fig in figures.items():
                runs.setdefault(fig_name, []).append({**fig, "bench": name})
    for fig_name, fig_runs in runs.items():
        ordered = sorted(fig_runs, key=lambda f: (f["ratio"] is None, f["ratio"] or 0.0))
        pick = dict(ordered[(len(ordered) - 1) // 2])
        pick["runs"] = [f["ratio"] for f in fig_runs]
        result["figures"][fig_name] = pick
    result["machine"]["load_average_at_end"] = [round(x, 2) for x in os.getloadavg()]
    if args.json:
        print(json.dumps(result, indent=1))
    elif args.markdown:
        print(markdown(result))
    else:
        print(f"machine: {result['machine']['description']}")
        print(f"{'figure':64s} {'ours':>12s} {'anchor':>12s} {'unit':6s} {'ratio':>8s}  goal")
        for n, f in result["figures"].items():
            r = "-" if f["ratio"] is None else f"{f['ratio']:.3f}"
            print(f"{n:64s} {f['ours']!s:>12} {f['anchor']!s:>12} {f['unit']:6s} {r:>8s}  {f['goal']}")
        for n, infos in result["benches"].items():
            for info in infos:
                if info.get("error"):
                    print(f"bench {n}: {info['error']}")
    failed = [n for n, infos in result["benches"].items() if any(i.get("error") for i in infos)]
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
