"""The live joint state of one robot, without ROS: JointStates merged as they arrive.

* :mod:`.joint_cache`: :class:`~.joint_cache.JointStateCache` (q, v and effort of a compiled tree with
  per-coordinate masks and stamps, a merge plan cached per name list, what TF is due under
  robot_state_publisher's ``publish_frequency`` rule);
* :mod:`.cache_parts`: the :class:`~.cache_parts.Problem` lines the cache reports, its :class:`~.cache_parts.Update`,
  the merge plan of one name list and the cache's arrays as memoryviews (for
  :meth:`~.joint_cache.JointStateCache.merge_values`, the plain-float merge of short lists).

Used by the state_publisher (its 1 kHz path merges through :meth:`~.joint_cache.JointStateCache.merge`, or ``merge_values`` for short lists), the
state_store and the world aggregator. Imports ``kinematics``, ``model`` and ``playback``'s sub-joint table below
it; ``sim``/``world`` and ``ros`` build on it.
"""
