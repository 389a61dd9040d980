"""Kinematics: rigid transforms, the compiled kinematic tree, forward kinematics (numpy only).

Kept import-light on purpose: ``model`` imports ``kinematics.transforms``.
"""
