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

/** A passing message at the top of the screen (also read out by screen readers). The same
 *  message again while it shows (a player tapping on) restarts its time instead of stacking. */
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
  t.timer = setTimeout(() => t.remove(), ms);
}

/** A word beside what the player just touched (a card with no place to go): over their own
 *  cards, not the other seats', and gone in a moment; one at a time. Read out like a toast. */
export function note(el, text, ms = 1400) {
  document.querySelectorAll('.note-bubble').forEach((b) => b.remove());
  if (!el || !el.isConnected) { toast(text, '', ms); return; }
  const r = el.getBoundingClientRect();
  const b = h('div', {class: 'toast note-bubble', 'aria-hidden': 'true', text});
  document.body.append(b);
  // Centred over the card, but never past the screen's edge: shifted, not squeezed.
  const half = b.offsetWidth / 2;
  b.style.left = `${Math.round(Math.min(Math.max(r.left + r.width / 2, half + 4), innerWidth - half - 4))}px`;
  b.style.top = `${Math.round(Math.max(r.top - 6, 40))}px`;
  setTimeout(() => b.remove(), ms);
  // Screen readers hear it from the live region, which shows nothing itself.
  const live = document.getElementById('toasts');
  if (live) {
    const said = h('div', {class: 'sr-only', text});
    live.append(said);
    setTimeout(() => said.remove(), ms);
  }
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
