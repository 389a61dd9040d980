"""state_store under hard faults (issue 14): a really full disk (a small tmpfs, root only), a
directory remounted read-only, an output directory that vanishes mid-run.  Each time save and
checkpoint answer ``success: false`` / warn, a recording stops with the reason, nothing already
written is damaged, and everything works again once the fault is gone."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
from optional import MCAP, needs

pytest.importorskip("rclpy", reason="rclpy is not installed (run the tests through ./run test)")

from rclpy.qos import DurabilityPolicy, HistoryPolicy, QoSProfile, ReliabilityPolicy
from ros_harness import RosHarness
from test_state_store import pendulum_state

from robot_state_format.recording import decode_all, read_recording
from robot_state_format.usdf.reader import read_world_state_file
from robot_state_format.usdf.writer import write_world_state

pytestmark = needs(*MCAP)  # every test here records
LATCHED = QoSProfile(depth=1, history=HistoryPolicy.KEEP_LAST, reliability=ReliabilityPolicy.RELIABLE,
                     durability=DurabilityPolicy.TRANSIENT_LOCAL)
NODE = "/state_store"


def _trigger(ros: RosHarness, name: str) -> Any:
    from std_srvs.srv import Trigger

    client = ros.wait_for_service(f"{NODE}/{name}", Trigger)
    return ros.call(client, Trigger.Request())


def _set_param(ros: RosHarness, name: str, value: Any) -> Any:
    from rcl_interfaces.srv import SetParameters
    from rclpy.parameter import Parameter

    client = ros.wait_for_service(f"{NODE}/set_parameters", SetParameters)
    req = SetParameters.Request(parameters=[Parameter(name, value=value).to_parameter_msg()])
    return ros.call(client, req).results[0]


def _mount(path: Path, options: str) -> bool:
    path.mkdir(exist_ok=True)
    return subprocess.run(["mount", "-t", "tmpfs", "-o", options, "tmpfs", str(path)],
                          capture_output=True).returncode == 0


def _fill(directory: Path) -> Path:
    """Fill the file system of ``directory`` for real (until ENOSPC); return the filler."""
    filler = directory / "filler"
    with open(filler, "wb", buffering=0) as f:
        try:
            while True:
                f.write(b"\0" * 4096)
        except OSError as exc:
            assert "No space" in str(exc), exc
    return filler


def _snapshots(ros: RosHarness) -> Any:
    from std_msgs.msg import String

    pub = ros.node.create_publisher(String, "world_state", LATCHED)
    ros.wait_for_subscriber("world_state")
    k = [0]

    def publish_next() -> None:
        k[0] += 1
        pub.publish(String(data=write_world_state(pendulum_state(0.01 * k[0], -0.01 * k[0], sec=100 + k[0]))))

    return publish_next


def _readable(bag: Path) -> int:
    """Messages of a recording that read back (a recording cut off reads up to its last chunk)."""
    list(read_recording(bag, complete=[]))
    return sum(1 for _ in decode_all(bag))


@pytest.fixture
def tmpfs(tmp_path: Path) -> Any:
    if os.geteuid() != 0:
        pytest.skip("needs root to mount a small tmpfs (a really full disk)")
    mnt = tmp_path / "mnt"
    if not _mount(mnt, "size=512k"):
        pytest.skip("cannot mount a tmpfs here (no CAP_SYS_ADMIN)")
    yield mnt
    subprocess.run(["umount", "-l", str(mnt)], capture_output=True)


@pytest.mark.timeout(120)
def test_disk_full_save_checkpoint_record_then_recover(ros: RosHarness, tmpfs: Path) -> None:
    out = tmpfs / "states"  # created by the node
    store = ros.start_node("state_store", {"output_dir": str(out)})
    publish_next = _snapshots(ros)
    ros.spin_until(lambda: _trigger(ros, "save").success, timeout=10, every=publish_next, what="a first save")
    before = {p: p.read_bytes() for p in out.glob("*.usdf")}
    r = _trigger(ros, "start_recording")
    assert r.success, r.message
    bag = Path(r.message)
    for _ in range(20):
        publish_next()
        ros.spin_for(0.03)
    filler = _fill(tmpfs)
    # save, checkpoint and recording all meet the full disk
    r = _trigger(ros, "save")
    assert not r.success and "No space left" in r.message, r.message
    assert _set_param(ros, "checkpoint_period", 0.05).successful
    ros.spin_until(lambda: "checkpoint: cannot write" in store.output(), timeout=15, every=publish_next,
                   what="the checkpoint warning")
    ros.spin_until(lambda: "recording stopped" in store.output(), timeout=15, every=publish_next,
                   what="the recording stopped by the full disk")
    r = _trigger(ros, "stop_recording")
    assert not r.success and "No space left" in r.message, r.message
    assert store.alive()
    # nothing already written is damaged, and no temporary is left behind
    for p, data in before.items():
        assert p.read_bytes() == data
        read_world_state_file(p)
    assert not [p for p in out.iterdir() if p.name.endswith(".tmp")]
    assert _readable(bag) >= 1
    # space again: everything works
    filler.unlink()
    assert _set_param(ros, "checkpoint_period", 0.0).successful
    r = _trigger(ros, "save")
    assert r.success, r.message
    read_world_state_file(r.message)
    r = _trigger(ros, "start_recording")
    assert r.success, r.message
    bag2 = Path(r.message)
    for _ in range(5):
        publish_next()
        ros.spin_for(0.02)
    r = _trigger(ros, "stop_recording")
    assert r.success, r.message
    assert (bag2 / "metadata.yaml").exists() and _readable(bag2) >= 1


@pytest.mark.timeout(120)
def test_read_only_remount_then_writable_again(ros: RosHarness, tmpfs: Path) -> None:
    out = tmpfs
    store = ros.start_node("state_store", {"output_dir": str(out)})
    publish_next = _snapshots(ros)
    ros.spin_until(lambda: _trigger(ros, "save").success, timeout=10, every=publish_next, what="a first save")
    before = {p: p.read_bytes() for p in out.glob("*.usdf")}
    # (a file system with a file open for writing cannot be remounted read-only: no recording runs)
    assert subprocess.run(["mount", "-o", "remount,ro", str(tmpfs)], capture_output=True).returncode == 0
    try:
        r = _trigger(ros, "save")
        assert not r.success and "Read-only" in r.message, r.message
        r = _trigger(ros, "start_recording")
        assert not r.success and "Read-only" in r.message, r.message
        assert _set_param(ros, "checkpoint_period", 0.05).successful
        ros.spin_until(lambda: "checkpoint: cannot write" in store.output(), timeout=15, every=publish_next,
                       what="the checkpoint warning")
        assert _set_param(ros, "checkpoint_period", 0.0).successful
        assert store.alive()
    finally:
        subprocess.run(["mount", "-o", "remount,rw", str(tmpfs)], capture_output=True)
    for p, data in before.items():
        assert p.read_bytes() == data
    r = _trigger(ros, "save")
    assert r.success, r.message
    r = _trigger(ros, "start_recording")
    assert r.success, r.message
    assert _trigger(ros, "stop_recording").success


@pytest.mark.timeout(120)
def test_vanished_output_dir_mid_run(ros: RosHarness, tmp_path: Path) -> None:
    out = tmp_path / "gone" / "states"
    store = ros.start_node("state_store", {"output_dir": str(out)})
    publish_next = _snapshots(ros)
    ros.spin_until(lambda: _trigger(ros, "save").success, timeout=10, every=publish_next, what="a first save")
    r = _trigger(ros, "start_recording")
    assert r.success, r.message
    shutil.rmtree(tmp_path / "gone")
    # the recording notices that its file is gone (its writes would be lost) and stops with the reason
    ros.spin_until(lambda: "recording stopped" in store.output(), timeout=15, every=publish_next,
                   what="the recording stopped: its directory vanished")
    assert "was removed while recording" in store.output()
    r = _trigger(ros, "stop_recording")
    assert not r.success and "removed" in r.message
    # the next save creates the directory again
    r = _trigger(ros, "save")
    assert r.success, r.message
    assert Path(r.message).parent == out
    read_world_state_file(r.message)
    assert store.alive()
