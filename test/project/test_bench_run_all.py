"""bench/run_all.py in its smoke mode: every benchmark runs and the JSON has the documented shape
(timings are not checked here: performance claims live in bench/ and docs/performance.md)."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
from repo_paths import REPO_ROOT

ROOT = REPO_ROOT


def _failed(stdout: str) -> str:
    """The benches that failed, with their errors (the whole JSON is long), else the end of stdout."""
    try:
        benches = json.loads(stdout)["benches"]
    except (ValueError, KeyError, TypeError):
        return stdout[-3000:]
    return json.dumps({n: infos for n, infos in benches.items() if any(i.get("error") for i in infos)}, indent=1)


@pytest.mark.timeout(600)
def test_run_all_smoke_prints_one_json_object_with_every_figure() -> None:
    pytest.importorskip("pinocchio", reason="bench/ measures against Pinocchio (pin: requirements/test-extra.txt, "
                                            "installed in the kilted .venv only)")
    out = subprocess.run([sys.executable, str(ROOT / "bench" / "run_all.py"), "--json", "--smoke"],
                         capture_output=True, text=True, timeout=590, cwd=ROOT, check=False)
    assert out.returncode == 0, _failed(out.stdout) + out.stderr[-3000:]
    doc = json.loads(out.stdout)  # one object, nothing else on stdout
    assert set(doc) == {"machine", "figures", "benches"}
    m = doc["machine"]
    assert isinstance(m["description"], str) and m["cpus"] >= 1 and len(m["load_average_at_start"]) == 3
    benches = {p.stem.removeprefix("bench_") for p in (ROOT / "bench").glob("bench_*.py")}
    assert set(doc["benches"]) == benches  # every bench file is run
    for name, infos in doc["benches"].items():
        assert [i["returncode"] for i in infos] == [0], (name, infos)
    seen = set()
    for name, f in doc["figures"].items():
        assert {"ours", "anchor", "ratio", "unit", "bench", "runs"} <= set(f), name
        assert isinstance(f["ours"], (int, float)) and isinstance(f["unit"], str) and f["unit"], name
        if f["anchor"]:
            assert f["ratio"] is not None and f["ratio"] >= 0, name
        seen.add(f["bench"])
    assert seen == benches  # every bench reports at least one figure
    for key in ("usdf snapshot romeo from joint values (FK+twists+text)", "fk forward romeo, 1 configuration",
                "fk link_twists romeo, 1 configuration", "cli --help wall time", "DDS /tf lost at 1 kHz"):
        assert key in doc["figures"], key
