/**
 * The web UI's service worker and manifest (issue 30): what makes the UI an
 * installable PWA and shows the owner's Web Push notifications. A push's
 * payload is the notice's title, one line and the card's link
 * (notify/push.ts); clicking opens the card on this origin only — deciding
 * there still needs the owner's sign-in (and passkey where set up).
 */
export const SERVICE_WORKER = `'use strict';
self.addEventListener('install', () => self.skipWaiting());
self.addEventListener('activate', (event) => event.waitUntil(self.clients.claim()));
self.addEventListener('push', (event) => {
  let n = {};
  try { n = event.data ? event.data.json() : {}; } catch { n = {}; }
  const title = typeof n.title === 'string' ? n.title : 'Airlock';
  const url = typeof n.url === 'string' ? n.url : '/';
  event.waitUntil(self.registration.showNotification(title, {
    body: typeof n.body === 'string' ? n.body : '',
    tag: typeof n.tag === 'string' ? n.tag : undefined,
    data: { url },
  }));
});
self.addEventListener('notificationclick', (event) => {
  event.notification.close();
  let target = new URL('/', self.location.origin);
  try {
    const wanted = new URL(event.notification.data && event.notification.data.url, self.location.origin);
    if (wanted.origin === self.location.origin) target = wanted;
  } catch {}
  event.waitUntil(self.clients.matchAll({ type: 'window' }).then((all) => {
    for (const c of all) if (c.url.startsWith(self.location.origin)) return c.navigate(target.href).then((w) => (w || c).focus());
    return self.clients.openWindow(target.href);
  }));
});
`;

export const MANIFEST = JSON.stringify({
  name: 'Airlock',
  short_name: 'Airlock',
  start_url: '/',
  scope: '/',
  display: 'standalone',
  background_color: '#ffffff',
  theme_color: '#1f2937',
  icons: [],
});
