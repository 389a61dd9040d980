"""Test modules that run in a process of their own (conftest.py hooks; docs/testing.md).

A native library that crashes (a segmentation fault in Drake, MuJoCo, Pinocchio) ends the process
it runs in; under pytest-xdist that is a worker and every test it had left.  The tests of the
modules in :data:`OWN_PROCESS` run instead in a child ``python -m pytest`` (one per module, in
this process's environment), which streams each test's reports back as JSON lines; this process
reports them as its own.  When the child dies, the test it was running fails with the signal and
the child's last output (the faulthandler's traceback included), and the module's remaining
tests run in a new child.  Set ``RSF_TEST_OWN_PROCESS=0`` to run them in-process (debugging).
"""

from __future__ import annotations

import importlib.util
import json
import os
import signal
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

import pytest
from _pytest.reports import TestReport

OWN_PROCESS = frozenset({
    "test_sim_drake.py",
    "test_sim_isolated.py",
    "test_sim_mujoco.py",
    "test_usdf_mujoco.py",
    "test_kinematics_pinocchio.py",
    "test_urdf_real.py",
    "test_directives_drake.py",
    "test_mjcf_reader.py",
    "test_mjcf_cli.py",
})
"""Test modules that load native engines and libraries (Drake, MuJoCo, Pinocchio) and run them."""

RETRY_DRAKE_CRASH = frozenset({"test_sim_drake.py", "test_directives_drake.py"})
"""Modules whose test, when its process dies with SIGSEGV inside Drake (the faulthandler's traceback of the
crashing thread in ``pydrake`` or ``sim/drake_sim.py``), runs once more in a fresh child: drake 1.51.1
crashes now and then when one process builds many simulations (docs/simulation.md), which the product
never does (one per engine process). The first crash is printed in the summary; a second one fails."""

RETRY_SECTION = "first run: Drake crashed"
CHILD = "RSF_TEST_CHILD_REPORTS"  # set in the child: where it writes its reports
PER_TEST_BOUND = 200.0  # s: above pytest.ini's per-test timeout (the child enforces that one)
TAIL = 60  # lines of the child's output shown with a crash

_RESULTS = pytest.StashKey[dict[str, list[TestReport]]]()  # nodeid -> reports, for the items still to report
_STARTED = pytest.StashKey[set[str]]()
_RETRIED = pytest.StashKey[dict[str, str]]()  # nodeid -> the first crash's text, for a test run again


def wanted(item: pytest.Item) -> bool:
    return (CHILD not in os.environ and os.environ.get("RSF_TEST_OWN_PROCESS", "1") != "0"
            and item.path.name in OWN_PROCESS)


def _describe(returncode: int) -> str:
    if returncode < 0:
        try:
            return f"died with signal {-returncode} ({signal.Signals(-returncode).name})"
        except ValueError:
            return f"died with signal {-returncode}"
    return f"exited with status {returncode} before the test finished"


def _run_child(item: pytest.Item) -> None:
    """Run ``item`` and the module's items after it (this session's selection) in a child."""
    session, config = item.session, item.config
    items = session.items
    module = [i for i in items[items.index(item):] if i.path == item.path]
    results = session.stash.setdefault(_RESULTS, {})
    started = session.stash.setdefault(_STARTED, set())
    with tempfile.TemporaryDirectory(prefix="rsf-own-process-") as tmp:
        reports_file = Path(tmp) / "reports.jsonl"
        reports_file.touch()
        xdist = ["-n", "0"] if importlib.util.find_spec("xdist") is not None else []  # plain pytest without it
        cmd = [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", *xdist, "-q", "--no-header",
               # launch_testing's collection hook imports every test module of the directory: the child
               # imports only its own module's (and conftest's) libraries
               "-p", "no:launch_testing", "-p", "no:launch_ros",
               # the ids as arguments: pytest before 8.2 (Ubuntu 24.04 has 7.4) reads no @FILE
               "--rootdir", str(config.rootpath), *(i.nodeid for i in module)]
        if config.inipath is not None:
            cmd += ["-c", str(config.inipath)]
        env = {**os.environ, CHILD: str(reports_file)}
        try:
            out = subprocess.run(cmd, cwd=config.rootpath, env=env, capture_output=True, text=True,
                                 timeout=PER_TEST_BOUND * len(module) + 60, check=False)
            returncode, output = out.returncode, out.stdout + out.stderr
        except subprocess.TimeoutExpired as exc:
            returncode = -int(signal.SIGKILL)
            output = f"{exc.stdout or ''}{exc.stderr or ''}\n(killed after {exc.timeout:.0f} s)"
            output = output if isinstance(output, str) else str(output)
        for line in reports_file.read_text(encoding="utf-8").splitlines():
            entry = json.loads(line)
            if "start" in entry:
                started.add(entry["start"])
                results.setdefault(entry["start"], [])
            else:
                rep = config.hook.pytest_report_from_serializable(config=config, data=entry["report"])
                if isinstance(rep.longrepr, list):  # a skip's (path, line, reason): JSON made it a list
                    rep.longrepr = tuple(rep.longrepr)
                results.setdefault(rep.nodeid, []).append(rep)
    crashed = [i for i in module if i.nodeid in started and not _finished(results.get(i.nodeid, []))]
    retried = session.stash.setdefault(_RETRIED, {})
    for i in crashed:  # the test running when the child died
        tail = "\n".join(output.splitlines()[-TAIL:])
        if _drake_crash(i, returncode, tail) and i.nodeid not in retried:
            retried[i.nodeid] = f"the test's process {_describe(returncode)}\n--- its last output ---\n{tail}"
            started.discard(i.nodeid)  # runtest_protocol runs it (and the module's rest) in a new child
            results.pop(i.nodeid, None)
            continue
        results[i.nodeid].append(_crash_report(i, results[i.nodeid], f"the test's process {_describe(returncode)}\n"
                                               f"--- its last output ---\n{tail}"))
    if not crashed and returncode not in (0, 1, 5) and not any(i.nodeid in started for i in module):
        results.setdefault(item.nodeid, []).append(  # the child failed before any test (usage, collection)
            _crash_report(item, [], f"pytest in a child process {_describe(returncode)}\n{output[-4000:]}"))
        started.add(item.nodeid)


def _drake_crash(item: pytest.Item, returncode: int, tail: str) -> bool:
    """A SIGSEGV whose crashing thread (faulthandler's "Current thread" block) was in Drake."""
    if item.path.name not in RETRY_DRAKE_CRASH or returncode != -int(signal.SIGSEGV):
        return False
    current = tail.partition("Current thread")[2].split("\n\n", 1)[0]
    return "pydrake" in current or "drake_sim.py" in current


def _finished(reports: list[TestReport]) -> bool:
    return any(r.when == "teardown" for r in reports)


def _crash_report(item: pytest.Item, earlier: list[TestReport], text: str) -> TestReport:
    when = "call" if any(r.when == "setup" and r.passed for r in earlier) else "setup"
    return TestReport(item.nodeid, item.location, dict.fromkeys(item.keywords, 1), "failed", text, when,
                      sections=[], duration=0.0, start=0.0, stop=0.0)


def runtest_protocol(item: pytest.Item, nextitem: pytest.Item | None) -> bool:
    """conftest's ``pytest_runtest_protocol`` for an own-process item: report its child's results, then close
    what earlier items set up here and ``nextitem`` does not share, as pytest's own protocol does after each
    item (else a folder left open by the item before this one is still open when the next item, in another
    folder, is set up: "previous item was not torn down properly")."""
    results = item.session.stash.setdefault(_RESULTS, {})
    started = item.session.stash.setdefault(_STARTED, set())
    for _ in range(2):  # not yet run (the first of its module, or after a crash), or run again (a Drake crash)
        if item.nodeid in started:
            break
        _run_child(item)
    ihook: Any = item.ihook
    ihook.pytest_runtest_logstart(nodeid=item.nodeid, location=item.location)
    reports = results.pop(item.nodeid, None)
    if reports is None:  # the child did not reach it (a deselection the child ignored?)
        reports = [_crash_report(item, [], "the test did not run in its child process")]
    first = item.session.stash.get(_RETRIED, {}).get(item.nodeid)
    for rep in reports:
        if first is not None and rep.when == "teardown":  # shown by the summary (and with -rA)
            rep.sections.append((RETRY_SECTION, first))
        ihook.pytest_runtest_logreport(report=rep)
    ihook.pytest_runtest_logfinish(nodeid=item.nodeid, location=item.location)
    item.session._setupstate.teardown_exact(nextitem)
    return True


class _Parent:
    """The hooks of the process that reports (the xdist worker, or pytest -n 0)."""

    def pytest_collection_modifyitems(self, items: list[pytest.Item]) -> None:
        for item in items:
            if wanted(item):  # the child enforces pytest.ini's per-test timeout; this one is not per test
                item.add_marker(pytest.mark.timeout(0))

    @pytest.hookimpl(tryfirst=True)
    def pytest_runtest_protocol(self, item: pytest.Item, nextitem: pytest.Item | None) -> bool | None:
        return runtest_protocol(item, nextitem) if wanted(item) else None

    def __init__(self) -> None:
        self.retried: dict[str, str] = {}

    def pytest_runtest_logreport(self, report: TestReport) -> None:  # here, or in xdist's controller
        for title, text in report.sections:
            if title == RETRY_SECTION:
                self.retried[report.nodeid] = text.splitlines()[0]

    def pytest_terminal_summary(self, terminalreporter: Any) -> None:
        if self.retried:
            terminalreporter.section("Drake crashes, each test run again in a new process (test/own_process.py)")
            for nodeid, first in self.retried.items():
                terminalreporter.line(f"{nodeid}: first run: {first}")


class _Child:
    """The hooks of the child: every test's start and reports, one JSON line each."""

    def __init__(self, config: pytest.Config) -> None:
        self.config = config
        self.path = os.environ[CHILD]

    def _write(self, entry: dict[str, Any]) -> None:
        with open(self.path, "a", encoding="utf-8") as f:
            f.write(json.dumps(entry) + "\n")
            f.flush()

    def pytest_runtest_logstart(self, nodeid: str) -> None:
        self._write({"start": nodeid})  # a crash from now on is this test's

    def pytest_runtest_logreport(self, report: TestReport) -> None:
        self._write({"report": self.config.hook.pytest_report_to_serializable(config=self.config, report=report)})


def register(config: pytest.Config) -> None:
    """From conftest's ``pytest_configure``."""
    config.pluginmanager.register(_Child(config) if CHILD in os.environ else _Parent(), "rsf_own_process")
