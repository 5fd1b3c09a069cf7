// Rules in a player's words: the presets', options' and values' names as shown on the page.
// The code names (what the server and the replay files use) appear only in the details views.

/** Each preset's name on the page. */
export const PRESET_NAMES = {
  pagat: 'Pounce (pagat.com)',
  standard: 'Standard Nertz',
  hoorah: 'Hoorah',
  fairy_fly: 'Fairy Fly',
  sanna: 'Sanna\u2019s family rules',
  swinging_door: 'Swinging Door',
  double_swinging_door: 'Double Swinging Door',
  starter9: 'Starter 9',
  evil_jacks: 'Evil Jacks',
  evil_jacks_one_eyed: 'Evil Jacks, one-eyed',
};

/** Each option's name on the page (its one-line explanation comes from the server). */
export const OPTION_NAMES = {
  work_piles: 'Work piles',
  work_pile_deal: 'Work pile deal',
  nertz_pile_size: 'Nertz pile size',
  adaptive_nertz_pile: 'Nertz pile grows and shrinks',
  turn_count: 'Cards turned at a time',
  stock_end: 'End of the stock',
  move_partial_runs: 'Move part of a run',
  stuck_reset: 'When everyone is stuck',
  blocked_round_end: 'End a blocked round',
  foundation: 'Foundations',
  call: 'Calling',
  call_grace_ms: 'Grace after a call (ms)',
  false_call: 'Calling too soon',
  teams: 'Teams',
  jokers: 'Jokers',
  card_points: 'Points for a foundation card',
  points_per_card: 'Points per card',
  nertz_penalty: 'Penalty per Nertz card left',
  caller_bonus: 'Bonus for the caller',
  lotto: 'Lotto pot',
  call_word: 'Call word',
  target_score: 'Play to (points)',
  rounds: 'Rounds',
};

const VALUE_NAMES = {
  on: 'On', off: 'Off', none: 'None',
  one_up: 'One card face up', staircase: 'Staircase',
  short_turn: 'Last cards alone', continuous: 'Wrap around',
  rotate_stock: 'Rotate the stock', rotate_either: 'Rotate the stock or the Nertz pile',
  up: 'Up from the Ace', swinging_door: 'Swinging door', double_swinging_door: 'Double swinging door',
  starter9: 'Start at 9', evil_jacks: 'Evil Jacks', evil_jacks_one_eyed: 'Evil Jacks, one-eyed',
  manual: 'The player calls', auto: 'Called as the pile empties',
  rejected: 'Refused', penalised: 'Penalised',
  shared: 'Partners share everything', split: 'Nertz pile / stock split',
  flat: 'The same for every card', aces_double: 'Aces double', face_value: 'Face value',
  card_points: 'A card\u2019s points',
};

/** A preset's name on the page. */
export function presetName(code) { return PRESET_NAMES[code] || String(code).replace(/_/g, ' '); }

/** An option's name on the page. */
export function optionName(code) { return OPTION_NAMES[code] || String(code).replace(/_/g, ' '); }

/** An option value's name on the page (numbers and words as they are). */
export function valueName(value) {
  const text = value === true ? 'on' : value === false ? 'off' : value === null ? 'none' : String(value);
  return VALUE_NAMES[text] || text;
}

/** A word's first letter in lower case, for use mid-sentence ("Nertz" keeps its capital). */
function midSentence(text) {
  return /^Nertz\b/.test(text) ? text : text.charAt(0).toLowerCase() + text.slice(1);
}

/** A changed option in a sentence: "play to 50 points", "Nertz pile size 10", "grace after a
 *  call 500 ms", "calling: called as the pile empties". A number goes after the option's name
 *  with its unit (the name's bracket); a word after a colon. */
export function optionWords(code, value) {
  const full = optionName(code);
  const m = /^(.*?)\s*\((.+)\)$/.exec(full);
  const name = midSentence(m ? m[1] : full);
  const unit = m ? (value === 1 && m[2] === 'points' ? 'point' : m[2]) : '';
  if (typeof value === 'number') return `${name} ${value}${unit ? ` ${unit}` : ''}`;
  return `${name}: ${midSentence(String(valueName(value)))}`;
}

/** A foundation race is announced as one when its margin is within a person's reaction time:
 *  a card played that soon after another's was played without having seen it (a person needs
 *  about a quarter of a second to see a change and move). A card later than this was simply
 *  too late: the other's card was already there to be seen. docs/web.md says so. */
export const CLOSE_RACE_MS = 250;

/** Whether a race's margin (`margin_ms`, null when the server could not measure it) makes it
 *  a close race: within CLOSE_RACE_MS, or unknown (the server called it a race). */
export function closeRace(ms) { return ms == null || ms <= CLOSE_RACE_MS; }

/** A margin in words: a close race's in milliseconds ("12 ms"), a longer one in seconds
 *  ("0.8 s", "1.2 s", "12 s": "799 ms" read as a photo finish). */
export function gapWords(ms) {
  if (ms <= CLOSE_RACE_MS) return `${ms} ms`;
  return ms < 10000 ? `${(ms / 1000).toFixed(1)} s` : `${Math.round(ms / 1000)} s`;
}
