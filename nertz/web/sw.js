// The service worker: keeps the page's own files (the page, its scripts, styles and icons) so
// that the page starts at once, even offline, and can be added to a phone's home screen.
// Each file is answered from the cache and fetched again behind it (stale-while-revalidate):
// the next start has the newest. The API and the game's socket always go to the server.

const CACHE = 'nertz-page-v2';
const FILES = [
  '/',
  '/static/style.css',
  '/static/manifest.webmanifest',
  '/static/icon.svg',
  '/static/js/main.js', '/static/js/dom.js', '/static/js/net.js', '/static/js/rules.js',
  '/static/js/table.js', '/static/js/cards.js', '/static/js/screens.js', '/static/js/names.js',
  '/static/js/replay.js', '/static/js/sound.js', '/static/js/merge.js', '/static/js/analysis.js',
  '/static/js/players.js', '/static/js/learn.js',
];

self.addEventListener('install', (event) => {
  event.waitUntil(caches.open(CACHE).then((cache) => cache.addAll(FILES)).then(() => self.skipWaiting()));
});

self.addEventListener('activate', (event) => {
  event.waitUntil(caches.keys()
    .then((keys) => Promise.all(keys.filter((k) => k !== CACHE).map((k) => caches.delete(k))))
    .then(() => self.clients.claim()));
});

/** The cache key of a request for the page's own files, or null for anything else. */
function pageFile(request) {
  if (request.method !== 'GET') return null;
  const url = new URL(request.url);
  if (url.origin !== self.location.origin) return null;
  // Every page address (home, a room, a replay) is the same page.
  if (request.mode === 'navigate' && (url.pathname === '/' || url.pathname.startsWith('/r/') ||
      /^\/(players\/|leaderboard|account|quick|learn)/.test(url.pathname))) return '/';
  if (url.pathname.startsWith('/static/')) return url.pathname;
  return null;
}

self.addEventListener('fetch', (event) => {
  const key = pageFile(event.request);
  if (!key) return;
  event.respondWith(caches.open(CACHE).then(async (cache) => {
    const cached = await cache.match(key);
    const fresh = fetch(key === '/' ? '/' : event.request).then((response) => {
      if (response.ok) cache.put(key, response.clone());
      return response;
    });
    if (cached) {
      event.waitUntil(fresh.catch(() => null));
      return cached;
    }
    return fresh;
  }));
});
