"""Who a client is: the player identity the server issues and recognises.

The first time someone joins a room without an identity, the server makes them a guest: a
profile and a random identity token, of which the database keeps only the SHA-256. The browser
keeps the token in an HttpOnly, SameSite=Lax cookie (:data:`COOKIE`); programs
(:mod:`nertz.net.client`) send it as ``Authorization: Bearer TOKEN``. Whatever room they join
next, the same token names the same player. A client never says who it is: the server looks
its token up (:meth:`Identities.find`), and a room's player is tied to the profile by the
server at the join (:meth:`Identities.seat`).
"""

from __future__ import annotations

import hashlib
import secrets
import time
from dataclasses import dataclass
from typing import Any, Final

import sqlalchemy as sa
from sqlalchemy.exc import IntegrityError
from starlette.requests import HTTPConnection

from nertz.server.players.tables import profile_tokens, profiles, room_members
from nertz.server.store import Store, rooms

COOKIE: Final = "nertz_player"
"""The browser's identity cookie (HttpOnly, SameSite=Lax, a year)."""

COOKIE_SECONDS: Final = 365 * 24 * 3600
"""How long the browser keeps the identity cookie."""

MAX_TOKEN_CHARS: Final = 128
"""Longer "tokens" are not looked up (ours are 43 characters)."""


@dataclass(frozen=True, slots=True)
class Profile:
    """A player as the server knows them: public id, shown name, account name if any."""

    id: str
    name: str
    account: str | None
    created_at: float

    @property
    def guest(self) -> bool:
        """A guest has no account (its identity lives only in its token)."""
        return self.account is None

    def to_json(self) -> dict[str, Any]:
        """Public facts (never the password's hash)."""
        return {"id": self.id, "name": self.name, "guest": self.guest,
                "created_at": self.created_at}


def token_hash(token: str) -> str:
    """What the database keeps of an identity token: its SHA-256."""
    return hashlib.sha256(token.encode()).hexdigest()


def new_token() -> str:
    """A fresh identity token (256 random bits)."""
    return secrets.token_urlsafe(32)


def new_profile_id() -> str:
    """A fresh public player id."""
    return "p" + secrets.token_hex(8)


def token_from(conn: HTTPConnection) -> str | None:
    """The identity token a request carries: ``Authorization: Bearer`` first, else the
    cookie; None if neither (or one too long to be ours)."""
    header = conn.headers.get("authorization", "")
    token = header[7:].strip() if header[:7].lower() == "bearer " else None
    if not token:
        token = conn.cookies.get(COOKIE)
    if not token or len(token) > MAX_TOKEN_CHARS:
        return None
    return token


def profile_of(row: Any) -> Profile:
    """A :class:`Profile` from a ``profiles`` row."""
    return Profile(row.id, row.name, row.account, row.created_at)


class Identities:
    """Profiles, their tokens, and who sat in which room, in the database."""

    def __init__(self, db: Store) -> None:
        self.db = db

    async def find(self, token: str | None) -> Profile | None:
        """The player this token names, or None (no token, or one we never issued)."""
        if not token:
            return None
        async with self.db.connection() as conn:
            row = (await conn.execute(
                sa.select(profiles).join(profile_tokens,
                                         profile_tokens.c.profile_id == profiles.c.id)
                .where(profile_tokens.c.token_hash == token_hash(token))
            )).first()
        return None if row is None else profile_of(row)

    async def get(self, profile_id: str) -> Profile | None:
        """A player by public id."""
        if len(profile_id) > 32:
            return None
        async with self.db.connection() as conn:
            row = (await conn.execute(
                sa.select(profiles).where(profiles.c.id == profile_id))).first()
        return None if row is None else profile_of(row)

    async def guest(self, name: str) -> tuple[Profile, str]:
        """A new guest called ``name``, and their identity token (shown once)."""
        now = time.time()
        profile = Profile(new_profile_id(), name, None, now)
        token = new_token()
        async with self.db.transaction() as conn:
            await conn.execute(profiles.insert().values(
                id=profile.id, name=name, account=None, password_hash=None, created_at=now))
            await conn.execute(profile_tokens.insert().values(
                token_hash=token_hash(token), profile_id=profile.id, created_at=now))
        return profile, token

    async def issue(self, profile_id: str) -> str:
        """A new identity token for an existing player (a sign-in on another device)."""
        token = new_token()
        async with self.db.transaction() as conn:
            await conn.execute(profile_tokens.insert().values(
                token_hash=token_hash(token), profile_id=profile_id, created_at=time.time()))
        return token

    async def replace_tokens(self, profile_id: str) -> str:
        """Forget every identity token of a player and issue one new one: at sign-up, so a
        guest token someone else may hold (planted, or copied off a shared machine) does not
        become a key to the account."""
        token = new_token()
        async with self.db.transaction() as conn:
            await conn.execute(profile_tokens.delete()
                               .where(profile_tokens.c.profile_id == profile_id))
            await conn.execute(profile_tokens.insert().values(
                token_hash=token_hash(token), profile_id=profile_id, created_at=time.time()))
        return token

    async def revoke_others(self, profile_id: str, keep: str | None) -> int:
        """Forget every identity token of a player but ``keep`` (this device's): a password
        change signs every other device out. How many were forgotten."""
        query = profile_tokens.delete().where(profile_tokens.c.profile_id == profile_id)
        if keep is not None:
            query = query.where(profile_tokens.c.token_hash != token_hash(keep))
        async with self.db.transaction() as conn:
            return int((await conn.execute(query)).rowcount or 0)

    async def revoke(self, token: str) -> None:
        """Forget one identity token (signing out on this device)."""
        async with self.db.transaction() as conn:
            await conn.execute(profile_tokens.delete().where(
                profile_tokens.c.token_hash == token_hash(token)))

    async def rename(self, profile_id: str, name: str) -> None:
        """A guest is shown by the name they last played under."""
        async with self.db.transaction() as conn:
            await conn.execute(profiles.update().where(profiles.c.id == profile_id)
                               .where(profiles.c.account.is_(None)).values(name=name))

    async def seat(self, room_id: str, room_player: str, profile_id: str) -> None:
        """Tie a room's player to the player behind it (at the join, by the server)."""
        try:
            async with self.db.transaction() as conn:
                await conn.execute(room_members.insert().values(
                    room_id=room_id, room_player=room_player, profile_id=profile_id))
        except IntegrityError:  # pragma: no cover - room player ids are fresh
            pass

    async def open_seats(self, profile_id: str) -> dict[str, list[str]]:
        """The room players a player was seated as, in rooms not closed: room id -> room
        player ids (what a sign-out ends)."""
        async with self.db.connection() as conn:
            result = await conn.execute(
                sa.select(room_members.c.room_id, room_members.c.room_player)
                .join(rooms, rooms.c.id == room_members.c.room_id)
                .where(room_members.c.profile_id == profile_id)
                .where(rooms.c.status != "closed"))
            seats: dict[str, list[str]] = {}
            for r in result:
                seats.setdefault(r.room_id, []).append(r.room_player)
            return seats

    async def seats_in(self, room_id: str, profile_id: str) -> list[str]:
        """The room players a player was seated as in one room (what a join may reclaim)."""
        async with self.db.connection() as conn:
            result = await conn.execute(
                sa.select(room_members.c.room_player)
                .where(room_members.c.room_id == room_id)
                .where(room_members.c.profile_id == profile_id))
            return [r.room_player for r in result]

    async def members(self, room_id: str) -> dict[str, str]:
        """A room's players tied to profiles: room player id -> profile id."""
        async with self.db.connection() as conn:
            result = await conn.execute(
                sa.select(room_members.c.room_player, room_members.c.profile_id)
                .where(room_members.c.room_id == room_id))
            return {r.room_player: r.profile_id for r in result}


__all__ = ["COOKIE", "COOKIE_SECONDS", "Identities", "Profile", "new_profile_id", "new_token",
           "profile_of", "token_from", "token_hash"]
