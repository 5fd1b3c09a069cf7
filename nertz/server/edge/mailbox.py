"""A deque with one waiting reader: how a socket's messages wait, in and out.

Every message of a move passes through one on its way in (the app's reads of a socket) and one
per socket on its way out (a connection's writer): a plain deque and one future, not an
``asyncio.Queue``, whose bookkeeping (unfinished tasks, a list of getters, and on Python 3.11 a
system call to find the loop) would be paid for each message.
"""

from __future__ import annotations

import asyncio
from collections import deque
from typing import Generic, TypeVar

T = TypeVar("T")


class Mailbox(Generic[T]):
    """Items in order (:attr:`items`, a deque its owner may read and drain directly) and at
    most one reader waiting for the next."""

    __slots__ = ("_loop", "_waiter", "items")

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self.items: deque[T] = deque()
        """What waits, oldest first."""
        self._loop = loop
        self._waiter: asyncio.Future[None] | None = None

    def put(self, item: T) -> None:
        """Add an item, waking the reader if it waits."""
        self.items.append(item)
        self.wake()

    @property
    def waiting(self) -> bool:
        """Whether the reader waits for an item now (nothing it has not taken is queued)."""
        return self._waiter is not None

    def wake(self) -> None:
        """Wake a waiting reader for items added to :attr:`items` directly."""
        waiter = self._waiter
        if waiter is not None:
            self._waiter = None
            if not waiter.done():
                waiter.set_result(None)

    async def wait(self) -> None:
        """Return once an item waits (at once if one does). One reader at a time."""
        while not self.items:
            waiter = self._waiter = self._loop.create_future()
            try:
                await waiter
            finally:
                if self._waiter is waiter:
                    self._waiter = None
