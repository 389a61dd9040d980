"""The compiled kernels (numba) against the numpy path, and the numpy path's own single == batch.

Both paths are independent implementations of the same kinematics (scalar loops per configuration
vs. level-by-level numpy products); they must agree to 1e-12, and both agree with the independent
reference of test/reference_kinematics.py (poses to 1e-12, twists to its finite differences).  The reference-pose and
batch-equals-single tests of test_kinematics.py run on the default (numpy) path; here they run once
more with the kernels, opted into.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator

import numpy as np
import pytest
import reference_kinematics as ref
from test_kinematics import (
    SAMPLES,
    every_type_model,
    independent_rates,
    independent_values,
    mimic_chain_model,
    rand_transform,
    random_q,
    test_batch_equals_single_bit_for_bit,
    test_every_type_matches_reference,
)

from robot_state_format.errors import KinematicsError
from robot_state_format.kinematics import compiled, fk
from robot_state_format.kinematics.fk import poses_and_twists
from robot_state_format.kinematics.tree import compile_model
from robot_state_format.model.loader import load_model_file

pytest.importorskip("numba", reason="numba (the compiled kernels) is not installed")


@pytest.fixture
def numpy_path() -> Iterator[None]:
    compiled.use_kernel(False)
    try:
        yield
    finally:
        compiled.use_kernel(None)


def test_numpy_path_matches_reference(numpy_path: None) -> None:
    assert compiled.kernel() is None
    test_every_type_matches_reference()


def test_numpy_path_batch_equals_single(numpy_path: None) -> None:
    test_batch_equals_single_bit_for_bit()


@pytest.fixture
def kernel_path() -> Iterator[None]:
    compiled.use_kernel(True)
    try:
        yield
    finally:
        compiled.use_kernel(None)


def test_kernel_path_matches_reference(kernel_path: None) -> None:
    assert compiled.kernel() is not None
    test_every_type_matches_reference()


def test_kernel_path_batch_equals_single(kernel_path: None) -> None:
    test_batch_equals_single_bit_for_bit()


def _all(tree, qs: np.ndarray, vs: np.ndarray) -> dict[str, np.ndarray]:  # type: ignore[no-untyped-def]
    out = {
        "forward": np.stack([fk.forward(tree, q) for q in qs]),
        "world": np.stack([fk.forward(tree, q, world=True) for q in qs]),
        "root": np.stack([fk.link_twists(tree, q, v) for q, v in zip(qs, vs)]),
        "body": np.stack([fk.link_twists(tree, q, v, frame="body") for q, v in zip(qs, vs)]),
        "batch": np.array(fk.forward_batch(tree, qs)),
        "batch_world": np.array(fk.forward_batch(tree, qs, world=True)),
        "twists_batch": fk.link_twists_batch(tree, qs, vs, frame="body"),
    }
    both = [poses_and_twists(tree, q, v) for q, v in zip(qs, vs)]
    out["pt_poses"] = np.stack([p for p, _ in both])
    out["pt_twists"] = np.stack([t for _, t in both])
    return out


@pytest.mark.parametrize("which", ["every_type", "mimic_chain"])
def test_kernel_matches_numpy_path(which: str) -> None:
    rng = np.random.default_rng(5)
    m = every_type_model(rng) if which == "every_type" else mimic_chain_model()
    m.pose = rand_transform(rng)
    tree = compile_model(m)
    qs = random_q(tree, rng, 7)
    vs = rng.normal(size=(7, tree.nv))
    compiled.use_kernel(True)
    assert compiled.kernel() is not None
    fast = _all(tree, qs, vs)
    compiled.use_kernel(False)
    try:
        slow = _all(tree, qs, vs)
    finally:
        compiled.use_kernel(None)
    for name in fast:
        np.testing.assert_allclose(fast[name], slow[name], rtol=0, atol=1e-12, err_msg=name)
    # and both against the independent reference (test/reference_kinematics.py)
    for k, (q, v) in enumerate(zip(qs, vs)):
        values = independent_values(tree, q)
        poses, world = ref.link_poses(m, values), ref.link_poses(m, values, world=True)
        twists = ref.link_twists(m, values, independent_rates(tree, v))
        for i, link in enumerate(tree.link_names):
            np.testing.assert_allclose(fast["forward"][k, i], poses[link], rtol=0, atol=1e-12, err_msg=link)
            np.testing.assert_allclose(fast["world"][k, i], world[link], rtol=0, atol=1e-12, err_msg=link)
            np.testing.assert_allclose(fast["root"][k, i], twists[link], rtol=0, atol=1e-6, err_msg=link)
    # with the kernels, every route gives the same bits
    assert np.array_equal(fast["forward"], fast["batch"]) and np.array_equal(fast["world"], fast["batch_world"])
    assert np.array_equal(fast["body"], fast["twists_batch"])
    assert np.array_equal(fast["pt_poses"], fast["forward"]) and np.array_equal(fast["pt_twists"], fast["root"])


@pytest.mark.parametrize("which", ["mimic_chain", "arm7_gripper"])
def test_kernel_rejects_non_finite_naming_the_joint(which: str) -> None:
    if which == "arm7_gripper":  # one mimic level: q -> qa inside the kernel
        tree = compile_model(load_model_file(SAMPLES / "arm7_gripper.urdf"))
    else:  # a mimic chain: qa by numpy
        tree = compile_model(mimic_chain_model())
    q = np.zeros(tree.nq)
    q[0] = np.nan
    # the value reads as Python writes it, with either kernel (never ``np.float64(nan)``)
    with pytest.raises(KinematicsError, match=f"joint {tree.moving_joint_names[0]!r}: non-finite position nan$"):
        fk.forward(tree, q)
    with pytest.raises(KinematicsError, match=r"non-finite position nan \(configuration 1\)$"):
        fk.forward_batch(tree, np.stack([np.zeros(tree.nq), q]))


def test_cli_uses_the_numpy_path_and_restores_the_default() -> None:
    """The one-shot CLI never loads numba (1-3 s); in-process callers get their default back."""
    code = (
        "import sys\n"
        "from robot_state_format.cli import main\n"
        "from robot_state_format.kinematics import compiled\n"
        f"rc = main(['fk', {str(SAMPLES / 'arm7_gripper.urdf')!r}, '--velocities', '{{}}'])\n"
        "print(rc, 'numba' in sys.modules, compiled.kernel() is not None)\n"
    )
    env = {k: v for k, v in os.environ.items() if k != compiled.ENV}
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=120,
                          check=False)
    assert proc.returncode == 0, proc.stderr
    # the fk output, then: exit 0, numba not imported by the command, the default (numpy) unchanged
    assert proc.stdout.splitlines()[-1] == "0 False False"


CACHE_PROBE = """
import json, sys
from pathlib import Path
from robot_state_format.kinematics import kernel_cache
if len(sys.argv) > 1:  # stand in for an edited kernel_codes.py: the digest of a changed copy
    kernel_cache.DIGEST = kernel_cache.digest([p if p.name != "kernel_codes.py" else Path(sys.argv[1])
                                               for p in kernel_cache.SOURCES])
from robot_state_format.kinematics import compiled
compiled.use_kernel(True)
assert compiled.warm()
k = compiled.kernel()
print(json.dumps({"dir": kernel_cache.cache_dir(k.poses), "hits": sum(k.poses.stats.cache_hits.values()),
                  "misses": sum(k.poses.stats.cache_misses.values())}))
"""


def _cache_probe(cache_dir: str, *argv: str) -> dict[str, object]:
    env = {**os.environ, "NUMBA_CACHE_DIR": cache_dir}
    out = subprocess.run([sys.executable, "-c", CACHE_PROBE, *argv], capture_output=True, text=True, env=env,
                         timeout=240, check=False)
    assert out.returncode == 0, out.stderr[-3000:]
    r: dict[str, object] = json.loads(out.stdout.strip().splitlines()[-1])
    return r


def test_kernel_cache_is_keyed_on_every_kernel_input(tmp_path) -> None:  # type: ignore[no-untyped-def]
    """The compiled kernels are reused from the cache only while kernel.py, kernel_codes.py, kernel_cache.py
    and the numba/llvmlite versions are unchanged: a change to kernel_codes.py alone compiles afresh, in a
    directory of its own (numba itself looks at kernel.py only)."""
    import ast

    from robot_state_format.kinematics import kernel_cache

    # every module of this package that kernel.py imports is hashed
    tree = ast.parse((kernel_cache.HERE / "kernel.py").read_text())
    names = set()
    for n in ast.walk(tree):
        if isinstance(n, ast.Import):
            names |= {a.name for a in n.names}
        elif isinstance(n, ast.ImportFrom) and n.module:
            names |= {n.module} | {f"{n.module}.{a.name}" for a in n.names}
    ours = {m.rsplit(".", 1)[-1] + ".py" for m in names if m.startswith("robot_state_format.kinematics.")}
    files = {f for f in ours if (kernel_cache.HERE / f).is_file()}
    assert {"kernel_codes.py", "kernel_cache.py"} <= files  # what kernel.py imports of this package ...
    assert files <= {p.name for p in kernel_cache.SOURCES}  # ... is hashed
    # the digest moves with any byte of the sources and with the versions
    codes = tmp_path / "kernel_codes.py"
    codes.write_text((kernel_cache.HERE / "kernel_codes.py").read_text().replace("GENERIC = 0, 1, 2, 3, 4",
                                                                                "GENERIC = 0, 1, 2, 3, 5"))
    assert codes.read_text() != (kernel_cache.HERE / "kernel_codes.py").read_text()
    swapped = [codes if p.name == "kernel_codes.py" else p for p in kernel_cache.SOURCES]
    assert kernel_cache.digest(swapped) != kernel_cache.DIGEST
    assert kernel_cache.digest(versions=("0.0", "0.0")) != kernel_cache.DIGEST
    assert kernel_cache.digest() == kernel_cache.DIGEST
    # end to end, in a fresh cache directory: compiled once, then loaded; another kernel_codes.py compiles again
    cache = str(tmp_path / "numba_cache")
    first = _cache_probe(cache)
    assert first["misses"] and not first["hits"] and str(first["dir"]).endswith(f"rsf_kernels_{kernel_cache.DIGEST}")
    again = _cache_probe(cache)
    assert again["hits"] and not again["misses"] and again["dir"] == first["dir"]
    edited = _cache_probe(cache, str(codes))
    assert edited["misses"] and not edited["hits"] and edited["dir"] != first["dir"]
