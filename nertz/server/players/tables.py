"""The players' tables (kept in step with migration ``0002_players``), on the store's schema.

Every fact about a player lives here, in the database, never in one process's memory: any
process of a multi-process server answers for any player.
"""

from __future__ import annotations

import sqlalchemy as sa

from nertz.server.store import metadata

profiles = sa.Table(
    "profiles",
    metadata,
    sa.Column("id", sa.String(32), primary_key=True),
    sa.Column("name", sa.String(64), nullable=False),
    sa.Column("account", sa.String(64), nullable=True, unique=True),
    sa.Column("password_hash", sa.Text, nullable=True),
    sa.Column("created_at", sa.Float, nullable=False),
    sa.Column("account_look", sa.Text, nullable=True),
    sa.Index("profiles_account_look", "account_look", unique=True),
)
"""A player: a guest (no account) or an account (``account``: the folded name signed in with;
``account_look``: its look-alike key, :func:`nertz.server.protocol.name_skeleton`, unique so that
no account takes a name that passes for another's; migration ``0007``)."""

profile_tokens = sa.Table(
    "profile_tokens",
    metadata,
    sa.Column("token_hash", sa.String(64), primary_key=True),
    sa.Column("profile_id", sa.String(32), nullable=False),
    sa.Column("created_at", sa.Float, nullable=False),
    sa.Index("profile_tokens_profile", "profile_id"),
)
"""The identity tokens a player holds (one per browser or program): their SHA-256 only."""

room_members = sa.Table(
    "room_members",
    metadata,
    sa.Column("room_id", sa.String(32), primary_key=True),
    sa.Column("room_player", sa.String(32), primary_key=True),
    sa.Column("profile_id", sa.String(32), nullable=False),
    sa.Index("room_members_profile", "profile_id"),
)
"""Who a room's player is: the room's player id, the player behind it."""

ratings = sa.Table(
    "ratings",
    metadata,
    sa.Column("profile_id", sa.String(32), primary_key=True),
    sa.Column("family", sa.String(32), primary_key=True),
    sa.Column("mu", sa.Float, nullable=False),
    sa.Column("sigma", sa.Float, nullable=False),
    sa.Column("matches", sa.Integer, nullable=False),
    sa.Column("updated_at", sa.Float, nullable=False),
    sa.Index("ratings_family", "family"),
)
"""A player's rating in one ruleset family (openskill's mu and sigma)."""

rated_matches = sa.Table(
    "rated_matches",
    metadata,
    sa.Column("match_id", sa.String(32), primary_key=True),
    sa.Column("room_id", sa.String(32), nullable=False),
    sa.Column("family", sa.String(32), nullable=False),
    sa.Column("preset", sa.String(32), nullable=False),
    sa.Column("finished_at", sa.Float, nullable=False),
    sa.Column("seats", sa.Text, nullable=False),
)
"""A finished match counted for history and ratings (its row is the claim: one process
rates a match, once). ``seats``: JSON, per seat its names, points, and who sat there."""

match_results = sa.Table(
    "match_results",
    metadata,
    sa.Column("match_id", sa.String(32), primary_key=True),
    sa.Column("profile_id", sa.String(32), primary_key=True),
    sa.Column("family", sa.String(32), nullable=False),
    sa.Column("preset", sa.String(32), nullable=False),
    sa.Column("finished_at", sa.Float, nullable=False),
    sa.Column("seat", sa.Integer, nullable=False),
    sa.Column("place", sa.Integer, nullable=False),
    sa.Column("points", sa.Integer, nullable=False),
    sa.Column("won", sa.Boolean, nullable=False),
    sa.Column("cards", sa.Integer, nullable=False),
    sa.Column("play_ms", sa.Integer, nullable=False),
    sa.Column("races_won", sa.Integer, nullable=False),
    sa.Column("rating_before", sa.Float, nullable=False),
    sa.Column("rating_after", sa.Float, nullable=False),
    sa.Index("match_results_profile", "profile_id", "finished_at"),
)
"""One player's part in one rated match: the history page's rows and figures."""

quick_queue = sa.Table(
    "quick_queue",
    metadata,
    sa.Column("profile_id", sa.String(32), primary_key=True),
    sa.Column("name", sa.String(64), nullable=False),
    sa.Column("preset", sa.String(32), nullable=False),
    sa.Column("family", sa.String(32), nullable=False),
    sa.Column("seats", sa.Integer, nullable=False),
    sa.Column("rating", sa.Float, nullable=False),
    sa.Column("bots_after", sa.Float, nullable=False),
    sa.Column("joined_at", sa.Float, nullable=False),
    sa.Column("status", sa.String(16), nullable=False),
    sa.Column("claim", sa.String(32), nullable=True),
    sa.Column("room_id", sa.String(32), nullable=True),
    sa.Column("room_code", sa.String(16), nullable=True),
    sa.Column("room_player", sa.String(32), nullable=True),
    sa.Column("seat_token", sa.String(64), nullable=True),
    sa.Index("quick_queue_waiting", "status", "preset", "seats"),
)
"""Players waiting for a quick match, and the seat found for them until they collect it.
A grouping claims its rows by an atomic update (``claim``), so two processes never seat the
same player twice."""

public_rooms = sa.Table(
    "public_rooms",
    metadata,
    sa.Column("room_id", sa.String(32), primary_key=True),
    sa.Column("listed_at", sa.Float, nullable=False),
    sa.Column("lister", sa.String(64), nullable=True),
    sa.Index("public_rooms_listed", "listed_at"),
    sa.Index("public_rooms_lister", "lister"),
)
"""Rooms their creator asked to list (``GET /api/rooms``); every other room is reached only
by its link or code."""

__all__ = ["match_results", "profile_tokens", "profiles", "public_rooms", "quick_queue",
           "rated_matches", "ratings", "room_members"]
