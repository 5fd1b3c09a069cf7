"""Account names that pass for one another: refused at sign-up, and sorted out in a database
made before the server refused them (migration 0007)."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from typing import Any

import pytest
import sqlalchemy as sa
from sqlalchemy.ext.asyncio import create_async_engine
from starlette.testclient import TestClient

from nertz.server.edge.app import create_app
from nertz.server.limits import Rate
from nertz.server.players import accounts, routes
from nertz.server.protocol import name_skeleton
from nertz.server.store import MIGRATIONS, Store, normalise_url

CYRILLIC_ANN = "\u0410nn"
"""``Ann`` with a Cyrillic capital A: another string, the same look."""
GREEK_ANN = "\u0391nn"
"""``Ann`` with a Greek capital Alpha."""


@pytest.fixture(autouse=True)
def _many_sign_ups(monkeypatch: pytest.MonkeyPatch) -> None:
    # These tests make more accounts from one address than a minute's allowance.
    monkeypatch.setattr(routes, "SIGNUPS", Rate("signups", 0))


@pytest.fixture
def both(store_url: str) -> Iterator[TestClient]:
    """The app on SQLite and on PostgreSQL."""
    with TestClient(create_app(store_url)) as c:
        yield c


def _sign_up(client: TestClient, name: str, as_guest: bool) -> Any:
    client.cookies.clear()
    if as_guest:  # a guest first (a room joined), who then makes an account
        assert client.post("/api/rooms", json={"name": "someone", "seats": 2}).status_code == 201
    return client.post("/api/account/signup", json={"name": name, "password": "correct horse"})


@pytest.mark.parametrize("as_guest", [False, True], ids=["from-nobody", "from-a-guest"])
def test_an_account_name_that_looks_like_a_taken_one_is_refused(both: TestClient,
                                                                 as_guest: bool) -> None:
    assert _sign_up(both, "Ann", as_guest).status_code == 200
    for lookalike in (CYRILLIC_ANN, GREEK_ANN, "ANN", "\uff21nn"):  # the last: full-width A
        r = _sign_up(both, lookalike, as_guest)
        assert r.status_code == 409, lookalike
        assert "looks like" in r.json()["error"]
    # A name that only resembles it in spelling is another name.
    assert _sign_up(both, "Anne", as_guest).status_code == 200
    # The refused ones made nobody: the original still signs in, the look-alike does not.
    both.cookies.clear()
    assert both.post("/api/account/signin", json={"name": "ann", "password": "correct horse"}
                     ).status_code == 200
    assert both.post("/api/account/signin", json={"name": CYRILLIC_ANN,
                                                  "password": "correct horse"}).status_code == 401


@pytest.mark.parametrize("as_guest", [False, True], ids=["from-nobody", "from-a-guest"])
def test_an_account_name_that_passes_for_a_bot_or_a_deleted_player_is_refused(
        client: TestClient, as_guest: bool) -> None:
    """The table's refusal of a bot's name, reused, and the name a deleted player's seats take:
    an account so named passed for one in matches' histories and rating lists."""
    for name in ("Expert bot 2", "expert BOT 7", "Expert b\u043et 2", "Beginner bot l"):
        r = _sign_up(client, name, as_guest)
        assert r.status_code == 409 and "bots' names" in r.json()["error"], (name, r.text)
    for name in (accounts.DELETED_NAME, "Deleted Player", "de1eted pl\u0430yer"):
        r = _sign_up(client, name, as_guest)
        assert r.status_code == 409 and "deleted player" in r.json()["error"], (name, r.text)
    # Names that only contain those words are names.
    assert _sign_up(client, "Bot lover", as_guest).status_code == 200
    assert _sign_up(client, "Deleted playerz", as_guest).status_code == 200


def test_a_quick_match_guest_cannot_take_a_bots_name(client: TestClient) -> None:
    # The guest's profile took the name the table refuses (shown in rating lists), and the
    # quick room seated it under a number ("Casual bot 3 2").
    r = client.post("/api/quick", json={"seats": 2, "name": "Casual bot 3"})
    assert r.status_code == 409 and "bots' names" in r.json()["error"], r.text


def _migrate(sync_conn: Any, revision: str) -> None:
    from alembic import command
    from alembic.config import Config

    cfg = Config()
    cfg.set_main_option("script_location", str(MIGRATIONS))
    cfg.attributes["connection"] = sync_conn
    command.upgrade(cfg, revision)


async def _old_accounts_migrated(store_url: str) -> dict[str, str | None]:
    """Accounts written at revision 0006, then the store opened (which applies 0007): each
    profile's look."""
    digest = accounts.HASHER.hash("correct horse")
    engine = create_async_engine(normalise_url(store_url))
    try:
        async with engine.begin() as conn:
            await conn.run_sync(_migrate, "0006")
            await conn.execute(sa.text(
                "INSERT INTO profiles (id, name, account, password_hash, created_at) VALUES "
                "('later', :cyr, :cyr_key, :h, 2.0), ('first', 'Ann', 'ann', :h, 1.0), "
                "('other', 'Bob', 'bob', :h, 3.0), ('guest', 'Ann', NULL, NULL, 0.5)"),
                {"cyr": CYRILLIC_ANN, "cyr_key": CYRILLIC_ANN.casefold(), "h": digest})
        store = await Store.open(store_url)  # applies 0007
        await store.close()
        async with engine.connect() as conn:
            rows = await conn.execute(sa.text("SELECT id, account_look FROM profiles"))
            looks = {row.id: row.account_look for row in rows}
    finally:
        await engine.dispose()
    return looks


def test_the_migration_gives_the_oldest_of_look_alike_accounts_the_look(store_url: str) -> None:
    looks = asyncio.run(_old_accounts_migrated(store_url))
    assert looks == {"first": name_skeleton("Ann"), "later": None,
                     "other": name_skeleton("Bob"), "guest": None}
    with TestClient(create_app(store_url)) as client:
        # Both old accounts still sign in by their own names; a new look-alike is refused.
        for name in ("Ann", CYRILLIC_ANN):
            client.cookies.clear()
            r = client.post("/api/account/signin", json={"name": name,
                                                         "password": "correct horse"})
            assert r.status_code == 200, name
        assert _sign_up(client, GREEK_ANN, as_guest=False).status_code == 409
        assert _sign_up(client, "B\u043eb", as_guest=False).status_code == 409  # Cyrillic o


def test_a_name_too_long_once_folded_is_refused_by_name(both: TestClient) -> None:
    # U+FDFA folds to 18 letters: four of them made a key past the column, and PostgreSQL's
    # refusal of the write was a 500.
    r = _sign_up(both, "\ufdfa" * 4, as_guest=False)
    assert r.status_code == 400 and "too long once" in r.json()["error"], r.text
    assert _sign_up(both, "\ufdfa" * 3, as_guest=False).status_code == 200
