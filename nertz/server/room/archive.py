"""A room's finished matches: their ids, and each one's replay file saved once its log holds it.

A match's results name its replay, so the replay must be downloadable when the results arrive:
the save waits for the log entries that close the match (a replay never outruns its log), and
the results wait for the save.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Iterable
from typing import Any

from nertz.server.store import WRITER_RETRY, Store, StoreBusy

log = logging.getLogger("nertz.table")


class MatchArchive:
    """The finished matches of room ``room_id`` and the saves under way."""

    def __init__(self, store: Store, room_id: str) -> None:
        self.store = store
        self.room_id = room_id
        self.finished: list[str] = []
        self.tasks: set[asyncio.Task[None]] = set()

    def save_after(self, before: Iterable[asyncio.Future[Any]], match_id: str,
                   replay: dict[str, Any], winner: int | None) -> asyncio.Task[None]:
        """Save the match's replay once every future in ``before`` (its log entries) is done;
        the task is done when the replay is stored (or could not be: the log still holds it)."""
        task = asyncio.get_running_loop().create_task(
            self._save(list(before), match_id, replay, winner))
        self.tasks.add(task)
        task.add_done_callback(self.tasks.discard)
        return task

    async def _save(self, before: list[asyncio.Future[Any]], match_id: str,
                    replay: dict[str, Any], winner: int | None) -> None:
        done = await asyncio.gather(*before, return_exceptions=True)
        failed = next((r for r in done if isinstance(r, BaseException)), None)
        if failed is not None:
            # The log does not hold the match's end (this process was fenced off, or the store
            # refused): whoever rebuilds the room from the log closes the match and saves it.
            log.warning("table %s: match %s not saved: its last entries were not stored (%s)",
                        self.room_id, match_id, failed)
            return
        while True:
            try:
                await self.store.save_match(match_id, self.room_id, replay, winner)
                return
            except StoreBusy:  # overloaded, not refused: the replay is awaited, keep trying
                await asyncio.sleep(WRITER_RETRY)
            except Exception:  # pragma: no cover - the log still holds every move
                log.exception("table %s: could not save match %s", self.room_id, match_id)
                return

    async def ensure_saved(self, match_id: str, replay: dict[str, Any],
                           winner: int | None) -> None:
        """After a restart: save the match if the process stopped between closing its last
        round and saving it."""
        if await self.store.get_match(match_id) is None:
            await self.store.save_match(match_id, self.room_id, replay, winner)

    def close(self) -> None:
        """Stop the saves under way (their matches are saved again on restore)."""
        for task in list(self.tasks):
            task.cancel()
