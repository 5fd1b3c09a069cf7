// The page's controller: routes (home, /r/CODE, ?replay=ID), the room's socket, the state
// the server sends, one's own moves shown at once and confirmed (or rolled back) by the server.

import {h, fill, toast, store, placeMessages, seatKey} from './dom.js';
import {api, apiPatiently, busy, Connection} from './net.js';
import {applyUpdate} from './merge.js';
import {applyLocal, clone, lift, parseMove} from './rules.js';
import {TableView} from './table.js';
import {homeScreen, joinScreen, lobbyScreen, resultsSheet, helpSheet, countUp, seatWhenFree, dropPendingSeat, refreshResultsWatchers, hostSeats} from './screens.js';
import {ReplayViewer} from './replay.js';
import {learnScreen} from './learn.js';
import {fetchAnalysis} from './analysis.js';
import {beep, soundOn, setSound} from './sound.js';
import {label, friendly, ownerMark} from './cards.js';
import {closeRace, gapWords} from './names.js';
import {playersRoute} from './players.js';

const root = document.getElementById('app');

const S = {
  room: null,        // the room, as the server describes it
  you: null,         // {player, name, seat, hand, host}
  table: null,       // the table as the server last confirmed it (this seat's view)
  result: null,      // the last round's result
  pending: [],       // own moves sent and not yet answered: {id, move, cards}
  latency: {},       // player id -> ms
  countdownUntil: 0,
  resultsHidden: false,
  help: false,
  menuOpen: false,   // the top bar's menu, on a phone
  scoresOpen: false, // the top bar's scores opened in full (they are cut short in the bar)
  status: 'open',
  sent: 0,           // moves sent since the page loaded
};

let conn = null;
let tableView = null;
let replayView = null;
let learnView = null;
let seq = 0;
let countdownTimer = null;

const app = {
  S,
  countdownMs: 3000,
  botLevel: 'casual',
  botLevels: {},     // seat -> the level picked in the lobby for a bot not yet added
  go, saveSeat, enterRoom, send, openReplay,
  render: () => render(),
  /** After "Play now": fill the room's empty seats with bots at `level` and start. */
  autoStart(roomId, level) { store.set('nertz:autostart', {room: roomId, level, asked: []}); },
  initial: (s) => seatInitial(s),
  hideResults() { S.resultsHidden = true; render(); },
  help: () => toggleHelp(),
};
window.nertz = app;  // for the curious (and the tests): the page's state, read-only by convention

// ------------------------------------------------------------------ settings

document.body.classList.toggle('four-colour', store.get('nertz:four-colour', false));

function toggleFourColour() {
  const on = !document.body.classList.contains('four-colour');
  document.body.classList.toggle('four-colour', on);
  store.set('nertz:four-colour', on);
  render();
}

// ------------------------------------------------------------------ routing

function go(path) {
  history.pushState({}, '', path);
  route();
}

function teardown() {
  if (conn) { conn.close(); conn = null; }
  if (tableView) { tableView.destroy(); tableView = null; }
  if (replayView) { replayView.destroy(); replayView = null; }
  if (learnView) { learnView.destroy(); learnView = null; }
  clearInterval(countdownTimer);
  if (overlayEl) { overlayEl.remove(); overlayEl = null; }
  if (sheetSize) { sheetSize.disconnect(); sheetSize = null; }
  overlayKey = '';
  overlayReturn = '';
  Object.assign(S, {room: null, you: null, table: null, result: null, pending: [], latency: {}, resultsHidden: false, help: false});
  clearInterval(awayTimer);
}

async function route() {
  teardown();
  const m = /^\/r\/([^/]+)\/?$/.exec(location.pathname);
  const params = new URLSearchParams(location.search);
  if (m) return enterRoom(decodeURIComponent(m[1]));
  if (location.pathname === '/learn') {
    document.title = 'Nertz · learn to play';
    learnView = await learnScreen(root, app);
    return;
  }
  if (playersRoute(location.pathname, root, app)) return;
  if (params.get('replay')) {
    const id = params.get('replay');
    fill(root, h('p', {class: 'loading', text: 'Loading the replay…'}));
    try {
      openReplay(await apiPatiently(`/api/matches/${encodeURIComponent(id)}/frames`), `match ${id}`,
        () => fetchAnalysis(id), {match: id, round: params.get('round'), step: params.get('step')});
    }
    catch (e) { fill(root, h('div', {class: 'screen'}, h('p', {class: 'error-text', text: e.message}), h('a', {href: '/'}, 'Home'))); }
    return;
  }
  document.title = 'Nertz';
  return homeScreen(root, app);
}

window.addEventListener('popstate', route);

/** A match's date in the reader's own words ("1 Dec 2026"). */
export function playedOn(ms) {
  return new Date(ms).toLocaleDateString(undefined, {day: 'numeric', month: 'short', year: 'numeric'});
}

function openReplay(frames, title, loadAnalysis = null, start = {}) {
  teardown();
  document.title = `Nertz replay: ${frames.players.join(', ')}${frames.finished_at ? `, ${playedOn(frames.finished_at)}` : ''}`;
  replayView = new ReplayViewer(root, frames, title, app, start);
  if (loadAnalysis) replayView.showAnalysis(loadAnalysis);
}

/** Keep this browser's seat token for the room (reloading returns to the same seat). */
function saveSeat(roomId, token, player) { store.set(seatKey(roomId), {token, player}); }

/** Take back a seat whose token the server ended while this browser stays signed in (the
 *  player changed the password, here or in another tab): joining, signed in, hands the same
 *  seat back with a new token, the server deciding from its own record of who joined. The
 *  kept seat, or null when this browser is signed in no more (a sign-out, or a password
 *  changed on another device) or the seat has left the room: then joining would seat someone
 *  new, which is for the person to ask for. */
async function reclaimSeat(room, playerId) {
  const mine = room.players.find((p) => p.id === playerId && !p.bot);
  if (!mine) return null;
  try {
    const me = await api('/api/me');
    if (!me.player) return null;
    // Under the seat's own name: the server hands the seat back, or, when it is not this
    // player's to take back (a live token), refuses the name as taken rather than seat anew.
    const r = await api(`/api/rooms/${encodeURIComponent(room.id)}/join`, {name: mine.name});
    saveSeat(r.room, r.token, r.player);
    return {token: r.token, player: r.player};
  } catch { return null; }
}

async function enterRoom(code) {
  teardown();
  fill(root, h('p', {class: 'loading', text: 'Finding the room…'}));
  let room;
  try { room = await api(`/api/rooms/${encodeURIComponent(code)}`); }
  catch (e) {
    // Only a 404 means the room is not there: a busy server or a lost connection said
    // "No such room" too, and sent a player with a good link away for good.
    // And a 410, a room that has closed: trying again cannot bring it back either.
    const gone = e.status === 404 || e.status === 410;
    const [title, why] = e.status === 404
      ? ['No such room', `No room has the code ${code.trim()}. Check it against the link or code you were sent; a room closes when nobody has played in it for a while.`]
      : e.status === 410 ? ['This room has closed', `${e.message}. Start a new room from the home page.`]
      : busy(e) ? ['The server is busy', `It could not open the room just now (${e.message}): try again in a moment.`]
        : e.status ? ['The room could not be opened', e.message]
          : ['Cannot reach the server', 'Check your connection, then try again.'];
    fill(root, h('div', {class: 'screen', id: 'room-error'}, h('h1', {text: title}), h('p', {class: 'error-text', text: why}),
      h('p', {class: 'row'}, gone ? null : h('button', {class: 'primary', id: 'room-retry', onclick: () => enterRoom(code)}, 'Try again'),
        h('a', {href: '/', onclick: (ev) => { ev.preventDefault(); go('/'); }}, 'Home'))));
    return;
  }
  let seat = store.get(seatKey(room.id));
  if (seat && seat.ended) {
    // The password was changed since this browser sat here: its seat token most likely
    // opens nothing now. If the seat cannot be taken back (another tab took it first, its
    // token saved here), the kept token is tried as before.
    seat = (await reclaimSeat(room, seat.player)) || {token: seat.token, player: seat.player};
    if (seat.token) saveSeat(room.id, seat.token, seat.player);
  }
  if (!seat || !seat.token) { joinScreen(root, app, room); return; }
  S.room = room;
  document.title = `Nertz · ${room.code}`;
  conn = new Connection(room.id, seat.token, onMessage, (status) => {
    S.status = status;
    if (status === 'open') resendPending();
    render();
  });
  conn.connect();
  render();
}

function send(msg) {
  if (!conn || !conn.send(msg)) toast('Not connected: trying again…', 'bad');
}

// ------------------------------------------------------------------ own moves

/** Play a move: shown at once, sent with an id, confirmed by `ack` or rolled back. `known`
 *  is the cards it lifts when the caller knows them (a drop: no second look at the table). */
function play(move, known = null) {
  if (!S.table || !S.you || S.you.seat == null) return;
  const mv = parseMove(move);
  let cards = known || [];
  if (!known && mv && mv.kind === 'play') {
    const tab = displayTable().tableaus[S.you.seat];
    const pile = tab.work[Number(mv.src) - 1];
    const index = mv.card && pile ? pile.up.indexOf(mv.card) : null;
    cards = lift(tab, mv.src, index, S.room.options).cards;
  }
  const id = `m${Date.now().toString(36)}${(++seq).toString(36)}`;
  S.pending.push({id, move, cards});
  S.sent += 1;
  // Sent first (the server works while the page draws), then drawn in the same task.
  if (conn) conn.send({type: 'play', id, move});
  render();
}

function resendPending() {
  for (const p of S.pending) conn.send({type: 'play', id: p.id, move: p.move});
}

function dropPending(id) {
  const i = S.pending.findIndex((p) => p.id === id);
  return i < 0 ? null : S.pending.splice(i, 1)[0];
}

/** The table as shown: the confirmed view plus one's own moves still in flight. */
function displayTable() {
  if (!S.table) return null;
  if (!S.pending.length || S.you == null || S.you.seat == null) return S.table;
  const t = clone(S.table);
  for (const p of S.pending) applyLocal(t, S.you.seat, p.move);
  return t;
}

// ------------------------------------------------------------------ messages

function onMessage(m) {
  switch (m.type) {
    case 'state':
      S.room = m.room; S.you = m.you; S.table = m.table; S.result = m.result;
      noteAway(m.room);
      setCountdown(m.countdown_ms);
      break;
    case 'caught_up':
      S.you = m.you;
      break;
    case 'room':
      S.room = m.room;
      noteAway(m.room);
      seatWhenFree(app, m.room);
      if (S.you) {
        const me = m.room.players.find((p) => p.id === S.you.player);
        if (me) S.you = {...S.you, seat: me.seat, hand: me.hand, host: m.room.host === me.id};
      }
      break;
    case 'table':
      if (S.room && S.room.phase !== m.room.phase && m.room.phase === 'countdown') {
        S.pending = []; S.resultsHidden = false;
        if (tableView) tableView.selection = null;
      }
      S.room = m.room; S.table = m.table; S.result = m.result;
      noteAway(m.room);
      seatWhenFree(app, m.room);
      if (S.you) {
        const me = m.room.players.find((p) => p.id === S.you.player);
        if (me) S.you = {...S.you, seat: me.seat, hand: me.hand, host: m.room.host === me.id};
      }
      setCountdown(m.countdown_ms);
      if (m.room.phase === 'playing') beep('go');
      break;
    case 'update': onUpdate(m); break;
    case 'round_over':
      S.result = m.result; S.room = m.room; S.resultsHidden = false; S.pending = [];
      break;
    case 'ack':
      // The move's update came first and already showed it: redraw only if it was still held.
      if (!dropPending(m.id)) return;
      break;
    case 'rejected': onRejected(m); break;
    case 'race': {  // everyone's news: the two seats in it hear their own answers instead
      // Only a close race is news (closeRace: within a reaction time); a card most of a
      // second later was simply late, and only its player hears (onRejected).
      const seat = S.you ? S.you.seat : null;
      if (seat !== m.winner && seat !== m.loser && closeRace(m.margin_ms)) {
        const by = m.margin_ms == null ? '' : ` by ${gapWords(m.margin_ms)}`;
        toast(`${m.winner_name} beat ${m.loser_name} to foundation ${m.foundation}${by}`, '', 3000);
      }
      return;
    }
    case 'race_won':
      if (closeRace(m.margin_ms)) {
        toast(m.margin_ms == null ? `You beat ${m.loser_name} to it` : `You beat ${m.loser_name} by ${gapWords(m.margin_ms)}`, 'good', 3000);
      }
      return;
    case 'error':
      store.remove('nertz:autostart');  // "Play now" stops at the first refusal, and says why
      dropPendingSeat();
      if (m.id && dropPending(m.id)) toast(friendly(m.message, m.code), 'bad');
      else if (m.code === 'signed_out' && S.you) {
        // The player signed out, or changed the password (here or on another device), which
        // ended the seat's token. Still signed in (this browser changed the password, or
        // another device signed out): the seat comes straight back. Otherwise joining again,
        // signed in, hands it back.
        const room = S.room;
        const player = S.you.player;
        teardown();
        fill(root, h('p', {class: 'loading', text: 'Taking your seat back…'}));
        reclaimSeat(room, player).then((seat) => {
          if (seat) {
            toast('Your seat was given a new key: you are still in it.', 'good');
            enterRoom(room.code);
            return;
          }
          store.remove(seatKey(room.id));
          toast('You were signed out: sign in and join again to take your seat back.', 'bad');
          joinScreen(root, app, room);
        });
        return;
      } else if (m.code === 'bad_token' || m.code === 'signed_out') {
        store.remove(seatKey(S.room.id));
        toast('This browser no longer holds a seat here: join again.', 'bad');
        const room = S.room;
        teardown();
        joinScreen(root, app, room);
        return;
      } else toast(friendly(m.message, m.code), 'bad');
      beep('bad');
      break;
    case 'pointer':  // another seat's drag (one's own comes back too: already shown)
      if (tableView && !(S.you && m.player === S.you.player)) tableView.showPointer(m);
      return;
    case 'emote':
      if (tableView) tableView.showEmote(m.seat, m.emote);
      return;
    case 'latency':
      S.latency = m.rtt || {};
      break;
    case 'kicked':
      store.remove(seatKey(S.room.id));
      toast('The host removed you from the room.', 'bad', 5000);
      go('/');
      return;
    default:
      return;
  }
  render();
}

function onUpdate(m) {
  if (!S.table) return;
  const mySeat = S.you ? S.you.seat : null;
  const mine = mySeat != null && m.seat === mySeat;
  if (tableView) {
    for (const e of m.events) {
      if (e.kind === 'moved' && e.dst === 'F' && e.seat !== mySeat) {
        const pile = root.querySelector(`.opp[data-seat="${e.seat}"] [data-pile="${e.src}"]`);
        const cards = pile ? pile.querySelectorAll('.card') : [];
        const rect = cards.length ? cards[cards.length - 1].getBoundingClientRect() : null;
        if (rect) tableView.queueFlight(`#foundations [data-pile="F${e.foundation}"] .card:not(.under)`, rect);
      }
    }
  }
  applyUpdate(S.table, m);
  if (mine) {
    // The update carrying our own move comes just before its ack: stop showing it twice.
    const i = S.pending.findIndex((p) => p.move === m.move);
    if (i >= 0) S.pending.splice(i, 1);
    // The turn sounded at the key press; a play sounds when the server has it.
    if (/-F\d*$/.test(m.move)) beep('foundation'); else if (m.move.includes('-')) beep('place');
  } else if (m.events.some((e) => e.kind === 'moved' && e.dst === 'F')) {
    beep('other');
  }
  for (const e of m.events) {
    if (e.kind === 'reset') toast('Everyone was stuck: the stocks were turned and rotated.', '', 3500);
    if (e.kind === 'called') {
      toast(`${seatName(e.seat)}: ${e.word}!`, 'good', 3500);
      beep('call');
      celebrate(e.seat === mySeat);
    }
    if (e.kind === 'false_call') toast(`${seatName(e.seat)} called too soon: ${e.count} cards back on the Nertz pile`, 'bad', 3500);
    if (e.kind === 'ended' && e.reason === 'blocked') toast('Nobody can play on: the round is blocked.', '', 3500);
  }
}

/** A burst of suits across the screen when someone calls (bigger when it is you). */
function celebrate(mine) {
  if (matchMedia('(prefers-reduced-motion: reduce)').matches) return;
  const suits = ['\u2660', '\u2665', '\u2666', '\u2663'];
  const burst = h('div', {class: 'celebrate' + (mine ? ' mine' : ''), 'aria-hidden': 'true'});
  for (let i = 0; i < (mine ? 36 : 18); i++) {
    const s = h('span', {class: i % 4 === 1 || i % 4 === 2 ? 'red' : '', text: suits[i % 4]});
    s.style.left = `${Math.round(Math.random() * 100)}%`;
    s.style.animationDelay = `${Math.round(Math.random() * 400)}ms`;
    s.style.setProperty('--drift', `${Math.round(Math.random() * 160 - 80)}px`);
    burst.append(s);
  }
  document.body.append(burst);
  setTimeout(() => burst.remove(), 2200);
}

function onRejected(m) {
  const p = S.pending.find((x) => x.id === m.id);
  let rect = null;
  if (p && p.cards.length) {
    const code = p.cards[0];
    const shown = [...root.querySelectorAll(`#foundations .card[data-card="${code}"][data-owner="${S.you.seat}"], #me .card[data-card="${code}"]`)];
    if (shown.length) rect = shown[shown.length - 1].getBoundingClientRect();
  }
  dropPending(m.id);
  if (m.race) {
    const r = m.race;
    if (closeRace(r.margin_ms)) {
      toast(r.margin_ms == null ? `Beaten to it by ${r.winner_name}` : `Beaten by ${r.winner_name} by ${gapWords(r.margin_ms)}`, 'bad', 3000);
      beep('race');
    } else {
      // Not a race but a late card: it sounds like any other refused play.
      toast(`Too late: ${r.winner_name}'s ${label(r.card)} reached foundation ${r.foundation} first (${gapWords(r.margin_ms)} before yours)`, 'bad', 3500);
      beep('bad');
    }
  } else {
    toast(m.error ? friendly(m.error) : 'Not allowed', 'bad');
    beep('bad');
  }
  if (rect && tableView && p) tableView.queueFlight(`#me .card[data-card="${p.cards[0]}"]`, rect);
}

function setCountdown(ms) {
  clearInterval(countdownTimer);
  S.countdownUntil = ms ? performance.now() + ms : 0;
  if (ms) countdownTimer = setInterval(render, 200);
}

// ------------------------------------------------------------------ names and seats

function seatPlayers(seat) {
  return S.room ? S.room.players.filter((p) => p.seat === seat) : [];
}

/** A seat's name as the server gives it (its people's names, `Ann & Bob`). */
function seatName(seat) {
  const names = S.room && S.room.seat_names;
  return (names && names[seat]) || `seat ${seat + 1}`;
}

/** The letter on a seat's owner mark: the name's initial, or the seat number when two seats
 *  share an initial (the mark must tell seats apart without colour). */
function seatInitial(seat) {
  const first = (s) => (seatName(s).trim()[0] || '').toUpperCase();
  const mine = first(seat);
  const seats = S.room ? S.room.seats : 0;
  for (let s = 0; s < seats; s++) if (s !== seat && first(s) === mine) return String(seat + 1);
  return mine || String(seat + 1);
}

let awayTimer = null;

/** Tick the away marks once a second while anyone is away (the server says until when). */
function noteAway(room) {
  const anyone = room.players.some((p) => p.away_until != null && p.seat != null);
  clearInterval(awayTimer);
  awayTimer = anyone ? setInterval(() => { if (tableView) render(); }, 1000) : null;
}

/** The away mark of a seat: '' when its people are here; else a countdown to the server's
 *  deadline (`away_until`, the wall clock) after which the host may seat a bot. */
function seatAway(seat) {
  const gone = seatPlayers(seat).filter((p) => !p.bot && !p.connected);
  if (!gone.length) return '';
  const p = gone[0];
  if (p.vacant) return 'left: the host may seat a bot';
  if (p.away_until == null) return 'away';
  const left = Math.max(0, p.away_until - Date.now());
  const m = Math.floor(left / 60000), sec = Math.floor(left / 1000) % 60;
  return `away: seat free in ${m}:${String(sec).padStart(2, '0')}`;
}

/** The automation flag the server raised on a seat this match (`room.flags`), or null. */
function seatFlag(seat) {
  const flags = S.room && S.room.flags;
  return (flags && flags.find((f) => f.seat === seat)) || null;
}

function seatLatency(seat) {
  if (S.you && seat === S.you.seat && conn && conn.rtt != null) return Math.round(conn.rtt);
  const vals = seatPlayers(seat).map((p) => S.latency[p.id]).filter((v) => v != null);
  return vals.length ? Math.max(...vals) : null;
}

// ------------------------------------------------------------------ drawing

const WATCHING = `You are watching. ${hostSeats()}`;

function topbar() {
  const room = S.room;
  const match = room.match;
  const word = room.options.call_word || 'Nertz';
  const totals = match ? match.totals.map((v, s) => `${seatName(s)} ${v}`).join(' · ') : '';
  return [
    h('h1', {class: 'title', text: 'Nertz'}),
    h('span', {class: 'pill', title: 'Room code'}, 'Room ', h('strong', {text: room.code})),
    match ? h('span', {class: 'pill', id: 'round-no', text: `Round ${match.round}`}) : null,
    // Cut short where the bar has no room (a phone held sideways, many seats): a tap opens
    // every seat's score in full under it.
    totals ? h('span', {class: 'scores-wrap'},
      h('button', {class: 'pill', id: 'totals', title: totals, 'aria-expanded': String(!!S.scoresOpen),
        'aria-controls': S.scoresOpen ? 'scores-pop' : null, 'aria-label': `Scores: ${totals}`,
        onclick: () => { S.scoresOpen = !S.scoresOpen; render(); }}, h('span', {text: totals})),
      S.scoresOpen ? menuScores(match, 'scores-pop') : null) : null,
    S.status !== 'open' ? h('span', {class: 'pill warn', text: 'Reconnecting…'}) : null,
    // A watcher's mark says, on a tap, how a seat comes (a title alone is no use on touch).
    S.you && S.you.seat == null ? h('button', {class: 'pill', id: 'watching', title: WATCHING,
      onclick: () => toast(WATCHING, '', 5000)}, 'Watching') : null,
    h('span', {class: 'spacer'}),
    S.result && S.resultsHidden && (room.phase === 'round_over' || room.phase === 'match_over')
      ? h('button', {id: 'show-results', onclick: () => { S.resultsHidden = false; render(); }}, 'Results') : null,
    // On a phone the settings fold into one menu button, so the bar keeps to one row and each
    // control is a full-size touch target (style.css); elsewhere the menu button is hidden.
    h('button', {id: 'menu-btn', class: 'menu-btn', 'aria-expanded': String(!!S.menuOpen), 'aria-controls': 'tools',
      onclick: () => { S.menuOpen = !S.menuOpen; render(); }}, 'Menu'),
    h('div', {id: 'tools', class: 'tools' + (S.menuOpen ? ' open' : '')},
      match ? menuScores(match) : null,
      h('button', {id: 'sound', 'aria-pressed': String(!soundOn()), title: 'Sounds on or off (remembered)',
        onclick: () => { setSound(!soundOn()); render(); }}, 'Mute'),
      h('button', {id: 'four-colour', 'aria-pressed': String(document.body.classList.contains('four-colour')), onclick: toggleFourColour,
        title: 'Four-colour deck: spades black, hearts red, diamonds blue, clubs green'}, 'Four colours'),
      h('button', {id: 'help-btn', onclick: () => { S.menuOpen = false; toggleHelp(); }, 'aria-keyshortcuts': '?'}, 'Help', h('span', {class: 'key'}, ' (?)')),
      h('a', {href: '/', id: 'leave', onclick: (e) => { e.preventDefault(); if (leaveConfirmed()) go('/'); }, title: `Leave (your seat waits for you) · call word: ${word}`}, 'Leave')),
  ];
}

/** The match's scores in the phone's menu (the top bar has no room for them there), or
 *  opened from the bar's scores (`scores-pop`): the round and each seat's total, best first.
 *  The menu's are shown by style.css on a phone only. */
function menuScores(match, id = 'menu-scores') {
  const totals = match.totals.map((v, s) => ({s, v}));
  const order = [...totals].sort((a, b) => b.v - a.v || a.s - b.s);
  const target = S.room.options.target_score;
  const mySeat = S.you ? S.you.seat : null;
  return h('section', {id, class: 'scores-list', 'aria-label': 'Scores'},
    h('p', {text: `Round ${match.round}${target ? ` · to ${target} points` : ''}`}),
    h('table', {class: 'data'},
      h('caption', {class: 'sr-only', text: 'Match totals: place, seat, points'}),
      h('tbody', {}, order.map(({s, v}) => h('tr', {class: s === mySeat ? 'me' : '', dataset: {seat: String(s)}},
        h('td', {text: String(1 + totals.filter((t) => t.v > v).length)}),
        h('th', {scope: 'row'}, h('span', {class: 'seatname'}, ownerMark(s, seatInitial(s)), h('span', {text: seatName(s)}))),
        h('td', {text: String(v)}))))));
}

/** Whether to leave: at once, unless a round is being played in the player's own seat (a
 *  slip of the thumb there would cost the round's play), where the player confirms first. */
function leaveConfirmed() {
  const seated = S.you && S.you.seat != null;
  if (!seated || !S.room || !['countdown', 'playing'].includes(S.room.phase)) return true;
  return window.confirm('Leave the table? Your seat waits five minutes for you: '
    + 'come back by this room\'s link.');
}

/** "Play now": the host's page seats the bots and starts once the room is full; true while it
 *  does (the lobby is not drawn meanwhile). */
function autoStart() {
  const auto = store.get('nertz:autostart');
  if (!auto || !S.room || auto.room !== S.room.id) return false;
  if (!S.you || !S.you.host || S.status !== 'open' || S.room.phase !== 'lobby') return false;
  const empty = [];
  for (let s = 0; s < S.room.seats; s++) if (!S.room.players.some((p) => p.seat === s)) empty.push(s);
  if (!empty.length) {
    store.remove('nertz:autostart');
    send({type: 'start', countdown_ms: app.countdownMs});
    return true;
  }
  for (const seat of empty) {
    if (auto.asked.includes(seat)) continue;
    auto.asked.push(seat);
    send({type: 'add_bot', seat, level: auto.level, bot: 'greedy'});
  }
  store.set('nertz:autostart', auto);
  if (!root.querySelector('.loading')) fill(root, h('p', {class: 'loading', text: 'Dealing…'}));
  return true;
}

function toggleHelp() { S.help = !S.help; render(); }

function render() {
  if (replayView || !S.room) return;
  const room = S.room;
  if (room.phase === 'lobby' || (!S.table && room.phase !== 'countdown')) {
    if (tableView) { tableView.destroy(); tableView = null; }
    // Drawn again only when what it shows changed: a passing message (the latency report
    // every few seconds) must not redraw what the player is touching.
    if (autoStart()) return;
    const key = JSON.stringify([room, S.you, S.status]);
    if (key !== lobbyKey || !root.querySelector('#lobby')) {
      lobbyKey = key;
      lobbyScreen(root, app);
    }
    overlays();
    return;
  }
  lobbyKey = '';
  if (!tableView) {
    tableView = new TableView(root, {
      get seat() { return S.you ? S.you.seat : null; },
      // Which of the seat's Nertz pile, stock and waste this player plays, as the server
      // says (`piles`: all three, or a split partner's half).
      get piles() {
        const you = S.you;
        if (!you || you.seat == null || !S.room) return null;
        const me = S.room.players.find((p) => p.id === you.player);
        return me && me.piles ? me.piles : null;
      },
      get options() { return S.room.options; },
      names: seatName,
      initial: seatInitial,
      latency: seatLatency,
      away: seatAway,
      flag: seatFlag,
      play,
      pointer: (p) => { if (conn) conn.send({type: 'pointer', ...p}); },
      emote: (name) => send({type: 'emote', emote: name}),
      onHelp: toggleHelp,
      topbar,
      get phase() { return S.room.phase; },
      get callWord() { return S.room.options.call_word || 'Nertz'; },
    });
  }
  const shown = displayTable();
  const four = document.body.classList.contains('four-colour');
  let banner = '';
  // Who called shows until the results do; a player who put the results away to look at the
  // table gets the table whole (the banner sat over the foundations' top row).
  const lookingBack = S.result && S.resultsHidden;
  if (room.phase === 'countdown') banner = 'Get ready…';
  else if (lookingBack) banner = '';
  else if (shown && shown.ended === 'nertz' && shown.called_by != null) banner = `${seatName(shown.called_by)} called ${room.options.call_word || 'Nertz'}!`;
  else if (shown && shown.ended === 'blocked') banner = 'The round is blocked.';
  tableView.render(shown, {
    pending: S.pending.length,
    banner,
    topKey: [room.phase, room.match, S.status, soundOn(), four, S.resultsHidden, !!S.result, !!S.menuOpen, !!S.scoresOpen,
      room.players.map((p) => [p.name, p.seat]), S.you && S.you.seat],
  });
  const left = S.countdownUntil - performance.now();
  if (room.phase === 'countdown' && left > 0) tableView.showCountdown(String(Math.ceil(left / 1000)));
  else { tableView.showCountdown(''); if (room.phase !== 'countdown') clearInterval(countdownTimer); }
  overlays();
}

let overlayEl = null;
let sheetSize = null;  // watches the open sheet's size (its messages placed again)
let overlayKey = '';
let overlayReturn = '';  // the id of what had the keyboard's focus when a sheet opened
let lobbyKey = '';

function overlays() {
  const room = S.room;
  let key = '';
  let sheet = null;
  if (S.help) {
    key = 'help';
    sheet = () => helpSheet(toggleHelp, room && room.options);
  } else if (S.result && !S.resultsHidden && (room.phase === 'round_over' || room.phase === 'match_over')) {
    // The result and the phase (and who may act on it): a seat changing refreshes only the
    // sheet's watchers part (refreshResultsWatchers), not the whole sheet (its scroll, focus,
    // count-up and analysis).
    key = JSON.stringify(['results', S.result, room.phase, S.you && S.you.host]);
    sheet = () => resultsSheet(app, S.result, seatName, S.you ? S.you.seat : null);
  }
  if (key === overlayKey && (!key || (overlayEl && overlayEl.isConnected))) {
    if (key) refreshResultsWatchers(app);
    return;
  }
  overlayKey = key;
  if (overlayEl) { overlayEl.remove(); overlayEl = null; }
  if (sheetSize) { sheetSize.disconnect(); sheetSize = null; }
  if (!sheet) {
    // Closed: the keyboard goes back to what opened it (the lobby's How to play, say).
    const back = overlayReturn && document.getElementById(overlayReturn);
    overlayReturn = '';
    if (back) back.focus({preventScroll: true});
    return;
  }
  const from = document.activeElement;
  if (from && from.id && !overlayReturn) overlayReturn = from.id;
  // A click beside the help closes it; the results stay until asked (a drag released late
  // must not dismiss them).
  overlayEl = h('div', {class: 'overlay', onclick: (e) => { if (e.target === overlayEl && S.help) closeOverlay(); }}, sheet());
  document.body.append(overlayEl);
  // A message shown just before (the call's) keeps off the sheet's headings, and again as
  // the sheet's later parts (ratings, analysis) load and the centred sheet moves them.
  placeMessages();
  sheetSize = new ResizeObserver(() => placeMessages());
  sheetSize.observe(overlayEl.firstElementChild);
  // Focus the dialog's title, not a button: a key still held from play must not press one.
  const title = overlayEl.querySelector('h2');
  if (title) { title.tabIndex = -1; title.focus(); }
  const results = overlayEl.querySelector('#results');
  if (results) countUp(results);
}

function closeOverlay() {
  if (S.help) S.help = false; else S.resultsHidden = true;
  render();
}

// The top bar's menu (a phone's) closes on a touch anywhere outside it, as menus do.
document.addEventListener('pointerdown', (e) => {
  if (S.menuOpen && !(e.target instanceof Element && e.target.closest('#tools, #menu-btn'))) {
    S.menuOpen = false;
    render();
  }
  if (S.scoresOpen && !(e.target instanceof Element && e.target.closest('#scores-pop, #totals'))) {
    S.scoresOpen = false;
    render();
  }
});

/** Tab and Shift+Tab stay in an open sheet (help, results), as in any modal dialog: they
 *  walked out of it into the table behind, and a keyboard player lost the dialog. */
function keepFocusIn(sheet, e) {
  const all = [...sheet.querySelectorAll('a[href], button:not([disabled]), input:not([disabled]), select:not([disabled]), [tabindex]:not([tabindex="-1"])')]
    .filter((el) => el.getClientRects().length);
  if (!all.length) return;
  const first = all[0], last = all[all.length - 1];
  const at = document.activeElement;
  const inside = sheet.contains(at);
  // The sheet's title (focused on opening) is before its first control.
  if (e.shiftKey && (!inside || at === first || !all.includes(at))) {
    e.preventDefault(); last.focus();
  } else if (!e.shiftKey && (!inside || at === last)) {
    e.preventDefault(); first.focus();
  }
}

document.addEventListener('keydown', (e) => {
  if (e.key === 'Tab' && overlayEl) keepFocusIn(overlayEl, e);
  else if (e.key === 'Escape' && overlayEl) { e.preventDefault(); closeOverlay(); }
  else if (e.key === 'Escape' && S.menuOpen) {
    // The phone's menu closes on Esc as menus do (it stayed open over the seats), and the
    // keyboard goes back to its button.
    e.preventDefault();
    S.menuOpen = false;
    render();
    const btn = document.getElementById('menu-btn');
    if (btn) btn.focus({preventScroll: true});
  }
  else if (e.key === 'Escape' && S.scoresOpen) {
    e.preventDefault();
    S.scoresOpen = false;
    render();
    const btn = document.getElementById('totals');
    if (btn) btn.focus({preventScroll: true});
  }
  else if (e.key === '?' && !tableView && S.room && !(e.target && /INPUT|SELECT|TEXTAREA/.test(e.target.tagName))) toggleHelp();
});

// Label for screen readers on what the page is showing (kept short).
export function describeCard(code) { return label(code); }

route();

// Keep the page's files for an instant (and offline) start; see sw.js. Once, as the page
// loads (it was registered again at every move between screens, too).
if ('serviceWorker' in navigator) {
  navigator.serviceWorker.register('/sw.js').catch(() => { /* not over plain http elsewhere */ });
}
