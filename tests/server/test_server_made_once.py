"""A finished match's frames and analysis are made once and shared: its players' pages all ask
for the analysis as the match ends, and several people behind one address must not be refused
for taking the replay line's places one each."""

from __future__ import annotations

import asyncio
import json
import time
from pathlib import Path
from typing import Any

import httpx
import pytest
from server_support import live_server

import nertz.server.edge.app as app_module
from nertz.server.edge.app import create_app
from nertz.server.edge.made_once import MadeOnce
from nertz.server.store import Store

ROOT = Path(__file__).resolve().parents[2]
DEMO = json.loads((ROOT / "examples" / "demo.nertz.json").read_text())


def test_those_asking_at_once_share_one_making_and_later_ones_the_answer() -> None:
    async def main() -> tuple[list[bytes], int]:
        once = MadeOnce(keep=2, keep_bytes=1000)
        made = 0
        gate = asyncio.Event()

        async def make() -> bytes:
            nonlocal made
            made += 1
            await gate.wait()
            return b"answer"

        asking = [asyncio.ensure_future(once.get("k", make)) for _ in range(5)]
        await asyncio.sleep(0)
        gate.set()
        answers = list(await asyncio.gather(*asking))
        answers.append(await once.get("k", make))  # kept
        return answers, made

    answers, made = asyncio.run(main())
    assert answers == [b"answer"] * 6 and made == 1


def test_a_makers_failure_is_its_own_and_the_waiters_make_it_themselves() -> None:
    async def main() -> list[Any]:
        once = MadeOnce(keep=2, keep_bytes=1000)
        gate = asyncio.Event()
        tries = 0

        async def make() -> bytes:
            nonlocal tries
            tries += 1
            mine = tries
            await gate.wait()
            if mine == 1:
                raise LookupError("refused for the first asker's own reason")
            return b"made by a waiter"

        asking = [asyncio.ensure_future(once.get("k", make)) for _ in range(3)]
        await asyncio.sleep(0)
        gate.set()
        return list(await asyncio.gather(*asking, return_exceptions=True))

    first, *rest = asyncio.run(main())
    assert isinstance(first, LookupError)
    assert rest == [b"made by a waiter"] * 2


def test_a_waiter_that_goes_away_leaves_the_making_to_the_rest() -> None:
    async def main() -> bytes:
        once = MadeOnce(keep=2, keep_bytes=1000)
        gate = asyncio.Event()

        async def make() -> bytes:
            await gate.wait()
            return b"answer"

        maker = asyncio.ensure_future(once.get("k", make))
        await asyncio.sleep(0)
        leaving = asyncio.ensure_future(once.get("k", make))
        await asyncio.sleep(0)
        leaving.cancel()
        with pytest.raises(asyncio.CancelledError):
            await leaving
        gate.set()
        return await maker

    assert asyncio.run(main()) == b"answer"


def test_only_the_most_recently_asked_answers_are_kept() -> None:
    async def main() -> list[int]:
        once = MadeOnce(keep=2, keep_bytes=1000)
        made: list[int] = []

        def maker(n: int) -> Any:
            async def make() -> bytes:
                made.append(n)
                return str(n).encode()
            return make

        for n in (1, 2, 1, 3, 1, 2):  # 2 is the least recent when 3 comes
            await once.get(n, maker(n))
        return made

    assert asyncio.run(main()) == [1, 2, 3, 2]


@pytest.mark.parametrize("what", ["analysis", "frames"])
def test_a_household_at_one_table_all_get_their_matchs_answer(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, what: str) -> None:
    # Six people behind one address ask at once, as their pages do when the match ends; each
    # used to take a place of the four an address has in the replay line, and two were refused.
    real_analyse, real_frames = app_module.analyse, app_module.replay.frames
    made: list[str] = []

    def slow_analyse(file: Any) -> Any:
        made.append("analysis")
        time.sleep(0.3)  # a long match, or a busy machine
        return real_analyse(file)

    def slow_frames(file: Any) -> Any:
        made.append("frames")
        time.sleep(0.3)
        return real_frames(file)

    monkeypatch.setattr(app_module, "analyse", slow_analyse)
    monkeypatch.setattr(app_module.replay, "frames", slow_frames)
    db = f"sqlite:///{tmp_path / 'm.db'}"

    async def stored() -> None:
        store = await Store.open(db)
        try:
            await store.save_match("m1", "r1", DEMO, 0)
        finally:
            await store.close()

    asyncio.run(stored())

    async def main(base: str) -> list[httpx.Response]:
        async with httpx.AsyncClient(base_url=base, timeout=60) as http:
            return list(await asyncio.gather(
                *(http.get(f"/api/matches/m1/{what}") for _ in range(6))))

    with live_server(create_app(db, start_bots=False)) as base:
        got = asyncio.run(main(base))
        assert [r.status_code for r in got] == [200] * 6, [r.text[:200] for r in got]
        assert len({r.content for r in got}) == 1
        assert made == [what]  # played through once
        # An unknown match is still a 404 naming it, and is not kept as an answer.
        with httpx.Client(base_url=base, timeout=60) as http:
            for _ in range(2):
                r = http.get(f"/api/matches/nope/{what}")
                assert r.status_code == 404 and "nope" in r.json()["error"]


def test_kept_answers_are_bounded_in_bytes_too() -> None:
    async def main() -> tuple[list[int], int]:
        once = MadeOnce(keep=10, keep_bytes=10)
        made: list[int] = []

        def maker(n: int, size: int) -> Any:
            async def make() -> bytes:
                made.append(n)
                return b"x" * size
            return make

        await once.get(1, maker(1, 4))
        await once.get(2, maker(2, 4))
        await once.get(3, maker(3, 4))  # 12 bytes: the oldest goes
        await once.get(4, maker(4, 11))  # larger than all that is kept: answered, not kept
        for n in (3, 2, 4, 1):  # 3 and 2 are kept; 4 never is; 1 went first
            await once.get(n, maker(n, 4 if n < 4 else 11))
        return made, once.kept_bytes

    made, kept = asyncio.run(main())
    assert made == [1, 2, 3, 4, 4, 1] and kept <= 10, (made, kept)
