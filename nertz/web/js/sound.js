// Sounds made in the page with the Web Audio API (no sound files): a card placed, a card on a
// foundation, the stock turned, a refusal, a race lost, the call. On by default at a moderate
// volume; one click mutes, and the choice is remembered.

import {store} from './dom.js';

let ctx = null;
let enabled = store.get('nertz:sound', true);

const VOLUME = 0.07;  // moderate: under a notification chime, over silence

export function soundOn() { return enabled; }
export function setSound(on) {
  enabled = !!on;
  store.set('nertz:sound', enabled);
  if (enabled) beep('place');
}

// Each sound: notes of [frequency Hz, seconds, wave] played one after another; 'noise' is a
// short filtered hiss (a card sliding).
const SOUNDS = {
  place: [[520, 0.045, 'triangle']],
  go: [[587, 0.08, 'triangle'], [784, 0.14, 'triangle']],
  foundation: [[660, 0.05, 'triangle'], [990, 0.07, 'triangle']],
  other: [[440, 0.035, 'sine']],
  turn: [['noise', 0.05]],
  bad: [[196, 0.12, 'square']],
  race: [[392, 0.09, 'triangle'], [294, 0.16, 'triangle']],
  call: [[523, 0.09, 'triangle'], [659, 0.09, 'triangle'], [784, 0.09, 'triangle'], [1047, 0.28, 'triangle']],
};

function audio() {
  ctx = ctx || new (window.AudioContext || window.webkitAudioContext)();
  // A context made before the player touched the page starts suspended (autoplay rules).
  if (ctx.state === 'suspended') ctx.resume();
  return ctx;
}

function noise(ac, t, len) {
  const buf = ac.createBuffer(1, Math.ceil(ac.sampleRate * len), ac.sampleRate);
  const data = buf.getChannelData(0);
  for (let i = 0; i < data.length; i++) data[i] = (Math.random() * 2 - 1) * (1 - i / data.length);
  const src = ac.createBufferSource();
  src.buffer = buf;
  const band = ac.createBiquadFilter();
  band.type = 'bandpass';
  band.frequency.value = 2400;
  src.connect(band);
  src.start(t);
  return band;
}

/** Play one named sound, if sound is on. */
export function beep(kind) {
  if (!enabled) return;
  try {
    const ac = audio();
    let t = ac.currentTime;
    for (const [freq, len, wave] of SOUNDS[kind] || SOUNDS.place) {
      const gain = ac.createGain();
      gain.gain.setValueAtTime(VOLUME, t);
      gain.gain.exponentialRampToValueAtTime(0.0005, t + len);
      gain.connect(ac.destination);
      if (freq === 'noise') {
        noise(ac, t, len).connect(gain);
      } else {
        const osc = ac.createOscillator();
        osc.frequency.value = freq;
        osc.type = wave;
        osc.connect(gain);
        osc.start(t);
        osc.stop(t + len + 0.02);
      }
      t += len;
    }
  } catch { /* no audio here */ }
}
