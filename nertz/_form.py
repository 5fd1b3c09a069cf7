"""Which form of the engine loads: the modules compiled by mypyc, or the pure-Python ones.

The ``.py`` files are the one source. When the package was installed with a C compiler at hand,
``setup.py`` compiled the modules of :data:`COMPILED` into extension modules beside them and wrote
the manifest ``_compiled.json`` with each source's SHA-256. At the package's import,
:func:`select` loads the compiled modules only if every one is there and every source still has
the hash it was built from; otherwise (or with ``NERTZ_PURE=1``) it puts a finder first on
``sys.meta_path`` that loads each of those modules from its ``.py`` file, so a stale build (a
``.py`` edited after compiling) can never load by mistake: it warns in one line and runs pure.
The choice is all or nothing, because compiled modules call each other's native code directly.

This module itself is never compiled, and ``setup.py`` reads :data:`COMPILED` from this file
without importing the package: keep it free of side effects at import.
"""

from __future__ import annotations

import hashlib
import importlib.machinery
import importlib.util
import json
import os
import sys
from collections.abc import Sequence
from importlib.machinery import ModuleSpec
from pathlib import Path
from types import ModuleType
from typing import Final

COMPILED: Final = (
    "nertz.errors",
    "nertz.cards",
    "nertz.rules",
    "nertz.moves",
    "nertz.foundations",
    "nertz.state",
    "nertz.events",
    "nertz.engine",
    "nertz.views",
    "nertz.scoring",
    "nertz.match",
    "nertz.playout",
    "nertz.replay",
    "nertz.sim.table",
    "nertz.bots.heuristic",
    "nertz.bots.idle",
    "nertz.bots.races",
    "nertz.bots.lines",
)
"""The modules mypyc compiles: the engine, and the simulator's and bots' hot paths."""

MANIFEST: Final = "_compiled.json"
"""The build's record, beside this file: the extension suffix and each source's SHA-256."""

PURE_ENV: Final = "NERTZ_PURE"
"""``NERTZ_PURE=1`` loads the pure-Python modules even when compiled ones are installed."""


class _PureFinder:
    """Finds the compiled modules' ``.py`` sources first, so their extensions never load."""

    def __init__(self, root: Path) -> None:
        self.root = root

    def find_spec(
        self, fullname: str, path: Sequence[str] | None, target: ModuleType | None = None
    ) -> ModuleSpec | None:
        """The spec of ``fullname``'s source file if it is one of :data:`COMPILED`."""
        if fullname not in COMPILED:
            return None
        source = self.root.joinpath(*fullname.split(".")[1:]).with_suffix(".py")
        return importlib.util.spec_from_file_location(fullname, source)


def _why_not_compiled(root: Path) -> str | None:
    """None if the compiled modules are installed and current, else why they may not load."""
    if os.environ.get(PURE_ENV, "") not in ("", "0"):
        return f"{PURE_ENV}={os.environ[PURE_ENV]}"
    try:
        manifest = json.loads((root / MANIFEST).read_text())
        sources: dict[str, str] = manifest["sources"]
        suffix: str = manifest["python"]
    except (OSError, ValueError, KeyError, TypeError):
        return "not compiled"
    if suffix not in importlib.machinery.EXTENSION_SUFFIXES:
        return f"compiled for another Python ({suffix})"
    if set(sources) != set(COMPILED):
        return "the compiled build names other modules: rebuild it"
    for name in COMPILED:
        rel = Path(*name.split(".")[1:])
        if not (root / rel).with_suffix(suffix).is_file():
            return f"the compiled {rel}{suffix} is missing"
        digest = hashlib.sha256((root / rel).with_suffix(".py").read_bytes()).hexdigest()
        if digest != sources[name]:
            return f"stale: {rel.with_suffix('.py')} changed since it was compiled"
    return None


def select() -> str:
    """Choose the form once, at the package's import; returns ``compiled`` or ``pure (why)``.

    A stale build is announced with one warning line on stderr (the fix: ``make compile``, or
    ``make dev`` to work on the pure modules only)."""
    root = Path(__file__).resolve().parent
    why = _why_not_compiled(root)
    if why is None:
        return "compiled"
    sys.meta_path.insert(0, _PureFinder(root))
    if why.startswith("stale"):
        print(
            f"warning: nertz loads its pure-Python modules: the compiled engine is {why} "
            "(rebuild with `make compile`, or `make dev` to drop it)",
            file=sys.stderr,
        )
    return f"pure ({why})"
