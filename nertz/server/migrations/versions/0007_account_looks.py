"""Accounts keep what their name looks like, so that no account takes a look-alike name.

Revision ID: 0007
Revises: 0006
"""

from __future__ import annotations

import unicodedata
from pathlib import Path
from typing import Final

import sqlalchemy as sa
from alembic import op

revision = "0007"
down_revision = "0006"
branch_labels = None
depends_on = None


# What follows is the server's name cleaning and look-alike key as they were when this
# revision was written (nertz.server.protocol.clean_name and name_skeleton, with
# nertz.server.confusables and its data, frozen beside this file as 0007_confusables.tsv):
# a migration must write the same rows whenever it runs, and the server's own functions
# may change later (a newer confusables file, another rule for names). A database migrated
# later than a change to them is brought in line by a migration of its own, not by this one.
# Unicode's character database is Python's (unicodedata): what it says of a character can
# change with the Python version, as it does for the running server.

CONFUSABLES: Final = Path(__file__).resolve().parent / "0007_confusables.tsv"
"""Version 17.0.0 of the Unicode confusables, as nertz.server.confusables read it then."""

MAX_NAME: Final = 24
"""Names were cut to this many characters."""
BLANK_LOOKING: Final = frozenset("\u115f\u1160\u3164\uffa0\u2800\u180e")
IGNORABLE: Final = (
    (0x00AD, 0x00AD), (0x034F, 0x034F), (0x061C, 0x061C), (0x17B4, 0x17B5), (0x180B, 0x180F),
    (0x200B, 0x200F), (0x202A, 0x202E), (0x2060, 0x206F), (0xFE00, 0xFE0F), (0xFEFF, 0xFEFF),
    (0xFFF0, 0xFFF8), (0x1BCA0, 0x1BCA3), (0x1D173, 0x1D17A), (0xE0000, 0xE0FFF),
)
"""Unicode's default-ignorable ranges less the blank-looking ones: dropped from names."""
MAX_MARKS: Final = 2
"""Combining marks kept on one character."""


def prototypes() -> dict[int, str]:
    """The confusables' mapping, code point to prototype, from the frozen file."""
    table: dict[int, str] = {}
    for line in CONFUSABLES.read_text(encoding="utf-8").splitlines():
        if not line or line.startswith("#"):
            continue
        source, prototype = line.split("\t")
        table[int(source, 16)] = "".join(chr(int(cp, 16)) for cp in prototype.split())
    return table


def clean_name(name: str) -> str | None:
    """The display name as the server kept it then; None for a name it would refuse."""
    out: list[str] = []
    marks = 0
    for ch in name:
        category = unicodedata.category(ch)
        code = ord(ch)
        if ch in BLANK_LOOKING:
            ch, category = " ", "Zs"
        elif (not ch.isprintable() or category == "Cf"
              or any(lo <= code <= hi for lo, hi in IGNORABLE)):
            continue
        if category.startswith("M"):
            if not out or out[-1].isspace() or marks >= MAX_MARKS:
                continue
            marks += 1
        else:
            marks = 0
        out.append(ch)
    kept = " ".join("".join(out).split())[:MAX_NAME]
    return kept or None


def account_look(name: str, table: dict[int, str]) -> str | None:
    """The look-alike key of an account's name as the server computed it then (the UTS #39
    skeleton of its NFKC form, case-folded); None for a name it would refuse."""
    clean = clean_name(name)
    if clean is None:
        return None
    folded = unicodedata.normalize("NFKC", clean)
    return unicodedata.normalize("NFD", unicodedata.normalize("NFD", folded).translate(
        table)).casefold()


def upgrade() -> None:
    """Add ``profiles.account_look`` (unique) and fill it for the accounts there are.

    Accounts made before this could already pass for one another (``Ann`` and a Cyrillic
    ``\u0410nn``): the oldest keeps the look, the later ones get none (NULL, which a unique index
    lets many rows hold). They still sign in as before, by their folded name; only new accounts
    are refused a look that is taken."""
    # The key is the one the server computed for new accounts when this was written (frozen
    # above), so keys written here and by the server of this revision agree.
    table = prototypes()
    # A column and a unique index, which both databases add in place (a unique constraint
    # would make SQLite copy the whole table).
    op.add_column("profiles", sa.Column("account_look", sa.Text, nullable=True))
    conn = op.get_bind()
    rows = conn.execute(sa.text(
        "SELECT id, name FROM profiles WHERE account IS NOT NULL ORDER BY created_at, id"))
    taken: set[str] = set()
    looks: list[dict[str, str]] = []
    for row in rows:
        look = account_look(row.name, table)
        if look is None:
            continue  # a name the server would not take: it keeps no look
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
