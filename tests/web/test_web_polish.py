"""What a newcomer's review of the page in a real browser found (at 1280x800, 390x844, 844x390,
768x1024 and 1024x1366): races told truthfully (a card most of a second late was late, not
beaten in a race), a watcher of a full room told how to get a seat and the host able to seat
them, the match's scores on a phone during play, messages off a phone's full-height dialog,
the sideways phone's menu on one line a setting, a changed option read cleanly, the lobby's
fill button clear of the seats, the service worker registered once."""


from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from page_checks import shot
from test_web_game import seat_room, wait_table
from test_web_screens import open_page

TOASTS = "() => [...document.querySelectorAll('#toasts .toast')].map((t) => t.textContent)"


def wait_toast(page: Any, text: str) -> None:
    page.wait_for_function(f"() => ({TOASTS})().includes({json.dumps(text)})")


ONE_LINE = """(sel) => [...document.querySelectorAll(sel)].filter((b) => {
  const r = document.createRange();
  r.selectNodeContents(b);
  const rows = [...r.getClientRects()].filter((x) => x.width).map((x) => Math.round(x.top));
  const tops = new Set(rows);
  return tops.size > 1;
}).map((b) => b.textContent)"""


"""The buttons whose words take more than one line."""


def test_the_sideways_phones_settings_keep_to_one_line(server: Any, new_page: Any,
                                                      artifacts: Path) -> None:
    # Held sideways, a phone's top bar holds the settings; with six seats' scores beside them
    # "Four colours" broke over two lines (the scores must give way, not the buttons).
    page = open_page(new_page, (844, 390))
    seat_room(server, page, "Ann", rules={"preset": "pagat"}, seats=6)
    page.tap("#fill-bots")
    page.wait_for_function("() => document.querySelectorAll('#seats .player-name').length === 6")
    page.tap("#start")
    wait_table(page)
    shot(page, artifacts, "topbar-844x390")
    assert page.evaluate(ONE_LINE, "#tools > button, #tools > a, #menu-btn") == []
    tops = page.evaluate("""() => [...document.querySelectorAll('.topbar button, .topbar a')]
        .filter((b) => b.getClientRects().length)
        .map((b) => { const r = b.getBoundingClientRect(); return [r.top, r.right]; })""")
    assert tops and max(t for t, _ in tops) - min(t for t, _ in tops) < 4, tops  # one row
    assert max(r for _, r in tops) <= 844, tops


def test_a_changed_target_score_reads_cleanly(server: Any, new_page: Any, artifacts: Path) -> None:
    # "Changed: play to (points): 50." — a unit in brackets and two colons in a row.
    page = new_page(viewport={"width": 1280, "height": 800})
    page.goto(server.base + "/")
    page.wait_for_selector("#create")
    page.click("#options summary")
    page.fill('[name="target_score"]', "50")
    page.fill('[name="nertz_pile_size"]', "10")
    said = page.text_content("#preset-summary") or ""
    assert said.endswith(" Changed from the preset: Nertz pile size 10; play to 50 points."), said
    assert "(" not in said and ": :" not in said
    page.locator("#preset-summary").screenshot(path=str(artifacts / "summary-changed.png"))
    page.fill("#name", "Ann")
    page.click("#create")
    page.wait_for_selector("#lobby")
    rules = page.text_content("#lobby .rules-text") or ""
    want = "Rules: Pounce (pagat.com), changed: Nertz pile size 10; play to 50 points"
    assert rules == want, rules


def test_fill_the_seats_stands_clear_of_the_seat_list_on_a_phone(server: Any,
                                                                 new_page: Any,
                                                                 artifacts: Path) -> None:
    page = open_page(new_page, (390, 844))
    seat_room(server, page, "Ann", rules={"preset": "pagat"}, seats=4)
    page.wait_for_selector("#fill-bots")
    gap = page.evaluate("""() => document.querySelector('#seats').getBoundingClientRect().top
        - document.querySelector('#fill-bots').getBoundingClientRect().bottom""")
    shot(page, artifacts, "lobby-fill-390x844")
    assert gap >= 10, gap


COUNT_REGISTERS = """(() => {
  const real = ServiceWorkerContainer.prototype.register;
  window.__swRegisters = 0;
  ServiceWorkerContainer.prototype.register = function (...args) {
    window.__swRegisters += 1;
    return real.apply(this, args);
  };
})();"""


def test_the_service_worker_is_registered_once(server: Any, new_page: Any) -> None:
    # It was registered as the page loaded and again at every move between screens.
    page = new_page()
    page.add_init_script(COUNT_REGISTERS)
    page.goto(server.base + "/")
    page.wait_for_selector("#create")
    page.click("#learn")
    page.wait_for_function("() => location.pathname === '/learn'")
    page.go_back()
    page.wait_for_selector("#create")
    page.evaluate("() => navigator.serviceWorker.ready")
    assert page.evaluate("() => window.__swRegisters") == 1
