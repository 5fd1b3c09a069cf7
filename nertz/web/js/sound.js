// Short WebAudio beeps (no sound files). Off unless the player turns sound on.

import {store} from './dom.js';

let ctx = null;
let enabled = store.get('nertz:sound', false);

export function soundOn() { return enabled; }
export function setSound(on) {
  enabled = !!on;
  store.set('nertz:sound', enabled);
  if (enabled) beep('ok');
}

const TONES = {
  ok: [[660, 0.05]],
  foundation: [[880, 0.06]],
  other: [[440, 0.03]],
  bad: [[220, 0.12]],
  race: [[330, 0.08], [220, 0.12]],
  call: [[523, 0.1], [659, 0.1], [784, 0.18]],
  turn: [[300, 0.025]],
};

/** Play one named beep, if sound is on. */
export function beep(kind) {
  if (!enabled) return;
  try {
    ctx = ctx || new (window.AudioContext || window.webkitAudioContext)();
    let t = ctx.currentTime;
    for (const [freq, len] of TONES[kind] || TONES.ok) {
      const osc = ctx.createOscillator();
      const gain = ctx.createGain();
      osc.frequency.value = freq;
      osc.type = 'triangle';
      gain.gain.setValueAtTime(0.12, t);
      gain.gain.exponentialRampToValueAtTime(0.001, t + len);
      osc.connect(gain).connect(ctx.destination);
      osc.start(t);
      osc.stop(t + len + 0.02);
      t += len;
    }
  } catch { /* no audio here */ }
}
