"""The players' HTTP API: identity, accounts, player pages, leaderboards, rating changes,
quick match. :class:`PlayersApi` holds the pieces, is told of every finished match
(:meth:`PlayersApi.match_saved`) and of every join (:meth:`PlayersApi.joined`), and makes the
router the app includes (:meth:`PlayersApi.router`). docs/protocol.md lists the routes.
"""

from __future__ import annotations

import contextlib
import logging
from collections import Counter
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import TYPE_CHECKING, Any, Final

import msgspec
from fastapi import APIRouter, Request
from fastapi.responses import JSONResponse, Response

from nertz.rules import PRESETS, Rules
from nertz.server import protocol
from nertz.server.edge.echo import shown
from nertz.server.limits import Limits, Rate, client_address
from nertz.server.players.accounts import AccountError, Accounts, check_password
from nertz.server.players.history import History, Sitter
from nertz.server.players.identity import (
    COOKIE,
    COOKIE_SECONDS,
    Identities,
    Profile,
    token_from,
)
from nertz.server.players.listing import Listing
from nertz.server.players.openapi import ROUTES as API
from nertz.server.players.quickmatch import QuickMatch
from nertz.server.players.ratings import (
    BOT_RATINGS,
    FAMILIES,
    NEW,
    bot_skill,
    display,
    family,
    family_of_presets,
)

if TYPE_CHECKING:
    from nertz.server.hub import Hub, OwnedElsewhere
    from nertz.server.live import LiveRoom

log = logging.getLogger("nertz.players")

SIGNINS_PER_MINUTE: Final = 10
"""Sign-in attempts one client address may make a minute (after a burst of as many)."""

SIGNINS: Final = Rate("signins", SIGNINS_PER_MINUTE)
"""The sign-in limit, kept in the service's shared :class:`Limits` (Redis with several
processes), so a guesser cannot spread attempts over the processes."""

SIGNUPS: Final = Rate("signups", 5)
"""Accounts one client address may make a minute (after a burst of as many): each costs a
password hash and a row for good."""

PASSWORD_CHECKS: Final = Rate("password_checks", 10)
"""Password changes and deletions one player may ask for a minute, wherever they ask from:
someone holding a player's identity token cannot guess the password faster than a sign-in."""

UNLIMITED_ROOMS: Final = Rate("rooms_unlimited", 0)
"""No limit on the rooms an address creates (nor, then, on the guests it makes)."""

ADDRESS_PASSWORD_CHECKS: Final = Rate("address_password_checks", 10)
"""Password checks (changes, deletions) one address may ask for a minute, over every player
it holds a token of (it may make five accounts a minute)."""

HASHES_PER_ADDRESS: Final = 2
"""Passwords one address may have hashed at once (this process): the hashing threads are
shared by everyone, and an address's burst waits its turn rather than holding them all."""

_hashing_from: Counter[str] = Counter()

GUESTS_PER_ROOM: Final = 3
"""New guest players one address may make a minute, per room it may create a minute (60 with
the default 20 rooms): every guest is a row for good."""

MAX_BODY: Final = 4096
"""The largest body a players' route reads."""


ErrorMaker = Callable[..., Exception]
"""Makes the app's HTTP error: ``(status, message)`` or ``(status, message, headers)``."""


class Credentials(msgspec.Struct, forbid_unknown_fields=True):
    """Body of sign-up and sign-in."""

    name: str
    password: str


class PasswordChange(msgspec.Struct, forbid_unknown_fields=True):
    """Body of a password change."""

    old: str
    new: str


class DeleteAccount(msgspec.Struct, forbid_unknown_fields=True):
    """Body of an account's deletion."""

    password: str | None = None


class QuickAsk(msgspec.Struct, forbid_unknown_fields=True):
    """Body of ``POST /api/quick``."""

    rules: str = "pagat"
    seats: int = 2
    bots_after: float = 30.0
    name: str | None = None


RoomInfoElsewhere = Callable[["OwnedElsewhere"], Awaitable[dict[str, Any]]]
"""Asks the owning process for a room's lobby (``Table.room_info``)."""

EndSeats = Callable[[str, list[str], str], Awaitable[None]]
"""Ends these people's seat tokens in the room of that id, saying why (``sign_out`` or
``password``: ``LiveRoom.end_seats``, on the process that owns it; nothing for a room that has
closed); raises if it could not."""


class PlayersApi:
    """Everything about players, over the store's database and the hub's rooms."""

    def __init__(self, hub: Hub, limits: Limits, signins: Rate = SIGNINS,
                 rooms: Rate = UNLIMITED_ROOMS) -> None:
        db = hub.store
        self.hub = hub
        self.identities = Identities(db)
        self.accounts = Accounts(db)
        self.history = History(db)
        self.quick = QuickMatch(db, self.identities, hub.create)
        self.listing = Listing(db, hub.rooms.get)
        self.limits = limits
        self.signins = signins
        self.rooms = rooms
        """The rooms an address may create: a quick-match ask may make one."""
        self.guests = Rate("guests", GUESTS_PER_ROOM * rooms.per_minute)
        """The guests an address may make (none when rooms are not limited)."""
        self.room_info_elsewhere: RoomInfoElsewhere | None = None
        """Asks the process that owns a room for its lobby (set by a multi-process server)."""
        self.end_seats_in: EndSeats | None = None
        """Ends people's seat tokens in a room, wherever it is owned (set by the app)."""
        hub.store.match_listeners.append(self.match_saved)

    # ------------------------------------------------------------------ hooks

    async def new_guest(self, request: Request, name: str) -> tuple[Profile, str] | int:
        """A new guest for the request's address, with their identity token; or, when the
        address has made too many a minute, the seconds until it may make another."""
        wait = await self.limits.take(self.guests, client_address(request))
        if wait:
            return wait
        return await self.identities.guest(name)

    async def joined(self, request: Request, room_id: str, room_player: str,
                     name: str) -> tuple[Profile | None, str | None]:
        """Someone joined a room through the API: tie the room's player to who the request
        says they are (its identity token), making them a guest if it names nobody; the
        profile and the new guest's token (None for a known player). (None, None) when the
        request names nobody and its address has made too many guests: the seat stands,
        tied to no player (its matches are not rated)."""
        profile = await self.identities.find(token_from(request))
        token = None
        if profile is None:
            made = await self.new_guest(request, name)
            if isinstance(made, int):
                log.warning("room %s: %s made too many guests; seat %s is tied to nobody",
                            room_id, client_address(request), room_player)
                return None, None
            profile, token = made
        elif profile.guest and profile.name != name:
            await self.identities.rename(profile.id, name)
        await self.identities.seat(room_id, room_player, profile.id)
        return profile, token

    async def end_seats(self, profile: Profile, why: str = "sign_out") -> list[str]:
        """A player signs out, is deleted or changes their password (``why``: ``sign_out`` or
        ``password``): every seat they hold in a room still open stops answering to its seat
        token, so a token left on a shared computer, or copied from it, no longer opens it. The
        rooms where that could not be done (to try again)."""
        failed: list[str] = []
        if self.end_seats_in is None:
            return failed
        for room_id, people in (await self.identities.open_seats(profile.id)).items():
            try:
                await self.end_seats_in(room_id, people, why)
            except Exception:
                log.exception("room %s: could not end %s's seats", room_id, profile.id)
                failed.append(room_id)
        return failed

    def seating(self, room: LiveRoom, members: dict[str, str]) -> list[list[Sitter]]:
        """Who sits at each seat of a live room, by partner slot."""
        seats: list[list[Sitter]] = [[] for _ in range(room.table.seats)]
        for p in sorted(room.table.players.values(), key=lambda p: p.hand):
            if p.seat is not None and 0 <= p.seat < len(seats):
                seats[p.seat].append(Sitter(p.name, members.get(p.id), p.bot, p.level))
        return seats

    async def match_saved(self, match_id: str, room_id: str, data: dict[str, Any]) -> None:
        """A room's match is stored: rate it if this process holds the room."""
        room = self.hub.rooms.get(room_id)
        if room is None:
            return
        same = room.table.same_deal
        members = await self.identities.members(room_id)
        await self.history.record(match_id, room_id, data, self.seating(room, members),
                                  known_seed=None if same is None else same[1])

    async def list_room(self, room_id: str, address: str) -> None:
        """List a new room publicly (its creator, at ``address``, asked for it)."""
        await self.listing.add(room_id, address)

    @staticmethod
    def set_cookie(request: Request, response: Response, token: str | None) -> None:
        """Give the browser its identity (HttpOnly, SameSite=Lax) if there is a new one."""
        if token is not None:
            response.set_cookie(COOKIE, token, max_age=COOKIE_SECONDS, httponly=True,
                                samesite="lax", secure=request.url.scheme == "https",
                                path="/")

    # ------------------------------------------------------------------ the routes

    @staticmethod
    def router_for(get: Callable[[], PlayersApi], error: ErrorMaker) -> APIRouter:
        """The routes, answered by the :class:`PlayersApi` that ``get()`` returns once the
        app has started; ``error(status, message, headers)`` makes the app's HTTP error."""
        api = APIRouter()

        async def body(request: Request, kind: type[Any]) -> Any:
            from nertz.server.edge.app import read_json

            return await read_json(request, kind, MAX_BODY)

        async def account_body(request: Request, kind: type[Any]) -> Any:
            # Another site's page can post a form here (text/plain can spell a JSON body) and
            # sign its visitor in as someone else; a JSON content type it cannot send without
            # asking first, and this server answers no such question.
            kind_of = request.headers.get("content-type", "").split(";")[0].strip().lower()
            if kind_of != "application/json":
                raise error(415, "send the body as JSON (Content-Type: application/json), "
                                 f"not {kind_of or 'without a content type'}")
            return await body(request, kind)

        async def me_or_401(request: Request) -> Profile:
            profile = await get().identities.find(token_from(request))
            if profile is None:
                raise error(401, "the server does not know you: play a match, or sign in")
            return profile

        def signed_in(request: Request, profile: Profile, token: str) -> JSONResponse:
            out = JSONResponse({"player": profile.to_json(), "identity": token})
            PlayersApi.set_cookie(request, out, token)
            return out

        @api.get("/api/me", **API["me"])
        async def me(request: Request) -> dict[str, Any]:
            profile = await get().identities.find(token_from(request))
            if profile is None:
                return {"player": None, "ratings": []}
            return {"player": profile.to_json(),
                    "ratings": await get().history.ratings_of(profile.id)}

        async def limited(rate: Rate, key: str, what: str) -> None:
            wait = await get().limits.take(rate, key)
            if wait:
                raise error(429, f"too many {what}: try again in {wait} s",
                            {"Retry-After": str(wait)})

        async def password_checked(request: Request, profile: Profile) -> None:
            # Keyed by the player too: whoever holds their token, from however many addresses.
            await limited(PASSWORD_CHECKS, profile.id, "password checks for this player")
            await limited(ADDRESS_PASSWORD_CHECKS, client_address(request),
                          "password checks from one address")

        @contextlib.asynccontextmanager
        async def hashing(request: Request) -> AsyncIterator[None]:
            address = client_address(request)
            if _hashing_from[address] >= HASHES_PER_ADDRESS:
                raise error(429, "a password from your address is being checked already: try "
                                 "again in a moment", {"Retry-After": "1"})
            _hashing_from[address] += 1
            try:
                yield
            finally:
                _hashing_from[address] -= 1
                if not _hashing_from[address]:
                    del _hashing_from[address]

        @api.post("/api/account/signup", **API["sign_up"])
        async def sign_up(request: Request) -> JSONResponse:
            await limited(SIGNUPS, client_address(request), "new accounts from one address")
            data: Credentials = await account_body(request, Credentials)
            profile = await get().identities.find(token_from(request))
            try:
                async with hashing(request):
                    if profile is None:
                        # Nobody yet: an account from the start (nothing left if refused).
                        profile, token = await get().accounts.new_account(data.name,
                                                                          data.password)
                    else:
                        profile = await get().accounts.sign_up(profile, data.name,
                                                               data.password)
                        # The guest's token may be known elsewhere: the account gets a new one.
                        token = await get().identities.replace_tokens(profile.id)
            except AccountError as exc:
                raise error(exc.status, exc.message) from None
            return signed_in(request, profile, token)

        @api.post("/api/account/signin", **API["sign_in"])
        async def sign_in(request: Request) -> JSONResponse:
            await limited(get().signins, client_address(request), "sign-ins from one address")
            data: Credentials = await account_body(request, Credentials)
            try:
                async with hashing(request):
                    profile = await get().accounts.sign_in(data.name, data.password)
            except AccountError as exc:
                raise error(exc.status, exc.message) from None
            return signed_in(request, profile, await get().identities.issue(profile.id))

        async def seats_ended(profile: Profile, why: str = "sign_out") -> None:
            # Before the identity goes: a sign-out that could not end a seat is tried again
            # with the same cookie, and a seat token that outlived it would still open a seat.
            failed = await get().end_seats(profile, why)
            if failed:
                again = "change the password" if why == "password" else "sign out"
                raise error(503, f"your seats in {len(failed)} room(s) could not be ended "
                                 f"just now: {again} again in a moment", {"Retry-After": "1"})

        @api.post("/api/account/signout", **API["sign_out"])
        async def sign_out(request: Request) -> JSONResponse:
            token = token_from(request)
            if token is not None:
                profile = await get().identities.find(token)
                if profile is not None:
                    await get().quick.forget(profile.id)
                    await seats_ended(profile)
                await get().identities.revoke(token)
            out = JSONResponse({"ok": True})
            out.delete_cookie(COOKIE, path="/")
            return out

        @api.post("/api/account/password", **API["change_password"])
        async def change_password(request: Request) -> dict[str, Any]:
            # Someone who changes their password may think the account was taken: whoever
            # holds a copy of an identity token or of a seat token must be out once it is done.
            # The order keeps a failure harmless: the old password is checked first (one
            # hash), the other devices are signed out before the seats end (a copied identity
            # could otherwise join again and take a seat back in between), the seats end (a
            # 503 if a room could not store it, the password unchanged: asking again redoes
            # it), and only then is the new password hashed and stored.
            data: PasswordChange = await account_body(request, PasswordChange)
            profile = await me_or_401(request)
            await password_checked(request, profile)
            keep = token_from(request)
            try:
                check_password(data.new)
                async with hashing(request):
                    await get().accounts.check_old_password(profile, data.old)
                await get().identities.revoke_others(profile.id, keep)
                await seats_ended(profile, "password")
                async with hashing(request):
                    await get().accounts.set_password(profile, data.new)
            except AccountError as exc:
                raise error(exc.status, exc.message) from None
            # Someone who knew the old password could have signed in, and joined to take a
            # seat back, while the seats ended: out again, and their seats with them.
            if await get().identities.revoke_others(profile.id, keep):
                failed = await get().end_seats(profile, "password")
                if failed:
                    log.warning("player %s: password changed, but a device signed in during "
                                "the change keeps its seats in %s", profile.id, failed)
            # This device's seats ended too: it takes them back by joining (its identity stays).
            return {"ok": True}

        @api.post("/api/account/delete", **API["delete_account"])
        async def delete_account(request: Request) -> JSONResponse:
            data: DeleteAccount = await account_body(request, DeleteAccount)
            profile = await me_or_401(request)
            if not profile.guest and profile.account is not None:
                await password_checked(request, profile)
                try:
                    async with hashing(request):
                        await get().accounts.sign_in(profile.account, data.password or "")
                except AccountError as exc:
                    raise error(exc.status, exc.message) from None
            await seats_ended(profile)
            await get().accounts.delete(profile)
            out = JSONResponse({"ok": True})
            out.delete_cookie(COOKIE, path="/")
            return out

        @api.get("/api/me/history", **API["export"])
        async def export(request: Request) -> JSONResponse:
            profile = await me_or_401(request)
            data = {"player": profile.to_json(),
                    "ratings": await get().history.ratings_of(profile.id),
                    "figures": await get().history.figures_of(profile.id),
                    "matches": await get().history.matches_of(profile.id, limit=None)}
            return JSONResponse(data, headers={
                "Content-Disposition": f'attachment; filename="nertz-{profile.id}.json"'})

        @api.get("/api/players/{player_id}", **API["player"])
        async def player(player_id: str) -> dict[str, Any]:
            profile = await get().identities.get(player_id)
            if profile is None:
                raise error(404, f"no player {shown(player_id, 'player id')}")
            return {"player": profile.to_json(),
                    "ratings": await get().history.ratings_of(profile.id),
                    "figures": await get().history.figures_of(profile.id),
                    "matches": await get().history.matches_of(profile.id)}

        @api.get("/api/families", **API["families"])
        async def families() -> dict[str, Any]:
            return {"families": [f + t for t in ("", "_teams") for f in FAMILIES],
                    "presets": family_of_presets(),
                    "bots": {level: round(display(mu, 1.0), 1)
                             for level, mu in BOT_RATINGS.items()}}

        known = {f + t for t in ("", "_teams") for f in FAMILIES}

        @api.get("/api/leaderboard/{family_name}", **API["leaderboard"])
        async def leaderboard(family_name: str) -> dict[str, Any]:
            if family_name not in known:
                raise error(404, f"no rating family {shown(family_name, 'rating family')}: one of "
                                 f"{', '.join(sorted(known))}")
            return {"family": family_name,
                    "players": await get().history.leaderboard(family_name)}

        @api.get("/api/matches/{match_id}/ratings", **API["match_ratings"])
        async def match_ratings(match_id: str) -> dict[str, Any]:
            rated = await get().history.rated(match_id)
            if rated is None:
                raise error(404, f"match {shown(match_id, 'match id')} was not rated (or is "
                                 "not finished)")
            return rated

        @api.get("/api/rooms/{key}/ratings", **API["room_ratings"])
        async def room_ratings(key: str) -> dict[str, Any]:
            from nertz.server.hub import OwnedElsewhere

            info: dict[str, Any] | None = None
            if len(key) <= 32:
                try:
                    room = await get().hub.get(key)
                    if room is not None:
                        info = room.table.room_info()
                except OwnedElsewhere as exc:
                    # Another process owns the room: it says who sits there; the ratings are
                    # in the shared database.
                    ask = get().room_info_elsewhere
                    if ask is None:  # pragma: no cover - only a multi-process server has owners
                        raise error(503, f"room {shown(key, 'room id or code')} is "
                                         "unavailable") from None
                    info = await ask(exc)
                except Exception:
                    log.exception("room %s could not be loaded", key)
                    raise error(503, f"room {shown(key, 'room id or code')} is "
                                     "unavailable") from None
            if info is None:
                raise error(404, f"no open room {shown(key, 'room id or code')}")
            fam = family(Rules.from_spec(info["rules"]))
            members = await get().identities.members(info["id"])
            skills = await get().history.skills(sorted(set(members.values())), fam)
            players = []
            for p in info["players"]:
                prof = members.get(p["id"])
                skill = bot_skill(p["level"]) if p["bot"] else skills.get(prof or "", NEW)
                players.append({"player": p["id"], "profile": prof,
                                "rating": round(skill.display, 1)})
            return {"family": fam, "players": players}

        @api.get("/api/rooms", **API["public_rooms"])
        async def public_rooms(request: Request) -> dict[str, Any]:
            base = str(request.base_url).rstrip("/")
            listed = await get().listing.rooms()
            return {"rooms": [r | {"url": f"{base}/r/{r['code']}"} for r in listed]}

        @api.post("/api/quick", **API["quick_enter"])
        async def quick_enter(request: Request) -> JSONResponse:
            data: QuickAsk = await body(request, QuickAsk)
            if data.rules not in PRESETS:
                raise error(400, f"no preset {data.rules!r}: one of {', '.join(sorted(PRESETS))}")
            profile = await get().identities.find(token_from(request))
            new = None
            if profile is None and data.name is None:
                raise error(401, "the server does not know you: give a name to play as a "
                                 "guest, or sign in")
            # A quick-match ask may make a room: it counts against the address's rooms.
            await limited(get().rooms, client_address(request), "new rooms from one address")
            if profile is None:
                try:
                    name = protocol.clean_name(data.name or "")
                except protocol.ProtocolError as exc:
                    raise error(400, str(exc)) from None
                # The new guest's name, shown in rating lists: not a bot's, as at a table.
                if protocol.bot_like(name):
                    raise error(409, f"names like {name!r} are the bots' names: pick another "
                                     "name")
                made = await get().new_guest(request, name)
                if isinstance(made, int):
                    raise error(429, f"too many new players from one address: try again in "
                                     f"{made} s", {"Retry-After": str(made)})
                profile, new = made
            skill = (await get().history.skills([profile.id], family(PRESETS[data.rules])))
            try:
                await get().quick.enter(profile, data.rules, data.seats, data.bots_after,
                                       skill[profile.id].display)
            except ValueError as exc:
                raise error(400, str(exc)) from None
            status = await get()._quick_status(request, profile)
            if new is not None:
                status["identity"] = new
            out = JSONResponse(status)
            PlayersApi.set_cookie(request, out, new)
            return out

        @api.get("/api/quick", **API["quick_status"])
        async def quick_status(request: Request) -> dict[str, Any]:
            profile = await get().identities.find(token_from(request))
            if profile is None:
                return {"status": "none"}
            return await get()._quick_status(request, profile)

        @api.delete("/api/quick", **API["quick_leave"])
        async def quick_leave(request: Request) -> dict[str, Any]:
            profile = await get().identities.find(token_from(request))
            if profile is not None:
                await get().quick.leave(profile.id)
            return {"ok": True}

        return api

    async def _quick_status(self, request: Request, profile: Profile) -> dict[str, Any]:
        status = await self.quick.status(profile.id)
        if status is None:
            return {"status": "none"}
        if status["status"] == "matched":
            status["url"] = str(request.base_url).rstrip("/") + f"/r/{status['code']}"
        return status


__all__ = ["ADDRESS_PASSWORD_CHECKS", "GUESTS_PER_ROOM", "HASHES_PER_ADDRESS",
           "PASSWORD_CHECKS", "SIGNINS", "SIGNINS_PER_MINUTE", "SIGNUPS", "DeleteAccount",
           "PasswordChange", "PlayersApi", "QuickAsk"]
