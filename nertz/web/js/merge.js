// How a table view takes in an `update` message: the one merge, the same as the Python
// client's `apply_update` (nertz/net/client.py); tests/data/update_merge.json holds the cases
// both are tested against.

/**
 * Apply one `update` to a table view in place: the tableaus it carries replace theirs (by
 * seat), its foundations replace theirs (by number; a new one is added), and the round's
 * `ended`, `called_by` and `t` follow; `stuck_flags` are read again from the tableaus.
 */
export function applyUpdate(table, update) {
  const tableaus = table.tableaus;
  for (const tv of update.tableaus) tableaus[tv.seat] = tv;
  const foundations = table.foundations;
  for (const fv of update.foundations) {
    const i = fv.number - 1;
    if (i < foundations.length) {
      foundations[i] = fv;
    } else {
      while (foundations.length < i) {  // never expected: numbers come in order
        foundations.push({number: foundations.length + 1, cards: [], owners: [], finished: false});
      }
      foundations.push(fv);
    }
  }
  table.ended = update.ended;
  table.called_by = update.called_by;
  table.t = update.t;
  table.stuck_flags = tableaus.map((tv) => Boolean(tv.stuck));
}

/**
 * Versions in order: `take(msg)` says whether a message is to be applied now. A broadcast one
 * version ahead is; one already seen is not; one further ahead is a gap: apply nothing and
 * advance nothing, ask once (`sync`) for what was missed, and wait for the catch-up (`state`
 * or `caught_up`), as the Python client does.
 */
export class Versions {
  constructor(askSince) {
    this.v = null;          // last version applied; null until the first full state
    this.syncing = false;   // a gap was seen and a sync sent
    this.askSince = askSince;
  }

  take(msg) {
    if (typeof msg.v !== 'number' || msg.type === 'ack') return true;
    if (msg.type === 'state' || msg.type === 'caught_up') {
      this.syncing = false;
      this.v = msg.v;
      return true;
    }
    if (this.v != null) {
      if (msg.v <= this.v) return false;  // already seen (a replay overlapping what we had)
      if (msg.v !== this.v + 1) {
        if (!this.syncing) {
          this.syncing = true;
          this.askSince(this.v);
        }
        return false;
      }
    }
    this.v = msg.v;
    return true;
  }
}
