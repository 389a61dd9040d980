"""The default install is light (issue 27): no JIT compiler unless opted into, nothing imported before it is used.

* the nodes and the CLI never import numba by default; with numba made unimportable (a meta-path blocker)
  they give the same /tf bytes, world_state text and ``fk`` output, bit for bit;
* asking for numba where it cannot be imported says so in one line (how to install it) and runs numpy;
* :mod:`robot_state_format.lazy_modules` stand-ins import nothing until used, not even when something walks
  ``sys.modules`` touching ``__file__`` (rclpy's logger does, through ``inspect.getmodule``);
* the twists' ancestor matrix against the parent/child names of the model.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

import numpy as np
import pytest
from repo_paths import REPO_ROOT

from robot_state_format.kinematics.tree import compile_model
from robot_state_format.kinematics.twists_numpy import ancestor_matrix
from robot_state_format.model.loader import load_model_file

ROOT = REPO_ROOT
SAMPLE = ROOT / "robot_state_format" / "samples" / "arm7_gripper.urdf"

BLOCKER = """
import sys
class _NoNumba:
    tried = []
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in ("numba", "llvmlite"):
            self.tried.append(name)
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)
        return None
BLOCK = _NoNumba()
if BLOCKED:
    sys.meta_path.insert(0, BLOCK)
"""

NODE = BLOCKER + """
import json
import numpy as np
import rclpy
from robot_state_format.ros.state_publisher import StatePublisher
rclpy.init(args=["--ros-args", "-p", f"model_file:={MODEL}", "-p", "publish_frequency:=0.0"] + EXTRA)
node = StatePublisher("light_probe")
rt = node._rt
names = list(rt.cache.moving_names)
rng = np.random.default_rng(7)
tfs, snaps = [], []
for k in range(5):
    pos = rng.uniform(-1, 1, len(names))
    vel = rng.uniform(-1, 1, len(names))
    applied = rt.apply(names, pos, vel, np.zeros(len(names)), 10**9 * (k + 1), 10**9 * (k + 1))
    tfs.append(applied.tf.hex())
    snaps.append(node.snapshot_text())
node.destroy_node()
rclpy.shutdown()
print(json.dumps({"tf": tfs, "snapshots": snaps, "numba": "numba" in sys.modules, "tried": BLOCK.tried}))
"""

CLI = BLOCKER + """
from robot_state_format.cli import main
code = main(sys.argv[1:])
print("\\nPROBE", code, "numba" in sys.modules, BLOCK.tried)
"""


def _env(**extra: str) -> dict[str, str]:
    sys.path.insert(0, str(ROOT / "test"))
    from ros_harness import configure_ros_environment  # type: ignore[import-not-found]

    env = {k: v for k, v in os.environ.items() if k != "ROBOT_STATE_FORMAT_KERNEL"}
    configure_ros_environment(env)
    env.update(extra)
    return env


def _node(blocked: bool, extra_args: list[str] | None = None, **env: str) -> tuple[dict[str, object], str]:
    code = f"BLOCKED = {blocked!r}\nMODEL = {str(SAMPLE)!r}\nEXTRA = {extra_args or []!r}\n" + NODE
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, env=_env(**env),
                         timeout=120, check=False)
    assert out.returncode == 0, out.stderr[-3000:]
    return json.loads(out.stdout.strip().splitlines()[-1]), out.stderr


def test_node_default_never_imports_numba_and_gives_the_same_tf_without_it(ros_context: object) -> None:
    # ros_context: skips, naming why, where rclpy is not installed (RSF_DISTRO=humble)
    free, _ = _node(False)
    blocked, _ = _node(True)
    # by default nothing even tries to import numba, with or without the blocker
    assert free["numba"] is False and free["tried"] == [] and blocked["tried"] == []
    assert blocked["tf"] == free["tf"] and len(set(free["tf"])) == 5  # type: ignore[arg-type]
    assert blocked["snapshots"] == free["snapshots"]


@pytest.mark.parametrize("how", ["parameter", "variable"])
def test_numba_asked_for_but_unimportable_says_how_to_install_it_and_runs_numpy(how: str, ros_context: object) -> None:
    free, _ = _node(True)
    if how == "parameter":
        asked, err = _node(True, ["-p", "kinematics_kernel:=numba"])
    else:
        asked, err = _node(True, ROBOT_STATE_FORMAT_KERNEL="numba")
    assert asked["tried"] and asked["numba"] is False  # it was asked for, and could not be imported
    lines = [ln for ln in err.splitlines() if "numba is not installed" in ln]
    assert len(lines) == 1, err  # said once, in one line
    assert "pip install 'robot_state_format[fast]'" in lines[0] and "python3-numba" in lines[0]
    assert asked["tf"] == free["tf"] and asked["snapshots"] == free["snapshots"]  # numpy, the same results


def test_cli_fk_never_imports_numba_and_prints_the_same_without_it() -> None:
    argv = ["fk", str(SAMPLE), "--positions", '{"joint1": 0.5, "joint4": -1.25}', "--velocities",
            '{"joint2": 0.3}', "--json"]
    outs = []
    for blocked in (False, True):
        out = subprocess.run([sys.executable, "-c", f"BLOCKED = {blocked!r}\n" + CLI, *argv], capture_output=True,
                             text=True, cwd=ROOT, env=_env(), timeout=120, check=False)
        body, probe = out.stdout.rsplit("\nPROBE ", 1)
        assert probe.strip() == "0 False []", out.stderr[-2000:]
        outs.append(body)
    doc = json.loads(outs[0])
    assert outs[0] == outs[1] and "arm7_gripper" in doc["frames"]


LAZY = """
import inspect, json, sys
from robot_state_format.lazy_modules import lazy_module, lazy_package
m = lazy_module("colorsys")
(pkg, sub) = lazy_package("email", "quoprimime")
before = ["colorsys" in sys.modules, "email.quoprimime" in sys.modules]
inspect.getmodule(inspect.currentframe())  # walks sys.modules, reading each module's __file__
after_walk = ["colorsys" in sys.modules, "email.quoprimime" in sys.modules]
value = m.rgb_to_hsv(1.0, 0.0, 0.0)
m.EXTRA_FOR_TEST = 5
real = sys.modules["colorsys"]
print(json.dumps({"before": before, "after_walk": after_walk, "value": value, "loaded": "colorsys" in sys.modules,
                  "set": getattr(real, "EXTRA_FOR_TEST", None), "same": m.rgb_to_hsv is real.rgb_to_hsv,
                  "sub": sub.body_length(b"a=") , "missing": [_missing(n) for n in ("no_such_mod_x", "email.nope")]}))
"""


def test_lazy_stand_ins_import_on_first_use_only() -> None:
    code = ("def _missing(n):\n    from robot_state_format.lazy_modules import lazy_module\n    try:\n"
            "        lazy_module(n)\n    except ModuleNotFoundError as e:\n        return e.name\n" + LAZY)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, timeout=60,
                         check=False)
    assert out.returncode == 0, out.stderr
    r = json.loads(out.stdout.strip().splitlines()[-1])
    assert r["before"] == [False, False] and r["after_walk"] == [False, False]
    assert r["value"] == [0.0, 1.0, 1.0] and r["loaded"] is True and r["set"] == 5 and r["same"] is True
    assert r["sub"] == 4  # quoted-printable body length of b"a=" ("a=3D")
    assert r["missing"] == ["no_such_mod_x", "email.nope"]


def test_ancestor_matrix_follows_the_joint_names() -> None:
    model = load_model_file(SAMPLE)
    tree = compile_model(model)
    anc = ancestor_matrix(tree)
    by_child = {j.child: name for name, j in model.joints.items()}
    for li, link in enumerate(tree.link_names):
        above = set()
        frame = link
        while frame in by_child:  # walk up by the joints' parent/child names
            above.add(by_child[frame])
            frame = model.joints[by_child[frame]].parent
        expected = np.array([1.0 if name in above else 0.0 for name in tree.joint_names])
        assert np.array_equal(anc[li], expected), link
