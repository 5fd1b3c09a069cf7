// Talking to the server: JSON over HTTP for rooms, one WebSocket for play (docs/protocol.md).

import {Versions} from './merge.js';

/**
 * Call the HTTP API; throws Error(message) with the server's own words on a 4xx, its `status`
 * and `retryAfter` (seconds, from the header; 0 if none) set.
 */
export async function api(path, body) {
  const init = body === undefined ? {} : {
    method: 'POST',
    headers: {'content-type': 'application/json'},
    body: typeof body === 'string' ? body : JSON.stringify(body),
  };
  const res = await fetch(path, init);
  let data = null;
  try { data = await res.json(); } catch { data = null; }
  if (!res.ok) {
    const err = new Error((data && data.error) || `${res.status} ${res.statusText}`);
    err.status = res.status;
    err.retryAfter = Number(res.headers.get('retry-after')) || 0;
    throw err;
  }
  return data;
}

/** Whether an API error says "not now" (a limit or a busy server), not "never". */
export function busy(err) {
  return err && (err.status === 429 || err.status === 503);
}

/**
 * `api` for something worth waiting for (a match's analysis, its replay): a "not now" is
 * asked again after the server's Retry-After (1 to 10 s), a few times, before it is given up.
 */
export async function apiPatiently(path, body, tries = 4) {
  for (let i = 1; ; i++) {
    try {
      return await api(path, body);
    } catch (e) {
      if (!busy(e) || i >= tries) throw e;
      const wait = Math.min(10, Math.max(1, e.retryAfter || 1));
      await new Promise((resolve) => setTimeout(resolve, wait * 1000));
    }
  }
}

/**
 * One room's socket. Says hello with the seat token, passes on broadcasts in version order
 * (a gap waits for a `sync`'s catch-up), so a reconnect asks only for what it missed
 * (`since`); measures the round trip every 2 s and
 * reports it (`rtt`) for the table's latency display. Reconnects with back-off.
 */
export class Connection {
  constructor(roomId, token, onMessage, onStatus) {
    this.roomId = roomId;
    this.token = token;
    this.onMessage = onMessage;
    this.onStatus = onStatus || (() => {});
    // Versions in order; on a gap, nothing is applied until the catch-up arrives.
    this.versions = new Versions((since) => this.send({type: 'sync', since}));
    this.rtt = null;
    this.ws = null;
    this.closed = false;
    this.retry = 0;
    this.pingTimer = null;
    this.seq = 0;
  }

  connect() {
    if (this.closed) return;
    const proto = location.protocol === 'https:' ? 'wss:' : 'ws:';
    const ws = new WebSocket(`${proto}//${location.host}/ws/${encodeURIComponent(this.roomId)}`);
    this.ws = ws;
    ws.onopen = () => {
      this.retry = 0;
      // pings: the server measures our round trip itself (what fair races compensate).
      const hello = {type: 'hello', token: this.token, pings: true};
      if (this.versions.v != null) hello.since = this.versions.v;
      this.versions.syncing = false;  // the hello's answer is the catch-up
      ws.send(JSON.stringify(hello));
      this.onStatus('open');
      this.ping();
      clearInterval(this.pingTimer);
      this.pingTimer = setInterval(() => this.ping(), 2000);
    };
    ws.onmessage = (ev) => {
      // A frame carries one message or, under load, several, one per line.
      for (const line of String(ev.data).split('\n')) {
        if (!line) continue;
        let msg;
        try { msg = JSON.parse(line); } catch { continue; }
        if (msg.type === 'ping') {  // the server's probe: answered at once, nothing to show
          this.send({type: 'pong', id: msg.id});
          continue;
        }
        if (!this.versions.take(msg)) continue;
        if (msg.type === 'pong') {
          this.rtt = Math.max(0, performance.now() - msg.sent);
        }
        this.onMessage(msg);
      }
    };
    ws.onclose = () => {
      clearInterval(this.pingTimer);
      if (this.ws !== ws || this.closed) return;
      this.onStatus('closed');
      const wait = Math.min(5000, 300 * 2 ** this.retry++);
      setTimeout(() => this.connect(), wait);
    };
  }

  get open() { return this.ws && this.ws.readyState === WebSocket.OPEN; }

  /** Send a message; false if the socket is not open (the caller may retry later). */
  send(msg) {
    if (!this.open) return false;
    this.ws.send(JSON.stringify(msg));
    return true;
  }

  ping() {
    const msg = {type: 'ping', id: 'p' + (++this.seq), sent: performance.now()};
    if (this.rtt != null) msg.rtt = Math.round(this.rtt);
    this.send(msg);
  }

  close() {
    this.closed = true;
    clearInterval(this.pingTimer);
    if (this.ws) this.ws.close();
  }
}
