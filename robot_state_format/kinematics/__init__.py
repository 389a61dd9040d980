"""Kinematics: the compiled kinematic tree, forward kinematics and twists (numpy; numba optional).

Rigid transforms, rotations and quaternions live in :mod:`robot_state_format.spatial`.
"""
