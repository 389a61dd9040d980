"""A Trigger server at /dropping_server/trigger that loses its first reply the way rmw_fastrtps does.

The first request runs, then the reply is not sent and the warning rclpy prints for a dropped reply
("failed to send response (timeout)") goes to stderr; later requests are answered. Each reply says
which request it answers ("request N"), so a test sees both that the server ran and what came back.
"""

from __future__ import annotations

import contextlib
import sys
from typing import Any

import rclpy
from rclpy.executors import ExternalShutdownException
from rclpy.node import Node
from std_srvs.srv import Trigger


def main() -> None:
    rclpy.init()
    node = Node("dropping_server")
    count = [0]

    def handle(_request: Trigger.Request, response: Trigger.Response) -> Trigger.Response:
        count[0] += 1
        response.success = True
        response.message = f"request {count[0]}"
        return response

    service = node.create_service(Trigger, "/dropping_server/trigger", handle)
    send = service.send_response

    def send_all_but_first(response: Any, header: Any) -> None:
        if count[0] == 1:
            print("RuntimeWarning: failed to send response (timeout): client will not receive response",
                  file=sys.stderr, flush=True)
            return
        send(response, header)

    service.send_response = send_all_but_first  # type: ignore[method-assign]
    with contextlib.suppress(KeyboardInterrupt, ExternalShutdownException):
        rclpy.spin(node)


if __name__ == "__main__":
    main()
