"""Public rooms know who listed them, so that one address cannot fill the list.

Revision ID: 0006
Revises: 0005
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0006"
down_revision = "0005"
branch_labels = None
depends_on = None


def upgrade() -> None:
    """Add ``public_rooms.lister`` (a hash of the address that listed the room; rooms
    listed before it have none and count for nobody)."""
    with op.batch_alter_table("public_rooms") as batch:
        batch.add_column(sa.Column("lister", sa.String(64), nullable=True))
        batch.create_index("public_rooms_lister", ["lister"])


def downgrade() -> None:
    """Drop it."""
    with op.batch_alter_table("public_rooms") as batch:
        batch.drop_index("public_rooms_lister")
        batch.drop_column("lister")
