"""The player: a timeline published at its recorded pace times ``rate``, from ``start_offset``,
optionally looping, with pause and resume, on its own thread (no rclpy: the node hands in a
``publish(topic, data)`` function).

Time comes from an injectable :class:`~robot_state_format.playback.clock.Clock` (real by default;
tests use a fake one and get exact wake-up times). Stamps inside the messages are shifted by whole
loop lengths so time never runs backwards (:mod:`.restamp`). With ``realtime`` the thread asks
for SCHED_FIFO (:mod:`.realtime`); by default it runs as any other thread.
"""

from __future__ import annotations

import math
import threading
from collections.abc import Callable, Iterable, Iterator

from robot_state_format.playback.clock import Clock, MonotonicClock
from robot_state_format.playback.realtime import raise_thread_priority
from robot_state_format.playback.restamp import shifted
from robot_state_format.playback.timeline import Event, PassStats, RecordingTimeline
from robot_state_format.recording.cdr import NS

PAUSE_POLL_S = 0.1


class Player:
    """Publish ``events`` at their recorded pace on a background thread.

    ``publish(topic, data)`` sends CDR bytes; ``publish_clock(t_ns)`` (optional) publishes ``/clock``;
    ``sent(topic, t_ns, time_s)`` (optional) observes every publication (benchmarks, tests);
    ``after_first()`` (optional) runs once the first message is out, before the timeline runs on (e.g.
    wait until every subscriber acknowledged it: then all of them are matched both ways).
    """

    def __init__(self, events: Iterable[Event], publish: Callable[[str, bytes], None], *, rate: float = 1.0,
                 loop: bool = False, start_offset: float = 0.0,
                 publish_clock: Callable[[int], None] | None = None,
                 sent: Callable[[str, int, float], None] | None = None, realtime: bool = False,
                 after_first: Callable[[], None] | None = None, clock: Clock | None = None) -> None:
        if rate <= 0 or not math.isfinite(rate):
            raise ValueError("rate must be a positive number")
        # a list, or a re-iterable source such as RecordingTimeline (each pass iterates it again)
        self.events: Iterable[Event] = events if isinstance(events, RecordingTimeline) else list(events)
        self._publish = publish
        self._publish_clock = publish_clock
        self._sent = sent
        self._after_first = after_first
        self.clock: Clock = clock if clock is not None else MonotonicClock()
        self.rate = float(rate)
        self.loop = loop
        self.start_offset_ns = int(round(start_offset * NS))
        self._cond = threading.Condition()
        self._wake = threading.Event()  # set on pause, resume and stop: a sleep ends early
        self._paused_at: float | None = None
        self._stop = False
        self._base = 0.0  # clock time of timeline time 0 (moved by pauses)
        self._thread: threading.Thread | None = None
        self.published = 0
        self.loops = 0
        self.error: str | None = None
        self.realtime = realtime
        self.realtime_note: str | None = None  # why the thread runs without real-time priority

    @property
    def running(self) -> bool:
        return self._thread is not None and self._thread.is_alive()

    @property
    def paused(self) -> bool:
        return self._paused_at is not None

    def start(self) -> None:
        self._thread = threading.Thread(target=self._run, name="rsf-player", daemon=True)
        self._thread.start()

    def pause(self) -> bool:
        with self._cond:
            if self._paused_at is not None or not self.running:
                return False
            self._paused_at = self.clock.now()
            self._wake.set()
            return True

    def resume(self) -> bool:
        with self._cond:
            if self._paused_at is None:
                return False
            self._base += self.clock.now() - self._paused_at
            self._paused_at = None
            self._wake.set()
            self._cond.notify_all()
            return True

    def stop(self, timeout: float = 2.0) -> None:
        with self._cond:
            self._stop = True
            self._wake.set()
            self._cond.notify_all()
        if self._thread is not None and self._thread is not threading.current_thread():
            self._thread.join(timeout)

    def wait(self, timeout: float | None = None) -> bool:
        """Wait for the end of playback; True when it ended."""
        if self._thread is None:
            return True
        self._thread.join(timeout)
        return not self._thread.is_alive()

    def _wait_until(self, target: float) -> bool:
        """Sleep until timeline time ``target`` (shifted by pauses); False when stopped."""
        while True:
            with self._cond:
                if self._stop:
                    return False
                if self._paused_at is not None:
                    self._cond.wait(PAUSE_POLL_S)
                    continue
                due = target + self._base
                self._wake.clear()  # under the lock: a later pause or stop sets it again
            if due <= self.clock.now():
                return True
            self.clock.sleep_until(due, self._wake)

    def _anchor(self, target: float) -> None:
        """Timeline time ``target`` is now."""
        with self._cond:
            self._base = self.clock.now() - target

    def _run(self) -> None:
        if self.realtime:
            self.realtime_note = raise_thread_priority()
        try:
            self._play()
        except Exception as exc:  # noqa: BLE001 the player thread reports any error through .error
            self.error = f"{type(exc).__name__}: {exc}"

    def _play(self) -> None:
        stats = PassStats()  # of the first pass, for the loop length
        begin: int | None = None
        anchored = False
        period = 0
        k = 0
        current: Iterator[Event] = iter(self.events)
        upcoming: Iterator[Event] | None = None
        ready = getattr(current, "wait_ready", None)
        if ready is not None:
            ready()  # a streamed first pass starts once its read-ahead is full
        try:
            while True:
                # the next pass starts reading now, so it is ready when this one ends
                upcoming = iter(self.events) if self.loop else None
                shift = k * period
                for e in current:
                    if k == 0:
                        stats.add(e.t_ns)
                        if begin is None:
                            begin = e.t_ns + self.start_offset_ns
                        if e.t_ns < begin:
                            continue
                    assert begin is not None
                    target = (e.t_ns + shift - begin) / NS / self.rate
                    if not anchored:  # the clock starts with the first message to play, once it is read
                        self._anchor(target)
                        anchored = True
                    data = shifted(e, shift)  # before the wait: a restamped world_state costs a read and a write
                    if not self._wait_until(target):
                        return
                    self._send(e, shift, data)
                    if self._after_first is not None and self.published == 1:
                        self._after_first()
                        self._anchor(target)  # the timeline goes on from here
                if not self.loop or stats.first is None:
                    return
                if k == 0:
                    period = stats.loop_length_ns()
                k += 1
                self.loops = k
                assert upcoming is not None
                current, upcoming = upcoming, None
        finally:
            for it in (current, upcoming):
                close = getattr(it, "close", None)
                if close is not None:
                    close()

    def _send(self, e: Event, shift: int, data: bytes) -> None:
        if self._publish_clock is not None:
            self._publish_clock(e.t_ns + shift)
        self._publish(e.topic, data)
        self.published += 1
        if self._sent is not None:
            self._sent(e.topic, e.t_ns + shift, self.clock.now())
