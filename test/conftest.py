"""Shared pytest fixtures. The ROS 2 ones come from test/ros_harness.py; see docs/testing.md.

* ``ros`` (function): a ``RosHarness``: an in-process rclpy node with wait/collect helpers and
  ``start_node`` for node subprocesses, all stopped (SIGINT, then SIGTERM) after the test.
* ``ros_module`` (module): the same, shared by one module's tests; processes stop after its last test.
* ``ros_node`` (function): just the harness's ``rclpy.node.Node``.
* ``start_node`` (function): the harness's ``start_node`` function.
* ``ros_context`` (session): the rclpy context those nodes live in (not rclpy's global one).

Every run claims its own ROS_DOMAIN_ID and keeps DDS traffic on this machine; this is set in
``os.environ`` when pytest starts, so tests that call ``rclpy.init()`` themselves get it too.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Generator, Iterator
from pathlib import Path
from typing import Any

import optional
import pytest
from own_process import register as register_own_process
from ros_harness import RosHarness, configure_ros_environment, init_context, shutdown_context

from robot_state_format.lazy_modules import MissingDependencyError

# The test modules live in rooms mirroring robot_state_format/ (test/model/sdf/, test/ros/state_store/, ...; test/
# itself is on sys.path by pytest.ini's pythonpath). A few import shared pieces of another test module by name
# (test_kinematics's models, test_state_store's pendulum): every room is on sys.path too, which works because no
# two test modules share a basename (test/project/test_architecture.py checks it).
for _room in sorted({str(p.parent) for p in Path(__file__).resolve().parent.rglob("test_*.py")} - set(sys.path)):
    if "fixtures" not in Path(_room).parts:
        sys.path.append(_room)


def pytest_configure(config: pytest.Config) -> None:
    configure_ros_environment()
    register_own_process(config)  # native-heavy test modules run in a child process (test/own_process.py)


def pytest_report_header(config: pytest.Config) -> str:
    import os

    return (f"ROS test environment: ROS_DOMAIN_ID={os.environ.get('ROS_DOMAIN_ID')} "
            f"ROS_AUTOMATIC_DISCOVERY_RANGE={os.environ.get('ROS_AUTOMATIC_DISCOVERY_RANGE')}")


_DISTRO = os.environ.get("RSF_DISTRO", "")
_WHY = {
    "humble": ("rclpy", "RSF_DISTRO=humble: PyPI has no ROS 2 Humble wheels, .venv-humble is the ROS-free core "
               "(Python 3.10, Ubuntu 22.04's numpy/lxml); the ROS side is tested with jazzy and kilted"),
    "jazzy": ("./run setup", "RSF_DISTRO=jazzy: the set-up builds the ROS 2 tools (launch, ros2cli, tf2_ros) for "
              "kilted only (.venv); source a ROS 2 Jazzy installation for them"),
}


def _distro_reason(longrepr: Any) -> Any:
    """A skip reason saying why it cannot run in this distro's venv (``./run`` exports RSF_DISTRO)."""
    marker, why = _WHY.get(_DISTRO, ("", ""))
    if marker and isinstance(longrepr, tuple) and len(longrepr) == 3 and marker in str(longrepr[2]):
        return (longrepr[0], longrepr[1], f"{str(longrepr[2]).split(' (')[0].split(': no ROS')[0]}: {why}")
    return longrepr


@pytest.hookimpl(wrapper=True)
def pytest_make_collect_report(collector: pytest.Collector) -> Generator[None, Any, Any]:
    report = yield
    if report.skipped:
        report.longrepr = _distro_reason(report.longrepr)
    return report


@pytest.hookimpl(wrapper=True)
def pytest_pycollect_makemodule(module_path: Any, parent: pytest.Collector) -> Generator[None, Any, Any]:
    """launch_testing's pytest plugin imports every test module while collecting the folder, to look for a
    launch test; a module-level skip or import error there (an optional dependency missing: hypothesis,
    numba, rclpy ...) would end the collection of the whole folder ("1 skipped" for ~1700 tests under
    `colcon test`). Such a module is collected as a plain one instead: pytest then reports that module alone."""
    try:
        return (yield)
    except (Exception, pytest.skip.Exception):  # noqa: BLE001 any collection error: the module is collected alone and reports it
        return pytest.Module.from_parent(parent, path=module_path)


def pytest_collection_finish(session: pytest.Session) -> None:
    # Start the static checks (test_static.py) in the background as soon as we know they will run.
    for item in session.items:
        module = getattr(item, "module", None)
        start = getattr(module, "start_background_checks", None)
        if start is not None:
            start()
            break


def _optional_missing(exc: BaseException | None) -> str | None:
    """The optional package (test/optional.py's PACKAGES) whose absence raised ``exc``, if it is really absent:
    this package's ``MissingDependencyError`` or an import of that package, anywhere in the exception chain."""
    seen = 0
    while exc is not None and seen < 20:
        name = getattr(exc, "module", "") if isinstance(exc, MissingDependencyError) else \
            (exc.name or "").split(".")[0] if isinstance(exc, ModuleNotFoundError) else ""
        if name in optional.PACKAGES and optional.absent(name):
            return name
        exc, seen = exc.__cause__ or exc.__context__, seen + 1
    return None


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Generator[None, Any, None]:
    outcome = yield
    report = outcome.get_result()
    # An optional package that is not installed (a rosdep install has none of them) is a skip naming it.
    missing = _optional_missing(call.excinfo.value) if report.failed and call.excinfo is not None else None
    if missing is not None:
        report.outcome = "skipped"
        report.longrepr = (str(item.path), (item.location[1] or 0) + 1, f"Skipped: {optional.reason([missing])}")
    if report.skipped:
        report.longrepr = _distro_reason(report.longrepr)
    harness = getattr(item, "_rsf_ros_harness", None)
    if harness is None or not harness.processes:  # the module's harness (``ros_module``), if any
        module = item.getparent(pytest.Module)
        harness = getattr(module, "_rsf_ros_harness", None) or harness
    if report.failed and harness is not None and harness.processes:
        report.sections.append((f"node processes ({report.when})", harness.report()))


@pytest.fixture(scope="session")
def ros_context() -> Iterator[Any]:
    """An initialised rclpy context for the whole session (skips if rclpy is not installed)."""
    pytest.importorskip("rclpy", reason="rclpy is not installed (run the tests through ./run test)")
    context = init_context()
    yield context
    shutdown_context(context)


@pytest.fixture
def ros(ros_context: Any, tmp_path_factory: pytest.TempPathFactory,
        request: pytest.FixtureRequest) -> Iterator[RosHarness]:
    """A ``RosHarness`` for this test; started node processes are stopped and logs kept in its workdir."""
    workdir = tmp_path_factory.mktemp("ros")
    harness = RosHarness(ros_context, workdir)
    request.node._rsf_ros_harness = harness
    try:
        yield harness
    finally:
        harness.close()


@pytest.fixture(scope="module")
def ros_module(ros_context: Any, tmp_path_factory: pytest.TempPathFactory,
               request: pytest.FixtureRequest) -> Iterator[RosHarness]:
    """A ``RosHarness`` shared by the tests of one module: node processes started through it run until
    the module's last test is done (start expensive nodes once); failures report them like ``ros``."""
    workdir = tmp_path_factory.mktemp("ros_module")
    harness = RosHarness(ros_context, workdir)
    request.node._rsf_ros_harness = harness
    try:
        yield harness
    finally:
        harness.close()


@pytest.fixture
def ros_node(ros: RosHarness) -> Any:
    """The in-process ``rclpy.node.Node`` of this test's harness (spin it with ``ros.spin_until``)."""
    return ros.node


@pytest.fixture
def start_node(ros: RosHarness) -> Callable[..., Any]:
    """``start_node(target, params=None, ros_args=(), ...)``: see ``RosHarness.start_node``."""
    return ros.start_node
