"""Room snapshots: each room's newest table state, so that a rebuild reads a bounded log.

Revision ID: 0005
Revises: 0004
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0005"
down_revision = "0004"
branch_labels = None
depends_on = None


def upgrade() -> None:
    """Create ``room_snapshots``: at most one row per room (its newest snapshot)."""
    op.create_table(
        "room_snapshots",
        sa.Column("room_id", sa.String(32), primary_key=True),
        sa.Column("seq", sa.Integer, nullable=False),
        sa.Column("format", sa.Integer, nullable=False),
        sa.Column("epoch", sa.BigInteger, nullable=True),
        sa.Column("data", sa.Text, nullable=False),
        sa.Column("at", sa.Float, nullable=False),
    )


def downgrade() -> None:
    """Drop ``room_snapshots`` (rebuilds read whole logs again)."""
    op.drop_table("room_snapshots")
