"""Players: profiles and their identity tokens, who sat in which room, ratings per ruleset
family, rated matches and each player's part in them, the quick-match queue.

Revision ID: 0002
Revises: 0001
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0002"
down_revision = "0001"
branch_labels = None
depends_on = None


def upgrade() -> None:
    """Create the players' tables (nertz.server.players.tables)."""
    op.create_table(
        "profiles",
        sa.Column("id", sa.String(32), primary_key=True),
        sa.Column("name", sa.String(64), nullable=False),
        sa.Column("account", sa.String(64), nullable=True, unique=True),
        sa.Column("password_hash", sa.Text, nullable=True),
        sa.Column("created_at", sa.Float, nullable=False),
    )
    op.create_table(
        "profile_tokens",
        sa.Column("token_hash", sa.String(64), primary_key=True),
        sa.Column("profile_id", sa.String(32), nullable=False),
        sa.Column("created_at", sa.Float, nullable=False),
    )
    op.create_index("profile_tokens_profile", "profile_tokens", ["profile_id"])
    op.create_table(
        "room_members",
        sa.Column("room_id", sa.String(32), primary_key=True),
        sa.Column("room_player", sa.String(32), primary_key=True),
        sa.Column("profile_id", sa.String(32), nullable=False),
    )
    op.create_index("room_members_profile", "room_members", ["profile_id"])
    op.create_table(
        "ratings",
        sa.Column("profile_id", sa.String(32), primary_key=True),
        sa.Column("family", sa.String(32), primary_key=True),
        sa.Column("mu", sa.Float, nullable=False),
        sa.Column("sigma", sa.Float, nullable=False),
        sa.Column("matches", sa.Integer, nullable=False),
        sa.Column("updated_at", sa.Float, nullable=False),
    )
    op.create_index("ratings_family", "ratings", ["family"])
    op.create_table(
        "rated_matches",
        sa.Column("match_id", sa.String(32), primary_key=True),
        sa.Column("room_id", sa.String(32), nullable=False),
        sa.Column("family", sa.String(32), nullable=False),
        sa.Column("preset", sa.String(32), nullable=False),
        sa.Column("finished_at", sa.Float, nullable=False),
        sa.Column("seats", sa.Text, nullable=False),
    )
    op.create_table(
        "match_results",
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
    )
    op.create_index("match_results_profile", "match_results", ["profile_id", "finished_at"])
    op.create_table(
        "quick_queue",
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
    )
    op.create_index("quick_queue_waiting", "quick_queue", ["status", "preset", "seats"])


def downgrade() -> None:
    """Drop them."""
    for name in ("quick_queue", "match_results", "rated_matches", "ratings", "room_members",
                 "profile_tokens", "profiles"):
        op.drop_table(name)
