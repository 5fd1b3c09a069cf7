"""Answers made once per key: a finished match's frames and analysis.

A finished match never changes, so what is made from it can be kept, and when its players'
pages all ask for it at once (every page fetches the analysis as the match ends) one of them
makes it and the rest wait for that one: they neither play the match through again nor take
places in the replay thread's line (``REPLAY_WORK_PER_ADDRESS``, which several people behind one
address would otherwise fill).
"""

from __future__ import annotations

import asyncio
from collections import OrderedDict
from collections.abc import Awaitable, Callable, Hashable


class MadeOnce:
    """The last answers, by key (at most :attr:`keep` of them and :attr:`keep_bytes` in all),
    and the one being made for each key."""

    def __init__(self, keep: int, keep_bytes: int) -> None:
        self.keep = keep
        """How many answers are kept (the least recently asked for goes first)."""
        self.keep_bytes = keep_bytes
        """How many bytes of answers are kept in all (a long match's frames run to megabytes;
        one larger than this is answered and not kept)."""
        self.kept_bytes = 0
        """The bytes of the answers kept now."""
        self._made: OrderedDict[Hashable, bytes] = OrderedDict()
        self._making: dict[Hashable, asyncio.Future[bytes]] = {}

    async def get(self, key: Hashable, make: Callable[[], Awaitable[bytes]]) -> bytes:
        """The answer for ``key``: kept, or being made (then waited for), or made now by
        ``make``. If the one making it fails (refused a place in the line, say), each of its
        waiters tries in its own name: a refusal is the asker's own, never another's."""
        while True:
            made = self._made.get(key)
            if made is not None:
                self._made.move_to_end(key)
                return made
            making = self._making.get(key)
            if making is None:
                break
            try:
                # Shielded: a waiter that goes away does not cancel the making for the rest.
                return await asyncio.shield(making)
            except asyncio.CancelledError:
                if not making.cancelled():
                    raise  # this waiter's own cancellation
            except Exception:
                pass  # the maker's failure: try again, as the maker now or a waiter
        making = asyncio.get_running_loop().create_future()
        self._making[key] = making
        try:
            made = await make()
        except BaseException as exc:
            if isinstance(exc, asyncio.CancelledError):
                making.cancel()
            else:
                making.set_exception(exc)
                making.exception()  # retrieved: nobody may be waiting
            raise
        finally:
            del self._making[key]
        if len(made) <= self.keep_bytes:
            self._made[key] = made
            self.kept_bytes += len(made)
            while len(self._made) > self.keep or self.kept_bytes > self.keep_bytes:
                self.kept_bytes -= len(self._made.popitem(last=False)[1])
        making.set_result(made)
        return made


__all__ = ["MadeOnce"]
