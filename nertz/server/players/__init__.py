"""Players: who a client is (:mod:`.identity`), accounts (:mod:`.accounts`), ratings per
ruleset family (:mod:`.ratings`), history, player pages and leaderboards (:mod:`.history`),
quick match (:mod:`.quickmatch`), and their HTTP API (:mod:`.routes`). Every fact lives in the
database (:mod:`.tables`, migration ``0002``), so any process of the server answers for any
player. docs/players.md tells the whole story.
"""

from nertz.server.players.routes import PlayersApi

__all__ = ["PlayersApi"]
