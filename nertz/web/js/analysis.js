// What a finished match teaches each seat (docs/analysis.md): the panel on the results screen
// and in the replay viewer, and the "same deal" challenge. The server computes the analysis
// from the match's replay file (GET /api/matches/{id}/analysis, POST /api/replays/analysis);
// this module only shows it. Each missed play can be a button: the viewer jumps to the moment
// the card became playable (its `round` and `step`, the viewer's position).

import {h} from './dom.js';
import {api, apiPatiently} from './net.js';
import {closeRace, gapWords} from './names.js';

const SUITS = {S: 'spades', H: 'hearts', D: 'diamonds', C: 'clubs'};
const RANKS = {A: 'ace', T: '10', J: 'jack', Q: 'queen', K: 'king'};
/** How a missed play's chance ended (its `why`), in words. */
export const WHY = {covered: 'covered', moved: 'moved away', taken: 'taken by another seat', round_over: 'the round ended'};

/** Milliseconds from a round's start as m:ss. */
export function clock(ms) {
  const s = Math.floor(ms / 1000);
  return `${Math.floor(s / 60)}:${String(s % 60).padStart(2, '0')}`;
}

/** A card code as words: 5H -> "5 of hearts". */
export function cardWords(code) {
  if (!code || code[0] === 'X') return 'joker';
  return `${RANKS[code[0]] || code[0]} of ${SUITS[code[1]] || code[1]}`;
}

function seconds(ms) { return `${(ms / 1000).toFixed(1)} s`; }

/** The analysis of a stored match, or of a replay file's text. */
export function fetchAnalysis(matchId) {
  return apiPatiently(`/api/matches/${encodeURIComponent(matchId)}/analysis`);
}
export function uploadAnalysis(text) {
  return apiPatiently('/api/replays/analysis', text);
}

/** One line of seat `seat`'s missed plays: "3 missed plays: 5 of hearts at 0:41, ...", each a
 *  jump button when `onJump(round, step, missed)` is given (`missed` the play, with its seat). */
function missedLine(missed, multi, onJump, seat) {
  if (!missed.length) return h('p', {class: 'analysis-missed', text: 'No missed plays.'});
  const items = missed.map((m, i) => {
    const label = `${cardWords(m.card)} at ${multi ? `round ${m.round} ` : ''}${clock(m.from_ms)}`;
    const title = `${m.card} could go to a foundation for ${seconds(m.ms)}, then ${WHY[m.why] || m.why}`;
    const item = onJump
      ? h('button', {class: 'link analysis-jump', title, dataset: {round: String(m.round), step: String(m.step)},
        onclick: () => onJump(m.round - 1, m.step, {...m, seat})}, label)
      : h('span', {title, text: label});
    return [i ? ', ' : '', item];
  });
  return h('p', {class: 'analysis-missed'}, `${missed.length} missed play${missed.length === 1 ? '' : 's'}: `, items);
}

/** Races won and lost, counted as the log has them (as `nertz analyse` and the player page
 *  count them: a race won is won whatever its margin); only the margins' words differ: within
 *  a reaction time (closeRace) "by 12 ms", beyond it the other card was simply late
 *  ("beat Ben, whose card was 0.8 s late"; "to Ann, 0.8 s too late"). */
function racesLine(seat, names) {
  const margin = (ms) => (ms == null ? '' : closeRace(ms) ? ` by ${gapWords(ms)}` : null);
  const won = seat.races_won.map((r) => {
    const by = margin(r.margin_ms);
    return `${names[r.loser]}${by ?? `, whose card was ${gapWords(r.margin_ms)} late`}`;
  });
  const lost = seat.races_lost.map((r) => {
    const by = margin(r.margin_ms);
    return `${names[r.winner]}${by ?? `, ${gapWords(r.margin_ms)} too late`}`;
  });
  if (!won.length && !lost.length) return null;
  return h('p', {class: 'analysis-races'},
    `Races won ${won.length}${won.length ? ` (beat ${won.join(', ')})` : ''}, lost ${lost.length}${lost.length ? ` (to ${lost.join(', ')})` : ''}.`);
}

/**
 * The panel: a section per seat (yours first). `onJump(roundIndex, step, missed)` makes each
 * missed play a button (the replay viewer); without it they are text (the results screen).
 */
export function analysisPanel(data, {mySeat = null, onJump = null} = {}) {
  const names = data.players;
  const multi = data.rounds.length > 1;
  const seats = [...data.seats].sort((a, b) => (b.seat === mySeat) - (a.seat === mySeat) || a.seat - b.seat);
  return h('div', {class: 'panel analysis', id: onJump ? 'replay-analysis' : 'results-analysis'},
    h('h2', {text: 'What the match teaches'}),
    seats.map((s) => {
      const spell = s.longest_spell;
      return h('section', {class: 'analysis-seat', dataset: {seat: String(s.seat)}},
        h('h3', {text: s.seat === mySeat ? `${s.name} (you)` : s.name}),
        h('p', {text: `${s.plays_per_minute} plays a minute, ${s.foundation_cards} card${s.foundation_cards === 1 ? '' : 's'} to the foundations; `
          + `stuck ${seconds(s.stuck_ms)}`
          + (spell ? `; longest wait for a useful move ${seconds(spell.ms)}${multi ? ` (round ${spell.round})` : ''}` : '')
          + '.'}),
        missedLine(s.missed, multi, onJump, s.seat),
        racesLine(s, names));
    }));
}

/** A slot that fills with the panel once the analysis arrives (nothing if it cannot). */
export function analysisSlot(load, options) {
  const slot = h('div', {class: 'analysis-slot'});
  load().then((data) => slot.replaceChildren(analysisPanel(data, options)))
    .catch(() => slot.replaceChildren());
  return slot;
}

/** The "same deal" challenge: a new room dealing this match's cards again; `app.go` opens it. */
export function sameDealButton(app, matchId) {
  const button = h('button', {class: 'same-deal', title: 'A new room whose first match deals these cards again',
    onclick: async () => {
      button.disabled = true;
      try {
        const room = await api(`/api/matches/${encodeURIComponent(matchId)}/same_deal`, {});
        app.go(`/r/${room.code}`);
      } catch (e) {
        button.disabled = false;
        button.textContent = `Same deal: ${e.message}`;
      }
    }}, 'Same deal in a new room');
  return button;
}
