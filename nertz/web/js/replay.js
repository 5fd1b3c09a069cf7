// The replay viewer: step through a finished match (or an uploaded replay file) on a timeline.
// The server expands a replay into frames (GET /api/matches/{id}/frames, POST
// /api/replays/frames): per round the deal as a spectator sees it and, per move, the tableau
// and foundations it changed. The viewer applies them in order; the board is the table view.

import {h, fill, toast} from './dom.js';
import {ownerMark, label, friendly, parse} from './cards.js';
import {clone} from './rules.js';
import {TableView} from './table.js';
import {rulesText} from './screens.js';
import {analysisSlot, WHY} from './analysis.js';
import {closeRace, gapWords} from './names.js';

/** Apply one frame step to a table view (a copy). */
export function applyStep(table, step) {
  const t = clone(table);
  if (!step.ok) return t;
  for (const tab of step.tableaus || []) t.tableaus[tab.seat] = tab;
  for (const f of step.foundations || []) {
    const i = t.foundations.findIndex((x) => x.number === f.number);
    if (i >= 0) t.foundations[i] = f; else t.foundations.push(f);
  }
  t.ended = step.ended || null;
  return t;
}

const PLACES = {N: 'the Nertz pile', W: 'the waste', F: 'a foundation'};

/** Where a pile is, in words: "the Nertz pile", "work pile 2", "foundation 3". */
function place(p) { return PLACES[p] || `work pile ${p}`; }

/**
 * What a step did, in words, and which card it moved: {text, card, dst} (card and dst null
 * when no card moved). `before` is the table before the step; `step` the frame step.
 */
export function describeStep(before, step, names) {
  const who = names[step.seat] ?? `Seat ${step.seat + 1}`;
  const mv = step.move;
  if (mv === 'T') {
    const tab = before.tableaus[step.seat];
    return {text: `${who} ${tab && !tab.stock_count ? 'turns the waste over' : 'turns the stock'}`, card: null};
  }
  if (/^STUCK/.test(mv)) return {text: `${who} is stuck`, card: null};
  if (!/^(N|W|[1-5])/.test(mv)) return {text: `${who} calls ${mv.charAt(0) + mv.slice(1).toLowerCase()}!`, card: null};
  const m = /^(N|W|[1-5])(?::([A2-9TJQKX][SHDC12]))?-(F\d*|[1-5])$/.exec(mv);
  if (!m) return {text: `${who}: ${mv}`, card: null};
  const [, src, named, dst] = m;
  const tab = before.tableaus[step.seat];
  let card = named || null;
  let more = false;  // cards lying on the moved one go with it
  if (tab && src !== 'N' && src !== 'W') {
    // A work pile's move without a card named takes its whole run (one card to a foundation).
    const up = (tab.work[Number(src) - 1] || {up: []}).up;
    if (!card) card = (dst[0] === 'F' ? up[up.length - 1] : up[0]) || null;
    more = card != null && up.indexOf(card) >= 0 && up.indexOf(card) < up.length - 1;
  } else if (tab && !card) {
    card = src === 'N' ? tab.nertz_top : tab.waste_top;
  }
  let to = place(dst[0] === 'F' ? 'F' : dst);
  if (dst[0] === 'F' && step.ok && step.foundations && step.foundations.length) to = `foundation ${step.foundations[0].number}`;
  const what = card ? label(card) + (more ? ' and the cards on it' : '') : 'a card';
  return {text: `${who}: ${what} from ${place(src)} to ${to}`, card, dst: dst[0] === 'F' ? `F${step.ok && step.foundations && step.foundations.length ? step.foundations[0].number : ''}` : dst};
}


/** The match's races (every seat's `races_won` in the analysis), each placed at the viewer's
 * step of the winning play: its seat's last foundation play to that foundation at or before the
 * race's time (`t` is when the losing play was decided). */
export function racesByStep(analysis, frames) {
  const out = [];
  for (const seat of analysis.seats || []) {
    for (const race of seat.races_won || []) {
      const round = frames.rounds[race.round - 1];
      if (!round) continue;
      let step = -1;
      round.steps.forEach((st, i) => {
        if (st.ok && st.seat === race.winner && st.t <= race.t
          && (st.foundations || []).some((f) => f.number === race.foundation)) step = i + 1;
      });
      if (step > 0) out.push({...race, roundIndex: race.round - 1, step});
    }
  }
  return out;
}

export class ReplayViewer {
  constructor(root, frames, title, app, start = {}) {
    this.root = root;
    this.matchId = start.match || null;
    this.frames = frames;
    this.app = app;
    this.round = 0;
    this.step = 0;
    this.playing = null;
    this.speed = 2;
    this.names = frames.players;
    const board = h('div', {class: 'replay-board'});
    this.status = h('div', {class: 'steplog', id: 'replay-step', 'aria-live': 'polite'});
    this.slider = h('input', {type: 'range', min: '0', max: '0', value: '0', id: 'replay-slider', 'aria-label': 'Move'});
    this.slider.addEventListener('input', () => this.go(Number(this.slider.value)));
    this.playBtn = h('button', {id: 'replay-play', onclick: () => this.toggle()}, 'Play');
    const speed = h('select', {'aria-label': 'Speed'}, [1, 2, 4, 8].map((s) => h('option', {value: String(s), text: `${s}×`})));
    speed.value = '2';
    speed.addEventListener('change', () => { this.speed = Number(speed.value); });
    this.roundSel = h('select', {id: 'replay-round', 'aria-label': 'Round'},
      frames.rounds.map((_, i) => h('option', {value: String(i), text: `Round ${i + 1}`})));
    this.roundSel.addEventListener('change', () => this.loadRound(Number(this.roundSel.value)));
    this.result = h('div', {id: 'replay-result'});
    const totals = frames.totals.map((v, s) => `${this.names[s]} ${v}`).join(' · ');
    this.link = this.matchId ? h('button', {id: 'replay-link', onclick: () => this.copyLink()}, 'Copy a link to this move') : null;
    fill(root, h('div', {class: 'screen', id: 'replay', style: {maxWidth: '1200px'}},
      h('div', {class: 'row'},
        h('h1', {class: 'grow', text: `Replay: ${this.names.join(', ')}`},
          frames.finished_at ? h('time', {class: 'played-on', datetime: new Date(frames.finished_at).toISOString(),
            text: ` · ${new Date(frames.finished_at).toLocaleDateString(undefined, {day: 'numeric', month: 'short', year: 'numeric'})}`}) : null),
        h('a', {href: '/', onclick: (e) => { e.preventDefault(); app.go('/'); }}, 'Home')),
      h('p', {class: 'muted'}, h('span', {text: `${title} · ${rulesText({rules: frames.rules})}`}), h('br'),
        h('span', {text: `Totals: ${totals}${frames.winner != null ? ` · winner ${this.names[frames.winner]}` : ''}`})),
      h('div', {class: 'panel timeline'},
        this.roundSel,
        h('button', {onclick: () => this.go(0), 'aria-label': 'First move'}, '|◀'),
        h('button', {id: 'replay-prev', onclick: () => this.go(this.step - 1), 'aria-label': 'Previous move'}, '◀'),
        this.playBtn,
        h('button', {id: 'replay-next', onclick: () => this.go(this.step + 1), 'aria-label': 'Next move'}, '▶'),
        h('button', {onclick: () => this.go(this.snaps.length - 1), 'aria-label': 'Last move'}, '▶|'),
        speed, this.slider, this.link),
      this.status, board, this.result));
    this.view = new TableView(board, {
      seat: null,
      // The viewer never plays: the board draws from the frames alone (the deal's `starts`).
      options: {},
      names: (s) => this.names[s] ?? `seat ${s + 1}`,
      initial: (s) => {
        const first = (i) => (this.names[i] || '?')[0].toUpperCase();
        return this.names.some((_, i) => i !== s && first(i) === first(s)) ? String(s + 1) : first(s);
      },
      latency: () => null,
      play: () => {},
      onHelp: () => {},
      topbar: () => h('span'),
      phase: 'replay',
      callWord: 'Nertz',
    });
    this.onKey = (e) => {
      const tag = e.target && e.target.tagName;
      if (tag === 'INPUT' || tag === 'SELECT') return;
      if (e.key === 'ArrowRight') { e.preventDefault(); this.go(this.step + 1); }
      else if (e.key === 'ArrowLeft') { e.preventDefault(); this.go(this.step - 1); }
      else if (e.key === ' ' && tag !== 'BUTTON') { e.preventDefault(); this.toggle(); }
    };
    document.addEventListener('keydown', this.onKey);
    const r0 = Math.max(0, Math.min(frames.rounds.length - 1, Number(start.round || 1) - 1));
    this.roundSel.value = String(r0);
    this.loadRound(r0, Number(start.step || 0));
  }

  /** The address of this match at this round and step (opens the viewer there). */
  address() {
    return `${location.origin}/?replay=${encodeURIComponent(this.matchId)}&round=${this.round + 1}&step=${this.step}`;
  }

  async copyLink() {
    const url = this.address();
    try { await navigator.clipboard.writeText(url); toast('Link copied', 'good'); }
    catch { toast(url); }
  }

  /** Show the match's analysis under the board; each missed play jumps to its moment and
   * points at the card that could have gone to a foundation (showMissed). */
  showAnalysis(load) {
    const loaded = load();
    loaded.then((data) => { this.races = racesByStep(data, this.frames); this.go(this.step); }).catch(() => {});
    this.result.after(analysisSlot(() => loaded, {onJump: (r, k, missed) => {
      this.roundSel.value = String(r);
      this.missed = missed ? {...missed, roundIndex: r, step: k} : null;
      this.loadRound(r);
      this.go(k);
      this.root.querySelector('.replay-board').scrollIntoView({block: 'nearest'});
    }}));
  }

  /** At the moment of the missed play jumped to (it stays marked there while the viewer moves
   * on and comes back): the card ringed where it lay, the foundation it fitted outlined, and
   * the step's line saying so in words. */
  showMissed() {
    for (const el of this.root.querySelectorAll('.missed, .missed-target')) el.classList.remove('missed', 'missed-target');
    const m = this.missed;
    if (!m || m.roundIndex !== this.round || m.step !== this.step) return;
    const who = this.names[m.seat] ?? `Seat ${m.seat + 1}`;
    const card = this.root.querySelector(`.opp[data-seat="${m.seat}"] [data-pile="${m.pile}"] .card[data-card="${m.card}"]`);
    if (card) {
      card.classList.add('missed');
      card.setAttribute('aria-label', `${card.getAttribute('aria-label')}: a missed play, it could go to a foundation`);
    }
    const c = parse(m.card);
    const table = this.snaps[this.step];
    const f = c && table.foundations.find((x) => !x.finished && (x.suit == null || x.suit === c.suit)
      && (x.needs || []).includes(c.rank));
    const target = f && this.root.querySelector(`#foundations [data-pile="F${f.number}"]`);
    if (target) target.classList.add('missed-target');
    const where = f ? `foundation ${f.number}` : 'a new foundation';
    this.status.append(h('span', {class: 'missed-note', id: 'replay-missed',
      text: ` · Missed: ${who} could play the ${label(m.card)} from ${place(m.pile)} to ${where}`
        + ` (for ${(m.ms / 1000).toFixed(1)} s, then ${WHY[m.why] || m.why})`}));
  }

  destroy() {
    this.stop();
    document.removeEventListener('keydown', this.onKey);
    this.view.destroy();
  }

  loadRound(r, at = 0) {
    this.stop();
    this.round = r;
    const rd = this.frames.rounds[r];
    const snaps = [rd.deal];
    for (const step of rd.steps) snaps.push(applyStep(snaps[snaps.length - 1], step));
    this.snaps = snaps;
    this.slider.max = String(snaps.length - 1);
    this.step = -1;
    this.go(at);
  }

  go(k) {
    k = Math.max(0, Math.min(this.snaps.length - 1, k));
    const forward = k === this.step + 1;
    const steps = this.frames.rounds[this.round].steps;
    if (forward && k > 0) this.animate(steps[k - 1]);
    this.step = k;
    this.slider.value = String(k);
    this.view.render(this.snaps[k], {banner: k === this.snaps.length - 1 ? 'End of the round' : ''});
    const n = steps.length;
    if (k === 0) this.status.textContent = `Round ${this.round + 1}: the deal (${n} moves follow)`;
    else {
      const st = steps[k - 1];
      const said = describeStep(this.snaps[k - 1], st, this.names);
      fill(this.status,
        h('span', {text: `${k}/${n} · ${(st.t / 1000).toFixed(1)} s · ${said.text}`}),
        st.ok ? null : h('span', {class: 'bad', text: ` (refused: ${friendly(st.error)})`}));
      if (st.ok && said.card) this.highlight(st.seat, said);
    }
    this.showMissed();
    this.showRaces();
    this.showResult(k === this.snaps.length - 1);
    if (this.matchId) history.replaceState(history.state, '', this.address().slice(location.origin.length));
  }

  /** Mark the card the step moved where it landed. */
  highlight(seat, said) {
    const sel = said.dst[0] === 'F' ? `#foundations [data-pile="${said.dst}"] .card[data-card="${said.card}"]`
      : `.opp[data-seat="${seat}"] [data-pile="${said.dst}"] .card[data-card="${said.card}"]`;
    for (const el of this.root.querySelectorAll('.card.moved')) el.classList.remove('moved');
    const el = this.root.querySelector(sel);
    if (el) el.classList.add('moved');
  }

  /** At the step whose play won a race for a foundation (the analysis's races, which the
   * frames do not hold): the step's line says who beat whom, with which card and by how much,
   * and the loser's card, still where it was, is marked. */
  showRaces() {
    for (const el of this.root.querySelectorAll('.race-lost')) el.classList.remove('race-lost');
    const here = (this.races || []).filter((r) => r.roundIndex === this.round && r.step === this.step);
    const name = (s) => this.names[s] ?? `Seat ${s + 1}`;
    for (const r of here) {
      const card = this.root.querySelector(`.opp[data-seat="${r.loser}"] .card[data-card="${r.card}"]`);
      // A close race (within a reaction time) is a race; a card most of a second later was
      // simply too late, and says so.
      const close = closeRace(r.margin_ms);
      if (card) {
        card.classList.add('race-lost');
        card.setAttribute('aria-label', `${card.getAttribute('aria-label')}: ${close ? 'lost the race for' : 'too late for'} foundation ${r.foundation}`);
      }
      this.status.append(h('span', {class: 'race-note', dataset: {winner: String(r.winner)},
        text: close
          ? ` · ${name(r.winner)} beat ${name(r.loser)}'s ${label(r.card)} to foundation ${r.foundation}`
            + (r.margin_ms == null ? '' : ` by ${gapWords(r.margin_ms)}`)
          : ` · ${name(r.loser)}'s ${label(r.card)} came ${gapWords(r.margin_ms)} after ${name(r.winner)}'s: too late for foundation ${r.foundation}`}));
    }
  }

  animate(step) {
    if (!step.ok) return;
    const m = /^(N|W|[1-5])(?::\w\w)?-F/.exec(step.move);
    if (!m || !step.foundations || !step.foundations.length) return;
    const pile = this.root.querySelector(`.opp[data-seat="${step.seat}"] [data-pile="${m[1]}"]`);
    const cards = pile ? pile.querySelectorAll('.card') : [];
    const src = cards.length ? cards[cards.length - 1].getBoundingClientRect() : null;
    if (src) this.view.queueFlight(`#foundations [data-pile="F${step.foundations[0].number}"] .card:not(.under)`, src);
  }

  showResult(show) {
    if (!show) { this.result.replaceChildren(); return; }
    const res = this.frames.rounds[this.round].result;
    const word = res.ended === 'nertz' && res.caller != null ? `${this.names[res.caller]} called` : res.ended;
    fill(this.result, h('div', {class: 'panel'},
      h('h2', {text: `Round ${this.round + 1} result: ${word}`}),
      h('table', {class: 'data'},
        h('thead', {}, h('tr', {}, ['Seat', 'Foundation cards', 'Nertz left', 'Score'].map((t) => h('th', {text: t})))),
        h('tbody', {}, res.scores.map((sc, s) => h('tr', {dataset: {seat: String(s)}},
          h('td', {}, h('span', {class: 'seatname'}, ownerMark(s, this.names[s]), h('span', {text: this.names[s]}))),
          h('td', {text: String(res.breakdown[s].foundation_cards)}),
          h('td', {text: String(res.breakdown[s].nertz_left)}),
          h('td', {dataset: {field: 'total'}, text: String(sc)})))))));
  }

  toggle() { if (this.playing) this.stop(); else this.play(); }

  play() {
    if (this.step >= this.snaps.length - 1) this.go(0);
    this.playBtn.textContent = 'Pause';
    const steps = this.frames.rounds[this.round].steps;
    const tick = () => {
      if (this.step >= this.snaps.length - 1) { this.stop(); return; }
      const prevT = this.step > 0 ? steps[this.step - 1].t : 0;
      const wait = Math.max(60, Math.min(1500, (steps[this.step].t - prevT) / this.speed));
      this.playing = setTimeout(() => { this.go(this.step + 1); tick(); }, wait);
    };
    this.playing = true;
    tick();
  }

  stop() {
    if (this.playing && this.playing !== true) clearTimeout(this.playing);
    this.playing = null;
    if (this.playBtn) this.playBtn.textContent = 'Play';
  }
}
