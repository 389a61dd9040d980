"""The TFMessage CDR encoder against rclpy's own (de)serialisation, and the batch quaternions."""

from __future__ import annotations

import math

import numpy as np
import pytest

from robot_state_format.spatial import pose6_to_transform, quaternion_to_matrix, rpy_to_matrix

rclpy = pytest.importorskip("rclpy", reason="rclpy is not installed (run the tests through ./run test)")

from robot_state_format.spatial import matrices_to_quaternions  # noqa: E402


def test_quaternions_batch_round_trip_and_sign() -> None:
    rng = np.random.default_rng(3)
    rots = [rpy_to_matrix(*rng.uniform(-math.pi, math.pi, 3)) for _ in range(500)]
    rots += [np.eye(3), np.diag([1.0, -1.0, -1.0]), np.diag([-1.0, 1.0, -1.0]), np.diag([-1.0, -1.0, 1.0])]
    q = matrices_to_quaternions(np.stack(rots))
    np.testing.assert_allclose(np.linalg.norm(q, axis=1), 1.0, atol=1e-15, rtol=0)
    assert (q[:, 3] >= 0).all()
    for qi, r in zip(q, rots):
        np.testing.assert_allclose(quaternion_to_matrix(qi), r, atol=1e-14, rtol=0)
    # rotation by a about z: (0, 0, sin a/2, cos a/2)
    a = 0.7
    np.testing.assert_allclose(matrices_to_quaternions(rpy_to_matrix(0, 0, a)[None])[0],
                               [0, 0, math.sin(a / 2), math.cos(a / 2)], atol=1e-15, rtol=0)


def test_encoder_bytes_decode_to_the_same_message() -> None:
    from rclpy.serialization import deserialize_message, serialize_message
    from tf2_msgs.msg import TFMessage

    from robot_state_format.ros.messages import TfEncoder, transforms_to_msgs

    rng = np.random.default_rng(4)
    # frame ids of every length mod 4 and 8, so every padding case occurs
    frames = [("p" * (1 + i % 9), "child_" + "c" * (i % 7)) for i in range(23)]
    x = np.stack([pose6_to_transform(rng.uniform(-3, 3, 6)) for _ in frames])
    enc = TfEncoder(frames)
    stamp = 1_700_000_000 * 10**9 + 123_456_789
    for sel in (np.arange(23), np.array([5]), np.array([7, 2, 19, 3]), np.array([], dtype=np.intp)):
        data = enc.encode(sel, x[sel], stamp)
        want = TFMessage(transforms=transforms_to_msgs([frames[i] for i in sel], x[sel], stamp))
        got = deserialize_message(data, TFMessage)
        assert got == want
        assert len(data) == len(serialize_message(want))  # padding bytes may differ, the size may not
        assert got.transforms[:1] == [] or got.transforms[0].header.stamp.nanosec == 123_456_789
