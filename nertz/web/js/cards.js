// Cards: notation, accessible labels, and generated SVG faces (no image files).

import {h} from './dom.js';

export const RANKS = 'A23456789TJQK';
const SUIT_NAMES = {S: 'spades', H: 'hearts', D: 'diamonds', C: 'clubs'};
const SUIT_SYMBOLS = {S: '\u2660', H: '\u2665', D: '\u2666', C: '\u2663'};
const RANK_NAMES = {A: 'ace', T: '10', J: 'jack', Q: 'queen', K: 'king'};
const CARD_RE = /^(?:[A2-9TJQK][SHDC]|X[12])$/;

/** Parse a card's notation: {code, rank 1..13 (0 for a joker), suit, red, joker}, or null. */
export function parse(code) {
  if (typeof code !== 'string' || !CARD_RE.test(code)) return null;
  if (code[0] === 'X') return {code, rank: 0, suit: '', red: false, joker: true};
  const suit = code[1];
  return {code, rank: RANKS.indexOf(code[0]) + 1, suit, red: suit === 'H' || suit === 'D', joker: false};
}

/** "7 of hearts", "ace of spades", "joker". */
export function label(code) {
  const c = parse(code);
  if (!c) return 'card';
  if (c.joker) return 'joker';
  return `${RANK_NAMES[code[0]] || code[0]} of ${SUIT_NAMES[c.suit]}`;
}

/** What some of the server's refusals mean to a player, by their `code` (docs/protocol.md). */
const FRIENDLY = {
  no_player: 'That player has left the room',
};

/** A server's message in a player's words: a refusal whose `code` has words of its own
 *  (FRIENDLY) says them; else every card code in it is named ("2S does not go on AD" -> "the
 *  2 of spades does not go on the ace of diamonds"). */
export function friendly(text, code = '') {
  const said = FRIENDLY[code];
  if (said) return said;
  const out = String(text).replace(/\b([A2-9TJQK][SHDC]|X[12])\b/g, (code) => `the ${label(code)}`);
  return out.charAt(0).toUpperCase() + out.slice(1);
}

/** The rank as printed on the card. */
function shown(code) { return code[0] === 'T' ? '10' : code[0]; }

const faceCache = new Map();

/** The SVG face of a card, built once per card from fixed templates (never from user text). */
function face(code) {
  let svg = faceCache.get(code);
  if (svg) return svg.cloneNode(true);
  const ns = 'http://www.w3.org/2000/svg';
  svg = document.createElementNS(ns, 'svg');
  svg.setAttribute('viewBox', '0 0 50 70');
  svg.setAttribute('aria-hidden', 'true');
  const c = parse(code);
  // Two layouts, the style sheet shows one (style.css): the usual corner index and centre pip
  // (.std), and the rank and suit drawn large (.big) for a card too small to read them in a
  // corner (a phone's foundations and the other seats' top cards).
  const std = document.createElementNS(ns, 'g');
  const big = document.createElementNS(ns, 'g');
  std.setAttribute('class', 'std');
  big.setAttribute('class', 'big');
  svg.append(std, big);
  const text = (x, y, size, str, extra = {}, g = std) => {
    const t = document.createElementNS(ns, 'text');
    t.setAttribute('x', x); t.setAttribute('y', y);
    t.setAttribute('font-size', size);
    t.setAttribute('fill', 'currentColor');
    t.setAttribute('font-family', 'system-ui, sans-serif');
    t.setAttribute('font-weight', '700');
    for (const [k, v] of Object.entries(extra)) t.setAttribute(k, v);
    t.textContent = str;
    g.append(t);
  };
  const middle = {'text-anchor': 'middle'};
  if (c.joker) {
    text(4, 14, 12, '\u2605');
    text(25, 44, 13, 'JOKER', {'text-anchor': 'middle', 'font-size': '10'});
    text(25, 34, 30, '\u2605', middle, big);
    text(25, 60, 13, 'JOKER', {...middle, 'font-size': '11'}, big);
  } else {
    const sym = SUIT_SYMBOLS[c.suit];
    const r = shown(code);
    text(3.5, 15, r.length > 1 ? 12.5 : 15, r, r.length > 1 ? {'letter-spacing': '-1.2'} : {});
    text(4, 27, 12, sym);
    text(29, 56, 28, sym, middle);
    text(25, 31, r.length > 1 ? 26 : 30, r, r.length > 1 ? {...middle, 'letter-spacing': '-2'} : middle, big);
    text(25, 63, 30, sym, middle, big);
  }
  faceCache.set(code, svg);
  return svg.cloneNode(true);
}

/**
 * A card element. opts: {owner: seat, ownerName, initial, count, extraLabel}.
 * Carries data-card="7H" and aria-label="7 of hearts".
 */
export function cardEl(code, opts = {}) {
  const c = parse(code);
  if (!c) return backEl(opts.count);
  const cls = ['card', c.joker ? 'joker' : 's-' + c.suit];
  let aria = label(code);
  const el = h('div', {role: 'img', dataset: {card: code}});
  if (opts.owner != null && opts.owner >= 0) {
    cls.push('owned', 'o' + (opts.owner % 8));
    el.dataset.owner = String(opts.owner);
    if (opts.ownerName) aria += ', played by ' + opts.ownerName;
    el.append(ownerMark(opts.owner, opts.initial));
  }
  if (opts.extraLabel) aria += ', ' + opts.extraLabel;
  el.className = cls.join(' ');
  el.setAttribute('aria-label', aria);
  el.prepend(face(code));
  if (opts.count != null) el.append(h('span', {class: 'count', 'aria-hidden': 'true', text: String(opts.count)}));
  return el;
}

/** A face-down card (with how many cards the pile holds). */
export function backEl(count, labelText) {
  const el = h('div', {class: 'card back', role: 'img', 'aria-label': labelText || 'face-down card'});
  if (count != null) el.append(h('span', {class: 'count', 'aria-hidden': 'true', text: String(count)}));
  return el;
}

/** An empty place where a pile would be. */
export function slotEl(labelText, count) {
  const el = h('div', {class: 'card slot', role: 'img', 'aria-label': labelText || 'empty'});
  if (count != null) el.append(h('span', {class: 'count', 'aria-hidden': 'true', text: String(count)}));
  return el;
}

/** An owner's mark: the owner colour, a shape per seat and the name's initial. */
export function ownerMark(seat, initial) {
  return h('span', {class: 'owner o' + (seat % 8), 'aria-hidden': 'true'},
    h('span', {text: (initial || String(seat + 1)).slice(0, 1).toUpperCase()}));
}
