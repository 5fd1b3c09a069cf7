"""Fixtures for the client tests: identities kept in a file of the test run's own, never in the
user's config directory."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from nertz.net.identity import ENV


@pytest.fixture(autouse=True)
def identity_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """Where clients keep their identity in this test (a fresh file each test)."""
    path = tmp_path / "identities.json"
    monkeypatch.setenv(ENV, str(path))
    yield path
