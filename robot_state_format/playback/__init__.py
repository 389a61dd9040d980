"""Recordings played back and restart files kept, without ROS: the live joint-state cache, restart-file
naming and rotation, what may be saved as the current state, timelines and the player.

Imports ``usdf``, ``kinematics``, ``model`` and ``recording`` below it; ``ros`` and ``cli`` build on it.
"""
