// What the page can work out from the visible table and what the server says of it: which
// foundation a card fits (from each foundation's `suit` and `needs`, and the table's `starts`,
// the ranks that open a new one), which work pile takes it, where a card is best sent, and how
// a move changes the view (for showing one's own move at once, before the server confirms).
// No variant's rule lives here: whether a seat may call is the tableau's `can_call`, which
// piles a split partner plays is the player's `piles`. The server remains the judge: anything
// unsure is simply sent and decided there.

import {parse} from './cards.js';

/** The foundation number a card fits (the lowest), 'new' for a starter, or null; `table` is
 *  the server's table view: its `foundations` and `starts`. */
export function fitFoundation(code, table) {
  const c = parse(code);
  const foundations = table.foundations;
  if (!c) return null;
  if (c.joker) {
    const open = foundations.find((f) => !f.finished && f.cards.length);
    return open ? open.number : null;
  }
  if ((table.starts || []).includes(c.rank)) return 'new';
  // Each foundation comes with its suit and the ranks that fit next (the server's policy).
  for (const f of [...foundations].sort((a, b) => a.number - b.number)) {
    if (!f.finished && f.suit === c.suit && (f.needs || []).includes(c.rank)) return f.number;
  }
  return null;
}

/** Whether `code` (the bottom card of what moves) may go onto work pile `pile` ({down, up}). */
export function fitsWork(code, pile) {
  const up = pile.up || [];
  if (!up.length) return pile.down === 0 || pile.down == null;
  const c = parse(code), t = parse(up[up.length - 1]);
  if (!c || !t) return false;
  if (c.joker || t.joker) return true;  // the server knows what a joker stands for
  return c.rank === t.rank - 1 && c.red !== t.red;
}

/**
 * Where a card is best sent (click, double-click, Enter): a foundation first, then a work pile.
 * `table` is the table view, `tab` the seat's tableau in it; `src` is 'N', 'W' or '1'..'5'; `index` the card's place in a work pile's face-up run
 * (null: its top card). Returns a move text or null.
 */
export function bestMove(table, tab, options, src, index = null) {
  const {cards, text} = lift(tab, src, index, options);
  if (!cards.length) return null;
  if (cards.length === 1 && fitFoundation(cards[0], table) != null) return `${src}-F`;
  const piles = tab.work.map((p, i) => ({p, n: String(i + 1)})).filter(({n}) => n !== src);
  // Leaving a work pile gains something when it turns a card up or empties the pile; part of
  // a run leaves a face-up card behind, which gains only if that card then plays (to a
  // foundation, or takes the Nertz or waste top). Else a click would move the card back and
  // forth between two piles that both take it, doing nothing.
  const from = /^[1-5]$/.test(src) ? tab.work[Number(src) - 1] : null;
  const left = from ? from.up.length - cards.length : 0;
  let gains = true;
  if (from && left > 0) {
    const rest = {up: from.up.slice(0, left), down: from.down};
    gains = fitFoundation(rest.up[left - 1], table) != null
      || [tab.nertz_top, tab.waste_top].some((c) => c && fitsWork(c, rest));
  }
  // A non-empty pile that takes it first; an empty pile only for a card that leaves the
  // Nertz pile or the waste, or a run whose leaving gains something.
  const fit = gains && piles.find(({p}) => p.up.length && fitsWork(cards[0], p));
  if (fit) return `${text}-${fit.n}`;
  const uncovers = !from || (left > 0 ? gains : from.down > 0);
  const empty = piles.find(({p}) => !p.up.length && !p.down);
  if (empty && uncovers) return `${text}-${empty.n}`;
  return null;
}

/** The cards a pick-up from `src` takes and the move text naming them. */
export function lift(tab, src, index, options) {
  if (src === 'N') return {cards: tab.nertz_top ? [tab.nertz_top] : [], text: 'N'};
  if (src === 'W') return {cards: tab.waste_top ? [tab.waste_top] : [], text: 'W'};
  const pile = tab.work[Number(src) - 1];
  if (!pile || !pile.up.length) return {cards: [], text: src};
  let i = index == null ? pile.up.length - 1 : index;
  if (options && options.move_partial_runs === false) i = 0;
  const cards = pile.up.slice(i);
  return {cards, text: i === 0 ? src : `${src}:${pile.up[i]}`};
}

/** Read a move text: {kind: 'play', src, card, dst, fnum} | {kind: 'T'|'STUCK'|'NERTZ'} | null. */
export function parseMove(text) {
  const m = /^(N|W|[1-5])(?::([A-Z0-9]{2}))?-(F(\d*)|[1-5])$/.exec(text);
  if (m) return {kind: 'play', src: m[1], card: m[2] || null, dst: m[3][0] === 'F' ? 'F' : m[3], fnum: m[4] ? Number(m[4]) : null};
  if (text === 'T') return {kind: 'T'};
  if (text.startsWith('STUCK')) return {kind: 'STUCK', pile: text.split(' ')[1] || 'S'};
  if (text === 'NERTZ') return {kind: 'NERTZ'};
  return null;
}

/** A deep copy of a table view (plain JSON). */
export function clone(table) { return JSON.parse(JSON.stringify(table)); }

/**
 * Show seat `seat`'s move at once on a copy of the table view: the cards leave their pile and
 * land where the server will put them. Cards this seat cannot see yet (under the Nertz top or
 * the waste top, a face-down work card) show face down until the server's update comes.
 * Returns false if the move cannot be shown (it is still sent; the server decides).
 */
export function applyLocal(table, seat, text) {
  const mv = parseMove(text);
  const tab = table.tableaus[seat];
  if (!mv || !tab) return false;
  if (mv.kind === 'STUCK') { tab.stuck = mv.pile; return true; }
  if (mv.kind !== 'play') return false;
  let cards;
  if (mv.src === 'N') {
    if (!tab.nertz_top) return false;
    cards = [tab.nertz_top];
    tab.nertz_count -= 1;
    tab.nertz_top = null;
    tab.nertz_hidden = tab.nertz_count > 0;
  } else if (mv.src === 'W') {
    if (!tab.waste_top) return false;
    cards = [tab.waste_top];
    tab.waste_count -= 1;
    tab.waste_top = null;
    tab.waste_hidden = tab.waste_count > 0;
  } else {
    const pile = tab.work[Number(mv.src) - 1];
    if (!pile || !pile.up.length) return false;
    let i = 0;
    if (mv.card) { i = pile.up.indexOf(mv.card); if (i < 0) return false; }
    if (mv.dst === 'F') i = pile.up.length - 1;
    cards = pile.up.splice(i);
    if (!pile.up.length && pile.down > 0) { pile.down -= 1; pile.hidden_top = true; }
  }
  tab.stuck = '';
  if (mv.dst === 'F') {
    let num = mv.fnum;
    if (num == null) num = fitFoundation(cards[0], table);
    if (num === 'new' || num == null) {
      const next = table.foundations.reduce((m, f) => Math.max(m, f.number), 0) + 1;
      table.foundations.push({number: next, cards: [cards[0]], owners: [seat], finished: false, local: true});
    } else {
      const f = table.foundations.find((x) => x.number === num);
      if (!f) return false;
      f.cards.push(cards[0]);
      f.owners.push(seat);
    }
  } else {
    const pile = tab.work[Number(mv.dst) - 1];
    if (!pile) return false;
    pile.up.push(...cards);
  }
  return true;
}

/** Whether this seat may call now: the server's word (`can_call`, the engine's check), and
 *  never once the round has ended. */
export function canCall(table, seat) {
  const tab = table && table.tableaus[seat];
  return !!(tab && tab.can_call && !table.ended);
}
