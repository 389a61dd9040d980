"""A bounded hand-over between a reading thread and the player (no rclpy)."""

from __future__ import annotations

import threading
from collections import deque
from typing import Generic, TypeVar

T = TypeVar("T")


class End:
    """Put last: the producer is done (``error``: it failed, raised in the consumer)."""

    def __init__(self, error: BaseException | None = None) -> None:
        self.error = error


class ReadAhead(Generic[T]):
    """The producer fills it up to ``size`` and then sleeps until it is half empty (few wake-ups;
    the consumer never waits on a half-full buffer)."""

    def __init__(self, size: int) -> None:
        self.size = size
        self.items: deque[T | End] = deque()
        self.cond = threading.Condition()
        self.closed = False
        self.ended = False  # the end marker (or an error) is in
        self.max_held = 0

    def put(self, item: T | End, extra: int) -> bool:
        """Append ``item`` (``extra``: items the producer holds besides); False once closed."""
        with self.cond:
            if len(self.items) >= self.size:
                while not self.closed and len(self.items) > self.size // 2:
                    self.cond.wait()
            if self.closed:
                return False
            self.items.append(item)
            if isinstance(item, End):
                self.ended = True
            self.max_held = max(self.max_held, len(self.items) + extra)
            if len(self.items) == 1 or len(self.items) >= self.size or self.ended:
                self.cond.notify_all()
            return True

    def wait_full(self, timeout: float) -> None:
        with self.cond:
            self.cond.wait_for(lambda: self.closed or len(self.items) >= self.size or self.ended, timeout)

    def get(self) -> T | End:
        with self.cond:
            while not self.items:
                self.cond.wait()
            item = self.items.popleft()
            if len(self.items) == self.size // 2:
                self.cond.notify_all()
            return item

    def close(self) -> None:
        with self.cond:
            self.closed = True
            self.cond.notify_all()


class Stream(Generic[T]):
    """An iterator over a read-ahead buffer; ``close()`` (or the end) stops its thread."""

    def __init__(self, buffer: ReadAhead[T], thread: threading.Thread) -> None:
        self.buffer = buffer
        self.thread = thread
        self.done = False

    def __iter__(self) -> Stream[T]:
        return self

    def __next__(self) -> T:
        if self.done:
            raise StopIteration
        item = self.buffer.get()
        if isinstance(item, End):
            self.close()
            if item.error is None:
                raise StopIteration
            raise item.error
        return item

    def wait_ready(self, timeout: float = 30.0) -> None:
        """Wait until the read-ahead is full or the file is read (playback starts without a backlog)."""
        self.buffer.wait_full(timeout)

    def close(self) -> None:
        self.done = True
        self.buffer.close()
        if self.thread is not threading.current_thread():
            self.thread.join(5.0)

    def __del__(self) -> None:
        self.buffer.close()
