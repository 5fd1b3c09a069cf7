"""Fixtures for the browser tests: a real ``nertz serve`` process on a free port with a fresh
SQLite file, and Debian's Chromium driven headless by Playwright.

Without Chromium (or Playwright) the browser tests skip with a message, except when the ``CI``
environment variable is set: there they must run, so they fail instead.
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from _support import stop_process

CHROMIUM = os.environ.get("NERTZ_CHROMIUM", "/usr/bin/chromium")
"""The browser the tests drive (Debian's Chromium; never a downloaded one)."""

CHROMIUM_ARGS = [
    "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync",
]

DEAL_SEED = 1
"""The server deals from this seed (``nertz serve --deal-seed``), so every test plays the same
cards each run: with deal 1 the phone's first card is an Ace on a work pile, and no deal is left
to chance where a hand with nothing to play in forty turns would fail a test."""

ARTIFACTS = Path(__file__).resolve().parents[2] / "artifacts"
"""Screenshots of the live page land here (gitignored)."""

AXE_VERSION = "4.14.1"
"""axe-core, the accessibility checker run on every screen: installed by these tests from the
npm registry into :data:`AXE_CACHE` (once; pinned so that a new rule cannot fail a run)."""

_XDG_CACHE = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
AXE_CACHE = Path(os.environ.get("NERTZ_TEST_CACHE") or _XDG_CACHE / "nertz-tests")
"""Where the tests keep what they download (``NERTZ_TEST_CACHE`` to choose)."""


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """The browser tests run after every other test of the session, whatever the order asked:
    Playwright's synchronous API keeps an event loop running in the main thread until the
    session's browser closes, and ``asyncio.run`` refuses to start beside it."""
    here = Path(__file__).resolve().parent
    items.sort(key=lambda item: item.path.resolve().is_relative_to(here))


def _unavailable() -> str | None:
    """Why the browser tests cannot run here, or None."""
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        return "Playwright for Python is not installed"
    if not (Path(CHROMIUM).exists() or shutil.which(CHROMIUM)):
        return f"no Chromium at {CHROMIUM} (apt-get install chromium)"
    return None


@pytest.fixture(scope="session")
def chromium_ok() -> None:
    """Skip (or, under CI, fail) when there is no browser to drive."""
    why = _unavailable()
    if why is not None:
        if os.environ.get("CI"):
            pytest.fail(f"browser tests must run under CI: {why}")
        pytest.skip(f"browser tests skipped: {why}")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class Server:
    """A running ``nertz serve``: its base URL and a tiny JSON client for setting up rooms."""

    def __init__(self, base: str, log: Path) -> None:
        self.base = base
        self.log = log

    def get(self, path: str) -> Any:
        with urllib.request.urlopen(self.base + path, timeout=10) as r:
            return json.load(r)

    def post(self, path: str, body: Any) -> Any:
        req = urllib.request.Request(self.base + path, data=json.dumps(body).encode(),
                                     headers={"content-type": "application/json"})
        with urllib.request.urlopen(req, timeout=10) as r:
            return json.load(r)


@pytest.fixture(scope="session")
def server(tmp_path_factory: pytest.TempPathFactory, chromium_ok: None) -> Iterator[Server]:
    """``nertz serve`` on a free port with a temporary database, for the whole session."""
    port = _free_port()
    db = tmp_path_factory.mktemp("web") / "web.db"
    # This tree's nertz, not the installed console script's: in a second checkout (a git
    # worktree beside the one the venv installed) that script would serve the other's page.
    root = Path(__file__).resolve().parents[2]
    env = {**os.environ,
           "PYTHONPATH": os.pathsep.join(filter(None, [str(root), os.environ.get("PYTHONPATH")]))}
    log = open(db.with_suffix(".log"), "w")  # noqa: SIM115 - closed below
    proc = subprocess.Popen([sys.executable, "-m", "nertz", "serve", "--port", str(port),
                             "--db", f"sqlite:///{db}", "--deal-seed", str(DEAL_SEED)],
                            stdout=log, stderr=subprocess.STDOUT, cwd=root, env=env)
    base = f"http://127.0.0.1:{port}"
    try:
        # A busy machine can take many seconds to import and migrate: wait for the answer.
        deadline = time.monotonic() + 90
        while time.monotonic() < deadline:
            try:
                with urllib.request.urlopen(base + "/healthz", timeout=1) as r:
                    if r.status == 200:
                        break
            except OSError:
                if proc.poll() is not None:
                    raise RuntimeError(
                        "nertz serve exited: " + db.with_suffix(".log").read_text()) from None
                time.sleep(0.1)
        else:
            raise RuntimeError("nertz serve did not answer /healthz")
        yield Server(base, db.with_suffix(".log"))
    finally:
        stop_process(proc)
        log.close()


@pytest.fixture(scope="session")
def browser(chromium_ok: None) -> Iterator[Any]:
    """One headless Chromium for the session."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True)
        yield b
        b.close()


@pytest.fixture
def new_page(browser: Any) -> Iterator[Any]:
    """Pages in fresh browser contexts (separate storage: separate people); page errors fail."""
    contexts = []
    errors: list[str] = []

    def make(**kwargs: Any) -> Any:
        ctx = browser.new_context(**({"viewport": {"width": 1280, "height": 860}} | kwargs))
        contexts.append(ctx)
        page = ctx.new_page()
        page.on("pageerror", lambda e: errors.append(str(e)))
        # Waits on the page follow server timers and a busy CI machine's Chromium: generous.
        page.set_default_timeout(30_000)
        return page

    yield make
    for ctx in contexts:
        ctx.close()
    assert not errors, f"JavaScript errors on the page: {errors}"


@pytest.fixture(scope="session")
def artifacts() -> Path:
    """The folder for screenshots."""
    ARTIFACTS.mkdir(exist_ok=True)
    return ARTIFACTS


def _must_run(why: str) -> None:
    if os.environ.get("CI"):
        pytest.fail(f"browser tests must run under CI: {why}")
    pytest.skip(f"browser tests skipped: {why}")


@pytest.fixture(scope="session")
def axe(chromium_ok: None) -> str:
    """axe-core's script (``npm install axe-core`` into the tests' cache the first time)."""
    target = AXE_CACHE / f"axe-{AXE_VERSION}"
    script = target / "node_modules" / "axe-core" / "axe.min.js"
    if not script.exists():
        npm = shutil.which("npm")
        if npm is None:
            _must_run("npm is needed to install axe-core")
        target.mkdir(parents=True, exist_ok=True)
        done = subprocess.run(
            [npm, "install", "--prefix", str(target), f"axe-core@{AXE_VERSION}",
             "--no-audit", "--no-fund", "--no-save", "--silent"],
            capture_output=True, text=True, timeout=300, check=False)
        if done.returncode != 0 or not script.exists():
            _must_run(f"npm install axe-core failed: {done.stderr[-500:]}")
    return script.read_text()
