// The screens around the table: home (create or join a room), joining, the lobby, round results
// with match standings, and the keyboard help. Names are always inserted as text.

import {playersNav, roomRatings, ratingChanges} from './players.js';
import {h, fill, refill, toast, store} from './dom.js';
import {ownerMark} from './cards.js';
import {api, busy} from './net.js';
import {analysisSlot, fetchAnalysis, sameDealButton, uploadAnalysis} from './analysis.js';
import {presetName, optionName, optionWords, valueName} from './names.js';

// ------------------------------------------------------------------ home

/** Parse an option's `describe` ("one of 4, 5", "one of 1..20", "one of card_points, 0..1000"). */
function choices(describe) {
  const body = describe.replace(/^one of /, '');
  const parts = body.split(', ');
  if (parts.every((p) => !p.includes('..') && p !== 'any word')) return {kind: 'select', values: parts};
  if (parts.length === 1 && /^\d+\.\.\d+$/.test(parts[0])) {
    const [min, max] = parts[0].split('..').map(Number);
    return {kind: 'number', min, max};
  }
  return {kind: 'text', hint: body};
}

function shownValue(v) {
  if (v === true) return 'on';
  if (v === false) return 'off';
  if (v === null) return 'none';
  return String(v);
}

function wireValue(text, def) {
  if (typeof def === 'boolean') return text === 'on';
  if (text === 'none') return null;
  if (/^-?\d+$/.test(text)) return Number(text);
  return text;
}

/** The home screen: create a room from a preset (options editable), join by code, watch a file. */
export async function homeScreen(root, app) {
  const name = h('input', {id: 'name', maxlength: '24', autocomplete: 'nickname', value: store.get('nertz:name', ''), placeholder: 'Your name'});
  const err = h('p', {class: 'error-text', role: 'alert'});
  fill(root, h('div', {class: 'screen', id: 'home'},
    h('h1', {class: 'brand'}, 'Nertz ', h('small', {text: 'Nerts, Pounce: everyone plays at once'})),
    h('div', {class: 'panel'}, h('label', {class: 'field'}, h('span', {text: 'Your name (shown to the table)'}), name)),
    h('p', {text: 'Loading the rule presets…'})));
  let presets;
  try { presets = await api('/api/presets'); }
  catch (e) { err.textContent = e.message; root.append(err); return; }
  const preset = h('select', {id: 'preset', 'aria-describedby': 'preset-summary'},
    presets.presets.map((p) => h('option', {value: p.name, text: presetName(p.name)})));
  const summary = h('p', {class: 'summary', id: 'preset-summary'});
  const seats = h('input', {id: 'seats', type: 'number', min: '2', max: '8', value: '4'});
  const grid = h('div', {class: 'options-grid'});
  const inputs = {};
  for (const o of presets.options) {
    const c = choices(o.describe);
    let input;
    if (c.kind === 'select') input = h('select', {name: o.name}, c.values.map((v) => h('option', {value: v, text: valueName(v)})));
    else if (c.kind === 'number') input = h('input', {name: o.name, type: 'number', min: String(c.min), max: String(c.max)});
    else input = h('input', {name: o.name, type: 'text', placeholder: c.hint});
    inputs[o.name] = {input, opt: o};
    const wrap = h('label', {class: 'field'},
      h('span', {}, h('strong', {text: optionName(o.name)}), h('br'), h('span', {class: 'small', text: o.doc})), input);
    input.addEventListener('input', () => mark());
    grid.append(wrap);
  }
  const current = () => presets.presets.find((p) => p.name === preset.value);
  const codes = h('pre', {class: 'codes', id: 'rules-codes'});
  const showCodes = () => {
    const diff = changed();
    const p = current();
    codes.textContent = [`preset: ${p.name} (rulebook ${p.source})`,
      ...Object.entries(diff).map(([k, v]) => `${k}: ${shownValue(v)}`)].join('\n');
  };
  const load = () => {
    const p = current();
    for (const [k, {input}] of Object.entries(inputs)) input.value = shownValue(p.options[k]);
    mark();
  };
  const changed = () => {
    const p = current();
    const out = {};
    for (const [k, {input}] of Object.entries(inputs)) {
      if (input.value.trim() !== shownValue(p.options[k])) out[k] = wireValue(input.value.trim(), p.options[k]);
    }
    return out;
  };
  const mark = () => {
    const diff = changed();
    for (const [k, {input}] of Object.entries(inputs)) input.closest('label').classList.toggle('changed', k in diff);
    const n = Object.keys(diff).length;
    count.textContent = n ? `${n} changed from the preset` : 'as the preset';
    // The line under the rules says what the room will play, changes included (teams, say).
    const words = Object.entries(diff).map(([k, v]) => optionWords(k, v));
    const base = current().summary;
    summary.textContent = words.length ? `${base}${/[.!?]$/.test(base) ? '' : '.'} Changed from the preset: ${words.join('; ')}.` : base;
    showCodes();
  };
  const count = h('span', {class: 'muted small'});
  preset.addEventListener('change', load);
  const create = h('button', {class: 'primary', id: 'create'}, 'Create room');
  // Each panel says what went wrong beside its own button, where the eye is (the page's top
  // may be screens away on a tablet).
  const createErr = h('p', {class: 'error-text', role: 'alert', id: 'create-error'});
  const joinErr = h('p', {class: 'error-text', role: 'alert', id: 'join-error'});
  const replayErr = h('p', {class: 'error-text', role: 'alert', id: 'replay-error'});
  create.addEventListener('click', async () => {
    createErr.textContent = '';
    err.textContent = '';
    const nm = name.value.trim();
    // The name's own field is at the top, and takes the focus: its message shows above it.
    if (!nm) { err.textContent = 'Type your name first.'; name.focus(); return; }
    store.set('nertz:name', nm);
    const diff = changed();
    const rules = Object.keys(diff).length ? {preset: preset.value, ...diff} : preset.value;
    create.disabled = true;
    try {
      const r = await api('/api/rooms', {rules, seats: Number(seats.value), name: nm});
      app.saveSeat(r.room, r.token, r.player);
      app.go(`/r/${r.code}`);
    } catch (e) {
      createErr.textContent = e.message;
      createErr.scrollIntoView({block: 'nearest'});
    } finally { create.disabled = false; }
  });
  const playNow = h('button', {class: 'primary big', id: 'play-now'}, 'Play now');
  playNow.addEventListener('click', async () => {
    err.textContent = '';
    const nm = name.value.trim() || 'Player';
    store.set('nertz:name', nm);
    playNow.disabled = true;
    try {
      // Pounce against two casual bots, dealt as soon as the room opens.
      const r = await api('/api/rooms', {rules: 'pagat', seats: 3, name: nm});
      app.saveSeat(r.room, r.token, r.player);
      app.autoStart(r.room, 'casual');
      app.go(`/r/${r.code}`);
    } catch (e) {
      err.textContent = e.message;
    } finally { playNow.disabled = false; }
  });
  const code = h('input', {id: 'join-code', placeholder: 'Room code', 'aria-label': 'Room code', autocapitalize: 'characters', maxlength: '32'});
  const join = h('button', {id: 'join', class: 'primary'}, 'Join');
  const doJoin = () => {
    const c = code.value.trim().replace(/^.*\/r\//, '');
    joinErr.textContent = '';
    if (!c) { joinErr.textContent = 'Type the room code from the share link.'; code.focus(); return; }
    if (name.value.trim()) store.set('nertz:name', name.value.trim());
    app.go(`/r/${encodeURIComponent(c)}`);
  };
  join.addEventListener('click', doJoin);
  code.addEventListener('keydown', (e) => { if (e.key === 'Enter') doJoin(); });
  const file = h('input', {type: 'file', id: 'replay-file', accept: '.json,application/json'});
  file.addEventListener('change', async () => {
    const f = file.files[0];
    replayErr.textContent = '';
    if (!f) return;
    try {
      const text = await f.text();
      const frames = await api('/api/replays/frames', text);
      app.openReplay(frames, f.name, () => uploadAnalysis(text));
    } catch (e) {
      replayErr.textContent = busy(e)
        ? `The server cannot show it just now: ${e.message}`
        : `That file is not a replay this page can show (a *.nertz.json file saved from a match): ${e.message}`;
      replayErr.scrollIntoView({block: 'nearest'});
    }
  });
  fill(root, h('div', {class: 'screen', id: 'home'},
    h('h1', {class: 'brand'}, 'Nertz ', h('small', {text: 'Nerts, Pounce: everyone plays at once'})),
    err,
    playersNav(app),
    h('div', {class: 'panel'},
      h('label', {class: 'field'}, h('span', {text: 'Your name (shown to the table)'}), name),
      h('div', {class: 'row'}, playNow,
        h('span', {class: 'muted', text: 'A table of Pounce against two bots, at once.'})),
      h('p', {}, h('a', {href: '/learn', id: 'learn', onclick: (e) => { e.preventDefault(); app.go('/learn'); }},
        'New to Nertz? Learn by playing a guided round'))),
    h('div', {class: 'panel'},
      h('h2', {text: 'Play with friends'}),
      h('div', {class: 'row'},
        h('label', {class: 'field grow'}, h('span', {text: 'Rules'}), preset),
        h('label', {class: 'field'}, h('span', {text: 'Seats (2 to 8)'}), seats)),
      summary,
      h('details', {id: 'options'}, h('summary', {}, 'Options ', count), grid),
      h('details', {id: 'rules-details'}, h('summary', {}, 'Details: the rules by their code names'), codes),
      createErr,
      h('p', {}, create)),
    h('div', {class: 'panel'},
      h('h2', {text: 'Join a room'}),
      h('div', {class: 'row'}, code, join), joinErr),
    h('div', {class: 'panel'},
      h('h2', {text: 'Watch a replay file'}),
      h('label', {class: 'field'}, h('span', {text: 'A *.nertz.json file: step through every move of its rounds.'}), file), replayErr)));
  load();
}

// ------------------------------------------------------------------ joining

/** A room this browser holds no seat in: join with a name (or watch). */
export function joinScreen(root, app, room) {
  const name = h('input', {id: 'name', maxlength: '24', value: store.get('nertz:name', ''), placeholder: 'Your name'});
  const err = h('p', {class: 'error-text', role: 'alert'});
  const go = async (spectator) => {
    const nm = name.value.trim();
    if (!nm) { err.textContent = 'Type your name first.'; name.focus(); return; }
    store.set('nertz:name', nm);
    try {
      const r = await api(`/api/rooms/${encodeURIComponent(room.id)}/join`, {name: nm, spectator});
      app.saveSeat(r.room, r.token, r.player);
      app.enterRoom(room.code);
    } catch (e) { err.textContent = e.message; }
  };
  const seated = room.players.filter((p) => p.seat != null).length;
  // A full room, or a match under way, takes newcomers as watchers (docs/protocol.md): say so
  // before they join, and how a seat comes (the host gives it, between matches).
  const seatFree = room.phase === 'lobby' && seated < placesCount(room);
  const join = seatFree ? h('button', {class: 'primary', id: 'join-room', onclick: () => go(false)}, 'Take a seat') : null;
  const watch = h('button', {id: 'watch-only', class: seatFree ? '' : 'primary', onclick: () => go(true)},
    seatFree ? 'Just watch' : 'Join to watch');
  const why = seatFree ? null : h('p', {id: 'join-watch-how', text: `${joinWhy(room.phase)}: you join as a watcher. ${hostSeats()}`});
  name.addEventListener('keydown', (e) => { if (e.key === 'Enter') go(!seatFree); });
  fill(root, h('div', {class: 'screen', id: 'join-screen'},
    h('h1', {class: 'brand', text: 'Nertz'}),
    h('div', {class: 'panel'},
      h('h2', {}, 'Room ', h('span', {class: 'code', text: room.code})),
      h('p', {text: `${placesText(room, seated)} · ${rulesText(room)}`}),
      h('ul', {}, room.players.map((p) => h('li', {text: p.name + (p.bot ? ` (${p.level} bot)` : '')}))),
      h('label', {class: 'field'}, h('span', {text: 'Your name'}), name),
      why,
      err,
      h('div', {class: 'row'}, join, watch,
        h('a', {href: '/', onclick: (e) => { e.preventDefault(); app.go('/'); }}, 'Home'))),
    h('details', {class: 'panel', id: 'join-how'}, h('summary', {}, 'New to Nertz? How to play, in a minute'),
      howToPlay(room.options))));
  name.focus();
}

/** Why a newcomer joins as a watcher, by the room's phase: a room between rounds or after its
 *  match was told a match "is being played". */
function joinWhy(phase) {
  if (phase === 'lobby') return 'Every seat is taken';
  if (phase === 'countdown' || phase === 'playing') return 'A match is being played';
  return 'A match is under way or just finished';
}

/** How a watcher gets a seat, in the one wording every screen uses (the join screen, the
 *  lobby's and results' note, the table's *Watching* mark): the host alone seats people (the
 *  `assign` command), and only between matches. With `host`, the host's name. */
export function hostSeats(host = '') {
  return `Only the host${host ? `, ${host},` : ''} can give you a seat, between matches: ask them.`;
}

/** How many people the room seats: its seats, or under teams two places a seat. */
function placesCount(room) {
  const teams = room.options && room.options.teams && room.options.teams !== 'off';
  return teams ? room.seats * 2 : room.seats;
}

/** How full the room is: seats, or under teams the places of its teams of two. */
function placesText(room, seated) {
  const teams = room.options && room.options.teams && room.options.teams !== 'off';
  return teams ? `${seated} of ${room.seats * 2} places taken (${room.seats} teams of two)`
    : `${seated} of ${room.seats} seats taken`;
}

/** The room's rules in words: the preset and any option set on top of it. */
export function rulesText(room) {
  const spec = room.rules;
  if (typeof spec === 'string') return `Rules: ${presetName(spec)}`;
  const extra = Object.entries(spec).filter(([k]) => k !== 'preset').map(([k, v]) => optionWords(k, v));
  return `Rules: ${presetName(spec.preset)}${extra.length ? `, changed: ${extra.join('; ')}` : ''}`;
}

// ------------------------------------------------------------------ lobby

/** The lobby: seats (teams), bots, share link, ready and start. */
export function lobbyScreen(root, app) {
  const {room, you} = app.S;
  const isHost = you && you.host;
  const teams = room.options.teams !== 'off';
  const link = `${location.origin}/r/${room.code}`;
  const linkBox = h('input', {id: 'share-link', readonly: true, value: link, 'aria-label': 'Share link'});
  const copy = h('button', {id: 'copy-link', type: 'button', onclick: async () => {
    try { await navigator.clipboard.writeText(link); }
    catch { linkBox.select(); document.execCommand && document.execCommand('copy'); }
    toast('Link copied', 'good');
  }}, 'Copy link');
  const seatsList = h('ul', {class: 'seats', id: 'seats'});
  const empties = [];
  for (let s = 0; s < room.seats; s++) {
    for (const hand of teams ? [0, 1] : [0]) {
      const p = room.players.find((q) => q.seat === s && (q.hand || 0) === hand);
      if (!p && hand === 0) empties.push(s);  // a partner slot may stay empty
      const label = teams ? `Seat ${s + 1}${hand ? ' (partner)' : ''}` : `Seat ${s + 1}`;
      const li = h('li', {class: 'seat', dataset: {seat: String(s), hand: String(hand)}},
        ownerMark(s, app.initial(s)),
        h('span', {class: 'muted', text: label}));
      if (p) {
        const who = h('span', {class: 'who'}, h('span', {class: 'player-name', text: p.name}));
        if (p.id === room.host) who.append(h('span', {class: 'tag', text: 'host'}));
        if (you && p.id === you.player) who.append(h('span', {class: 'tag', text: 'you'}));
        if (p.bot) who.append(h('span', {class: 'tag', text: `${p.level} bot`}));
        else who.append(h('span', {class: 'tag ' + (p.connected ? 'ok' : 'off'), text: p.connected ? (p.vacant ? 'vacant' : 'here') : 'away'}));
        if (!p.bot && p.ready) who.append(h('span', {class: 'tag ok', text: 'ready'}));
        li.append(who);
        if (isHost && p.id !== you.player) {
          li.append(h('button', {class: 'danger', id: `kick-${p.id}`, onclick: () => app.send({type: 'kick', player: p.id})}, 'Remove'));
          li.append(...seatPicker(app, p, room));
        }
      } else {
        // What an empty seat waits for: a friend by the link, or (the host's choice) a bot.
        li.append(h('span', {class: 'who muted', text: hand ? 'empty (optional: a lone partner plays the whole tableau)'
          : isHost ? 'empty: send a friend the link, or add a bot' : 'empty: waiting for a player'}));
        if (isHost && hand === 0) li.append(botAdder(app, s));
      }
      seatsList.append(li);
    }
  }
  const me = you && room.players.find((p) => p.id === you.player);
  // Ready only tells the host: the host, who starts the match, has nobody to tell.
  const ready = isHost ? null : h('button', {id: 'ready', 'aria-pressed': me && me.ready ? 'true' : 'false',
    'aria-describedby': 'ready-how',
    onclick: () => app.send({type: 'ready', ready: !(me && me.ready)})}, me && me.ready ? 'Ready ✓ (click to undo)' : "I'm ready");
  const full = empties.length === 0;
  const start = isHost ? h('button', {class: 'primary', id: 'start', disabled: !full,
    onclick: () => app.send({type: 'start', countdown_ms: app.countdownMs})},
  full ? 'Start the match' : `Fill every seat to start (${empties.length} empty)`) : null;
  // Every empty seat at once, each at the level picked beside it (else the last one picked).
  const fill = isHost && empties.length > 1 ? h('button', {id: 'fill-bots', onclick: () => {
    for (const seat of empties) addBot(app, seat, app.botLevels[seat] || app.botLevel || 'casual');
    // Once they are all seated, the keyboard and the eye go on to Start: the button went with
    // the empty seats, and on a phone Start was below the bots' rows, out of view.
    focusNext = {id: 'start', until: performance.now() + 15000, reveal: true};
  }}, `Fill the ${empties.length} empty seats with bots`) : null;
  // Space presses a button on key-up: a lobby update between the two would lose the press,
  // so Start acts on key-down.
  if (start) start.addEventListener('keydown', (e) => {
    if (e.key !== ' ' || start.disabled) return;
    e.preventDefault();
    start.click();
  });
  refill(root, h('div', {class: 'screen', id: 'lobby'},
    h('div', {class: 'row'}, h('h1', {class: 'grow'}, 'Room ', h('span', {class: 'code', id: 'room-code', text: room.code})),
      h('a', {href: '/', onclick: (e) => { e.preventDefault(); app.go('/'); }}, 'Home')),
    h('div', {class: 'row'}, h('p', {class: 'muted rules-text', text: rulesText(room)}),
      // The rules in words for a newcomer (the help also opens with ?, which nothing said).
      h('button', {id: 'lobby-help', type: 'button', 'aria-keyshortcuts': '?', onclick: () => app.help()}, 'How to play')),
    h('div', {class: 'panel'},
      h('h2', {text: 'Invite friends'}),
      h('div', {class: 'share'}, linkBox, copy),
      h('p', {class: 'small muted'}, 'Or give them the code ', h('strong', {text: room.code}), '.')),
    h('div', {class: 'panel'},
      h('h2', {text: `Seats (${room.seats})${teams ? ': teams of two' : ''}`}),
      // Clear of the seat list (it touched the first seat on a phone).
      fill ? h('div', {class: 'actions fill-row'}, fill) : null,
      seatsList,
      watchersList(app, room),
      watchHow(app, room, full),
      h('div', {class: 'actions'}, you && you.seat != null ? ready : null, start,
        isHost ? (full ? h('span', {class: 'muted small', id: 'start-how', text: 'Start counts down, then everyone plays at once: there are no turns.'}) : null)
          : h('span', {class: 'muted small', id: 'ready-how', text: you && you.seat != null
            ? '"I\'m ready" shows the host you are set; the host starts the match.' : 'The host starts the match.'}))),
    roomRatings(room),
    matchesPanel(app, room)));
  claimFocus();
}

/** Who watches, for everyone to see; the host gets, for each, a pick of the seat to give them
 *  (a free one, or one whose bot leaves: seatGiver) and a Remove: a watcher of a full room had
 *  no way to be seated. Null when nobody watches. */
export function watchersList(app, room) {
  const watchers = room.players.filter((p) => p.seat == null && !p.vacant);
  if (!watchers.length) return null;
  const isHost = app.S.you && app.S.you.host;
  return h('div', {id: 'watchers-panel'},
    h('h3', {text: `Watching (${watchers.length})`}),
    h('ul', {class: 'seats watchers', id: 'watchers'}, watchers.map((p) => {
      const li = h('li', {class: 'seat', dataset: {player: p.id}},
        h('span', {class: 'who'}, h('span', {class: 'player-name', text: p.name}),
          app.S.you && p.id === app.S.you.player ? h('span', {class: 'tag', text: 'you'}) : null,
          h('span', {class: 'tag ' + (p.connected ? 'ok' : 'off'), text: p.connected ? 'here' : 'away'})));
      if (isHost && p.id !== app.S.you.player && room.phase !== 'countdown' && room.phase !== 'playing') {
        li.append(...[seatGiver(app, p, room)].flat().filter(Boolean));
        li.append(h('button', {class: 'danger', id: `kick-${p.id}`, onclick: () => app.send({type: 'kick', player: p.id})}, 'Remove'));
      }
      return li;
    })));
}

/** The room's places, in order: each seat, or under teams its two partner slots, with who is
 *  there (or undefined) and its words (`seat 2`, `seat 2, second partner`). */
function places(room) {
  const teams = room.options && room.options.teams && room.options.teams !== 'off';
  const out = [];
  for (let s = 0; s < room.seats; s++) {
    for (const hand of teams ? [0, 1] : [0]) {
      out.push({seat: s, hand, value: `${s}:${hand}`,
        there: room.players.find((q) => q.seat === s && (q.hand || 0) === hand),
        text: teams ? `seat ${s + 1}, ${hand ? 'second' : 'first'} partner` : `seat ${s + 1}`});
    }
  }
  return out;
}

/** Whether every seat has its player (under teams, a partner's place may stay empty). */
function seatsFull(room) {
  return places(room).every((pl) => pl.hand || pl.there);
}

/** The place the host last picked for each watcher, kept across the lobby's redraws. */
const picked = new Map();
/** The id of what takes the keyboard's focus once it is drawn (the seated watcher's row's
 *  picker, after the host seats them; Start, once the bots filling the seats are in, shown
 *  too: `reveal`): see claimFocus. */
let focusNext = {id: '', until: 0};

/** The host's pick of a seat for watcher `p`, and a *Seat* button that gives it. Choosing
 *  does nothing by itself (Chromium fires `change` on a closed select's arrow key: one key
 *  had sent the host to watching). Only free places, or a bot's (it leaves, and the host
 *  can add one back), are offered: a person is moved first with their own *Move to…*. */
function seatGiver(app, p, room) {
  const free = places(room).filter((pl) => !pl.there || pl.there.bot);
  if (!free.length) return null;
  const sel = h('select', {'aria-label': `Seat for ${p.name}`, id: `seat-${p.id}`},
    h('option', {value: '', text: 'Give a seat…'}),
    free.map((pl) => h('option', {value: pl.value, text: `${pl.text} (${pl.there ? `${pl.there.name} leaves` : 'free'})`})));
  if (free.some((pl) => pl.value === picked.get(p.id))) sel.value = picked.get(p.id);
  sel.addEventListener('change', () => picked.set(p.id, sel.value));
  const give = h('button', {type: 'button', id: `give-${p.id}`, onclick: () => {
    const pl = free.find((x) => x.value === sel.value);
    if (!pl) { toast(`Pick a seat for ${p.name} first`); sel.focus(); return; }
    picked.delete(p.id);
    focusNext = {id: `move-${p.id}`, until: performance.now() + 5000};
    if (!pl.there) { app.send({type: 'assign', player: p.id, seat: pl.seat, hand: pl.hand}); return; }
    // A bot's place: the bot leaves, and the watcher is seated only once the room shows the
    // place free (seatWhenFree): sent at once, a refused `assign` (the watcher gone
    // meanwhile) had left the seat empty and the bot gone.
    app.send({type: 'kick', player: pl.there.id});
    pendingSeat = {player: p.id, seat: pl.seat, hand: pl.hand, bot: pl.there.id, until: performance.now() + 5000};
  }}, 'Seat');
  return [sel, give];
}

/** A watcher to seat once their place's bot has left: {player, seat, hand, bot, until}. */
let pendingSeat = null;

/** With each `room` broadcast: seat the watcher the host gave a bot's place to, once the room
 *  shows that place free and the watcher still there; give up quietly if they left, if
 *  someone else took the place, or after a few seconds. */
export function seatWhenFree(app, room) {
  const want = pendingSeat;
  if (!want) return;
  if (performance.now() > want.until) { pendingSeat = null; return; }
  const there = room.players.find((q) => q.seat === want.seat && (q.hand || 0) === want.hand);
  if (there && there.id === want.bot) return;  // not yet gone
  pendingSeat = null;
  const who = room.players.find((q) => q.id === want.player);
  if (there || !who || who.seat != null) return;
  app.send({type: 'assign', player: want.player, seat: want.seat, hand: want.hand});
}

/** A refusal ends any seating under way: nothing is sent after one. */
export function dropPendingSeat() { pendingSeat = null; }

/** Once a seated watcher's row is drawn, the keyboard's focus goes to it (their picker),
 *  not to the page: the button that seated them went with the watchers' list. */
export function claimFocus() {
  if (!focusNext.id) return;
  const el = document.getElementById(focusNext.id);
  const ready = el && !el.disabled;
  if (ready && focusNext.reveal) {
    // Not taken from wherever the player went meanwhile.
    const at = document.activeElement;
    if (!at || at === document.body) {
      el.focus({preventScroll: true});
      el.scrollIntoView({block: 'nearest'});
    }
  } else if (ready) el.focus({preventScroll: true});
  if (ready || performance.now() > focusNext.until) focusNext = {id: '', until: 0};
}

/** What a watcher (not the host) is told, with the seats, where they look for one: only the
 *  host seats people, between matches. Null for anyone seated. */
export function watchHow(app, room, full) {
  const you = app.S.you;
  if (!you || you.seat != null || you.host) return null;
  const host = room.players.find((q) => q.id === room.host);
  return h('p', {id: 'watch-how', class: 'watch-how'},
    `You are watching${full ? ': every seat is taken.' : '.'} ${hostSeats(host ? host.name : '')}`);
}

/** The bots' levels, each with a line on how it plays. */
export const BOT_LEVELS = [
  ['beginner', 'Beginner: slow, misses plays'],
  ['casual', 'Casual: steady, a relaxed game'],
  ['skilled', 'Skilled: quick and sharp'],
  ['expert', 'Expert: looks ahead, hard to beat'],
];

function botAdder(app, seat) {
  const level = h('select', {'aria-label': `Bot level for seat ${seat + 1}`, class: 'bot-level', id: `bot-level-${seat}`},
    BOT_LEVELS.map(([l, text]) => h('option', {value: l, text})));
  // The level chosen stays chosen through any redraw of the lobby (it is the page's, not the
  // server's, until the bot is added).
  level.value = app.botLevels[seat] || app.botLevel || 'casual';
  level.addEventListener('change', () => { app.botLevels[seat] = level.value; app.botLevel = level.value; });
  return h('span', {class: 'row'}, level, h('button', {class: 'add-bot', id: `add-bot-${seat}`, onclick: () => {
    app.botLevel = level.value;
    addBot(app, seat, level.value);
  }}, 'Add bot'));
}

/** Ask the server for a bot in `seat` at `level` (the page seats the greedy bot). */
function addBot(app, seat, level) {
  app.send({type: 'add_bot', seat, level, bot: 'greedy'});
}

function seatPicker(app, p, room) {
  // Under teams each seat has two places: the host puts partners together by picking one.
  const sel = h('select', {'aria-label': `Move ${p.name}`, id: `move-${p.id}`},
    h('option', {value: '', text: 'Move to…'}), places(room).map((pl) => h('option', {value: pl.value, text: pl.text})),
    p.bot ? null : h('option', {value: 'watch', text: 'watching'}));
  // As with seatGiver: choosing does nothing by itself (an arrow key on the closed select
  // fires `change`, and one key had moved the player); the *Move* button acts.
  const key = `move:${p.id}`;
  if ([...sel.options].some((o) => o.value && o.value === picked.get(key))) sel.value = picked.get(key);
  sel.addEventListener('change', () => picked.set(key, sel.value));
  const move = h('button', {type: 'button', id: `do-move-${p.id}`, onclick: () => {
    if (!sel.value) { toast(`Pick where ${p.name} goes first`); sel.focus(); return; }
    picked.delete(key);
    if (sel.value === 'watch') { app.send({type: 'assign', player: p.id, seat: null, hand: 0}); return; }
    const [seat, hand] = sel.value.split(':').map(Number);
    app.send({type: 'assign', player: p.id, seat, hand});
  }}, 'Move');
  return [sel, move];
}

/** Finished matches of this room, each with its replay. */
export function matchesPanel(app, room) {
  if (!room.matches || !room.matches.length) return null;
  return h('div', {class: 'panel', id: 'matches'},
    h('h2', {text: 'Finished matches'}),
    h('ul', {}, room.matches.map((id, i) => h('li', {class: 'row'},
      h('span', {text: `Match ${i + 1}`}),
      h('button', {class: 'watch-replay', onclick: () => app.go(`/?replay=${encodeURIComponent(id)}`)}, 'Watch replay'),
      h('a', {href: `/api/matches/${encodeURIComponent(id)}/replay`, download: `${id}.nertz.json`}, 'Download')))));
}

// ------------------------------------------------------------------ results

const FIELDS = [
  ['foundation_cards', 'Foundation cards', 'Played'],
  ['card_points', 'Card points', 'Points'],
  ['nertz_left', 'Nertz cards left', 'Nertz left'],
  ['nertz_penalty', 'Penalty'],
  ['caller_bonus', 'Caller bonus'],
  ['variant_bonus', 'Variant bonus'],
  ['false_calls', 'False calls'],
  ['lotto', 'Lotto'],
  ['total', 'Round score'],
];

/** Round results with each seat's breakdown, and the match standings. */
export function resultsSheet(app, result, names, mySeat) {
  const room = app.S.room;
  const word = room.options.call_word || 'Nertz';
  const how = result.ended === 'nertz' && result.caller != null ? `${names(result.caller)} called ${word}!`
    : result.ended === 'blocked' ? 'Nobody could play on: the round was blocked.' : 'The round ended.';
  const seats = result.scores.map((_, s) => s);
  // Card points repeat the foundation cards where every card counts one (most rules).
  const shownFields = FIELDS.filter(([k]) => k === 'total' || k === 'foundation_cards' || k === 'nertz_left' ||
    (k === 'card_points' ? result.breakdown.some((b) => b[k] !== b.foundation_cards) : result.breakdown.some((b) => b[k])));
  const breakdown = h('table', {class: 'data', id: 'breakdown'},
    h('caption', {class: 'sr-only', text: `Round ${result.round} breakdown`}),
    h('thead', {}, h('tr', {}, h('th', {scope: 'col', text: 'Seat'}), shownFields.map(([k, t, short]) => h('th', {scope: 'col', dataset: {field: k}},
      // A phone shows the short heading; a screen reader always reads the long one.
      short ? [h('span', {class: 'long', text: t}), h('span', {class: 'short', 'aria-hidden': 'true', text: short})] : t)))),
    h('tbody', {}, seats.map((s) => h('tr', {class: s === mySeat ? 'me' : '', dataset: {seat: String(s)}},
      h('th', {scope: 'row'}, h('span', {class: 'seatname'}, ownerMark(s, app.initial(s)), h('span', {class: 'player-name', text: names(s)}))),
      shownFields.map(([k]) => {
        const v = result.breakdown[s][k];
        const neg = k === 'nertz_penalty' && v ? -v : v;
        return h('td', {dataset: {field: k}, text: String(k === 'total' ? result.scores[s] : neg)});
      })))));
  const order = seats.slice().sort((a, b) => result.totals[b] - result.totals[a]);
  const target = room.options.target_score;
  const standings = h('table', {class: 'data', id: 'standings'},
    h('thead', {}, h('tr', {}, h('th', {scope: 'col', text: 'Place'}), h('th', {scope: 'col', text: 'Seat'}),
      h('th', {scope: 'col', text: 'This round'}), h('th', {scope: 'col', text: 'Total'}))),
    h('tbody', {}, order.map((s, i) => h('tr', {class: s === mySeat ? 'me' : '', dataset: {seat: String(s)}},
      h('td', {text: String(i + 1)}),
      h('td', {}, h('span', {class: 'seatname'}, ownerMark(s, app.initial(s)), h('span', {class: 'player-name', text: names(s)}))),
      h('td', {dataset: {field: 'round'}, text: String(result.scores[s])}),
      h('td', {dataset: {field: 'totals'}, text: String(result.totals[s])})))));
  const over = result.over;
  const winner = over ? (result.winner == null ? 'The match ends in a tie.' : `${names(result.winner)} wins the match!`) : null;
  const isHost = app.S.you && app.S.you.host;
  const buttons = h('div', {class: 'actions'},
    isHost && !over && room.phase === 'round_over' ? h('button', {class: 'primary', id: 'next-round', onclick: () => app.send({type: 'next_round'})}, 'Deal the next round') : null,
    isHost && over ? h('button', {class: 'primary', id: 'rematch', onclick: () => app.send({type: 'rematch'})}, 'Rematch') : null,
    !isHost ? h('span', {class: 'muted', text: over ? 'The host may start a rematch.' : 'The host deals the next round.'}) : null,
    over && result.match ? h('button', {class: 'watch-replay', onclick: () => app.go(`/?replay=${encodeURIComponent(result.match)}`)}, 'Watch the replay') : null,
    over && result.match ? h('a', {href: `/api/matches/${encodeURIComponent(result.match)}/replay`, download: `${result.match}.nertz.json`}, 'Download replay') : null,
    over && result.match ? sameDealButton(app, result.match) : null,
    h('button', {id: 'hide-results', onclick: () => app.hideResults()}, 'See the table'));
  return h('div', {class: 'sheet', id: 'results', role: 'dialog', 'aria-modal': 'true', 'aria-labelledby': 'results-title', dataset: {round: String(result.round)}},
    h('h2', {id: 'results-title', text: `Round ${result.round}: ${how}`}),
    h('div', {class: 'scroll-x', tabindex: '0', role: 'region', 'aria-label': 'Round breakdown (scrolls sideways)'}, breakdown),
    h('h2', {text: over ? `Match over. ${winner}` : `Standings${target ? ` (to ${target})` : ''}`}),
    standings,
    flagsNote(room, names),
    // Between matches the host may seat a watcher (a rematch keeps the seats as they are).
    over ? resultsWatchers(app) : null,
    over && result.match ? ratingChanges(result.match) : null,
    over && result.match ? analysisSlot(() => fetchAnalysis(result.match), {mySeat}) : null,
    // Last: the bar sticks to the sheet's foot (style.css), over whatever would follow it.
    buttons);
}

/** The finished match's watchers (and a watcher's note), in a part of the results redrawn in
 *  place as people are seated (refreshResultsWatchers): the sheet itself is drawn once per
 *  result, keeping its scroll, focus, count-up and analysis. */
function resultsWatchers(app) {
  const part = h('div', {id: 'results-watchers'});
  refreshResultsWatchers(app, part);
  return part;
}

/** Draw the results' watchers part again if what it shows changed (who watches, here or away,
 *  who is host and where one sits); the seat marked as one's own in the sheet's tables follows
 *  where one sits now (a watcher seated here was not marked until the next result). */
export function refreshResultsWatchers(app, part = document.getElementById('results-watchers')) {
  if (!part) return;
  const room = app.S.room;
  const you = app.S.you;
  const sheet = part.closest('#results');
  const mySeat = you ? you.seat : null;
  if (sheet) {
    for (const row of sheet.querySelectorAll(':is(#breakdown, #standings) tbody tr')) {
      row.classList.toggle('me', Number(row.dataset.seat) === mySeat);
    }
  }
  const key = JSON.stringify([room.host, room.phase, room.seats,
    room.players.map((p) => [p.id, p.name, p.seat, p.hand, p.bot, p.connected, p.vacant]),
    you && [you.player, you.host, you.seat]]);
  if (part.dataset.key === key) return;
  part.dataset.key = key;
  const had = part.contains(document.activeElement);
  refill(part, watchersList(app, room), watchHow(app, room, seatsFull(room)));
  claimFocus();
  // The button that seated the last watcher went with the list: the keyboard stays here.
  if (had && !part.contains(document.activeElement)) {
    part.tabIndex = -1;
    part.focus({preventScroll: true});
  }
}

/** The seats the server flagged this match as playing beyond any person, each with the figures
 *  that raised the flag (`room.flags`; bots are never flagged). */
function flagsNote(room, names) {
  const flags = room.flags || [];
  if (!flags.length) return null;
  return h('div', {class: 'panel flags', id: 'flags', role: 'note'},
    h('h3', {text: 'Automation flags'}),
    h('ul', {}, flags.map((f) => {
      // The server's line names the seat already ("Ann: median reaction 92 ms …"): it read
      // "Ann: Ann: median reaction …" under the name.
      const who = f.name || names(f.seat);
      const said = f.text.startsWith(`${who}: `) ? f.text.slice(who.length + 2) : f.text;
      return h('li', {dataset: {seat: String(f.seat)}}, h('strong', {text: `${who}: `}), h('span', {text: said}));
    })));
}

/** The scores on a results sheet count up to their values (marked `counting` and aria-busy
 *  meanwhile); at once under reduced motion. */
export function countUp(sheet, ms = 700) {
  const cells = [...sheet.querySelectorAll('td[data-field="total"], td[data-field="round"], td[data-field="totals"]')];
  if (!cells.length || matchMedia('(prefers-reduced-motion: reduce)').matches) return;
  const finals = cells.map((c) => Number(c.textContent));
  sheet.classList.add('counting');
  sheet.setAttribute('aria-busy', 'true');
  const t0 = performance.now();
  let done = false;
  const finish = () => {
    if (done) return;
    done = true;
    cells.forEach((c, i) => { c.textContent = String(finals[i]); });
    sheet.classList.remove('counting');
    sheet.removeAttribute('aria-busy');
  };
  const step = (now) => {
    if (done) return;
    const f = Math.min(1, (now - t0) / ms);
    if (f >= 1) { finish(); return; }
    const eased = 1 - (1 - f) ** 3;
    cells.forEach((c, i) => { c.textContent = String(Math.round(finals[i] * eased)); });
    requestAnimationFrame(step);
  };
  requestAnimationFrame(step);
  setTimeout(finish, ms + 150);  // a hidden tab draws no frames: end on time anyway
}

// ------------------------------------------------------------------ help

export const SHORTCUTS = [
  ['N', 'pick up the top card of your Nertz pile'],
  ['W', 'pick up the top card of your waste'],
  ['1 … 5', 'pick up a work pile\'s top card; press again for one more card of its run'],
  ['F', 'play what you picked up to a foundation'],
  ['1 … 5 (with a card picked up)', 'play it onto that work pile'],
  ['Enter', 'send what you picked up (or the focused pile\'s card) to its best place'],
  ['Space or T', 'turn the stock'],
  ['S', 'declare you are stuck (Shift+S: rotate the Nertz pile instead, where the rules let you choose)'],
  ['C (or Enter)', 'call Nertz once your Nertz pile is empty'],
  ['Esc', 'put down what you picked up; close a panel'],
  ['?', 'show or hide these keys'],
];

/** The game in a few lines, in this room's rules (`options`, the room's ruleset): what someone
 *  invited to a table needs before the race starts. */
export function howToPlay(options) {
  const o = options || {};
  const word = o.call_word || 'Nertz';
  const turn = Number(o.turn_count || 3);
  const penalty = o.nertz_penalty === 'card_points' ? 'its own points'
    : `${o.nertz_penalty ?? 2} point${Number(o.nertz_penalty ?? 2) === 1 ? '' : 's'}`;
  const up = (o.foundation || 'up') === 'up';
  return [
    h('p', {}, h('b', {text: 'The goal: '}), `empty your ${word} pile first. Everyone plays at once, no turns.`),
    h('ul', {class: 'how'},
      h('li', {text: `Only the top card of your ${word} pile plays: onto a foundation in the middle, or onto one of your work piles.`}),
      h('li', {text: up ? 'The foundations are shared by everyone: each starts with an ace and builds up in one suit to the king. Any ace starts a new one.'
        : 'The foundations are shared by everyone and built in this room\'s own order: a highlighted pile shows where a card fits.'}),
      h('li', {text: 'Work piles build down in alternating colours (a red 6 on a black 7); a card moves with the cards on top of it, and an empty pile takes any card.'}),
      h('li', {text: `Turn your stock ${turn === 1 ? 'one card' : `${turn} cards`} at a time onto the waste; the waste's top card plays like any other.`}),
      h('li', {text: `When your ${word} pile is empty, call ${word}! and the round ends${o.call === 'auto' ? ' (here it ends by itself)' : ''}.`}),
      h('li', {text: `Scoring: every card you put on a foundation scores; every card left in your ${word} pile costs ${penalty}.`}),
      h('li', {text: 'Nothing to play? Say you are stuck. When everyone is stuck the stocks are shifted and play goes on; any move takes your word back.'})),
  ];
}

export function helpSheet(close, options) {
  return h('div', {class: 'sheet help', id: 'help', role: 'dialog', 'aria-modal': 'true', 'aria-labelledby': 'help-title'},
    h('h2', {id: 'help-title', text: 'How to play'}),
    howToPlay(options),
    h('p', {}, h('a', {href: '/learn', target: '_blank', rel: 'noopener', id: 'help-learn'}, 'New to it? A guided round teaches it by playing (opens in a new tab)')),
    h('h3', {text: 'Playing by touch, mouse or keyboard'}),
    h('p', {text: 'Touch and mouse: drag a card (or part of a work pile\'s run) where it goes, or tap/click it to send it to its best place: a foundation first, then a work pile. Tap the stock to turn it.'}),
    h('p', {text: 'Foundation cards carry the colour, shape and initial of the player who played them.'}),
    h('h3', {text: 'Keys'}),
    h('dl', {}, SHORTCUTS.map(([k, d]) => [h('dt', {}, h('kbd', {text: k})), h('dd', {text: d})])),
    h('div', {class: 'sheet-foot'}, h('button', {class: 'primary', id: 'help-close', onclick: close}, 'Close')));
}
