"""The child process of :class:`~robot_state_format.sim.isolated.IsolatedSim`:
``python -m robot_state_format.sim.worker READ_FD WRITE_FD``.

Reads ``(call, arguments)`` pairs from READ_FD, runs them on one in-process adapter
(:func:`~robot_state_format.sim.run.make_sim` with ``isolate=False``) and writes
``("ok", value)`` or ``("error", (class, arguments))`` to WRITE_FD; ends at end of file.  Its
standard output goes to standard error (an engine's messages stay off the caller's output), and
it ignores SIGINT: the caller decides when it ends (a Ctrl-C reaches the whole process group).
"""

from __future__ import annotations

import os
import signal
import sys
from multiprocessing.connection import Connection
from typing import Any

from robot_state_format.sim.adapter import Simulation
from robot_state_format.sim.isolated import RestoreReply, StepReply, StepValues, error_payload
from robot_state_format.sim.run import make_sim

_QUERIES = ("link_motions", "capture")


def _values(sim: Simulation) -> StepValues:
    positions, velocities = sim.joint_values()
    return StepValues(positions, velocities, sim.root_coordinates())


def _answer(sim: Simulation | None, what: str, args: tuple[Any, ...]) -> tuple[Simulation | None, Any]:
    if what == "start":
        engine, model, dt, floating_base = args
        sim = make_sim(engine, model, dt=dt, floating_base=floating_base, isolate=False)
        return sim, {"notes": list(getattr(sim, "notes", [])), "time": sim.time, "step_count": sim.step_count,
                     "layout_signature": getattr(sim, "layout_signature", "")}
    if sim is None:
        raise RuntimeError(f"{what} before start")
    if what == "step":
        n, with_values = args
        sim.step(n)
        return sim, StepReply(sim.step_count, sim.time, _values(sim) if with_values else None)
    if what == "values":
        return sim, _values(sim)
    if what == "restore":
        state, file = args
        warnings = sim.restore(state, file=file)
        return sim, RestoreReply(list(warnings), sim.step_count, sim.time)
    if what in _QUERIES:
        return sim, getattr(sim, what)()
    raise RuntimeError(f"unknown call {what!r}")


def main(argv: list[str]) -> int:
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    os.dup2(2, 1)
    recv = Connection(int(argv[0]), writable=False)
    send = Connection(int(argv[1]), readable=False)
    sim: Simulation | None = None
    while True:
        try:
            what, args = recv.recv()
        except EOFError:
            return 0
        try:
            sim, value = _answer(sim, what, args)
        except Exception as exc:  # noqa: BLE001 every error goes back to the caller, rebuilt there
            send.send(("error", error_payload(exc)))
            continue
        send.send(("ok", value))


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
