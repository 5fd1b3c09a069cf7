"""The HTTP API's OpenAPI description: request bodies and every answer, for ``/openapi.json``.

The app reads its bodies itself (with msgspec, refusing them by size before reading), so
FastAPI cannot see them: each route takes its documentation from here (``**ROUTES[name]``).
docs/protocol.md says the same in prose; ``tests/server/test_server_openapi.py`` runs
schemathesis against it.
"""

from __future__ import annotations

from typing import Any, Final

from nertz.rules import PRESETS

JSON: Final = "application/json"

ERROR: Final = {
    "type": "object",
    "required": ["error"],
    "properties": {"error": {"type": "string", "description": "what was wrong, for people"}},
}
"""Every error answer."""

PLAYER: Final = {
    "type": "object",
    "required": ["id", "name", "seat", "hand", "bot", "level", "ready", "connected", "vacant"],
    "properties": {
        "id": {"type": "string"}, "name": {"type": "string"},
        "seat": {"type": ["integer", "null"]}, "hand": {"type": "integer"},
        "bot": {"type": ["string", "null"]}, "level": {"type": ["string", "null"]},
        "ready": {"type": "boolean"}, "connected": {"type": "boolean"},
        "vacant": {"type": "boolean"},
        "away_until": {"type": ["integer", "null"],
                       "description": "when an away person's seat falls vacant (ms since the "
                                      "epoch), else null"},
    },
}

ROOM: Final = {
    "type": "object",
    "required": ["id", "code", "rules", "options", "seats", "phase", "host", "players", "match",
                 "matches", "same_deal"],
    "properties": {
        "id": {"type": "string"},
        "code": {"type": "string"},
        "rules": {"description": "the replay file's form of the rules"},
        "options": {"type": "object"},
        "seats": {"type": "integer", "minimum": 2, "maximum": 8},
        "phase": {"enum": ["lobby", "countdown", "playing", "round_over", "match_over",
                           "closed"]},
        "host": {"type": ["string", "null"]},
        "players": {"type": "array", "items": PLAYER},
        "match": {"type": ["object", "null"]},
        "matches": {"type": "array", "items": {"type": "string"},
                    "description": "finished matches' ids, for their replays"},
        "same_deal": {"type": ["string", "null"],
                      "description": "the finished match whose cards the first match deals "
                                     "again (a same-deal room), or null"},
        "fair_races": {"type": "boolean",
                       "description": "whether races are ordered by when plays were sent"},
        "fair_races_option": {"enum": ["auto", "on", "off"]},
        "flags": {"type": "array", "items": {"type": "object"},
                  "description": "people marked as playing beyond any person, with the "
                                 "figures that raised each flag"},
    },
}
"""A room as everyone sees it (the ``room`` message's ``room``)."""

_JOINED_FIELDS: Final[dict[str, Any]] = {
    "room": {"type": "string"},
    "player": {"type": "string"},
    "token": {"type": "string", "description": "the seat token: send it in hello"},
    "seat": {"type": ["integer", "null"]},
    "hand": {"type": "integer"},
    "host": {"type": "boolean"},
}

JOINED: Final = {
    "type": "object",
    "required": ["player", "token", "seat", "hand", "host"],
    "properties": _JOINED_FIELDS,
}

CREATED: Final = {
    "type": "object",
    "required": ["room", "code", "url"],
    "properties": {**_JOINED_FIELDS, "code": {"type": "string"}, "url": {"type": "string"}},
}

RULES: Final = {
    "oneOf": [
        {"type": "string", "enum": sorted(PRESETS), "description": "a preset"},
        {"type": "object", "description": 'a preset and options: {"preset": "pagat", '
                                          'OPTION: VALUE} (GET /api/presets lists them)'},
    ],
}

CREATE_ROOM: Final = {
    "type": "object",
    "additionalProperties": False,
    "properties": {
        "rules": RULES,
        "seats": {"type": "integer", "minimum": 2, "maximum": 8, "default": 4},
        "name": {"type": ["string", "null"], "minLength": 1,
                 "description": "the host's name (cut to 24 characters): the creator joins"},
        "public": {"type": "boolean", "default": False,
                   "description": "listed by GET /api/rooms for anyone to join (else the "
                                  "room is reached only by its link or code)"},
        "fair_races": {"type": ["boolean", "null"],
                       "description": "latency-fair races on or off (null, the default: on "
                                      "while a person is seated)"},
    },
}

SAME_DEAL: Final = {
    "type": "object",
    "additionalProperties": False,
    "properties": {
        "name": {"type": ["string", "null"], "minLength": 1,
                 "description": "the host's name (cut to 24 characters): the creator joins"},
    },
}

JOIN_ROOM: Final = {
    "type": "object",
    "additionalProperties": False,
    "required": ["name"],
    "properties": {
        "name": {"type": "string", "minLength": 1, "description": "cut to 24 characters"},
        "spectator": {"type": "boolean", "default": False},
    },
}

REPLAY_FILE: Final = {"type": "object", "description": "a SPEC replay file (.nertz.json)"}

PRESETS_ANSWER: Final = {
    "type": "object",
    "required": ["presets", "options"],
    "properties": {"presets": {"type": "array", "items": {"type": "object"}},
                   "options": {"type": "array", "items": {"type": "object"}}},
}

_WHY: Final = {
    400: "the request was malformed: the message names what was wrong",
    403: "you were removed from this room by its host (see Retry-After)",
    404: "no such room or finished match",
    409: "someone in the room has that name, or one that looks like it",
    410: "the room closed (nobody was in it); its finished matches stay downloadable",
    413: "the body is too large (declared or sent), or an upload holds too many moves",
    429: "too many rooms from one address (see Retry-After)",
    503: "the room could not be loaded or could not store the change, or the server is busy "
         "(see Retry-After): try again",
}


def _answer(description: str, schema: dict[str, Any]) -> dict[str, Any]:
    return {"description": description, "content": {JSON: {"schema": schema}}}


def _errors(*codes: int) -> dict[int | str, dict[str, Any]]:
    out: dict[int | str, dict[str, Any]] = {}
    for code in codes:
        out[code] = _answer(_WHY[code], ERROR)
        if code in (403, 429):
            out[code]["headers"] = {"Retry-After": {
                "description": "seconds to wait", "schema": {"type": "string"}}}
    return out


def _replay_line(*codes: int) -> dict[int | str, dict[str, Any]]:
    """The errors of a route that plays a replay through, with the replay line's own 429 and
    503 (docs/protocol.md, Limits)."""
    out = _errors(*codes)
    out[429] = _answer("too many replays from one address: uploads a minute, or under way at "
                       "once (see Retry-After)", ERROR)
    out[429]["headers"] = {"Retry-After": {"description": "seconds to wait",
                                           "schema": {"type": "string"}}}
    out[503] = _answer("the server is busy playing replays through (see Retry-After): try "
                       "again", ERROR)
    return out


def _body(schema: dict[str, Any], description: str, required: bool = True) -> dict[str, Any]:
    return {"requestBody": {"required": required, "description": description,
                            "content": {JSON: {"schema": schema}}}}


ROUTES: Final[dict[str, dict[str, Any]]] = {
    "healthz": {"responses": {200: _answer("the server is up", {
        "type": "object", "required": ["status"], "properties": {"status": {"const": "ok"}}})}},
    "presets": {"responses": {200: _answer("every preset and option", PRESETS_ANSWER)}},
    "create_room": {
        "status_code": 201,
        "responses": {201: _answer("the room (and its host, when a name was given)", CREATED),
                      **_errors(400, 413, 429, 503)},
        "openapi_extra": _body(CREATE_ROOM, "the rules and seats (none: pagat, 4 seats)",
                               required=False),
    },
    "get_room": {"responses": {200: _answer("the room (phase closed: gone quiet, its matches "
                                            "still listed)", ROOM), **_errors(404, 503)}},
    "join_room": {
        "responses": {200: _answer("your seat (or a spectator's place) and token", JOINED),
                      **_errors(400, 403, 404, 409, 410, 413, 503)},
        "openapi_extra": _body(JOIN_ROOM, "your name"),
    },
    "match_replay": {"responses": {200: _answer("the finished match's replay file",
                                                REPLAY_FILE), **_errors(404)}},
    "tutorial": {"responses": {200: _answer("the how-to-play lesson: a fixed deal and the "
                                            "steps the page walks a newcomer through",
                                            {"type": "object"})}},
    "match_frames": {"responses": {200: _answer("the finished match, frame by frame, for the "
                                                "page's viewer", {"type": "object"}),
                                   **_replay_line(404)}},
    "same_deal": {
        "status_code": 201,
        "responses": {201: _answer("a new room whose first match deals the finished match's "
                                   "cards again (and its host, when a name was given)", CREATED),
                      **_errors(400, 404, 413, 429, 503)},
        "openapi_extra": _body(SAME_DEAL, "optionally your name (none: nobody joins yet)",
                               required=False),
    },
    "match_analysis": {"responses": {200: _answer("what the match teaches each seat",
                                                  {"type": "object"}),
                                   **_replay_line(404)}},
    "upload_frames": {
        "responses": {200: _answer("the uploaded replay, frame by frame", {"type": "object"}),
                      **_replay_line(400, 413)},
        "openapi_extra": _body(REPLAY_FILE, "a replay file (at most 2 MiB, 25,000 moves)"),
    },
    "upload_analysis": {
        "responses": {200: _answer("what the uploaded match teaches each seat",
                                   {"type": "object"}), **_replay_line(400, 413)},
        "openapi_extra": _body(REPLAY_FILE, "a replay file (at most 2 MiB, 25,000 moves)"),
    },
}
"""Each route's documentation, as keyword arguments of its FastAPI decorator."""


__all__ = ["ERROR", "ROOM", "ROUTES"]
