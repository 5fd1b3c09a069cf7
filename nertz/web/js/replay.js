// The replay viewer: step through a finished match (or an uploaded replay file) on a timeline.
// The server expands a replay into frames (GET /api/matches/{id}/frames, POST
// /api/replays/frames): per round the deal as a spectator sees it and, per move, the tableau
// and foundations it changed. The viewer applies them in order; the board is the table view.

import {h, fill} from './dom.js';
import {ownerMark} from './cards.js';
import {clone} from './rules.js';
import {TableView} from './table.js';
import {rulesText} from './screens.js';
import {analysisSlot} from './analysis.js';

/** Apply one frame step to a table view (a copy). */
function applyStep(table, step) {
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

function rulesOptions(rules) {
  // The board needs only the few options it draws by; the viewer never plays.
  const spec = typeof rules === 'string' ? {preset: rules} : rules;
  return {foundation: spec.foundation || (/(starter9|evil)/.test(spec.preset) ? 'starter9' : 'up'), call: 'replay'};
}

export class ReplayViewer {
  constructor(root, frames, title, app) {
    this.root = root;
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
    fill(root, h('div', {class: 'screen', id: 'replay', style: {maxWidth: '1200px'}},
      h('div', {class: 'row'},
        h('h1', {class: 'grow', text: `Replay: ${title}`}),
        h('a', {href: '/', onclick: (e) => { e.preventDefault(); app.go('/'); }}, 'Home')),
      h('p', {class: 'muted'}, h('span', {text: `${this.names.join(', ')} · ${rulesText({rules: frames.rules})}`}), h('br'),
        h('span', {text: `Totals: ${totals}${frames.winner != null ? ` · winner ${this.names[frames.winner]}` : ''}`})),
      h('div', {class: 'panel timeline'},
        this.roundSel,
        h('button', {onclick: () => this.go(0), 'aria-label': 'First move'}, '|◀'),
        h('button', {id: 'replay-prev', onclick: () => this.go(this.step - 1), 'aria-label': 'Previous move'}, '◀'),
        this.playBtn,
        h('button', {id: 'replay-next', onclick: () => this.go(this.step + 1), 'aria-label': 'Next move'}, '▶'),
        h('button', {onclick: () => this.go(this.snaps.length - 1), 'aria-label': 'Last move'}, '▶|'),
        speed, this.slider),
      this.status, board, this.result));
    this.view = new TableView(board, {
      seat: null,
      options: rulesOptions(frames.rules),
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
    this.loadRound(0);
  }

  /** Show the match's analysis under the board; each missed play jumps to its moment. */
  showAnalysis(load) {
    this.result.after(analysisSlot(load, {onJump: (r, k) => {
      this.roundSel.value = String(r);
      this.loadRound(r);
      this.go(k);
      this.root.querySelector('.replay-board').scrollIntoView({block: 'nearest'});
    }}));
  }

  destroy() {
    this.stop();
    document.removeEventListener('keydown', this.onKey);
    this.view.destroy();
  }

  loadRound(r) {
    this.stop();
    this.round = r;
    const rd = this.frames.rounds[r];
    const snaps = [rd.deal];
    for (const step of rd.steps) snaps.push(applyStep(snaps[snaps.length - 1], step));
    this.snaps = snaps;
    this.slider.max = String(snaps.length - 1);
    this.step = -1;
    this.go(0);
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
      fill(this.status,
        h('span', {text: `${k}/${n} · ${(st.t / 1000).toFixed(1)} s · ${this.names[st.seat]}: ${st.move}`}),
        st.ok ? null : h('span', {class: 'bad', text: ` (refused: ${st.error})`}));
    }
    this.showResult(k === this.snaps.length - 1);
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
          h('td', {}, h('span', {class: 'row'}, ownerMark(s, this.names[s]), h('span', {text: this.names[s]}))),
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
