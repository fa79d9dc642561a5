/**
 * The browser entry of the workspace UI (served as `/ui/main.js`). It wires
 * the shell: navigation by hash route, the live event stream with its
 * connection indicator, the error region, and one screen at a time.
 * Browser-only: it imports nothing from Node (test/web/browser-imports.test.ts).
 */
import { doors, onUnauthorized } from './api.js';
import { initErrors, showError } from './errors.js';
import { connectEvents, type StreamState } from './event-stream.js';
import { handleEvent, live, subscribe } from './live.js';
import { parseRoute } from './router.js';
import { bridgeWanted, startBridge } from './bridge.js';
import { approvalsScreen } from './screens/approvals.js';
import { auditScreen } from './screens/audit.js';
import { jobsScreen } from './screens/jobs.js';
import { notesScreen } from './screens/notes.js';
import { scenesScreen } from './screens/scenes.js';
import { needsDoor, settingsScreen } from './screens/settings.js';
import type { Screen } from './screens/screen.js';

const SCREENS: Record<string, { screen: Screen; door?: string; title: string }> = {
  approvals: { screen: approvalsScreen, title: 'Approvals' },
  notes: { screen: notesScreen, title: 'Notes', door: 'notes' },
  scenes: { screen: scenesScreen, title: 'Scenes', door: 'scene' },
  jobs: { screen: jobsScreen, title: 'Jobs' },
  audit: { screen: auditScreen, title: 'Audit' },
  settings: { screen: settingsScreen, title: 'Settings' },
};

function liveIndicator(el: HTMLElement, s: StreamState): void {
  el.dataset.state = s.state;
  el.textContent =
    s.state === 'live'
      ? 'Live'
      : s.state === 'connecting'
        ? 'Connecting…'
        : `Disconnected (${s.reason}); retrying in ${Math.ceil(s.retryInMs / 1000)} s`;
}

async function start(): Promise<void> {
  const main = document.getElementById('main')!;
  initErrors(document.getElementById('errors')!);
  let mounted = await doors();
  let stop: (() => void) | void;
  let first = true;

  const show = () => {
    const route = parseRoute(location.hash);
    const entry = SCREENS[route.screen] ?? SCREENS.approvals!;
    const name = SCREENS[route.screen] ? route.screen : 'approvals';
    for (const a of document.querySelectorAll<HTMLAnchorElement>('nav a[data-route]')) {
      if (a.dataset.route === name) a.setAttribute('aria-current', 'page');
      else a.removeAttribute('aria-current');
    }
    document.title = `${entry.title} · Airlock workspace`;
    if (typeof stop === 'function') stop();
    stop = undefined;
    try {
      if (entry.door && !mounted.includes(entry.door)) needsDoor(main, entry.title, entry.door);
      else stop = entry.screen(main, route);
    } catch (e) {
      showError(e, `The ${entry.title} screen failed`);
    }
    // Move focus to the new screen's heading so keyboard and screen-reader users land on it.
    if (!first) main.querySelector<HTMLElement>('h1')?.focus();
    first = false;
  };

  const indicator = document.getElementById('live')!;
  onUnauthorized(() =>
    showError('This server needs a bearer token; enter it under Settings.', 'Not signed in'),
  );

  connectEvents({
    onEvent: (e) => handleEvent(e),
    onState: (s) => liveIndicator(indicator, s),
  });

  // Screen-reader users hear of a new request wherever they are in the workspace.
  const announce = document.getElementById('announce');
  subscribe('event', () => {
    const e = live().lastEvent;
    const a =
      e?.event === 'approvalRequested'
        ? (e.approval as { door?: string; capability?: string })
        : null;
    if (a && announce)
      announce.textContent = `New request: ${a.door ?? ''} ${a.capability ?? ''} access`;
  });

  const badge = document.querySelector<HTMLElement>('[data-badge="approvals"]');
  subscribe('approvals', () => {
    if (!badge) return;
    const n = live().approvals.length;
    badge.hidden = n === 0;
    badge.textContent = String(n);
    badge.setAttribute('aria-label', `${n} pending`);
  });

  window.addEventListener('hashchange', show);
  show();
  if (bridgeWanted() && mounted.includes('page')) void startBridge();
  // Doors may be switched on by a restart; refresh the list when the stream reconnects with a snapshot.
  subscribe('event', () => {
    if (live().lastEvent?.event === 'snapshot')
      void doors().then((d) => {
        if (d.join() !== mounted.join()) {
          mounted = d;
          show();
        }
      });
  });
}

window.addEventListener('unhandledrejection', (e) => showError(e.reason, 'Unexpected error'));
void start();
