"""Many robots, one world: the ROS-free part of ``state_store``'s world aggregation (docs/state_store.md)."""
