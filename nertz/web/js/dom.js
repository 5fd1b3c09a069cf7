// Small DOM helpers. Text always goes in as text nodes (textContent), never as HTML:
// players' names are user data.

/** Build an element: h('button', {class: 'primary', onclick: fn}, 'Start'). */
export function h(tag, attrs, ...children) {
  const el = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v == null || v === false) continue;
    if (k === 'class') el.className = v;
    else if (k === 'text') el.textContent = String(v);
    else if (k === 'dataset') Object.assign(el.dataset, v);
    else if (k === 'style' && typeof v === 'object') Object.assign(el.style, v);
    else if (k.startsWith('on') && typeof v === 'function') el.addEventListener(k.slice(2), v);
    else if (k === 'value') el.value = v;
    else if (k === 'checked') el.checked = !!v;
    else el.setAttribute(k, v === true ? '' : String(v));
  }
  append(el, children);
  return el;
}

function append(el, children) {
  for (const c of children) {
    if (c == null || c === false) continue;
    if (Array.isArray(c)) append(el, c);
    else el.append(c instanceof Node ? c : document.createTextNode(String(c)));
  }
}

/** Replace every child of `el`. */
export function fill(el, ...children) {
  el.replaceChildren();
  append(el, children);
  return el;
}

/** Replace every child of `el`, keeping the keyboard focus: the element that had it is
 *  found again in the new content by its id (a redraw must not throw a player's focus to the
 *  page, nor lose a key press on the button under it). */
export function refill(el, ...children) {
  const active = document.activeElement;
  const id = active && active !== document.body && el.contains(active) ? active.id : '';
  fill(el, ...children);
  if (id) {
    const again = document.getElementById(id);
    if (again && el.contains(again)) again.focus({preventScroll: true});
  }
  return el;
}

// ------------------------------------------------------------------ passing messages

/** What a passing message must never cover at the table: each seat's label (its mark, name,
 *  round trip and badges, and one's own React button) and the top bar. */
const SEAT_LABELS = '.opp .name > *, #me .mehead > *, .topbar > :not(.tools):not(.spacer), .topbar .tools > *';
/** What it had better not cover either, where the screen leaves room: the cards and their
 *  counts, the piles' names, the actions, the call's banner, the whole of the foundations'
 *  strip (its cards land in its middle at any moment) and of the other seats' piles (their
 *  runs grow down). */
const TABLE_THINGS = '.card, .count, .pile-label, #me .actions > *, .banner > span, #foundations, .opp .pile';

/** On a sheet over the table: what a passing message must not cover (its headings, its
 *  tables' headings and its buttons), and what it had better not (the rest of its words). */
const SHEET_LABELS = '.overlay .sheet :is(h2, h3, th, dt, button, a, summary)';
const SHEET_THINGS = '.overlay .sheet :is(td, p, li, dd)';

/** Where what `selector` finds is on the screen, `margin` pixels wider on every side. */
function boxes(selector, margin = 0) {
  const out = [];
  for (const el of document.querySelectorAll(selector)) {
    const r = el.getBoundingClientRect();
    if (r.width && r.height) {
      out.push({left: r.left - margin, top: r.top - margin, right: r.right + margin, bottom: r.bottom + margin});
    }
  }
  return out;
}

/** How much of the `rects` a box {left, top, width, height} covers, in square pixels. */
function covers(spot, rects) {
  let area = 0;
  for (const r of rects) {
    const w = Math.min(spot.left + spot.width, r.right) - Math.max(spot.left, r.left);
    const h = Math.min(spot.top + spot.height, r.bottom) - Math.max(spot.top, r.top);
    if (w > 0 && h > 0) area += w * h;
  }
  return area;
}

/** The passing messages of each kind: each keeps clear of the others' too. */
export const MESSAGES = {toast: '#toasts .toast', note: '.note-bubble', emote: '.emote-bubble'};

/**
 * Where a passing message of `width` x `height` should go: of the places around (x, y) (its
 * top left corner as wished), within the screen, the nearest that covers no seat's label, and
 * of those the one covering least of the cards, buttons and the other messages (`kind`'s
 * others, MESSAGES). `step` is the grid of places tried ({x, y, rangeX, rangeY}: every `x`/`y`
 * pixels, up to `rangeX`/`rangeY` away). Null when the message is not at the table (nothing
 * there to keep clear of).
 */
export function clearSpot(x, y, width, height, step, kind) {
  if (!document.getElementById('table-screen')) return null;
  const others = Object.entries(MESSAGES).filter(([k]) => k !== kind).map(([, sel]) => sel);
  // A sheet open over the table (the results, the help) is what the player reads: its
  // headings and buttons are the labels then, and its words the things (the call's message
  // sat over the results' heading and its columns' names).
  const sheet = document.querySelector('.overlay .sheet');
  const labels = boxes(sheet ? SHEET_LABELS : SEAT_LABELS, 2);  // not flush against a name either
  // A round trip's figure is written in place every few seconds ("8 ms", then "1204 ms", or
  // nothing yet): keep clear of the room it may grow into, at its place in its row.
  for (const lat of sheet ? [] : document.querySelectorAll('.opp .name .lat, #me .mehead .lat')) {
    if (!lat.getClientRects().length) continue;  // not shown
    const r = lat.getBoundingClientRect(), row = lat.parentElement.getBoundingClientRect();
    labels.push({left: r.left - 2, top: row.top, right: Math.max(r.right, r.left + 48) + 2, bottom: row.bottom});
  }
  const things = boxes([sheet ? SHEET_THINGS : TABLE_THINGS, ...others].join(', '));
  const maxX = innerWidth - width - 4, maxY = innerHeight - height - 4;
  const spots = [];
  const seen = new Set();
  const xs = [0];
  for (let d = step.x; step.x && d <= step.rangeX; d += step.x) xs.push(d, -d);
  const ys = [0];
  for (let d = step.y; d <= step.rangeY; d += step.y) ys.push(d, -d);
  for (const dx of xs) {
    for (const dy of ys) {
      const left = Math.round(Math.min(Math.max(x + dx, 4), Math.max(4, maxX)));
      const top = Math.round(Math.min(Math.max(y + dy, 4), Math.max(4, maxY)));
      const k = `${left},${top}`;
      if (seen.has(k)) continue;
      seen.add(k);
      spots.push({left, top, width, height, far: Math.hypot(left - x, top - y)});
    }
  }
  let best = null;
  for (const s of spots) {
    s.labels = covers(s, labels);
    if (best && s.labels > best.labels) continue;
    s.things = covers(s, things);
    if (!best || s.labels < best.labels || s.things < best.things
      || (s.things === best.things && s.far < best.far)) best = s;
  }
  return best;
}

/** Put the passing messages where they cover nobody's name: at the table, as near the felt
 *  just above the foundations, centred, as the seats' labels allow; where the screen has no
 *  room for them all without covering cards, only the newest shows (screen readers heard the
 *  others already). Elsewhere they stay under the top of the screen, as style.css has it. */
/** Place the passing messages again (a sheet opened over the table: what they must keep
 *  clear of changed). */
export function placeMessages() {
  const box = document.getElementById('toasts');
  if (box) placeToasts(box);
}

/** How much room beside an open sheet (at its wider side, px) a message needs to keep the
 *  old placement (over the sheet's edge, clear of its headings and buttons: clearSpot). */
const BESIDE_SHEET = 160;

/** On a narrow screen, with a sheet open (the results, the help) that spans it, the messages
 *  go above the sheet, in a strip it gives up for as long as they show (style.css:
 *  `--msg-room`): on a phone the sheet takes the whole screen, and a message anywhere on it
 *  covered its words. False with no sheet open, or with room beside it (a large screen: the
 *  sheet stays as it is, the messages placed as at the table). */
function sheetRoom(box) {
  const overlay = document.querySelector('.overlay');
  const sheet = overlay && overlay.querySelector('.sheet');
  if (!sheet) return false;
  const s = sheet.getBoundingClientRect();
  if (!box.querySelector('.toast') || Math.max(s.left, innerWidth - s.right) >= BESIDE_SHEET) {
    overlay.style.removeProperty('--msg-room');
    return !box.querySelector('.toast');
  }
  // Across the screen's width, centred (from its middle, a message had half the width).
  Object.assign(box.style, {left: '0px', right: '0px', top: '6px', transform: 'none'});
  overlay.style.setProperty('--msg-room', `${Math.ceil(box.getBoundingClientRect().height) + 8}px`);
  return true;
}

function placeToasts(box) {
  box.style.left = box.style.right = box.style.top = box.style.transform = '';
  if (sheetRoom(box)) return;
  const middle = document.querySelector('#table-screen .middle');
  if (!middle) return;
  for (;;) {
    const shown = box.querySelectorAll('.toast');
    if (!shown.length) return;
    const r = box.getBoundingClientRect();
    const wish = middle.getBoundingClientRect().top + 4;
    const spot = clearSpot(r.left, wish, r.width, r.height, {x: 32, y: 8, rangeX: innerWidth, rangeY: innerHeight}, 'toast');
    if (!spot) return;
    if ((spot.labels || spot.things) && shown.length > 1) {
      clearTimeout(shown[0].timer);
      shown[0].remove();
      continue;
    }
    Object.assign(box.style, {left: `${spot.left}px`, top: `${spot.top}px`, transform: 'none'});
    return;
  }
}

// A message gone while a sheet is open gives the sheet its room back.
const toastBox = document.getElementById('toasts');
if (toastBox) {
  new MutationObserver(() => { if (document.querySelector('.overlay .sheet')) placeMessages(); })
    .observe(toastBox, {childList: true});
}

/** A passing message (also read out by screen readers): at the table, where it covers no
 *  seat's name (placeToasts). The same message again while it shows (a player tapping on)
 *  restarts its time instead of stacking. */
export function toast(text, kind = '', ms = 2600) {
  const box = document.getElementById('toasts');
  if (!box) return;
  const last = box.lastElementChild;
  if (last && last.textContent === text && last.className === 'toast ' + kind) {
    clearTimeout(last.timer);
    last.timer = setTimeout(() => last.remove(), ms);
    return;
  }
  const t = h('div', {class: 'toast ' + kind, text});
  box.append(t);
  while (box.children.length > 3) box.firstChild.remove();
  placeToasts(box);
  t.timer = setTimeout(() => t.remove(), ms);
}

/** A word beside what the player just touched (a card with no place to go): above or below
 *  it, wherever it covers no seat's name (the player's own was under the Nertz pile's) and
 *  the fewest cards, never past the screen's edge; gone in a moment; one at a time. Read out
 *  like a toast. */
export function note(el, text, ms = 1400) {
  document.querySelectorAll('.note-bubble').forEach((b) => b.remove());
  if (!el || !el.isConnected) { toast(text, '', ms); return; }
  const r = el.getBoundingClientRect();
  const b = h('div', {class: 'toast note-bubble', 'aria-hidden': 'true', text});
  document.body.append(b);
  const w = b.offsetWidth, ht = b.offsetHeight;
  // Centred over the card, 6 px above it, as first wish; below it next, then further off.
  const x = r.left + r.width / 2 - w / 2;
  const above = r.top - 6 - ht;
  const spot = clearSpot(x, above, w, ht, {x: 16, y: 4, rangeX: 160, rangeY: r.height + ht + 160}, 'note');
  b.style.left = `${Math.round(spot ? spot.left : Math.min(Math.max(x, 4), innerWidth - w - 4))}px`;
  b.style.top = `${Math.round(spot ? spot.top : Math.max(above, 40))}px`;
  setTimeout(() => b.remove(), ms);
  // Screen readers hear it from the live region, which shows nothing itself.
  const live = document.getElementById('toasts');
  if (live) {
    const said = h('div', {class: 'sr-only', text});
    live.append(said);
    setTimeout(() => said.remove(), ms);
  }
}

let colourEmoji = null;

/** Whether this device draws emoji (in colour): a waving hand drawn in black on a canvas comes
 *  out in colour only where an emoji font is installed; without one it is a blank box or a
 *  black outline, and the page says what it means in words instead. Worked out once. */
export function emojiShown() {
  if (colourEmoji != null) return colourEmoji;
  colourEmoji = false;
  try {
    const canvas = document.createElement('canvas');
    canvas.width = canvas.height = 32;
    const g = canvas.getContext('2d', {willReadFrequently: true});
    g.fillStyle = '#000';
    g.textBaseline = 'top';
    g.font = '24px sans-serif';
    g.fillText('\u{1F44B}', 2, 2);
    const px = g.getImageData(0, 0, 32, 32).data;
    for (let i = 0; i < px.length; i += 4) {
      if (px[i + 3] > 64 && (Math.abs(px[i] - px[i + 1]) > 24 || Math.abs(px[i + 1] - px[i + 2]) > 24)) {
        colourEmoji = true;
        break;
      }
    }
  } catch { /* no canvas: words */ }
  return colourEmoji;
}

/** localStorage that never throws (private modes). */
export const store = {
  get(key, fallback = null) {
    try { const v = localStorage.getItem(key); return v == null ? fallback : JSON.parse(v); }
    catch { return fallback; }
  },
  set(key, value) { try { localStorage.setItem(key, JSON.stringify(value)); } catch { /* full */ } },
  remove(key) { try { localStorage.removeItem(key); } catch { /* ignore */ } },
};

/** Where this browser keeps its seat token for a room (reloading returns to the same seat). */
export function seatKey(roomId) { return `nertz:room:${roomId}`; }

/** Forget every seat token this browser keeps, and a "Play now" under way: at a sign-out (or
 * a deletion) the server ends that player's seats, and on a shared computer the next person
 * must not find them here either. */
export function forgetSeats() {
  try {
    const keys = [];
    for (let i = 0; i < localStorage.length; i++) keys.push(localStorage.key(i));
    for (const key of keys) if (key && key.startsWith(seatKey(''))) localStorage.removeItem(key);
  } catch { /* no storage: nothing kept */ }
  store.remove('nertz:autostart');
}

/** Mark every seat token this browser keeps as ended: a password change ends the player's
 * seats, but this browser stays signed in, so coming back to a room takes the seat back by
 * joining (main.js, enterRoom) rather than asking for a name. The token is kept: another tab
 * may have taken its seat back already and saved a good one just before this mark. */
export function seatsEnded() {
  try {
    for (let i = 0; i < localStorage.length; i++) {
      const key = localStorage.key(i);
      if (!key || !key.startsWith(seatKey(''))) continue;
      const seat = store.get(key);
      if (seat && seat.player) store.set(key, {...seat, ended: true});
    }
  } catch { /* no storage: nothing kept */ }
}
