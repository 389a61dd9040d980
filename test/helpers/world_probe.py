"""Test-only probe: compose TF like a tf2 consumer, and call a state_store's services.

argv[1] is JSON: ``{"frames": [[target, source], ...], "save": "/state_store/save" | null,
"timeout": 30, "sources": "/state_store/sources" | null}``. Waits until every ``X_target_source``
is known from ``/tf`` + ``/tf_static`` (robot_state_format.world.tf_tree, the newest transform per
edge), then calls the services (Trigger), and prints one JSON line ``{"tf": {"target source":
4x4}, "save": {...}, "sources": {...}}`` and exits 0; exit 3 with the missing frames on timeout.
"""

from __future__ import annotations

import json
import sys
import time

from rclpy.node import Node
from std_srvs.srv import Trigger
from tf2_msgs.msg import TFMessage

from robot_state_format.ros import spin
from robot_state_format.ros.messages import transform_msg_to_matrix
from robot_state_format.ros.qos import TF_QOS, TF_STATIC_LISTEN_QOS
from robot_state_format.world.tf_tree import TfTree


def main() -> int:
    spec = json.loads(sys.argv[1])
    stop = spin.init(sys.argv)
    node = Node("world_probe")
    tree = TfTree()

    def on_tf(msg: TFMessage) -> None:
        for t in msg.transforms:
            tree.set(t.header.frame_id, t.child_frame_id, transform_msg_to_matrix(t.transform))

    node.create_subscription(TFMessage, "/tf", on_tf, TF_QOS)
    node.create_subscription(TFMessage, "/tf_static", on_tf, TF_STATIC_LISTEN_QOS)
    deadline = time.monotonic() + float(spec.get("timeout", 30))
    frames = [tuple(f) for f in spec.get("frames", [])]
    out: dict[str, object] = {}
    code = 0
    try:
        spin.spin(node, stop, until=deadline, done=lambda: all(tree.lookup(t, s) is not None for t, s in frames))
        missing = [f for f in frames if tree.lookup(*f) is None]
        if missing:
            print(json.dumps({"missing": missing, "known": sorted(tree.edges)}), flush=True)
            return 3
        spin.spin(node, stop, until=time.monotonic() + 0.5)  # the newest values of every edge
        out["tf"] = {f"{t} {s}": tree.lookup(t, s).tolist() for t, s in frames}  # type: ignore[union-attr]
        for key in ("sources", "save"):
            name = spec.get(key)
            if not name:
                continue
            client = node.create_client(Trigger, name)
            spin.spin(node, stop, until=deadline, done=client.service_is_ready)
            if not client.service_is_ready():
                print(json.dumps({"no_service": name}), flush=True)
                return 4
            future = client.call_async(Trigger.Request())
            spin.spin(node, stop, until=deadline, done=future.done)
            res = future.result()
            out[key] = None if res is None else {"success": res.success, "message": res.message}
        print(json.dumps(out), flush=True)
    finally:
        spin.finish(stop, node)
    return code


if __name__ == "__main__":
    sys.exit(main())
