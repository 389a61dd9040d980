"""Recordings played back and restart files kept, without ROS.

* timelines and the player: :mod:`.timeline` (events of a recording or a directory of restart files,
  streamed through :mod:`.read_ahead`), :mod:`.source` (what ``~/play`` opens), :mod:`.player` (the
  recorded pace, loops, pause; time from an injectable :mod:`.clock`), :mod:`.restamp` (stamps moved
  by whole loop lengths, world_states through the USDF types), :mod:`.realtime` (opt-in real-time
  scheduling, restored after), :mod:`.tf_source` (where playback's TF comes from);
* a restart file replayed: :mod:`.fit` (does it fit the model), :mod:`.joint_arrays` (its JointState
  arrays), :mod:`.sub_joints` (MoveIt's multi-DOF sub-joint names: the one table), :mod:`.edges`
  (its static TF);
* restart-file and recording naming and rotation
  (:mod:`.restart_files`), what may be saved as the current state (:mod:`.snapshot_checks`), typed
  outcomes of the store's requests (:mod:`.outcome`).

Imports ``usdf``, ``kinematics``, ``model`` and ``recording`` below it; ``ros`` and ``cli`` build on it.
"""
