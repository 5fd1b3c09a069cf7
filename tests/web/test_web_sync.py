"""The page keeps its table in step with the server: it merges updates as the Python client
does (the shared cases of tests/data/update_merge.json), and an update lost on the wire is
caught up, never skipped (a version gap applies nothing until the ``sync``'s replay arrives).
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

from test_web_game import two_at_a_table

CASES = Path(__file__).resolve().parents[1] / "data" / "update_merge.json"

LOSSY_WIRE = """(() => {
  // The test's wire: records what the page sends, and loses the first update that arrives
  // once told to (window.__wire.lose = true).
  const Real = window.WebSocket;
  window.__wire = {lose: false, lost: [], sent: []};
  class Lossy extends Real {
    send(data) { window.__wire.sent.push(String(data)); return super.send(data); }
    get onmessage() { return super.onmessage; }
    set onmessage(fn) {
      super.onmessage = (ev) => {
        const w = window.__wire;
        const kept = String(ev.data).split('\\n').filter((line) => {
          if (w.lose && line.includes('"type":"update"')) {
            w.lose = false;
            w.lost.push(line);
            return false;
          }
          return true;
        });
        if (kept.length) fn({data: kept.join('\\n')});
      };
    }
  }
  window.WebSocket = Lossy;
})();"""

MERGE_CASES = """async (cases) => {
  const merge = await import('/static/js/merge.js');
  return cases.map((c) => {
    const table = structuredClone(c.table);
    for (const u of c.updates) merge.applyUpdate(table, u);
    return table;
  });
}"""

TABLE = "() => JSON.stringify(window.nertz.S.table && window.nertz.S.table.tableaus)"


def test_the_page_merges_updates_as_the_python_client_does(server: Any, new_page: Any) -> None:
    page = new_page()
    page.goto(server.base + "/")
    cases = json.loads(CASES.read_text())["cases"]
    got = page.evaluate(MERGE_CASES, cases)
    for case, table in zip(cases, got, strict=True):
        assert table == case["expected"], case["name"]


def test_an_update_lost_on_the_wire_is_caught_up(server: Any, new_page: Any) -> None:
    ann, ben = two_at_a_table(server, new_page, ann_script=LOSSY_WIRE)
    settled = "() => document.querySelector('#table-screen').dataset.pending === '0'"
    ann.evaluate("() => { window.__wire.lose = true; }")
    ben.keyboard.press("Space")  # Ben turns his stock: Ann's page never hears of it
    ben.wait_for_function(settled)
    ann.wait_for_function("() => window.__wire.lost.length === 1")
    ann.keyboard.press("Space")  # Ann's own turn arrives one version too far: a gap
    ann.wait_for_function(settled)
    ann.wait_for_function("() => window.__wire.sent.some((m) => JSON.parse(m).type === 'sync')")
    deadline = time.monotonic() + 30
    while ann.evaluate(TABLE) != ben.evaluate(TABLE):
        assert time.monotonic() < deadline, "Ann's page never caught up with Ben's turn"
        time.sleep(0.05)
