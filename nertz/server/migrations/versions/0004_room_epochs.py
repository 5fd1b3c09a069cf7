"""Room epochs: the fencing token of each room's newest owner (``nertz serve --workers``).

Revision ID: 0004
Revises: 0003
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0004"
down_revision = "0003"
branch_labels = None
depends_on = None


def upgrade() -> None:
    """Create ``room_epochs``: one row per room ever owned under a lease."""
    op.create_table(
        "room_epochs",
        sa.Column("room_id", sa.String(32), primary_key=True),
        sa.Column("epoch", sa.BigInteger, nullable=False),
    )


def downgrade() -> None:
    """Drop ``room_epochs``."""
    op.drop_table("room_epochs")
