// The table: one's own tableau large at the bottom, the shared foundations in the middle, the
// other seats around. Drag and drop (Pointer Events: mouse, pen and touch alike), click to send
// a card to its best place, and full keyboard play. Regions re-render only when what they show
// changed; a drag moves a floating copy with transforms, so nothing underneath is laid out again.

import {h, fill, refill, toast, note, clearSpot, emojiShown} from './dom.js';
import {cardEl, backEl, slotEl, ownerMark, label, parse} from './cards.js';
import {bestMove, fitFoundation, fitsWork, lift, canCall} from './rules.js';
import {beep} from './sound.js';

const PILE_KEYS = ['1', '2', '3', '4', '5'];
const POINTER_MS = 100;  // a drag is told to the others at most ten times a second
/** The quick reactions (the server's fixed set): what each shows (an emoji, or a word where
 *  the device has no emoji font: emojiShown) and says. */
const EMOTES = {wave: ['\u{1F44B}', 'Wave', 'Wave'], gg: ['GG', 'Good game', 'GG'], wow: ['\u{1F62E}', 'Wow', 'Wow'],
  oops: ['\u{1F605}', 'Oops', 'Oops'], hurry: ['\u23F1\uFE0F', 'Hurry up', 'Hurry'], thanks: ['\u{1F64F}', 'Thanks', 'Thanks']};

/** What a reaction shows: its emoji where the device draws them, else its word. */
function emoteFace(name) {
  const e = EMOTES[name];
  if (!e) return name;
  return emojiShown() ? e[0] : e[2];
}

/** A smiling face drawn as SVG (the React button's: no emoji font needed). */
function smiley() {
  const ns = 'http://www.w3.org/2000/svg';
  const svg = document.createElementNS(ns, 'svg');
  svg.setAttribute('viewBox', '0 0 16 16');
  svg.setAttribute('class', 'react-face');
  svg.setAttribute('aria-hidden', 'true');
  const add = (tag, attrs) => {
    const el = document.createElementNS(ns, tag);
    for (const [k, v] of Object.entries(attrs)) el.setAttribute(k, String(v));
    svg.append(el);
  };
  add('circle', {cx: 8, cy: 8, r: 6.6, fill: 'none', stroke: 'currentColor', 'stroke-width': 1.5});
  add('circle', {cx: 5.7, cy: 6.4, r: 1.05, fill: 'currentColor'});
  add('circle', {cx: 10.3, cy: 6.4, r: 1.05, fill: 'currentColor'});
  add('path', {d: 'M4.9 9.4 Q8 12.6 11.1 9.4', fill: 'none', stroke: 'currentColor', 'stroke-width': 1.5, 'stroke-linecap': 'round'});
  return svg;
}
const STARTER_WORDS = {1: 'an Ace', 8: 'an 8', 11: 'a Jack', 12: 'a Queen', 13: 'a King'};
/** A screen too short for a phone's two rows of one's own piles (style.css, .compact). */
const SHORT_SCREEN = '(max-height: 740px)';

/** Fly an element from a screen rectangle to where it now is (FLIP). */
export function flyFrom(el, rect, ms = 220) {
  if (!el || !rect || !el.animate) return;
  if (matchMedia('(prefers-reduced-motion: reduce)').matches) return;
  const now = el.getBoundingClientRect();
  const dx = rect.left - now.left, dy = rect.top - now.top;
  if (Math.abs(dx) + Math.abs(dy) < 2) return;
  const scale = rect.width && now.width ? rect.width / now.width : 1;
  el.animate([
    {transform: `translate(${dx}px, ${dy}px) scale(${scale})`, zIndex: 30},
    {transform: 'translate(0, 0) scale(1)', zIndex: 30},
  ], {duration: ms, easing: 'cubic-bezier(.2,.7,.3,1)'});
}

/**
 * The table screen. `ctx` gives what the view needs from the app:
 *   seat (own seat or null), piles (which of 'N', 'S', 'W' this player plays, as the
 *   server says; null: all), options,
 *   names(seat), initial(seat), latency(seat),
 *   play(move, flight), onHelp(), topbar() -> element, phase, callWord
 */
/** What a seat's milliseconds are, for whoever wonders. */
const LATENCY_TIP = 'Connection delay: the round trip to the server. Races for a foundation allow for it.';

export class TableView {
  constructor(root, ctx) {
    this.root = root;
    this.ctx = ctx;
    this.keys = {};
    this.selection = null;   // {src, index} for keyboard play
    this.drag = null;
    this.lastClick = {pile: null, card: null, at: 0};
    this.flights = [];
    this.build();
    this.onKey = (e) => this.key(e);
    document.addEventListener('keydown', this.onKey);
    this.onResize = () => this.fitWatching();
    window.addEventListener('resize', this.onResize);
    this.short = matchMedia(SHORT_SCREEN);
    this.onShort = () => this.markCrowding();
    this.short.addEventListener('change', this.onShort);
    // The middle's size follows the screen and the seats around it (one's own grows by a line
    // when a message shows under the actions): the foundations are fitted to it again.
    this.middleSize = new ResizeObserver(() => this.fitFoundations());
    this.middleSize.observe(this.founds.parentElement);
  }

  destroy() {
    document.removeEventListener('keydown', this.onKey);
    window.removeEventListener('resize', this.onResize);
    this.short.removeEventListener('change', this.onShort);
    this.middleSize.disconnect();
    this.endDrag(false);
    for (const r of Object.values(this.remote || {})) { r.el.remove(); clearTimeout(r.timer); }
    this.remote = {};
  }

  build() {
    this.top = h('div', {class: 'topbar'});
    this.opps = h('section', {class: 'opponents', 'aria-label': 'Other seats'});
    this.banner = h('div', {class: 'banner', 'aria-live': 'polite'});
    this.founds = h('section', {id: 'foundations', class: 'foundations', 'aria-label': 'Foundations', dataset: {pile: 'F'}});
    this.me = h('section', {id: 'me', class: 'me', 'aria-label': 'Your tableau'});
    this.countdown = h('div', {class: 'countdown hidden', 'aria-live': 'assertive'});
    fill(this.root, h('div', {id: 'table-screen'},
      this.top, this.opps, h('div', {class: 'middle'}, this.banner, this.founds), this.me, this.countdown));
    this.me.addEventListener('pointerdown', (e) => this.pointerDown(e));
  }

  /** Draw the table view `t` (the server's view with one's own pending moves shown). */
  render(t, extra = {}) {
    this.t = t;
    this.extra = extra;
    const ctx = this.ctx;
    const seat = ctx.seat;
    this.root.querySelector('#table-screen').dataset.pending = String(extra.pending || 0);
    this.root.querySelector('#table-screen').dataset.phase = ctx.phase;
    this.region('top', JSON.stringify([extra.topKey]), () => refill(this.top, ctx.topbar()));
    // Opponents: every seat but one's own (everyone, for a spectator).
    const others = t ? t.tableaus.filter((tab) => tab.seat !== seat) : [];
    const want = others.map((tab) => tab.seat).join(',');
    if (this.opps.dataset.seats !== want) {
      this.opps.dataset.seats = want;
      // A spectator has the whole screen for the seats (fitWatching lays them out).
      const watching = seat == null;
      this.opps.classList.toggle('watching', watching);
      this.opps.classList.toggle('many', others.length > (watching ? 4 : 3));
      this.opps.classList.toggle('few', !watching && others.length <= 2);
      this.others = watching ? -1 : others.length;
      this.markCrowding();
      // How many cards wide a seat's row of piles is (its work piles and three more): the
      // other seats' rows, and one's own where it is one row (a phone's .compact table).
      const tab = t && t.tableaus[0];
      this.root.querySelector('#table-screen').style.setProperty('--piles', String(3 + (tab ? tab.work.length : 5)));
      this.keys = Object.fromEntries(Object.entries(this.keys).filter(([k]) => !k.startsWith('opp')));
      fill(this.opps, others.map((tab) => h('div', {class: 'opp', dataset: {seat: String(tab.seat)}})));
    }
    for (const tab of others) {
      const el = this.opps.querySelector(`.opp[data-seat="${tab.seat}"]`);
      const key = JSON.stringify([tab, ctx.names(tab.seat), t.called_by, ctx.flag ? ctx.flag(tab.seat) : null]);
      this.region('opp' + tab.seat, key, () => this.renderOpp(el, tab));
      this.showLatency(el, tab.seat);
      this.showAway(el, tab.seat);
    }
    this.region('found', JSON.stringify([t && t.foundations, extra.dropF, ctx.phase]), () => this.renderFoundations(t));
    if (seat != null && t) {
      this.me.classList.remove('hidden');
      const tab = t.tableaus[seat];
      const key = JSON.stringify([tab, this.selection, ctx.names(seat), t.ended, ctx.phase, String(ctx.piles),
        t.tableaus.map((o) => !!o.stuck)]);
      this.region('me', key, () => this.renderMe(tab));
      this.showLatency(this.me, seat);
      if (this.drag && this.drag.active) this.hideDragSources();
    } else {
      this.me.classList.add('hidden');
    }
    if (this.banner.textContent !== (extra.banner || '')) {
      this.banner.replaceChildren(...(extra.banner ? [h('span', {text: extra.banner})] : []));
    }
    this.fitWatching();
    this.fitFoundations();
    this.runFlights();
  }

  /** `.crowded`: four or more other seats (a player's, not a spectator's). `.compact`: three
   * or more (up to 16 foundations), or any number on a short screen, where a phone
   * (style.css) puts one's own piles in one row to leave the foundations room; elsewhere it
   * changes nothing. */
  markCrowding() {
    const screen = this.root.querySelector('#table-screen');
    const n = this.others == null ? -1 : this.others;
    screen.classList.toggle('crowded', n > 3);
    screen.classList.toggle('compact', n >= 3 || (n >= 0 && this.short.matches));
  }

  /** The foundations' cards as large as the middle of the table lets them be, up to the style
   * sheet's size (--fw): a crowded table has up to 32 foundations, and at that size they
   * wrapped past the strip's edges over the seats around it. The most columns and rows the
   * count needs are tried for the largest card that fits both ways; worked out again only when
   * the count or the middle's size changes. The replay viewer's board grows instead. */
  fitFoundations() {
    const middle = this.founds.parentElement;
    const n = this.founds.querySelectorAll('.fnd').length;
    const key = [n, middle.clientWidth, middle.clientHeight].join();
    if (key === this.foundKey) return;
    this.foundKey = key;
    this.founds.style.removeProperty('--fw');
    if (!n || this.ctx.phase === 'replay' || !middle.clientHeight) return;
    const css = getComputedStyle(this.founds);
    const px = (v) => parseFloat(v) || 0;
    const gap = px(css.columnGap);
    const frame = (a, b) => px(css[`padding${a}`]) + px(css[`padding${b}`]) + px(css[`border${a}Width`]) + px(css[`border${b}Width`]);
    const width = middle.clientWidth - frame('Left', 'Right');
    // Each pile's card under the top peeks out 4px above it (.fnd .under): in every row, so
    // counted per row below (counted once, the first and last rows spilled past the strip at
    // some heights of the middle).
    const height = middle.clientHeight - frame('Top', 'Bottom');
    const most = this.founds.querySelector('.fnd .card:not(.under)').getBoundingClientRect().width;
    let best = 0;
    for (let cols = 1; cols <= n; cols++) {
      const rows = Math.ceil(n / cols);
      const byWidth = (width - (cols - 1) * gap) / cols;
      const byHeight = ((height - (rows - 1) * gap) / rows - 4) / 1.4;
      best = Math.max(best, Math.min(byWidth, byHeight));
    }
    let fw = Math.floor(Math.min(best, most));
    if (best < most) this.founds.style.setProperty('--fw', `${Math.max(12, fw)}px`);
    // The sums above assume the rows they counted; the wrapping lays out the piles as they
    // are (each with its frame and marks), and at some sizes it wraps one pile fewer a row and
    // the strip overflows (its first and last rows spilled over the seats). The layout says.
    const over = () => this.founds.scrollHeight > this.founds.clientHeight + 1
      || this.founds.scrollWidth > this.founds.clientWidth + 1;
    while (fw > 12 && over()) this.founds.style.setProperty('--fw', `${--fw}px`);
  }

  /** A spectator has no tableau of their own: the seats share the whole screen, in the number
   * of columns that gives them the largest cards that fit (no larger than a player's own), so
   * that watching is as legible as playing. The sizes come from the panels as drawn (what a
   * seat needs besides its cards), and are worked out again only when the seats or the screen
   * change; a player's page (and the replay viewer's board, which scrolls) keeps style.css's. */
  fitWatching() {
    const panel = this.opps.querySelector('.opp');
    const fan = panel && panel.querySelector('.stack.fan');
    if (this.ctx.seat != null || this.ctx.phase === 'replay' || !fan) {
      if (this.fitKey) {
        this.opps.style.removeProperty('--ow');
        this.opps.style.removeProperty('grid-template-columns');
        this.fitKey = '';
      }
      return;
    }
    const screen = this.root.querySelector('#table-screen');
    const n = this.opps.children.length;
    const key = [n, screen.clientWidth, screen.clientHeight, this.top.offsetHeight].join();
    if (key === this.fitKey) return;
    this.fitKey = key;
    const css = (el) => getComputedStyle(el);
    const px = (v) => parseFloat(v) || 0;
    const sc = css(screen);
    const gap = px(css(this.opps).rowGap);
    const width = screen.clientWidth - px(sc.paddingLeft) - px(sc.paddingRight);
    // The middle keeps room for its foundations, and half a row more (they wrap).
    const fmin = px(css(this.founds).minHeight);
    const height = screen.clientHeight - px(sc.paddingTop) - px(sc.paddingBottom)
      - this.top.offsetHeight - 2 * px(sc.rowGap) - fmin * 1.5;
    // A player's own card at this screen size: the most a spectator's cards grow to.
    const probe = h('div', {class: 'card', style: {position: 'absolute', visibility: 'hidden', width: 'var(--cw)'}});
    screen.append(probe);
    const most = probe.getBoundingClientRect().width;
    probe.remove();
    let last = 0;
    for (let pass = 0; pass < 3; pass++) {
      const piles = panel.querySelector('.piles');
      const w = panel.querySelector('.piles > .pile').getBoundingClientRect().width;
      const cards = piles.querySelectorAll(':scope > .pile').length;
      const tall = fan.getBoundingClientRect().height / w;  // a work pile's height, in card widths
      const row = piles.lastElementChild.getBoundingClientRect().right - piles.firstElementChild.getBoundingClientRect().left;
      const gapsW = row - cards * w;
      const extraW = panel.getBoundingClientRect().width - piles.getBoundingClientRect().width;
      const extraH = panel.getBoundingClientRect().height - fan.getBoundingClientRect().height;
      let best = 0, cols = 1;
      for (let c = 1; c <= n; c++) {
        const rows = Math.ceil(n / c);
        const byWidth = ((width - (c - 1) * gap) / c - extraW - gapsW) / cards;
        const byHeight = ((height - (rows - 1) * gap) / rows - extraH) / tall;
        const size = Math.min(byWidth, byHeight);
        if (size > best) { best = size; cols = c; }
      }
      const size = Math.max(12, Math.floor(Math.min(best, most)));
      this.opps.style.setProperty('--ow', `${size}px`);
      this.opps.style.setProperty('grid-template-columns', `repeat(${cols}, minmax(0, 1fr))`);
      if (Math.abs(size - last) < 1) break;
      last = size;
    }
  }

  /** Write a seat's round trip into its `.lat` label in place: the figure changes every few
   * seconds, and redrawing a tableau for it would pull a card out from under a pointer. */
  showLatency(el, seat) {
    const lat = this.ctx.latency(seat);
    const label = el && el.querySelector('.lat');
    const text = lat == null ? '' : `${lat} ms`;
    if (label && label.textContent !== text) label.textContent = text;
  }

  /** Write whether a seat's player is away (and how long until a bot may take the seat) into
   * its `.away` mark in place: the countdown ticks every second. */
  showAway(el, seat) {
    const mark = el && el.querySelector('.away');
    if (!mark) return;
    const text = this.ctx.away ? this.ctx.away(seat) : '';
    if (mark.textContent !== text) mark.textContent = text;
    mark.hidden = !text;
  }

  region(name, key, draw) {
    if (this.keys[name] === key) return;
    this.keys[name] = key;
    draw();
  }

  /** Forget the drawn state (after a toggle such as the four-colour deck). */
  invalidate() { this.keys = {}; this.opps.dataset.seats = ''; }

  showCountdown(text) {
    this.countdown.classList.toggle('hidden', !text);
    if (this.countdown.textContent !== (text || '')) {
      this.countdown.replaceChildren(...(text ? [h('span', {text})] : []));
    }
  }

  // ---------------------------------------------------------------- drawing

  renderOpp(el, tab) {
    const ctx = this.ctx;
    const s = tab.seat;
    el.classList.toggle('stuck', !!tab.stuck);
    const lat = ctx.latency(s);
    const name = h('div', {class: 'name'},
      ownerMark(s, ctx.initial(s)),
      h('span', {class: 'nm', text: ctx.names(s)}),
      // The Nertz pile's count, beside the name where the seat's cards are too small for a
      // badge (style.css); the pile's card says it to screen readers.
      h('span', {class: 'ncount', 'aria-hidden': 'true', title: 'Cards left in the Nertz pile', text: String(tab.nertz_count)}),
      h('span', {class: 'lat', text: lat == null ? '' : `${lat} ms`, title: LATENCY_TIP}),
      h('span', {class: 'badge away', role: 'status'}),
      tab.stuck ? h('span', {class: 'badge', text: 'stuck'}) : null,
      flagBadge(ctx.flag ? ctx.flag(s) : null),
      this.t.called_by === s ? h('span', {class: 'badge call', text: ctx.callWord + '!'}) : null);
    const who = ctx.names(s);
    const nertz = h('div', {class: 'pile', dataset: {seat: String(s), pile: 'N'}},
      tab.nertz_top ? cardEl(tab.nertz_top, {count: tab.nertz_count, extraLabel: `${who}'s Nertz pile, ${tab.nertz_count} cards`})
        : tab.nertz_count ? backEl(tab.nertz_count) : slotEl(`${who}'s Nertz pile, empty`, 0));
    const waste = h('div', {class: 'pile', dataset: {seat: String(s), pile: 'W'}},
      tab.waste_top ? cardEl(tab.waste_top, {count: tab.waste_count, extraLabel: `${who}'s waste`})
        : slotEl(`${who}'s waste, empty`));
    const stock = h('div', {class: 'pile', dataset: {seat: String(s), pile: 'S'}},
      tab.stock_count ? backEl(tab.stock_count, `${who}'s stock, ${tab.stock_count} cards`) : slotEl(`${who}'s stock, empty`, 0));
    const work = tab.work.map((p, i) => this.workStack(p, String(i + 1), 0.22, {seat: String(s)}));
    fill(el, name, h('div', {class: 'piles'}, nertz, stock, waste, h('span', {class: 'gap'}), work));
  }

  /** A work pile: face-down cards, then its face-up run fanned downwards. Each card carries
   * how many face-down cards (`--di`) and how many fan steps of the run (`--ui`, in card
   * heights) lie above it; the style sheet fits the whole pile into its fixed height (`--k`
   * card heights below the first card) by closing up the face-down cards first and then the
   * run, so however long a pile gets the table never grows past the screen. */
  workStack(p, n, fan, data = {}, mine = false) {
    const pile = h('div', {class: 'pile', dataset: {...data, pile: n}});
    const stack = h('div', {class: 'stack fan'});
    let di = 0, ui = 0;
    const place = (card) => {
      card.style.setProperty('--di', String(di));
      card.style.setProperty('--ui', String(Math.round(ui * 1000) / 1000));
      stack.append(card);
    };
    const downShown = Math.min(p.down, 6);
    for (let i = 0; i < downShown; i++) { place(backEl(null, 'face-down card')); di += 1; }
    if (p.hidden_top) { place(backEl(null, 'card being turned up')); ui += fan; }
    p.up.forEach((code, i) => {
      const c = cardEl(code);
      c.dataset.index = String(i);
      if (mine) c.tabIndex = -1;
      place(c);
      ui += fan;
    });
    if (!p.up.length && !p.down && !p.hidden_top) stack.append(slotEl(`work pile ${n}, empty`));
    // The last card's own offsets: the pile's extent below its first card.
    const lastUp = p.up.length ? ui - fan : ui;
    const lastDown = p.up.length || p.hidden_top ? di : Math.max(0, di - 1);
    stack.style.setProperty('--dn', String(Math.max(0.001, lastDown)));
    stack.style.setProperty('--un', String(Math.max(0.001, Math.round(lastUp * 1000) / 1000)));
    pile.append(stack);
    return pile;
  }

  renderFoundations(t) {
    const ctx = this.ctx;
    const fs = t ? [...t.foundations].sort((a, b) => a.number - b.number) : [];
    if (!fs.length) {
      // The countdown has the middle of the screen to itself.
      if (ctx.phase === 'countdown') { fill(this.founds); return; }
      // The ranks that open one, as the server says (`starts`).
      const starts = ((t && t.starts) || [1]).map((r) => STARTER_WORDS[r] || `a ${r}`);
      fill(this.founds, h('p', {class: 'empty-note', text: `Foundations start here: play ${starts.join(' or ')}.`}));
      return;
    }
    fill(this.founds, fs.map((f) => {
      const n = f.cards.length;
      const top = f.cards[n - 1];
      const owner = f.owners[n - 1];
      const el = h('div', {class: 'fnd' + (f.finished ? ' finished' : ''), dataset: {pile: 'F' + f.number},
        title: `F${f.number}: ${n} cards`});
      const stack = h('div', {class: 'stack'});
      if (n > 1) {
        const under = cardEl(f.cards[n - 2], {owner: f.owners[n - 2], ownerName: ctx.names(f.owners[n - 2]), initial: ctx.initial(f.owners[n - 2])});
        under.classList.add('under');
        under.setAttribute('aria-hidden', 'true');
        stack.append(under);
      }
      const c = cardEl(top, {owner, ownerName: ctx.names(owner), initial: ctx.initial(owner),
        extraLabel: `foundation ${f.number}, ${n} cards${f.finished ? ', finished' : ''}`});
      c.style.position = 'relative';
      stack.append(c);
      el.append(stack);
      return el;
    }));
  }

  renderMe(tab) {
    const ctx = this.ctx;
    const seat = ctx.seat;
    const t = this.t;
    this.me.classList.toggle('stuck', !!tab.stuck);
    this.me.dataset.seat = String(seat);
    const lat = ctx.latency(seat);
    const sel = this.selection;
    const nertz = h('div', {class: 'pile', dataset: {pile: 'N'}, tabindex: '0', role: 'group', 'aria-label': `Your Nertz pile, ${tab.nertz_count} cards. Key N`},
      h('div', {class: 'stack'},
        tab.nertz_top ? cardEl(tab.nertz_top, {count: tab.nertz_count, extraLabel: 'top of your Nertz pile'})
          : tab.nertz_count ? backEl(tab.nertz_count, 'your Nertz pile') : slotEl('your Nertz pile, empty', 0)),
      h('div', {class: 'pile-label'}, 'Nertz ', h('span', {class: 'kbd', text: 'N'})));
    const stock = h('div', {class: 'pile', dataset: {pile: 'S'}, tabindex: '0', role: 'group', 'aria-label': `Your stock, ${tab.stock_count} cards: turn with Space`},
      h('div', {class: 'stack'},
        tab.stock_count ? backEl(tab.stock_count, `your stock, ${tab.stock_count} cards`)
          : slotEl(tab.waste_count ? 'stock empty: turn the waste over' : 'your stock, empty', 0)),
      h('div', {class: 'pile-label'}, 'Stock ', h('span', {class: 'kbd', text: 'Space'})));
    const waste = h('div', {class: 'pile', dataset: {pile: 'W'}, tabindex: '0', role: 'group', 'aria-label': `Your waste, ${tab.waste_count} cards. Key W`},
      h('div', {class: 'stack'},
        tab.waste_top ? cardEl(tab.waste_top, {count: tab.waste_count, extraLabel: 'top of your waste'})
          : tab.waste_hidden ? backEl(tab.waste_count) : slotEl('your waste, empty')),
      h('div', {class: 'pile-label'}, 'Waste ', h('span', {class: 'kbd', text: 'W'})));
    const work = tab.work.map((p, i) => {
      const el = this.workStack(p, String(i + 1), 0.24, {}, true);
      el.tabIndex = 0;
      el.setAttribute('role', 'group');
      el.setAttribute('aria-label', `Work pile ${i + 1}: ${p.down} face down, ${p.up.map(label).join(', ') || 'empty'}. Key ${i + 1}`);
      // On the first card's corner: a fan's room reaches far below its cards, and a key there
      // read as a stray digit, tied to no pile.
      el.append(h('div', {class: 'pile-label work-key'}, h('span', {class: 'kbd', text: String(i + 1)})));
      return el;
    });
    if (tab.nertz_hidden) nertz.querySelector('.stack').replaceChildren(backEl(tab.nertz_count, 'your Nertz pile'));
    const piles = [nertz, stock, waste, ...work];
    for (const pile of [nertz, stock, waste]) {
      if (!this.partnerPile(pile.dataset.pile)) continue;
      pile.classList.add('partner-pile');
      pile.setAttribute('aria-label', `${pile.getAttribute('aria-label')} (your partner plays it)`);
      pile.querySelector('.pile-label').append(h('span', {class: 'muted small', text: ' partner'}));
    }
    if (sel) {
      const pile = piles.find((p) => p.dataset.pile === sel.src);
      if (pile) {
        pile.classList.add('selected-pile');
        const cards = [...pile.querySelectorAll('.card[data-card]')];
        const from = sel.index == null ? cards.length - 1 : sel.index;
        cards.slice(Math.max(0, from)).forEach((c) => c.classList.add('selected'));
      }
    }
    const callable = canCall(t, seat) && ctx.phase === 'playing';
    const either = ctx.options.stuck_reset === 'rotate_either';
    // The table resets only once every seat is stuck: say so when it waits for this one alone.
    const othersStuck = !t.ended && !tab.stuck && ctx.phase === 'playing' && t.tableaus.length > 1
      && t.tableaus.every((o, s) => s === seat || o.stuck);
    const actions = h('div', {class: 'actions'},
      callable ? h('button', {class: 'callbtn', id: 'call', onclick: () => ctx.play('NERTZ'), 'aria-keyshortcuts': 'C'}, `Call ${ctx.callWord}! (C)`) : null,
      h('button', {id: 'turn', onclick: () => ctx.play('T'), 'aria-keyshortcuts': 'Space', disabled: !(tab.stock_count || tab.waste_count) || !!t.ended || this.partnerPile('S')}, 'Turn', h('span', {class: 'key'}, ' (Space)')),
      h('button', {id: 'stuck', onclick: () => ctx.play(either ? 'STUCK S' : 'STUCK'), 'aria-keyshortcuts': 'S',
        disabled: !!tab.stuck || !!t.ended, 'aria-pressed': tab.stuck ? 'true' : 'false'},
        // A phone with little room shows the first word alone (style.css); it is said whole.
        tab.stuck && !t.ended ? ['Stuck', h('span', {class: 'stuck-why'}, ': waiting for the others')] : (either ? 'Stuck: rotate stock' : "I'm stuck"),
        tab.stuck && !t.ended ? null : h('span', {class: 'key'}, ' (S)')),
      either ? h('button', {onclick: () => ctx.play('STUCK N'), disabled: !!tab.stuck || !!t.ended || !tab.nertz_count}, 'Stuck: rotate Nertz pile', h('span', {class: 'key'}, ' (Shift+S)')) : null,
      othersStuck ? h('span', {class: 'nudge', id: 'stuck-nudge', role: 'status'}, 'Everyone else is stuck: play on, or say you are stuck too and the table resets.') : null,
      sel ? h('span', {class: 'nudge', id: 'holding', role: 'status'}, holdingText(tab, sel, ctx.options)) : null,
      // A declaration lapses at the seat's next move (SPEC): say so, or a mistaken tap looks final.
      tab.stuck && !t.ended ? h('span', {class: 'muted small', id: 'stuck-undo', role: 'status'}, 'Changed your mind? Any move takes it back.') : null,
      h('span', {class: 'muted small tip tip-mouse'}, 'Drag cards, click one to send it to its best place, or press ? for keys.'),
      h('span', {class: 'muted small tip tip-touch'}, 'Tap a card to play it; drag it to choose where.'));
    fill(this.me,
      h('div', {class: 'mehead'},
        ownerMark(seat, ctx.initial(seat)),
        h('span', {class: 'nm', text: ctx.names(seat)}),
        ctx.names(seat) === 'You' ? null : h('span', {class: 'muted you', text: '(you)'}),
        h('span', {class: 'pill', id: 'my-nertz-count', text: `Nertz pile: ${tab.nertz_count}`}),
        h('span', {class: 'lat', text: lat == null ? '' : `${lat} ms`, title: LATENCY_TIP}),
        tab.stuck ? h('span', {class: 'badge', text: 'stuck'}) : null,
        ctx.emote ? this.emoteMenu() : null),
      h('div', {class: 'tableau'}, h('div', {class: 'side'}, nertz, stock, waste), h('div', {class: 'work'}, work)),
      actions);
  }

  // ---------------------------------------------------------------- flights (animation)

  /** After the next render, fly the card `code` found by `selector` from `rect`. */
  queueFlight(selector, rect) { this.flights.push({selector, rect}); }

  runFlights() {
    const flights = this.flights;
    this.flights = [];
    for (const f of flights) {
      const els = this.root.querySelectorAll(f.selector);
      flyFrom(els[els.length - 1], f.rect);
    }
  }

  // ---------------------------------------------------------------- split teams

  /** Whether pile `src` (N, S or W) is another partner's: the server names the piles this
   * player plays (`piles`); the work piles are everyone's at the seat. */
  partnerPile(src) {
    const piles = this.ctx.piles;
    return !!piles && ['N', 'S', 'W'].includes(src) && !piles.includes(src);
  }

  /** Refuse a pick-up from the other partner's pile with a word why; true if refused. */
  refusePartnerPile(src) {
    if (!this.partnerPile(src)) return false;
    toast(src === 'N' ? 'Your partner plays the Nertz pile' : 'Your partner plays the stock and waste');
    beep('bad');
    return true;
  }

  // ---------------------------------------------------------------- pointer play

  myTab() { return this.t && this.ctx.seat != null ? this.t.tableaus[this.ctx.seat] : null; }

  pointerDown(e) {
    if (e.button !== 0 && e.pointerType === 'mouse') return;
    if (this.ctx.phase !== 'playing' || !this.myTab() || this.t.ended) return;
    const pileEl = e.target.closest('#me [data-pile]');
    if (!pileEl) return;
    const src = pileEl.dataset.pile;
    if (this.refusePartnerPile(src)) { e.preventDefault(); return; }
    if (src === 'S') {
      e.preventDefault();
      this.ctx.play('T');
      beep('turn');
      return;
    }
    const cardElm = e.target.closest('.card[data-card]');
    if (!cardElm) return;
    const tab = this.myTab();
    let index = null;
    if (src !== 'N' && src !== 'W') {
      index = Number(cardElm.dataset.index);
    } else if (!cardElm.isSameNode(pileEl.querySelector('.card[data-card]'))) {
      return;
    }
    const {cards, text} = lift(tab, src, index, this.ctx.options);
    if (!cards.length) return;
    e.preventDefault();
    const els = src === 'N' || src === 'W' ? [cardElm]
      : [...pileEl.querySelectorAll('.card[data-card]')].filter((c) => Number(c.dataset.index) >= (this.ctx.options.move_partial_runs === false ? 0 : index));
    this.drag = {src, index, cards, text, els, x0: e.clientX, y0: e.clientY, id: e.pointerId, kind: e.pointerType, active: false,
      rect: els[0].getBoundingClientRect()};
    this.selection = null;
    this.onMove = (ev) => this.pointerMove(ev);
    this.onUp = (ev) => this.pointerUp(ev);
    window.addEventListener('pointermove', this.onMove, {passive: false});
    window.addEventListener('pointerup', this.onUp);
    window.addEventListener('pointercancel', this.onUp);
  }

  pointerMove(e) {
    const d = this.drag;
    if (!d || e.pointerId !== d.id) return;
    e.preventDefault();
    const dx = e.clientX - d.x0, dy = e.clientY - d.y0;
    if (!d.active) {
      if (Math.hypot(dx, dy) < 6) return;
      this.startDrag();
    }
    d.x = e.clientX; d.y = e.clientY;
    if (!d.raf) {
      d.raf = requestAnimationFrame(() => {
        d.raf = 0;
        if (!this.drag) return;
        d.ghost.style.transform = `translate3d(${d.rect.left + d.x - d.x0}px, ${d.rect.top + d.y - d.y0}px, 0)`;
        this.markTarget(d.x, d.y);
        this.tellPointer(d);
      });
    }
  }

  startDrag() {
    const d = this.drag;
    d.active = true;
    // Where the regions are, read once (nothing is laid out again while dragging).
    d.fRect = this.founds.getBoundingClientRect();
    d.meRect = this.me.getBoundingClientRect();
    const ghost = h('div', {class: 'ghost', 'aria-hidden': 'true'});
    const top0 = d.rect.top;
    for (const el of d.els) {
      const r = el.getBoundingClientRect();
      const c = el.cloneNode(true);
      c.classList.remove('selected', 'hint');
      c.style.top = `${r.top - top0}px`;
      c.style.width = `${r.width}px`;
      c.style.setProperty('--w', `${r.width}px`);
      ghost.append(c);
    }
    ghost.style.transform = `translate3d(${d.rect.left}px, ${d.rect.top}px, 0)`;
    document.body.append(ghost);
    d.ghost = ghost;
    this.hideDragSources();
    // Show where the cards may go.
    const tab = this.myTab();
    const targets = [];
    if (d.cards.length === 1 && fitFoundation(d.cards[0], this.t) != null) targets.push(this.founds);
    tab.work.forEach((p, i) => {
      const n = String(i + 1);
      if (n !== d.src && fitsWork(d.cards[0], p)) targets.push(this.me.querySelector(`[data-pile="${n}"]`));
    });
    d.targets = targets.filter(Boolean);
    d.targets.forEach((el) => el.classList.add('drop-ok'));
  }

  hideDragSources() {
    const d = this.drag;
    if (!d) return;
    for (const code of d.cards) {
      const el = this.me.querySelector(`[data-pile="${d.src}"] .card[data-card="${code}"]`);
      if (el) el.classList.add('drag-source');
    }
  }

  markTarget() { /* targets are marked at drag start; nothing to lay out while moving */ }

  /** Tell the others where this drag is, at most ten times a second: over the foundations or
   * over one's own tableau, as fractions of that region (every screen draws both), with the
   * card held (the server passes the card on only while it is face up to everyone). */
  tellPointer(d) {
    if (!this.ctx.pointer) return;
    const now = performance.now();
    if (d.told && now - d.told < POINTER_MS) {
      // Too soon: tell where it is once the interval is up (the last place always goes out).
      if (!d.trail) d.trail = setTimeout(() => { d.trail = 0; if (this.drag === d) this.tellPointer(d); }, POINTER_MS - (now - d.told));
      return;
    }
    d.told = now;
    const inF = d.fRect && d.x >= d.fRect.left && d.x <= d.fRect.right && d.y >= d.fRect.top && d.y <= d.fRect.bottom;
    const r = inF ? d.fRect : d.meRect;
    if (!r || !r.width || !r.height) return;
    const frac = (v) => Math.round(Math.min(1, Math.max(0, v)) * 1000) / 1000;
    this.ctx.pointer({at: inF ? 'F' : 'own', x: frac((d.x - r.left) / r.width), y: frac((d.y - r.top) / r.height),
      card: d.cards[0], src: d.src});
    d.pointed = true;
  }

  // ---------------------------------------------------------------- the others' drags and emotes

  /** Show another seat's drag (a `pointer` message): the card it holds, or its mark, over
   * the region it names; gone when the drag ends (or, failing that, after 8 s unheard). */
  showPointer(m) {
    this.remote = this.remote || {};
    const key = m.player;
    let r = this.remote[key];
    if (!m.at) { if (r) { r.el.remove(); clearTimeout(r.timer); delete this.remote[key]; } return; }
    const region = m.at === 'F' ? this.founds
      : m.seat === this.ctx.seat ? this.me : this.opps.querySelector(`.opp[data-seat="${m.seat}"]`);
    if (!region) return;
    if (!r) {
      r = {el: h('div', {class: 'remote-drag', 'aria-hidden': 'true', dataset: {seat: String(m.seat)}}), card: undefined};
      document.body.append(r.el);
      this.remote[key] = r;
    }
    if (r.card !== (m.card || null)) {
      r.card = m.card || null;
      r.el.replaceChildren(r.card ? cardEl(r.card) : h('span', {class: 'remote-dot'}),
        ownerMark(m.seat, this.ctx.initial(m.seat)));
    }
    const box = region.getBoundingClientRect();
    r.el.style.transform = `translate3d(${Math.round(box.left + m.x * box.width)}px, ${Math.round(box.top + m.y * box.height)}px, 0)`;
    clearTimeout(r.timer);
    // A safeguard only: a drag held still sends nothing, and its end may be lost with a socket.
    r.timer = setTimeout(() => this.showPointer({player: key, at: null}), 8000);
  }

  /** Show seat `seat`'s quick reaction beside its name for a few seconds. */
  showEmote(seat, name) {
    const anchor = seat === this.ctx.seat ? this.me.querySelector('.mehead')
      : this.opps.querySelector(`.opp[data-seat="${seat}"] .name`);
    if (!anchor) return;
    const bubble = h('div', {class: 'emote-bubble', role: 'status', dataset: {seat: String(seat), emote: name},
      'aria-label': `${this.ctx.names(seat)}: ${EMOTES[name] ? EMOTES[name][1] : name}`},
    emoteFace(name));
    document.body.append(bubble);
    // Just after the seat's name, in its row, or as near as the seat labels leave room: it
    // had sat over the name itself.
    const nm = (anchor.querySelector('.nm') || anchor).getBoundingClientRect();
    const row = anchor.getBoundingClientRect();
    const w = bubble.offsetWidth, ht = bubble.offsetHeight;
    const x = nm.right + 8, y = row.top + row.height / 2 - ht / 2;
    const spot = clearSpot(x, y, w, ht, {x: 8, y: 4, rangeX: 480, rangeY: 120}, 'emote');
    bubble.style.left = `${Math.round(spot ? spot.left : x)}px`;
    bubble.style.top = `${Math.round(spot ? spot.top : y)}px`;
    setTimeout(() => bubble.remove(), 2600);
  }

  /** The reactions menu: one button opens the fixed set. */
  emoteMenu() {
    const menu = h('div', {class: 'emote-menu', id: 'emote-menu', hidden: true, role: 'group', 'aria-label': 'Reactions'},
      Object.entries(EMOTES).map(([name, [, words]]) => h('button', {class: 'emote', dataset: {emote: name},
        'aria-label': words, title: words, onclick: () => { menu.hidden = true; this.ctx.emote(name); }}, emoteFace(name))));
    // Its face is drawn, not an emoji: a device without an emoji font showed an empty box.
    const open = h('button', {id: 'react', 'aria-expanded': 'false', 'aria-controls': 'emote-menu',
      onclick: () => { menu.hidden = !menu.hidden; open.setAttribute('aria-expanded', String(!menu.hidden)); }},
    smiley(), h('span', {class: 'react-word', text: 'React'}));
    return h('span', {class: 'react'}, open, menu);
  }

  dropTarget(x, y) {
    const el = document.elementFromPoint(x, y);
    if (!el) return null;
    if (el.closest('#foundations')) return 'F';
    const pile = el.closest('#me [data-pile]');
    if (pile && PILE_KEYS.includes(pile.dataset.pile)) return pile.dataset.pile;
    return null;
  }

  pointerUp(e) {
    const d = this.drag;
    if (!d || e.pointerId !== d.id) return;
    window.removeEventListener('pointermove', this.onMove);
    window.removeEventListener('pointerup', this.onUp);
    window.removeEventListener('pointercancel', this.onUp);
    if (!d.active) {
      this.drag = null;
      if (e.type === 'pointerup') this.clickCard(d);
      return;
    }
    const target = e.type === 'pointerup' ? this.dropTarget(e.clientX, e.clientY) : null;
    let move = null;
    if (target === 'F') {
      // Dropped on the foundations: sent if the card fits one as far as this page can see
      // (the server still decides races); otherwise it flies home.
      if (d.cards.length === 1 && fitFoundation(d.cards[0], this.t) != null) move = `${d.src}-F`;
      else toast(`The ${label(d.cards[0])} fits no foundation`);
    } else if (target && target !== d.src) {
      const pile = this.myTab().work[Number(target) - 1];
      if (pile && fitsWork(d.cards[0], pile)) move = `${d.text}-${target}`;
      else if (pile && pile.up.length) {
        toast(`The ${label(d.cards[0])} does not go on the ${label(pile.up[pile.up.length - 1])}: ` +
          'work piles go down a rank at a time in alternating colours');
      } else toast(`Work pile ${target} takes no card right now`);
    }
    if (move) {
      // Where the ghost is, from the pointer (no layout read in the drop's path).
      const ghostRect = {left: d.rect.left + e.clientX - d.x0, top: d.rect.top + e.clientY - d.y0,
        width: d.rect.width, height: d.rect.height};
      this.endDrag(false);
      this.flightFor(move, d.cards, ghostRect, 120);
      this.ctx.play(move, d.cards);
    } else {
      this.endDrag(true);
    }
  }

  /** Finish a drag; `back` flies the cards home first (a drop nowhere). */
  endDrag(back) {
    const d = this.drag;
    if (!d) return;
    this.drag = null;
    if (d.raf) cancelAnimationFrame(d.raf);
    clearTimeout(d.trail);
    if (d.pointed && this.ctx.pointer) this.ctx.pointer({at: null});
    (d.targets || []).forEach((el) => el.classList.remove('drop-ok'));
    const restore = () => {
      if (d.ghost) d.ghost.remove();
      this.me.querySelectorAll('.drag-source').forEach((el) => el.classList.remove('drag-source'));
    };
    if (back && d.ghost && d.ghost.animate) {
      const a = d.ghost.animate([{transform: d.ghost.style.transform},
        {transform: `translate3d(${d.rect.left}px, ${d.rect.top}px, 0)`}], {duration: 160, easing: 'ease-out'});
      a.onfinish = restore;
    } else {
      restore();
    }
  }

  /** Queue the animation of one's own move from `rect` to where its cards land. */
  flightFor(move, cards, rect, ms) {
    const dst = move.split('-').pop();
    const code = cards[0];
    const sel = dst[0] === 'F' ? `#foundations .fnd .card[data-card="${code}"]:not(.under)`
      : `#me [data-pile="${dst}"] .card[data-card="${code}"]`;
    this.flights.push({selector: sel, rect, ms});
  }

  clickCard(d) {
    const now = performance.now();
    // The second click of a mouse's double-click must not send the card the first one
    // uncovered; a card clicked again (it had no place) is asked about again. Taps are never
    // ignored: a player taps the Nertz pile again and again, as fast as it shows a new card.
    const card = d.cards[0];
    if (d.kind === 'mouse' && this.lastClick.pile === d.src && this.lastClick.card !== card
      && now - this.lastClick.at < 350) return;
    this.lastClick = {pile: d.src, card, at: now};
    this.sendBest(d.src, d.index, d.rect);
  }

  /** Send the card(s) from `src` to their best place, or say there is none. */
  sendBest(src, index, rect) {
    const tab = this.myTab();
    if (!tab) return;
    const move = bestMove(this.t, tab, this.ctx.options, src, index);
    const {cards} = lift(tab, src, index, this.ctx.options);
    if (!move) {
      const el = this.me.querySelector(`[data-pile="${src}"] .card[data-card="${cards[0]}"]`);
      if (el) { el.classList.remove('shake'); void el.offsetWidth; el.classList.add('shake'); }
      if (cards.length) note(el, `No place for the ${label(cards[0])} right now`);
      beep('bad');
      return;
    }
    if (!rect) {
      const el = this.me.querySelector(`[data-pile="${src}"] .card[data-card="${cards[0]}"]`);
      rect = el && el.getBoundingClientRect();
    }
    this.flightFor(move, cards, rect, 200);
    this.ctx.play(move);
  }

  // ---------------------------------------------------------------- keyboard play

  key(e) {
    if (e.defaultPrevented || e.altKey || e.ctrlKey || e.metaKey) return;
    const tag = (e.target && e.target.tagName) || '';
    if (tag === 'INPUT' || tag === 'TEXTAREA' || tag === 'SELECT') return;
    // A focused button, link or summary takes its own Enter and Space (a top-bar button
    // pressed with Space must not turn the stock).
    if ((tag === 'BUTTON' || tag === 'A' || tag === 'SUMMARY') && (e.key === 'Enter' || e.key === ' ')) return;
    if (document.querySelector('.overlay:not(.hidden)') && e.key !== '?' && e.key !== 'Escape') return;
    const k = e.key.length === 1 ? e.key.toLowerCase() : e.key;
    const ctx = this.ctx;
    if (k === '?') { e.preventDefault(); ctx.onHelp(); return; }
    if (k === 'Escape') {
      // The reactions' set closes too (it stayed open over the table), the focus on React.
      const emotes = this.me.querySelector('#emote-menu:not([hidden])');
      if (emotes) {
        emotes.hidden = true;
        const open = this.me.querySelector('#react');
        open.setAttribute('aria-expanded', 'false');
        open.focus({preventScroll: true});
      }
      if (this.selection) { this.selection = null; this.rerenderMe(); }
      return;
    }
    const tab = this.myTab();
    if (!tab || ctx.phase !== 'playing' || this.t.ended) return;
    if (k === ' ' || k === 't') {
      e.preventDefault();
      if (!this.refusePartnerPile('S')) { ctx.play('T'); beep('turn'); }
      return;
    }
    if (k === 's') {
      e.preventDefault();
      ctx.play(ctx.options.stuck_reset === 'rotate_either' ? (e.shiftKey ? 'STUCK N' : 'STUCK S') : 'STUCK');
      return;
    }
    if (k === 'c' || (k === 'Enter' && !this.selection && !e.target.closest?.('[data-pile]'))) {
      e.preventDefault();
      if (canCall(this.t, ctx.seat)) ctx.play('NERTZ');
      // Enter with nothing in hand was most likely meant for a card: say how to hold one.
      else if (k === 'Enter') toast('Pick up a card first (N, W or 1 to 5); Enter then sends it to its best place');
      else toast(ctx.options.call === 'auto' ? `${ctx.callWord} is called for you when your Nertz pile empties`
        : `Empty your Nertz pile first (${tab.nertz_count} left)`);
      return;
    }
    if (k === 'Enter' && !this.selection) {
      const pile = e.target.closest('[data-pile]');
      if (pile && this.refusePartnerPile(pile.dataset.pile)) { e.preventDefault(); return; }
      if (pile && pile.dataset.pile === 'S') { ctx.play('T'); return; }
      if (pile) { e.preventDefault(); this.sendBest(pile.dataset.pile, null, null); }
      return;
    }
    const sel = this.selection;
    if (k === 'n' || k === 'w') {
      e.preventDefault();
      const src = k.toUpperCase();
      if (this.refusePartnerPile(src)) { this.selection = null; this.rerenderMe(); return; }
      const has = src === 'N' ? tab.nertz_top : tab.waste_top;
      this.selection = has ? {src, index: null} : null;
      if (!has) toast(src === 'N' ? 'Your Nertz pile is empty' : 'Your waste is empty');
      this.rerenderMe();
      return;
    }
    if (PILE_KEYS.includes(k) && Number(k) <= tab.work.length) {
      e.preventDefault();
      const pile = tab.work[Number(k) - 1];
      if (sel && sel.src !== k) {
        const {text, cards} = lift(tab, sel.src, sel.index, ctx.options);
        this.selection = null;
        if (cards.length) this.sendMove(`${text}-${k}`, sel, cards);
        this.rerenderMe();
        return;
      }
      if (sel && sel.src === k) {
        // Pressing the same pile again takes one more card of its run.
        const i = sel.index == null ? pile.up.length - 1 : sel.index;
        this.selection = {src: k, index: i > 0 ? i - 1 : pile.up.length - 1};
      } else {
        this.selection = pile.up.length ? {src: k, index: pile.up.length - 1} : null;
        if (!pile.up.length) toast(`Work pile ${k} is empty`);
      }
      this.rerenderMe();
      return;
    }
    if (k === 'f' && sel) {
      e.preventDefault();
      const {cards} = lift(tab, sel.src, sel.index, ctx.options);
      const top = sel.src === 'N' || sel.src === 'W' || sel.index == null || sel.index === (tab.work[Number(sel.src) - 1]?.up.length ?? 0) - 1;
      this.selection = null;
      if (!top || cards.length !== 1) { toast('Only a single top card goes to a foundation'); beep('bad'); }
      else this.sendMove(`${sel.src}-F`, sel, cards);
      this.rerenderMe();
      return;
    }
    if (k === 'Enter' && sel) {
      e.preventDefault();
      this.selection = null;
      this.rerenderMe();
      this.sendBest(sel.src, sel.index, null);
    }
  }

  sendMove(move, sel, cards) {
    const el = this.me.querySelector(`[data-pile="${sel.src}"] .card[data-card="${cards[0]}"]`);
    this.flightFor(move, cards, el && el.getBoundingClientRect(), 200);
    this.ctx.play(move);
  }

  rerenderMe() {
    delete this.keys.me;
    if (this.t) this.render(this.t, this.extra);
  }
}

/** The mark of a seat the server flagged as playing faster or more evenly than any person; its
 * figures (the server's own words) are in the title and the accessible label. */
export function flagBadge(flag) {
  if (!flag) return null;
  const text = flag.why === 'rhythm' ? 'too even' : 'too fast';
  return h('span', {class: 'badge flag', text: `⚑ ${text}`, title: flag.text, 'aria-label': `Flagged: ${flag.text}`});
}

/** What a card held by the keyboard is and where it can go: a pick-up shows only an outline. */
function holdingText(tab, sel, options) {
  const {cards} = lift(tab, sel.src, sel.index, options);
  if (!cards.length) return '';
  const what = cards.length > 1 ? `the ${label(cards[0])} and ${cards.length - 1} more` : `the ${label(cards[0])}`;
  return `Holding ${what}: F for a foundation, 1 to ${tab.work.length} for a work pile, Enter for its best place, Esc to put it down.`;
}
