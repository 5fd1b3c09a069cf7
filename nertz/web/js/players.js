// Players' screens: a player's page (/players/ID), the leaderboard (/leaderboard/FAMILY), the
// account (/account: sign in, make an account, change the password, delete, export) and quick
// match (/quick); and the ratings shown in a room's lobby and results. docs/players.md.

import {h, fill, toast, store, forgetSeats, seatsEnded} from './dom.js';
import {api} from './net.js';
import {presetName} from './names.js';

const FAMILY_NAMES = {
  pounce: 'Pounce (4 piles)', nertz5: 'Nertz (5 piles)', fairy_fly: 'Fairy Fly', sanna: "Sanna's",
  swinging_door: 'Swinging Door', starter9: 'Starter 9 and Evil Jacks',
};

/** A family's name for people (`pounce_teams`: "Pounce (4 piles), teams"). */
export function familyName(f) {
  const teams = f.endsWith('_teams');
  const base = teams ? f.slice(0, -6) : f;
  return (FAMILY_NAMES[base] || base) + (teams ? ', teams' : '');
}

function signed(x) { return (x > 0 ? '+' : x < 0 ? '−' : '±') + Math.abs(x).toFixed(1); }

function link(app, href, text, attrs = {}) {
  return h('a', {href, ...attrs, onclick: (e) => { e.preventDefault(); app.go(href); }}, text);
}

function screen(id, title, app, ...body) {
  return h('div', {class: 'screen', id},
    h('div', {class: 'row'}, h('h1', {class: 'grow', text: title}), link(app, '/', 'Home')),
    ...body);
}

function failed(root, app, e) {
  fill(root, screen('players-error', 'Not found', app, h('p', {class: 'error-text', text: e.message})));
}

/** Draw the players' screen for `path`, if it is one of theirs: true when it was. */
export function playersRoute(path, root, app) {
  let m;
  if ((m = /^\/players\/([^/]+)\/?$/.exec(path))) { playerPage(root, app, decodeURIComponent(m[1])); return true; }
  if ((m = /^\/leaderboard(?:\/([^/]+))?\/?$/.exec(path))) { leaderboard(root, app, m[1] ? decodeURIComponent(m[1]) : null); return true; }
  if (/^\/account\/?$/.exec(path)) { accountScreen(root, app); return true; }
  if (/^\/quick\/?$/.exec(path)) { quickScreen(root, app); return true; }
  return false;
}

/** The home screen's links to the players' screens (and who the server takes you for). */
export function playersNav(app) {
  const who = h('span', {class: 'muted', id: 'me-name'});
  const mine = h('span', {});
  const nav = h('nav', {class: 'panel row', id: 'players-nav', 'aria-label': 'Players'},
    link(app, '/quick', 'Quick match', {class: 'button', id: 'quick-link'}),
    link(app, '/leaderboard', 'Leaderboard', {id: 'leaderboard-link'}),
    mine,
    link(app, '/account', 'Account', {id: 'account-link'}),
    who);
  api('/api/me').then((me) => {
    if (!me.player) { who.textContent = 'Playing as a guest (not yet seen here).'; return; }
    fill(mine, link(app, `/players/${encodeURIComponent(me.player.id)}`, 'Your games', {id: 'my-page-link'}));
    who.textContent = me.player.guest ? `Guest: ${me.player.name}` : `Signed in as ${me.player.name}`;
  }).catch(() => { /* the links still work */ });
  return nav;
}

// ------------------------------------------------------------------ a player's page

async function playerPage(root, app, id) {
  fill(root, h('p', {class: 'loading', text: 'Loading the player…'}));
  let page;
  try { page = await api(`/api/players/${encodeURIComponent(id)}`); }
  catch (e) { failed(root, app, e); return; }
  const p = page.player;
  document.title = `Nertz · ${p.name}`;
  const ratings = h('table', {class: 'data', id: 'ratings'},
    h('caption', {text: 'Ratings'}),
    h('thead', {}, h('tr', {}, ['Rules family', 'Rating', 'Matches'].map((t) => h('th', {scope: 'col', text: t})))),
    h('tbody', {}, page.ratings.map((r) => h('tr', {dataset: {family: r.family}},
      h('th', {scope: 'row'}, link(app, `/leaderboard/${r.family}`, familyName(r.family))),
      h('td', {text: r.rating.toFixed(0)}), h('td', {text: String(r.matches)})))));
  const figures = h('table', {class: 'data', id: 'figures'},
    h('caption', {text: 'Figures by rules'}),
    h('thead', {}, h('tr', {}, ['Rules', 'Matches', 'Won', 'Mean points', 'Cards a minute', 'Races won']
      .map((t) => h('th', {scope: 'col', text: t})))),
    h('tbody', {}, page.figures.map((f) => h('tr', {dataset: {preset: f.preset}},
      h('th', {scope: 'row', text: presetName(f.preset)}), h('td', {text: String(f.matches)}),
      h('td', {text: `${Math.round(f.win_share * 100)}%`}), h('td', {text: f.mean_points.toFixed(1)}),
      h('td', {text: f.cards_per_minute.toFixed(1)}), h('td', {text: String(f.races_won)})))));
  const history = h('table', {class: 'data', id: 'history'},
    h('caption', {text: 'Matches'}),
    h('thead', {}, h('tr', {}, ['Date', 'Rules', 'Seats', 'Place', 'Points', 'Rating', 'Replay']
      .map((t) => h('th', {scope: 'col', text: t})))),
    h('tbody', {}, page.matches.map((m) => h('tr', {dataset: {match: m.match}},
      h('td', {text: new Date(m.finished_at * 1000).toLocaleString()}),
      h('td', {text: presetName(m.preset)}),
      h('td', {text: m.seats.join(', ')}),
      h('td', {text: m.won ? '1 (won)' : String(m.place)}),
      h('td', {text: String(m.points)}),
      h('td', {class: 'rating-change', text: `${m.rating_after.toFixed(0)} (${signed(m.change)})`}),
      h('td', {}, link(app, m.replay, 'Watch', {class: 'replay-link'}))))));
  fill(root, screen('player-page', p.name, app,
    h('p', {class: 'muted', text: p.guest ? 'A guest.' : 'A player with an account.'}),
    h('div', {class: 'panel scroll-x'}, page.ratings.length ? ratings : h('p', {text: 'No rated matches yet.'})),
    page.figures.length ? h('div', {class: 'panel scroll-x'}, figures) : null,
    page.matches.length ? h('div', {class: 'panel scroll-x'}, history) : null));
}

// ------------------------------------------------------------------ the leaderboard

async function leaderboard(root, app, family) {
  fill(root, h('p', {class: 'loading', text: 'Loading the leaderboard…'}));
  let fams, board;
  try {
    fams = await api('/api/families');
    family = family || store.get('nertz:family', 'pounce');
    if (!fams.families.includes(family)) family = 'pounce';
    board = await api(`/api/leaderboard/${encodeURIComponent(family)}`);
  } catch (e) { failed(root, app, e); return; }
  store.set('nertz:family', family);
  document.title = `Nertz · Leaderboard · ${familyName(family)}`;
  const pick = h('select', {id: 'family', 'aria-label': 'Rules family',
    onchange: () => app.go(`/leaderboard/${pick.value}`)},
  fams.families.map((f) => h('option', {value: f, selected: f === family}, familyName(f))));
  const table = h('table', {class: 'data', id: 'leaderboard'},
    h('caption', {text: `Best players: ${familyName(family)}`}),
    h('thead', {}, h('tr', {}, ['Rank', 'Player', 'Rating', 'Matches'].map((t) => h('th', {scope: 'col', text: t})))),
    h('tbody', {}, board.players.map((p) => h('tr', {dataset: {player: p.player}},
      h('td', {text: String(p.rank)}),
      // A guest may take any name, an account's too: the board says whose is an account.
      h('th', {scope: 'row'}, link(app, `/players/${encodeURIComponent(p.player)}`, p.name),
        p.guest ? h('span', {class: 'muted small guest-mark', text: ' (guest)'}) : null),
      h('td', {text: p.rating.toFixed(0)}), h('td', {text: String(p.matches)})))));
  fill(root, screen('leaderboard-page', 'Leaderboard', app,
    h('div', {class: 'panel'}, h('label', {class: 'field'}, h('span', {text: 'Rules family'}), pick)),
    h('div', {class: 'panel scroll-x'}, board.players.length ? table : h('p', {text: 'Nobody has played a rated match of these rules yet.'})),
    h('p', {class: 'small muted', text: 'Bots play at fixed ratings: ' +
      Object.entries(fams.bots).map(([k, v]) => `${k} ${v.toFixed(0)}`).join(', ') + '.'})));
}

// ------------------------------------------------------------------ the account

function form(id, title, fields, label, submit) {
  const err = h('p', {class: 'error-text', role: 'alert'});
  const inputs = fields.map(([name, text, type]) => h('input', {id: `${id}-${name}`, name, type: type || 'text',
    autocomplete: type === 'password' ? (name === 'old' || id === 'signin' ? 'current-password' : 'new-password') : 'username'}));
  // Deleting cannot be undone: its button looks unlike every other form's.
  const button = h('button', {class: id === 'delete' ? 'danger' : 'primary', type: 'submit', id: `${id}-submit`}, label);
  const el = h('form', {class: 'panel', id, onsubmit: async (e) => {
    e.preventDefault();
    err.textContent = '';
    button.disabled = true;
    const body = Object.fromEntries(inputs.map((i) => [i.name, i.value]));
    try { await submit(body); } catch (ex) { err.textContent = ex.message; } finally { button.disabled = false; }
  }},
  h('h2', {text: title}),
  fields.map(([, text], i) => h('label', {class: 'field'}, h('span', {text}), inputs[i])),
  err, h('p', {}, button));
  return el;
}

async function accountScreen(root, app) {
  fill(root, h('p', {class: 'loading', text: 'Loading…'}));
  let me;
  try { me = await api('/api/me'); } catch (e) { failed(root, app, e); return; }
  document.title = 'Nertz · Account';
  const again = () => accountScreen(root, app);
  const p = me.player;
  const parts = [];
  if (p) {
    parts.push(h('div', {class: 'panel'},
      h('p', {id: 'account-who', text: p.guest ? `You play as the guest ${p.name}.` : `Signed in as ${p.name}.`}),
      h('p', {}, link(app, `/players/${encodeURIComponent(p.id)}`, 'Your games and ratings', {id: 'account-page-link'})),
      h('p', {}, h('a', {href: '/api/me/history', download: 'nertz-history.json', id: 'export'}, 'Download your history (JSON)'))));
  }
  if (!p || p.guest) {
    parts.push(form('signup', p ? 'Keep this identity: make it an account' : 'Make an account',
      [['name', 'Account name'], ['password', 'Password (8 characters or more)', 'password']], 'Make the account',
      async (b) => { await api('/api/account/signup', b); toast('Account made', 'good'); again(); }));
    parts.push(form('signin', 'Sign in', [['name', 'Account name'], ['password', 'Password', 'password']], 'Sign in',
      async (b) => { await api('/api/account/signin', b); toast('Signed in', 'good'); again(); }));
  } else {
    parts.push(h('div', {class: 'panel'}, h('button', {id: 'signout', onclick: async () => {
      await api('/api/account/signout', {}); forgetSeats(); toast('Signed out'); again();
    }}, 'Sign out')));
    parts.push(form('password', 'Change the password', [['old', 'Password now', 'password'], ['new', 'New password', 'password']],
      'Change it', async (b) => {
        // Every seat's token ended with the old password; this browser, still signed in,
        // takes each seat back when it returns to the room.
        await api('/api/account/password', b); seatsEnded();
        toast('Password changed: every other device is signed out', 'good'); again();
      }));
  }
  if (p) {
    const fields = p.guest ? [] : [['password', 'Password', 'password']];
    parts.push(form('delete', 'Delete this player and their history', fields, 'Delete for good',
      async (b) => {
        if (!confirm('Delete this player, their ratings and history? This cannot be undone.')) return;
        await api('/api/account/delete', b); forgetSeats(); toast('Deleted'); again();
      }));
  }
  fill(root, screen('account', 'Account', app, ...parts));
}

// ------------------------------------------------------------------ quick match

let quickTimer = null;

async function quickScreen(root, app) {
  clearTimeout(quickTimer);
  let presets;
  try { presets = await api('/api/presets'); } catch (e) { failed(root, app, e); return; }
  document.title = 'Nertz · Quick match';
  const name = h('input', {id: 'quick-name', value: store.get('nertz:name', ''), maxlength: '24', autocomplete: 'nickname'});
  const rules = h('select', {id: 'quick-rules'}, presets.presets.map((p) => h('option', {value: p.name, selected: p.name === store.get('nertz:quick-rules', 'pagat')}, `${presetName(p.name)}: ${p.summary}`)));
  const seats = h('input', {id: 'quick-seats', type: 'number', min: '2', max: '8', value: String(store.get('nertz:quick-seats', 2))});
  const wait = h('input', {id: 'quick-wait', type: 'number', min: '0', max: '600', value: String(store.get('nertz:quick-wait', 30))});
  const status = h('p', {id: 'quick-status', role: 'status'});
  const err = h('p', {class: 'error-text', role: 'alert'});
  const cancel = h('button', {id: 'quick-cancel', hidden: true, onclick: async () => {
    clearTimeout(quickTimer);
    await fetch('/api/quick', {method: 'DELETE'});
    status.textContent = 'You left the queue.';
    cancel.hidden = true; go.disabled = false;
  }}, 'Leave the queue');
  const show = (s) => {
    if (s.status === 'matched') {
      app.saveSeat(s.room, s.token, s.player);
      app.go(`/r/${s.code}`);
      return;
    }
    if (s.status === 'none') { status.textContent = ''; cancel.hidden = true; go.disabled = false; return; }
    status.textContent = `Looking for players within ${Math.round(s.range)} rating points… ${Math.round(s.waited)} s` +
      (s.bots_after > s.waited ? ` (bots fill the table after ${Math.round(s.bots_after)} s)` : '');
    quickTimer = setTimeout(poll, 1000);
  };
  const poll = async () => {
    if (!document.getElementById('quick')) return;  // left the screen
    try { show(await api('/api/quick')); } catch (e) { err.textContent = e.message; }
  };
  const go = h('button', {class: 'primary', id: 'quick-go', onclick: async () => {
    err.textContent = '';
    const ask = {rules: rules.value, seats: Number(seats.value), bots_after: Number(wait.value)};
    if (name.value.trim()) { ask.name = name.value.trim(); store.set('nertz:name', ask.name); }
    store.set('nertz:quick-rules', ask.rules); store.set('nertz:quick-seats', ask.seats); store.set('nertz:quick-wait', ask.bots_after);
    go.disabled = true; cancel.hidden = false;
    try { show(await api('/api/quick', ask)); } catch (e) { err.textContent = e.message; go.disabled = false; cancel.hidden = true; }
  }}, 'Find a table');
  const open = h('button', {id: 'public-open', onclick: async () => {
    err.textContent = '';
    if (!name.value.trim()) { err.textContent = 'Type your name first.'; name.focus(); return; }
    try {
      const r = await api('/api/rooms', {rules: rules.value, seats: Number(seats.value), name: name.value.trim(), public: true});
      app.saveSeat(r.room, r.token, r.player);
      app.go(`/r/${r.code}`);
    } catch (e) { err.textContent = e.message; }
  }}, 'Open a public table');
  const tables = h('div', {class: 'panel', id: 'public-rooms'}, h('h2', {text: 'Open tables'}));
  fill(root, screen('quick', 'Quick match', app,
    h('div', {class: 'panel'},
      h('label', {class: 'field'}, h('span', {text: 'Your name'}), name),
      h('label', {class: 'field'}, h('span', {text: 'Rules'}), rules),
      h('div', {class: 'row'},
        h('label', {class: 'field'}, h('span', {text: 'Seats (2 to 8)'}), seats),
        h('label', {class: 'field'}, h('span', {text: 'Wait for people (seconds), then bots'}), wait)),
      err, h('div', {class: 'actions'}, go, cancel, open),
      h('p', {class: 'muted small', text: 'Find a table: you join the queue and are seated with players near your rating; if nobody comes in time, bots fill the seats. Open a public table: a lobby of your own that others see listed below, started when you choose.'}),
      status),
    tables));
  api('/api/rooms').then((data) => {
    tables.append(data.rooms.length
      ? h('ul', {}, data.rooms.map((r) => h('li', {dataset: {room: r.room}},
        link(app, `/r/${r.code}`, `${presetName(r.preset)}, ${r.seats} seats`),
        r.seated != null ? ` (${r.seated} seated)` : '')))
      : h('p', {class: 'muted', text: 'No public table is waiting for players. Private rooms are never listed.'}));
  }).catch(() => { /* the quick match still works */ });
  poll();
}

// ------------------------------------------------------------------ ratings in a room

const roomCache = new Map();  // room id -> {key, data}

/** Each seat's rating in the lobby: a small panel, fetched again when the people change. */
export function roomRatings(room) {
  const key = room.players.map((p) => p.id).join(',');
  const el = h('div', {class: 'panel small', id: 'room-ratings'});
  const draw = (target, data) => {
    const by = Object.fromEntries(data.players.map((p) => [p.player, p]));
    fill(target, h('h2', {text: `Ratings: ${familyName(data.family)}`}),
      // Bare numbers told a newcomer nothing: what they are and what moves them.
      h('p', {class: 'muted', id: 'ratings-how', text: 'Each player\'s skill at these rules. A new player starts at 1000; '
        + 'each rated match (every seat filled) moves it, more for beating stronger players. A bot\'s rating is fixed by its level.'}),
      h('ul', {}, room.players.filter((p) => p.seat != null && by[p.id]).map((p) => h('li', {dataset: {player: p.id}},
        by[p.id].profile ? h('a', {href: `/players/${encodeURIComponent(by[p.id].profile)}`, text: p.name}) : h('span', {text: p.name}),
        ` ${by[p.id].rating.toFixed(0)}`))));
  };
  const cached = roomCache.get(room.id);
  if (cached && cached.key === key) { draw(el, cached.data); return el; }
  api(`/api/rooms/${encodeURIComponent(room.id)}/ratings`).then((data) => {
    roomCache.set(room.id, {key, data});
    // The lobby may have been drawn again meanwhile: fill the panel on the page now.
    const live = document.getElementById('room-ratings');
    if (live) draw(live, data);
  }).catch(() => { /* no ratings: the lobby stands without them */ });
  return el;
}

/** The rating change of each seat, under a finished match's results. */
export function ratingChanges(matchId) {
  const el = h('div', {id: 'rating-changes', class: 'small'});
  api(`/api/matches/${encodeURIComponent(matchId)}/ratings`).then((data) => {
    fill(el, h('h3', {text: `Ratings (${familyName(data.family)})`}),
      h('ul', {}, data.seats.flatMap((s) => s.players.map((p) => h('li', {},
        p.profile ? h('a', {href: `/players/${encodeURIComponent(p.profile)}`, text: p.name}) : h('span', {text: p.name}),
        ` ${p.rating_after.toFixed(0)} `,
        h('span', {class: 'rating-change', text: p.bot ? '(bot: fixed)' : `(${signed(p.rating_after - p.rating_before)})`}))))));
  }).catch(() => { fill(el, h('p', {class: 'muted', text: 'This match was not rated.'})); });
  return el;
}
