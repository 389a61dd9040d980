"""``pose6_and_twists``: the snapshot's link poses (x y z roll pitch yaw) and twists, read off the pose pass.

They must be the numbers of the public path, bit for bit: ``poses_to_pose6(forward(tree, q))`` and
``link_twists(tree, q, v)`` (a snapshot equals the writer's document of ``state_from_model``, which
the USDF tests compare byte for byte), on every joint type, mimic chains and a real humanoid.
"""

from __future__ import annotations

import numpy as np
import pytest
from real_robots import romeo_urdf
from test_kinematics import every_type_model, mimic_chain_model, random_q

from robot_state_format.kinematics import compiled, fk
from robot_state_format.kinematics.fk import pose6_and_twists
from robot_state_format.kinematics.tree import compile_model
from robot_state_format.model.loader import load_model_file
from robot_state_format.usdf.build import poses_to_pose6


def sample_models(seed: int) -> list[tuple[str, object]]:
    """Every joint type (random offsets from ``seed``), a mimic chain and romeo when example-robot-data is there."""
    rng = np.random.default_rng(seed)
    out: list[tuple[str, object]] = [("every_type", every_type_model(rng)), ("mimic_chain", mimic_chain_model())]
    path = romeo_urdf()  # example-robot-data: absent on the ROS-free distro venvs
    if path is not None:
        out.append(("romeo", load_model_file(path)))
    return out


@pytest.fixture(params=[False, True], ids=["numpy", "kernel"])
def kernel(request: pytest.FixtureRequest) -> object:
    if request.param:
        pytest.importorskip("numba", reason="numba (the `fast` extra) is not installed")
    compiled.use_kernel(request.param)
    yield request.param
    compiled.use_kernel(None)


@pytest.mark.parametrize("name_model", sample_models(11), ids=lambda nm: nm[0])
def test_pose6_and_twists_are_the_public_numbers(name_model: tuple[str, object], kernel: object) -> None:
    _, model = name_model
    tree = compile_model(model)  # type: ignore[arg-type]
    rng = np.random.default_rng(3)
    qs = random_q(tree, rng, 5)
    vs = rng.normal(size=(5, tree.nv))
    for q, v in zip(qs, vs):
        pose6, tw = pose6_and_twists(tree, q, v)
        assert np.array_equal(pose6, poses_to_pose6(fk.forward(tree, q)))
        assert tw is not None and np.array_equal(tw, fk.link_twists(tree, q, v))
        assert not np.signbit(pose6[pose6 == 0.0]).any()  # -0.0 written 0.0, as the writer expects
        alone, none = pose6_and_twists(tree, q, None)
        assert none is None and np.array_equal(alone, pose6)
