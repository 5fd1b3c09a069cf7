"""Accounts: a guest keeps their identity across devices by giving it a name and a password.

Passwords are hashed with argon2id (``argon2-cffi``'s defaults, rehashed when they change). A
sign-in names the account and the password; a wrong name and a wrong password get the same
answer (:class:`SignInRefused`), and an unknown name still costs one hash, so the answer's time
tells nothing either. Sign-ups, sign-ins and password checks are rate-limited by the caller
(:mod:`nertz.server.players.routes`).

Hashing runs on threads of its own (:data:`HASH_THREADS`), never on the event loop nor on the
default executor that the server's other off-loop work shares, and at most
:data:`HASHES_WAITING` hashes may wait for them: past that the answer is a 503. A flood of
passwords from many addresses takes at most those threads' CPU and queues nothing else.

Deleting an account deletes the player: profile, tokens, ratings, history rows, seats in rooms,
their place in the quick-match queue; rated matches keep their seats' points with the name
replaced by :data:`DELETED_NAME` (the replay files, like every room log, stay as they were
made).
"""

from __future__ import annotations

import asyncio
import functools
import json
import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Final, TypeVar

import sqlalchemy as sa
from argon2 import PasswordHasher
from argon2.exceptions import InvalidHashError, VerificationError
from sqlalchemy.exc import IntegrityError

from nertz.server import protocol
from nertz.server.players.identity import (
    Profile,
    new_profile_id,
    new_token,
    profile_of,
    token_hash,
)
from nertz.server.players.tables import (
    match_results,
    profile_tokens,
    profiles,
    quick_queue,
    rated_matches,
    ratings,
    room_members,
)
from nertz.server.store import Store

HASHER: Final = PasswordHasher()
"""argon2id with the library's recommended costs."""

MIN_PASSWORD: Final = 8
"""The shortest password accepted."""

MAX_PASSWORD: Final = 256
"""The longest password accepted (hashing has a cost per byte)."""

DELETED_NAME: Final = "deleted player"
"""What a deleted player is called in the matches they played."""

HASH_THREADS: Final = 2
"""Threads that hash passwords (argon2id takes tens of milliseconds of CPU each)."""

HASHES_WAITING: Final = 32
"""Hashes that may wait for a thread; one more is refused (503) rather than queued."""

_hashing = ThreadPoolExecutor(HASH_THREADS, thread_name_prefix="nertz-argon2")
_waiting = 0
_waiting_lock = threading.Lock()

T = TypeVar("T")


def _done(_future: object) -> None:
    global _waiting
    with _waiting_lock:
        _waiting -= 1


async def _off_loop(work: Callable[..., T], *args: str) -> T:
    """Run a hash (or a check) on the hashing threads, or refuse when too many wait. A hash
    counts until its thread is done with it, even when the request that asked went away."""
    global _waiting
    with _waiting_lock:
        if _waiting >= HASHES_WAITING:
            raise AccountError(503, "the server is busy checking passwords: try again in a "
                                    "few seconds")
        _waiting += 1
    job = _hashing.submit(work, *args)
    job.add_done_callback(_done)
    return await asyncio.wrap_future(job)


@functools.cache
def _dummy_hash() -> str:
    """Verified against when the name is unknown, so both refusals take as long."""
    return HASHER.hash("nertz: no such account")


def _verify(stored: str, password: str) -> bool:
    return HASHER.verify(stored or _dummy_hash(), password)


async def _hash(password: str) -> str:
    return await _off_loop(HASHER.hash, password)


class AccountError(ValueError):
    """A request about an account that cannot be done, with the reason for people."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.message = message


class SignInRefused(AccountError):
    """The name or the password is wrong (never which)."""

    def __init__(self) -> None:
        super().__init__(401, "wrong account name or password")


MAX_ACCOUNT_KEY: Final = 64
"""The longest folded account name (:func:`account_key`): the length of ``profiles.account``."""


def account_key(name: str) -> str:
    """How account names are compared: cleaned and folded like room names (``Ann`` = ``ann``)."""
    return protocol.name_key(protocol.clean_name(name))


def account_look(name: str) -> str:
    """What an account name looks like, for refusing look-alikes: its confusable skeleton
    (:func:`nertz.server.protocol.name_skeleton`), so that Cyrillic ``\u0410nn`` or ``AnN``
    cannot be made beside ``Ann`` and pass for it on a leaderboard or in a match's history."""
    return protocol.name_skeleton(protocol.clean_name(name))


def _taken(name: str) -> AccountError:
    # One answer for the name itself and for a look-alike: which one is taken is not told.
    return AccountError(409, f"the account name {name!r} is taken, or one that looks like it")


def check_password(password: str) -> None:
    """Refuse a password too short or too long."""
    if not MIN_PASSWORD <= len(password) <= MAX_PASSWORD:
        raise AccountError(400, f"a password has {MIN_PASSWORD} to {MAX_PASSWORD} characters "
                                f"(this one has {len(password)})")


class Accounts:
    """Sign-up, sign-in, password changes and deletion, in the database."""

    def __init__(self, db: Store) -> None:
        self.db = db

    async def sign_up(self, profile: Profile, name: str, password: str) -> Profile:
        """Make guest ``profile`` an account called ``name``; refused if it is one already or
        the name is taken (compared folded)."""
        if not profile.guest:
            raise AccountError(409, "you have an account already: sign out to make another")
        clean = self._name(name)
        check_password(password)
        digest = await _hash(password)
        try:
            async with self.db.transaction() as conn:
                # Still a guest: two sign-ups at once with one guest token make one account.
                made = await conn.execute(
                    profiles.update().where(profiles.c.id == profile.id)
                    .where(profiles.c.account.is_(None))
                    .values(name=clean, account=account_key(clean),
                            account_look=account_look(clean), password_hash=digest))
        except IntegrityError:
            raise _taken(clean) from None
        if made.rowcount != 1:
            raise AccountError(409, "you have an account already: sign out to make another")
        return Profile(profile.id, clean, account_key(clean), profile.created_at)

    async def new_account(self, name: str, password: str) -> tuple[Profile, str]:
        """A new player who is an account from the start (a sign-up with no guest behind it),
        and their identity token; nothing is made when the name is taken or bad."""
        clean = self._name(name)
        check_password(password)
        digest = await _hash(password)
        now = time.time()
        profile = Profile(new_profile_id(), clean, account_key(clean), now)
        token = new_token()
        try:
            async with self.db.transaction() as conn:
                await conn.execute(profiles.insert().values(
                    id=profile.id, name=clean, account=profile.account,
                    account_look=account_look(clean), password_hash=digest, created_at=now))
                await conn.execute(profile_tokens.insert().values(
                    token_hash=token_hash(token), profile_id=profile.id, created_at=now))
        except IntegrityError:
            raise _taken(clean) from None
        return profile, token

    @staticmethod
    def _name(name: str) -> str:
        try:
            clean = protocol.clean_name(name)
        except protocol.ProtocolError as exc:
            raise AccountError(400, str(exc)) from None
        # Folding can lengthen a name many times (U+FDFA alone becomes 18 letters): the key
        # must fit the column, or PostgreSQL refuses the write.
        if len(account_key(clean)) > MAX_ACCOUNT_KEY:
            raise AccountError(400, f"the account name {clean!r} is too long once its letters "
                                    f"are spelled out ({len(account_key(clean))} characters, at "
                                    f"most {MAX_ACCOUNT_KEY}): choose a plainer one")
        # An account's name is shown in matches' histories and rating lists beside bots and
        # deleted players: it may pass for neither, as a display name at a table may not.
        if protocol.bot_like(clean):
            raise AccountError(409, f"names like {clean!r} are the bots' names: choose another")
        if protocol.names_clash(clean, DELETED_NAME):
            raise AccountError(409, f"{clean!r} is what a deleted player is called: choose "
                                    "another name")
        return clean

    async def sign_in(self, name: str, password: str) -> Profile:
        """The account's profile if the password is right; :class:`SignInRefused` otherwise
        (an unknown name alike)."""
        try:
            key = account_key(name)
        except protocol.ProtocolError:
            key = ""
        async with self.db.connection() as conn:
            row = (await conn.execute(sa.select(profiles).where(profiles.c.account == key))
                   ).first() if key else None
        stored = row.password_hash if row is not None else None
        try:
            await _off_loop(_verify, stored or "", password[:MAX_PASSWORD])
        except (VerificationError, InvalidHashError):
            raise SignInRefused() from None
        if row is None or stored is None:
            raise SignInRefused()
        if HASHER.check_needs_rehash(stored):
            async with self.db.transaction() as conn:
                await conn.execute(profiles.update().where(profiles.c.id == row.id)
                                   .values(password_hash=await _hash(password)))
        return profile_of(row)

    async def check_old_password(self, profile: Profile, old: str) -> None:
        """The first half of a password change: refuse a guest, or a wrong ``old`` password
        (:class:`SignInRefused`). One hash, and no rehash of the old password's digest: it is
        about to be replaced (:meth:`set_password`)."""
        if profile.guest or profile.account is None:
            raise AccountError(400, "a guest has no password: make an account first")
        async with self.db.connection() as conn:
            stored = (await conn.execute(sa.select(profiles.c.password_hash)
                                         .where(profiles.c.id == profile.id))).scalar()
        try:
            await _off_loop(_verify, stored or "", old[:MAX_PASSWORD])
        except (VerificationError, InvalidHashError):
            raise SignInRefused() from None
        if stored is None:
            raise SignInRefused()

    async def set_password(self, profile: Profile, new: str) -> None:
        """The second half of a password change (:meth:`check_old_password` first): hash and
        store ``new`` (checked with :func:`check_password`). The caller ends the player's
        seats before and signs the other devices out."""
        check_password(new)
        digest = await _hash(new)
        async with self.db.transaction() as conn:
            await conn.execute(profiles.update().where(profiles.c.id == profile.id)
                               .values(password_hash=digest))

    async def delete(self, profile: Profile) -> None:
        """Delete the player and their personal data (see the module's notes)."""
        pid = profile.id
        async with self.db.transaction() as conn:
            played = [r.match_id for r in await conn.execute(
                sa.select(match_results.c.match_id).where(match_results.c.profile_id == pid))]
            for match_id in played:
                row = (await conn.execute(
                    sa.select(rated_matches.c.seats)
                    .where(rated_matches.c.match_id == match_id).with_for_update())).first()
                if row is None:
                    continue
                seats = json.loads(row.seats)
                for seat in seats:
                    for member in seat["players"]:
                        if member.get("profile") == pid:
                            member["profile"] = None
                            member["name"] = DELETED_NAME
                            seat["name"] = " & ".join(m["name"] for m in seat["players"])
                await conn.execute(rated_matches.update()
                                   .where(rated_matches.c.match_id == match_id)
                                   .values(seats=json.dumps(seats)))
            for table in (ratings, match_results, room_members, profile_tokens, quick_queue):
                await conn.execute(table.delete().where(table.c.profile_id == pid))
            await conn.execute(profiles.delete().where(profiles.c.id == pid))


__all__ = [
    "DELETED_NAME",
    "HASHES_WAITING",
    "HASH_THREADS",
    "MAX_ACCOUNT_KEY",
    "MIN_PASSWORD",
    "AccountError",
    "Accounts",
    "SignInRefused",
    "account_key",
    "account_look",
    "check_password",
]
