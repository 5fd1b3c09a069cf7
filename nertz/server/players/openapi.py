"""The players' routes' OpenAPI documentation (as :mod:`nertz.server.openapi` does for the
rooms'): each route's keyword arguments, ``**ROUTES[name]``."""

from __future__ import annotations

from typing import Any, Final

from nertz.rules import PRESETS
from nertz.server.openapi import ERROR, JSON

PROFILE: Final = {
    "type": "object",
    "required": ["id", "name", "guest", "created_at"],
    "properties": {"id": {"type": "string"}, "name": {"type": "string"},
                   "guest": {"type": "boolean", "description": "no account (yet)"},
                   "created_at": {"type": "number"}},
}

RATING: Final = {
    "type": "object",
    "required": ["family", "rating", "mu", "sigma", "matches"],
    "properties": {"family": {"type": "string"}, "rating": {"type": "number"},
                   "mu": {"type": "number"}, "sigma": {"type": "number"},
                   "matches": {"type": "integer"}},
}

ME: Final = {
    "type": "object",
    "required": ["player", "ratings"],
    "properties": {"player": {"oneOf": [PROFILE, {"type": "null"}]},
                   "ratings": {"type": "array", "items": RATING}},
}

SIGNED_IN: Final = {
    "type": "object",
    "required": ["player", "identity"],
    "properties": {"player": PROFILE,
                   "identity": {"type": "string", "description": "the identity token (also "
                                "set as the HttpOnly cookie nertz_player); programs send it as "
                                "Authorization: Bearer"}},
}

PLAYER_PAGE: Final = {
    "type": "object",
    "required": ["player", "ratings", "figures", "matches"],
    "properties": {"player": PROFILE, "ratings": {"type": "array", "items": RATING},
                   "figures": {"type": "array", "items": {"type": "object"}},
                   "matches": {"type": "array", "items": {"type": "object"}}},
}

LEADERBOARD: Final = {
    "type": "object",
    "required": ["family", "players"],
    "properties": {"family": {"type": "string"},
                   "players": {"type": "array", "items": {"type": "object"}}},
}

FAMILIES: Final = {
    "type": "object",
    "required": ["families", "presets", "bots"],
    "properties": {"families": {"type": "array", "items": {"type": "string"}},
                   "presets": {"type": "object", "additionalProperties": {"type": "string"}},
                   "bots": {"type": "object", "additionalProperties": {"type": "number"}}},
}

RATED: Final = {
    "type": "object",
    "required": ["match", "room", "family", "preset", "finished_at", "seats"],
    "properties": {"match": {"type": "string"}, "room": {"type": "string"},
                   "family": {"type": "string"}, "preset": {"type": "string"},
                   "finished_at": {"type": "number"},
                   "seats": {"type": "array", "items": {"type": "object"}}},
}

ROOM_RATINGS: Final = {
    "type": "object",
    "required": ["family", "players"],
    "properties": {"family": {"type": "string"},
                   "players": {"type": "array", "items": {"type": "object"}}},
}

QUICK_STATUS: Final = {
    "type": "object",
    "required": ["status"],
    "properties": {"status": {"enum": ["waiting", "matched", "none"]},
                   "room": {"type": "string"}, "code": {"type": "string"},
                   "player": {"type": "string"}, "token": {"type": "string"},
                   "url": {"type": "string"}, "waited": {"type": "number"},
                   "range": {"type": "number"}, "preset": {"type": "string"},
                   "seats": {"type": "integer"}, "bots_after": {"type": "number"},
                   "identity": {"type": "string"}},
}

CREDENTIALS: Final = {
    "type": "object",
    "additionalProperties": False,
    "required": ["name", "password"],
    "properties": {"name": {"type": "string", "minLength": 1},
                   "password": {"type": "string", "minLength": 1}},
}

PASSWORD_CHANGE: Final = {
    "type": "object",
    "additionalProperties": False,
    "required": ["old", "new"],
    "properties": {"old": {"type": "string"}, "new": {"type": "string"}},
}

DELETE_ACCOUNT: Final = {
    "type": "object",
    "additionalProperties": False,
    "properties": {"password": {"type": ["string", "null"],
                                "description": "an account's password (a guest needs none)"}},
}

QUICK: Final = {
    "type": "object",
    "additionalProperties": False,
    "properties": {
        "rules": {"type": "string", "enum": sorted(PRESETS), "default": "pagat"},
        "seats": {"type": "integer", "minimum": 2, "maximum": 8, "default": 2},
        "bots_after": {"type": "number", "minimum": 0, "maximum": 600, "default": 30,
                       "description": "seconds to wait for people before bots fill the table"},
        "name": {"type": ["string", "null"], "minLength": 1,
                 "description": "your name, if the server does not know you yet"},
    },
}

_WHY: Final = {
    400: "the request was malformed: the message names what was wrong",
    401: "no identity (play once, or sign in), or a wrong account name or password",
    404: "no such player, family or rated match",
    409: "an account already, or the account name is taken",
    413: "the body is too large",
    415: "an account's body must be JSON (Content-Type: application/json)",
    429: "too many requests of this kind from one address or for one player (see "
         "Retry-After)",
    503: "the room could not be loaded, or the server is busy checking passwords",
}


def _answer(description: str, schema: dict[str, Any]) -> dict[str, Any]:
    return {"description": description, "content": {JSON: {"schema": schema}}}


def _errors(*codes: int) -> dict[int | str, dict[str, Any]]:
    out: dict[int | str, dict[str, Any]] = {}
    for code in codes:
        out[code] = _answer(_WHY[code], ERROR)
        if code == 429:
            out[code]["headers"] = {"Retry-After": {
                "description": "seconds to wait", "schema": {"type": "string"}}}
    return out


def _body(schema: dict[str, Any], description: str, required: bool = True) -> dict[str, Any]:
    return {"openapi_extra": {"requestBody": {"required": required, "description": description,
                                              "content": {JSON: {"schema": schema}}}}}


OK: Final = {"type": "object", "required": ["ok"], "properties": {"ok": {"const": True}}}

ROUTES: Final[dict[str, dict[str, Any]]] = {
    "me": {"responses": {200: _answer("who the server takes you for (player null: nobody "
                                      "yet), and your ratings", ME)}},
    "sign_up": {"responses": {200: _answer("your identity, now an account", SIGNED_IN),
                              **_errors(400, 409, 413, 415, 429, 503)},
                **_body(CREDENTIALS, "the account name and password (8 to 256 characters)")},
    "sign_in": {"responses": {200: _answer("the account's identity, for this device",
                                           SIGNED_IN), **_errors(400, 401, 413, 415, 429, 503)},
                **_body(CREDENTIALS, "the account name and password")},
    "sign_out": {"responses": {200: _answer("this device's identity forgotten, and the "
                                            "player's seat tokens in open rooms", OK),
                               **_errors(503)}},
    "change_password": {"responses": {200: _answer("the password changed", OK),
                                      **_errors(400, 401, 413, 415, 429, 503)},
                        **_body(PASSWORD_CHANGE, "the old password and the new")},
    "delete_account": {"responses": {200: _answer("the player and their personal data "
                                                  "deleted", OK),
                                   **_errors(400, 401, 413, 415, 429, 503)},
                       **_body(DELETE_ACCOUNT, "an account's password", required=False)},
    "export": {"responses": {200: _answer("every rated match of yours, your ratings and "
                                          "figures", {"type": "object"}), **_errors(401)}},
    "player": {"responses": {200: _answer("a player's page: ratings, figures per ruleset, "
                                          "recent matches", PLAYER_PAGE), **_errors(404)}},
    "families": {"responses": {200: _answer("the rating families, each preset's family, "
                                            "each bot level's fixed rating", FAMILIES)}},
    "leaderboard": {"responses": {200: _answer("the family's best players", LEADERBOARD),
                                  **_errors(404)}},
    "match_ratings": {"responses": {200: _answer("a rated match: each seat's people and "
                                                 "rating change", RATED), **_errors(404)}},
    "room_ratings": {"responses": {200: _answer("each player's rating in the room's family",
                                                ROOM_RATINGS), **_errors(404, 503)}},
    "public_rooms": {"responses": {200: _answer(
        "the public rooms one may join now, newest first (private rooms are never listed)",
        {"type": "object", "required": ["rooms"], "properties": {"rooms": {
            "type": "array", "items": {"type": "object", "required": [
                "room", "code", "preset", "family", "seats", "listed_at", "phase", "seated",
                "url"]}}}})}},
    "quick_enter": {"responses": {200: _answer("where your ask stands", QUICK_STATUS),
                                  **_errors(400, 401, 413, 429)},
                    **_body(QUICK, "the preset, seat count and wait for people",
                            required=False)},
    "quick_status": {"responses": {200: _answer("where your ask stands (matched: your seat, "
                                                "handed over once)", QUICK_STATUS)}},
    "quick_leave": {"responses": {200: _answer("out of the queue", OK)}},
}
"""Each players' route's documentation, as keyword arguments of its FastAPI decorator."""

__all__ = ["ROUTES"]
