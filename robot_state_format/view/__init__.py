"""The browser view (``robot-state-format view``): scenes of models, world_states and recordings, served
by viser (the ``view`` extra) or exported as a static page. ROS-free; the live part is
``ros/view_live.py``. See docs/view.md."""
