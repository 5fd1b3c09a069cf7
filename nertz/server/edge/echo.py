"""What an error may say back of what the client sent in a path: an id of ours, or nothing.

A 404 that quotes the id it could not find helps a person who mistyped a code; one that quotes
whatever stood in the path sends a client's kilobytes (or control characters) back, and into
the log. An id is echoed only when it could be one (:func:`nertz.server.protocol.valid_id`:
1 to 64 printable characters), and clipped to :data:`ECHO_CHARS` (every id the server makes is
shorter).
"""

from __future__ import annotations

from typing import Final

from nertz.server.protocol import valid_id

ECHO_CHARS: Final = 32
"""The most characters of an id an error quotes: the server's ids and codes fit in this."""


def shown(value: str, what: str = "id") -> str:
    """``value`` as an error may quote it: its ``repr`` when it could be an id, clipped to
    :data:`ECHO_CHARS` (an ellipsis marks the cut); else a phrase that names why it is not
    quoted (``what``: what the value stands for, e.g. ``"room id or code"``)."""
    if not valid_id(value):
        return f"(not a valid {what}: 1 to 64 printable characters)"
    if len(value) > ECHO_CHARS:
        return repr(value[:ECHO_CHARS]) + "\u2026"
    return repr(value)


__all__ = ["ECHO_CHARS", "shown"]
