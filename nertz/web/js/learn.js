// The how-to-play lesson (/learn): one round on a fixed deal, step by step. The server sends
// the deal and every step as its engine played them (GET /api/tutorial); the page points at the
// card to move and where it goes, waits for the learner to make that move (by drag, click or
// keys, as at a real table), then shows the step's changes. It works out no rule itself.

import {h, fill, toast} from './dom.js';
import {api} from './net.js';
import {label} from './cards.js';
import {parseMove} from './rules.js';
import {TableView} from './table.js';
import {applyStep, describeStep} from './replay.js';
import {beep} from './sound.js';

/** Why each kind of step is made, for a newcomer (in the words of a touch screen on one). */
function why(move) {
  const mv = parseMove(move);
  const touch = window.matchMedia && window.matchMedia('(pointer: coarse)').matches;
  if (move === 'T') return `Nothing to play? Turn your stock: three cards go to the waste, and the top one is yours to play (${touch ? 'tap the stock' : 'Space, or click the stock'}).`;
  if (mv && mv.kind === 'NERTZ') return `Your Nertz pile is empty: call Nertz! to end the round (${touch ? 'tap the Call button' : 'C, or the Call button'}).`;
  if (!mv || mv.kind !== 'play') return '';
  if (mv.dst === 'F') return 'Foundations in the middle are everyone\u2019s: an Ace starts one, and each grows up in its suit. Play there first: every card counts.';
  if (mv.src === 'N') return 'Empty your Nertz pile: that is the race. Its top card may go on a work pile a rank lower in the other colour.';
  if (mv.src === 'W') return 'The waste\u2019s top card plays like any other.';
  return 'Work piles go down a rank at a time in alternating colours; move a card (with the cards on it) to free a pile or uncover one.';
}

class Lesson {
  constructor(root, app, data) {
    this.app = app;
    this.data = data;
    this.i = 0;
    this.table = data.deal;
    this.names = data.names;
    this.panel = h('div', {class: 'learn-panel', id: 'learn-step', role: 'status', 'aria-live': 'polite'});
    const board = h('div', {class: 'learn-board'});
    fill(root, h('div', {class: 'learn', id: 'learn'},
      h('div', {class: 'row learn-head'}, h('h1', {class: 'grow', text: 'Learn Nertz: a guided round'}),
        h('a', {href: '/', onclick: (e) => { e.preventDefault(); app.go('/'); }}, 'Home')),
      this.panel, board));
    this.view = new TableView(board, {
      seat: 0,
      piles: null,
      options: {},
      names: (s) => this.names[s] || `seat ${s + 1}`,
      initial: (s) => (this.names[s] || '?')[0].toUpperCase(),
      latency: () => null,
      play: (move, cards) => this.tried(move, cards),
      onHelp: () => {},
      topbar: () => h('span', {class: 'muted', text: 'The other seat is asleep: take your time.'}),
      phase: 'playing',
      callWord: 'Nertz',
    });
    this.show();
  }

  destroy() { this.view.destroy(); }

  /** The step the learner is to make now, in words, with its card. */
  step() { return this.data.steps[this.i] || null; }

  show() {
    const step = this.step();
    this.view.render(this.table, {pending: 0, banner: step ? '' : 'Well played: that is a round of Nertz!'});
    document.querySelectorAll('.hint, .hint-target').forEach((el) => el.classList.remove('hint', 'hint-target'));
    if (!step) {
      fill(this.panel, h('p', {text: 'You emptied your Nertz pile and called. In a real game everyone plays at once, as fast as they can.'}),
        h('p', {}, h('a', {href: '/', id: 'learn-done', onclick: (e) => { e.preventDefault(); this.app.go('/'); }}, 'Play a real game')));
      this.panel.dataset.step = 'done';
      return;
    }
    const said = describeStep(this.table, {seat: 0, move: step.move, ok: true, foundations: step.foundations}, this.names);
    this.panel.dataset.step = String(this.i);
    this.panel.dataset.move = step.move;
    fill(this.panel, h('p', {class: 'learn-count', text: `Step ${this.i + 1} of ${this.data.steps.length}`}),
      h('p', {class: 'learn-do', text: said.card ? `Move the ${label(said.card)} ${said.text.includes(' from ') ? 'from ' + said.text.split(' from ')[1] : ''}`.trim()
        : step.move === 'T' ? 'Turn your stock' : 'Call Nertz!'}),
      h('p', {class: 'muted', text: why(step.move)}));
    // Point at the card and where it goes (or the stock, or the call).
    const me = document.querySelector('#me');
    if (step.move === 'T') me.querySelector('[data-pile="S"] .stack')?.classList.add('hint');
    else if (step.move === 'NERTZ') document.querySelector('#call')?.classList.add('hint');
    else if (said.card) {
      me.querySelector(`.card[data-card="${said.card}"]`)?.classList.add('hint');
      const dst = parseMove(step.move).dst;
      (dst === 'F' ? document.querySelector('#foundations') : me.querySelector(`[data-pile="${dst}"]`))?.classList.add('hint-target');
    }
  }

  /** The learner made `move`: the step's own move goes on; any other is explained. */
  tried(move, cards) {
    const step = this.step();
    if (!step) return;
    const want = parseMove(step.move), got = parseMove(move);
    const said = describeStep(this.table, {seat: 0, move: step.move, ok: true, foundations: step.foundations}, this.names);
    const same = move === step.move || (want && got && want.kind === 'play' && got.kind === 'play' &&
      want.src === got.src && want.dst === got.dst && (!said.card || !cards || !cards.length || cards[0] === said.card));
    if (!same) {
      toast('Not that one this time: follow the highlighted card.', 'bad');
      beep('bad');
      this.show();
      return;
    }
    beep(want && want.dst === 'F' ? 'foundation' : move === 'NERTZ' ? 'call' : 'place');
    this.table = applyStep(this.table, {...step, ok: true});
    this.i += 1;
    this.show();
  }
}

/** Open the lesson in `root`; returns it (for teardown). */
export async function learnScreen(root, app) {
  fill(root, h('p', {class: 'loading', text: 'Dealing the lesson…'}));
  try {
    return new Lesson(root, app, await api('/api/tutorial'));
  } catch (e) {
    fill(root, h('div', {class: 'screen'}, h('p', {class: 'error-text', text: e.message}), h('a', {href: '/'}, 'Home')));
    return null;
  }
}
