"""Rooms, their action logs, finished matches.

Revision ID: 0001
Revises:
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0001"
down_revision = None
branch_labels = None
depends_on = None


def upgrade() -> None:
    """Create the three tables."""
    op.create_table(
        "rooms",
        sa.Column("id", sa.String(32), primary_key=True),
        sa.Column("code", sa.String(16), nullable=False, unique=True),
        sa.Column("created_at", sa.Float, nullable=False),
        sa.Column("updated_at", sa.Float, nullable=False),
        sa.Column("status", sa.String(16), nullable=False),
        sa.Column("rules", sa.Text, nullable=False),
        sa.Column("seats", sa.Integer, nullable=False),
    )
    op.create_index("rooms_status", "rooms", ["status"])
    op.create_table(
        "room_log",
        sa.Column("room_id", sa.String(32), primary_key=True),
        sa.Column("seq", sa.Integer, primary_key=True),
        sa.Column("kind", sa.String(24), nullable=False),
        sa.Column("data", sa.Text, nullable=False),
        sa.Column("at", sa.Float, nullable=False),
    )
    op.create_table(
        "matches",
        sa.Column("id", sa.String(32), primary_key=True),
        sa.Column("room_id", sa.String(32), nullable=False),
        sa.Column("finished_at", sa.Float, nullable=False),
        sa.Column("winner", sa.Integer, nullable=True),
        sa.Column("replay", sa.Text, nullable=False),
    )
    op.create_index("matches_room", "matches", ["room_id"])


def downgrade() -> None:
    """Drop them."""
    op.drop_table("matches")
    op.drop_table("room_log")
    op.drop_table("rooms")
