"""One compiled model of the state_publisher with everything its hot path needs.

:class:`Runtime` is replaced as a whole when the model changes (one reference assignment in the node).
:meth:`Runtime.apply` is the joint-state path without ROS: it merges one JointState into the
:class:`~robot_state_format.live.joint_cache.JointStateCache` and returns the ``/tf`` message to
send as CDR bytes (:class:`~robot_state_format.ros.messages.TfEncoder`) with what else the node must
do (:class:`Applied`).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from robot_state_format import spatial as tfm
from robot_state_format.kinematics import compiled
from robot_state_format.kinematics.fk import joint_transforms
from robot_state_format.kinematics.joint_quaternions import left_compose_pose7
from robot_state_format.kinematics.tree import compile_model
from robot_state_format.live.cache_parts import Update
from robot_state_format.live.joint_cache import JointStateCache
from robot_state_format.model.joint_limits import position_ranges
from robot_state_format.model.types import WORLD, JointType
from robot_state_format.ros.description import LoadedDescription
from robot_state_format.ros.kdl_ties import KdlRows
from robot_state_format.ros.messages import PreparedTf, TfEncoder, kdl_quaternion_signs
from robot_state_format.ros.publisher_hot import HotPath
from robot_state_format.ros.publisher_pose import Pose7, TfWriter
from robot_state_format.usdf.build import SnapshotBuilder


def waiting_text(missing: list[str], total: int) -> str:
    """The line logged while some moving joints have not been reported yet (no snapshot until they are)."""
    shown = ", ".join(missing[:20]) + (f" and {len(missing) - 20} more" if len(missing) > 20 else "")
    return (f"world_state not published yet: no JointState has reported {len(missing)} of {total} moving "
            f"joint(s): {shown}")


@dataclass(frozen=True)
class Applied:
    """The outcome of one JointState: the ``/tf`` bytes to send (None: nothing due) and the cache's update."""

    tf: bytes | None
    update: Update


class Runtime:
    """One compiled model: frames, the joint-state cache, the TF encoder and the snapshot builder."""

    def __init__(self, loaded: LoadedDescription, frame_prefix: str, publish_period_ns: int,
                 ignore_timestamp: bool) -> None:
        self.loaded = loaded
        self.model = model = loaded.model
        self.tree = tree = compile_model(model)
        self.cache = JointStateCache(model, tree, publish_period_ns=publish_period_ns,
                                     ignore_timestamp=ignore_timestamp)
        self.prefix = frame_prefix
        frames: list[tuple[str, str]] = []
        world_parent: list[int] = []
        fixed: list[int] = []
        for i, name in enumerate(tree.joint_names):
            joint = model.joints[name]
            if joint.parent == WORLD:
                world_parent.append(i)
                parent = WORLD
            else:
                parent = frame_prefix + joint.parent
            frames.append((parent, frame_prefix + joint.child))
            if joint.type is JointType.FIXED:
                fixed.append(i)
        self.frames = frames
        self.child_frames = frozenset(child for _, child in frames)
        self.world_parent = np.array(world_parent, dtype=np.intp)
        self.world_pose: NDArray[np.float64] = np.asarray(model.pose, dtype=np.float64)
        self._world_quat = tfm.matrices_to_quaternions(self.world_pose[None, :3, :3])[0]  # for joint_pose7
        self.fixed = np.array(fixed, dtype=np.intp)
        self.encoder = TfEncoder(frames)
        self.root_link = tree.link_names[0] if tree.link_names else ""
        root = model.links.get(self.root_link)
        self.X_root_rootlink: NDArray[np.float64] = (np.asarray(root.pose, dtype=np.float64) if root is not None
                                                     else np.eye(4))
        self._snapshots: SnapshotBuilder | None = None
        limits = {}
        for name in tree.moving_joint_names:
            start = tree.q_slice(name).start
            for k, bounds in enumerate(position_ranges(model.joints[name])):
                if bounds is not None and math.isfinite(bounds[0]) and math.isfinite(bounds[1]):
                    limits[start + k] = bounds
        # robot_state_publisher's quaternion signs where its rule meets a tie: KDL's arithmetic (URDF only)
        self.kdl = KdlRows.of(loaded.text, tree.joint_names)
        self._pose7 = Pose7(tree, limits, self.kdl)
        # the common JointState (1 kHz path); its /tf written by a TfWriter unless a joint hangs from the world
        self.hot = HotPath(self.cache, self.encoder, self.joint_pose7, self._writer)

    def _writer(self, tf: PreparedTf, send: NDArray[np.intp],
                checked: dict[int, tuple[float, float]]) -> TfWriter | None:
        if len(self.world_parent) and np.isin(send, self.world_parent).any():
            return None  # its rows carry the model pose: joint_pose7's path
        return self._pose7.writer(tf, send, checked)

    @property
    def root_frame(self) -> str:
        """The published frame id of the model's root link."""
        return self.prefix + self.root_link

    def joint_transforms(self) -> NDArray[np.float64]:
        """X_parent_child of every tree joint at the cached q (joints to the world include the model pose)."""
        x = joint_transforms(self.tree, self.cache.q)
        if len(self.world_parent):
            x = x.copy()
            x[self.world_parent] = self.world_pose @ x[self.world_parent]
        return x

    def apply(self, names: Sequence[str], position: NDArray[np.float64], velocity: NDArray[np.float64],
              effort: NDArray[np.float64], stamp_ns: int, now_ns: int) -> Applied:
        """Merge one JointState; the TF message of the joints it made due."""
        up = self.cache.update(names, position, velocity, effort, stamp_ns, now_ns)
        if not len(up.send):
            return Applied(None, up)
        return Applied(self.encoder.encode_pose7(up.send, self.joint_pose7()[up.send], up.stamp_ns), up)

    def joint_pose7(self) -> NDArray[np.float64]:
        """:meth:`joint_transforms` as rows ``x y z qx qy qz qw`` (TF's numbers, without the matrices; the
        quaternions' signs as robot_state_publisher's, :func:`~.messages.kdl_quaternion_signs`); an array
        rewritten by the next call (:class:`~.publisher_pose.Pose7`)."""
        rows = self._pose7(self.cache.q)
        if len(self.world_parent):
            rows = rows.copy()  # the kernel's buffer is rewritten by its next call
            wp = self.world_parent
            rows[wp] = left_compose_pose7(self.world_pose, rows[wp], self._world_quat)
            rows[wp, 3:] = kdl_quaternion_signs(rows[wp, 3:])
        return rows

    def snapshots(self) -> SnapshotBuilder:
        """The USDF SnapshotBuilder of this model (made on first use, off the joint-state path)."""
        if self._snapshots is None:
            self._snapshots = SnapshotBuilder(self.model, self.tree)
            compiled.warm()  # load the compiled kinematics now (1-3 s once), not in a snapshot
        return self._snapshots

    def static_transforms(self) -> tuple[list[tuple[str, str]], NDArray[np.float64]]:
        """The frames and transforms of the fixed joints (for /tf_static)."""
        x = self.joint_transforms()
        return [self.frames[i] for i in self.fixed.tolist()], x[self.fixed]

    def fix_static(self, quats: NDArray[np.float64]) -> None:
        """The quaternions (rows ``x y z w``) of :meth:`static_transforms` given KDL's own signs, in place (a
        URDF's fixed joints: :class:`~robot_state_format.ros.kdl_ties.KdlRows`)."""
        if self.kdl.constant:
            self.kdl.fix_constant(self.fixed.tolist(), quats)

    def pose_in(self, x_parent_root: NDArray[np.float64]) -> NDArray[np.float64]:
        """X_parent_model from the pose of the root link's frame in a parent frame."""
        return x_parent_root @ tfm.inverse(self.X_root_rootlink)


__all__ = ["Applied", "Runtime"]
