"""The player identity a program keeps between runs, per server.

The server makes whoever joins a room without an identity a guest and answers with its
identity token (``identity``); a :class:`~nertz.net.client.Client` sends it back on every
later join (``Authorization: Bearer``), so the server knows it is the same player in every room
and their ratings and history follow them. :class:`IdentityFile` keeps the tokens in a JSON
file in the user's config directory (platformdirs), one per server, readable only by the user;
``NERTZ_IDENTITY_FILE`` names another file.
"""

from __future__ import annotations

import contextlib
import json
import os
import tempfile
from pathlib import Path
from typing import Final

ENV: Final = "NERTZ_IDENTITY_FILE"
"""An environment variable naming the identity file instead of the default."""


def default_path() -> Path:
    """``identities.json`` in the user's config directory (or ``$NERTZ_IDENTITY_FILE``)."""
    named = os.environ.get(ENV)
    if named:
        return Path(named)
    from platformdirs import user_config_dir

    return Path(user_config_dir("nertz", appauthor=False)) / "identities.json"


class IdentityFile:
    """Identity tokens by server base URL, in a file only its user may read."""

    def __init__(self, path: Path | None = None) -> None:
        self.path = path if path is not None else default_path()

    def _read(self) -> dict[str, str]:
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return {}
        if not isinstance(data, dict):
            return {}
        return {str(k): str(v) for k, v in data.items() if isinstance(v, str)}

    def get(self, server: str) -> str | None:
        """The token kept for ``server`` (its base URL), or None."""
        return self._read().get(server.rstrip("/"))

    def put(self, server: str, token: str) -> None:
        """Keep ``token`` for ``server``: written whole to a temporary file, then moved over
        the old one, so a crash never leaves half a file."""
        data = self._read()
        data[server.rstrip("/")] = token
        self.path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=self.path.parent, prefix=".identities-")
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as f:
                json.dump(data, f, indent=1)
            os.chmod(tmp, 0o600)
            os.replace(tmp, self.path)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
            raise


__all__ = ["ENV", "IdentityFile", "default_path"]
