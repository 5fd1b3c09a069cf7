"""Accounts keep what their name looks like, so that no account takes a look-alike name.

Revision ID: 0007
Revises: 0006
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0007"
down_revision = "0006"
branch_labels = None
depends_on = None


def upgrade() -> None:
    """Add ``profiles.account_look`` (unique) and fill it for the accounts there are.

    Accounts made before this could already pass for one another (``Ann`` and a Cyrillic
    ``\u0410nn``): the oldest keeps the look, the later ones get none (NULL, which a unique index
    lets many rows hold). They still sign in as before, by their folded name; only new accounts
    are refused a look that is taken."""
    # The key is computed here by the server's own function, as the server computes it for new
    # accounts: keys written now and keys written later must agree. Not a frozen copy: a later
    # change to the look (a newer confusables file) leaves every stored look stale, the ones
    # the server wrote as well as these, so it must come with a migration that re-keys them
    # all, and that one then also corrects what this one wrote with the newer function.
    from nertz.server.protocol import ProtocolError, clean_name, name_skeleton

    # A column and a unique index, which both databases add in place (a unique constraint
    # would make SQLite copy the whole table).
    op.add_column("profiles", sa.Column("account_look", sa.Text, nullable=True))
    conn = op.get_bind()
    rows = conn.execute(sa.text(
        "SELECT id, name FROM profiles WHERE account IS NOT NULL ORDER BY created_at, id"))
    taken: set[str] = set()
    looks: list[dict[str, str]] = []
    for row in rows:
        try:
            look = name_skeleton(clean_name(row.name))
        except ProtocolError:
            continue  # a name the server would not take today: it keeps no look
        if look not in taken:
            taken.add(look)
            looks.append({"id": row.id, "look": look})
    if looks:
        conn.execute(sa.text("UPDATE profiles SET account_look = :look WHERE id = :id"), looks)
    op.create_index("profiles_account_look", "profiles", ["account_look"], unique=True)


def downgrade() -> None:
    """Drop it."""
    op.drop_index("profiles_account_look", "profiles")
    with op.batch_alter_table("profiles") as batch:
        batch.drop_column("account_look")
