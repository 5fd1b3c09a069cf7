"""Look-alike names: the confusable *skeleton* of Unicode Technical Standard #39, section 4.

Two strings are confusable when their skeletons are equal. The skeleton is the string
decomposed (NFD), each character replaced by its prototype from the standard's
``confusables.txt``, and decomposed again: Cyrillic ``\u0410nn`` and Latin ``Ann`` have the same
skeleton, and so do ``rn`` and ``m``.

The data is ``confusables.tsv`` beside this module: version 17.0.0 of the Unicode file, reduced
to its mapping (see that file's header). No maintained Python library computes the skeleton
without a compiled ICU (``confusable-homoglyphs`` ships the pairs without their direction, which
the skeleton needs); the algorithm is three lines, so it lives here with its data.
"""

from __future__ import annotations

import functools
import unicodedata
from pathlib import Path
from typing import Final

DATA: Final = Path(__file__).resolve().parent / "confusables.tsv"
"""The mapping: one ``SOURCE<TAB>PROTOTYPE`` line per code point, in hex."""


@functools.cache
def _prototypes() -> dict[int, str]:
    table: dict[int, str] = {}
    for line in DATA.read_text(encoding="utf-8").splitlines():
        if not line or line.startswith("#"):
            continue
        source, prototype = line.split("\t")
        table[int(source, 16)] = "".join(chr(int(cp, 16)) for cp in prototype.split())
    return table


def skeleton(text: str) -> str:
    """The UTS #39 skeleton of ``text``: NFD, each character mapped to its prototype, NFD."""
    return unicodedata.normalize("NFD", unicodedata.normalize("NFD", text).translate(
        _prototypes()))


__all__ = ["DATA", "skeleton"]
