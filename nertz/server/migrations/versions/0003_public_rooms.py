"""Public rooms: the rooms listed for anyone to join.

Revision ID: 0003
Revises: 0002
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0003"
down_revision = "0002"
branch_labels = None
depends_on = None


def upgrade() -> None:
    """Create the list (nertz.server.players.tables.public_rooms)."""
    op.create_table(
        "public_rooms",
        sa.Column("room_id", sa.String(32), primary_key=True),
        sa.Column("listed_at", sa.Float, nullable=False),
    )
    op.create_index("public_rooms_listed", "public_rooms", ["listed_at"])


def downgrade() -> None:
    """Drop it."""
    op.drop_table("public_rooms")
