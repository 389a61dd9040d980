"""Run the fuzzing harness: every target (or some) for a while; findings are kept as fixtures.

    .venv/bin/python fuzz/run.py --minutes 5                  # the long run, all targets
    .venv/bin/python fuzz/run.py --seconds 10 --target usdf   # one target, briefly
    .venv/bin/python fuzz/run.py --replay                     # the kept reproducers only

Each target runs in turn in rounds of Hypothesis examples (random seeds) until its share of the time
is used.  The process runs under ``RLIMIT_AS`` (fuzz/harness.py ``MEMORY_BOUND_BYTES``), so memory
past the bound is a ``MemoryError`` (a finding); a call past ``DEADLINE_S`` is a finding too.  A
finding is printed and saved to test/fixtures/fuzz/ (the suite replays them:
test/project/test_fuzz_harness.py).  Exit status 1 when anything was found.
"""

from __future__ import annotations

import argparse
import collections
import resource
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from hypothesis import HealthCheck, Phase, given, settings  # noqa: E402

from fuzz import harness  # noqa: E402
from fuzz.strategies import STATES, mutated  # noqa: E402


def _limit_memory(bound: int) -> None:
    _soft, hard = resource.getrlimit(resource.RLIMIT_AS)
    if hard == resource.RLIM_INFINITY or hard > bound:
        resource.setrlimit(resource.RLIMIT_AS, (bound, hard))


def fuzz_target(target: str, seconds: float, counts: collections.Counter[str], found: list[str],
                min_inputs: int = 0) -> None:
    """Fuzz ``target`` for ``seconds``, and on until it has had ``min_inputs`` inputs (a loaded machine)."""
    strategy = STATES if target == "usdf-writer" else mutated(harness.seeds(target))
    deadline = time.monotonic() + seconds

    def done() -> bool:
        return time.monotonic() > deadline and sum(n for k, n in counts.items() if k.startswith(f"{target} ")) \
            >= min_inputs

    @settings(max_examples=25, deadline=None, database=None, derandomize=False, phases=[Phase.generate],
              suppress_health_check=list(HealthCheck))
    @given(strategy)
    def one(data: object) -> None:
        if done():
            return
        outcome = harness.classify(target, data)
        counts[f"{target} {outcome.kind}"] += 1
        if outcome.kind == harness.FINDING:
            path = harness.save_finding(target, data, outcome)
            found.append(f"{target}: {outcome.detail} -> {path}")

    while not done():
        one()


def replay() -> int:
    bad = 0
    for target, data, path in harness.load_reproducers():
        outcome = harness.classify(target, data)
        expected = harness.expected_outcome(path)
        ok = outcome.kind != harness.FINDING and (expected is None or expected == (outcome.kind, outcome.detail))
        bad += not ok
        print(f"{'ok ' if ok else 'BAD'} {path.name}: {outcome.kind} {outcome.detail} ({outcome.seconds:.3f} s)")
    return 1 if bad else 0


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--minutes", type=float, default=None)
    ap.add_argument("--seconds", type=float, default=None)
    ap.add_argument("--min-inputs", type=int, default=0,
                    help="each target runs on past its share of the time until it has had this many inputs")
    ap.add_argument("--target", action="append", choices=sorted(harness.TARGETS), help="repeatable; default all")
    ap.add_argument("--replay", action="store_true", help="run the kept reproducers only")
    ap.add_argument("--memory-mb", type=int, default=harness.MEMORY_BOUND_BYTES >> 20)
    args = ap.parse_args()
    _limit_memory(args.memory_mb << 20)
    if args.replay:
        return replay()
    total = args.seconds if args.seconds is not None else 60.0 * (args.minutes if args.minutes is not None else 1.0)
    targets = args.target or list(harness.TARGETS)
    counts: collections.Counter[str] = collections.Counter()
    found: list[str] = []
    for target in targets:
        fuzz_target(target, total / len(targets), counts, found, args.min_inputs)
    for key in sorted(counts):
        print(f"{key}: {counts[key]}")
    for line in found:
        print(f"FINDING {line}")
    print(f"{sum(counts.values())} inputs, {len(found)} finding(s) in {total:g} s")
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
