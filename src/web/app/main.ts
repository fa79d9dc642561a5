/**
 * The browser entry of the workspace UI (served as `/ui/main.js`). It wires
 * the shell: the owner's sign-in (spec/authority.md §1), navigation by hash
 * route, the live event stream with its connection indicator, the error
 * region, and one screen at a time. Signed out, it shows only the sign-in
 * screen: no navigation, no stream, no data.
 * Browser-only: it imports nothing from Node (test/web/browser-imports.test.ts).
 */
import { ApiError, doors, onPresenceNeeded, onSessionEnded } from './api.js';
import { presenceFor } from './passkey.js';
import { clearErrors, initErrors, showError } from './errors.js';
import { connectEvents, type EventStream, type StreamState } from './event-stream.js';
import { handleEvent, live, resetLive, subscribe } from './live.js';
import { parseRoute } from './router.js';
import { bridgeWanted, startBridge, stopBridge } from './bridge.js';
import { currentSession, signIn } from './session.js';
import { agentsScreen } from './screens/agents/agents.js';
import { approvalsScreen } from './screens/approvals/approvals.js';
import { auditScreen } from './screens/audit.js';
import { jobsScreen } from './screens/jobs.js';
import { notesScreen } from './screens/notes/notes.js';
import { policyScreen } from './screens/policy/policy.js';
import { scenesScreen } from './screens/scenes/scenes.js';
import { needsDoor, settingsScreen } from './screens/settings/settings.js';
import { signInScreen } from './screens/sign-in.js';
import { upstreamsScreen } from './screens/upstreams.js';
import { pendingUpstreamConnect } from './upstream-callback.js';
import { consentIdOfPage, oauthConsentScreen } from './screens/oauth-consent.js';
import type { Screen } from './screens/screen.js';

const SCREENS: Record<string, { screen: Screen; door?: string; title: string }> = {
  approvals: { screen: approvalsScreen, title: 'Approvals' },
  policy: { screen: policyScreen, title: 'Policy' },
  notes: { screen: notesScreen, title: 'Notes', door: 'notes' },
  scenes: { screen: scenesScreen, title: 'Scenes', door: 'scene' },
  jobs: { screen: jobsScreen, title: 'Jobs' },
  audit: { screen: auditScreen, title: 'Audit' },
  agents: { screen: agentsScreen, title: 'Agents' },
  upstreams: { screen: upstreamsScreen, title: 'Upstreams' },
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

/** The code of the printed sign-in link (`/login#code=…`), or null on any other address. */
function loginCode(): string | null {
  if (location.pathname !== '/login') return null;
  return new URLSearchParams(location.hash.replace(/^#/, '')).get('code') ?? '';
}

const messageOf = (e: unknown) => (e instanceof Error ? e.message : String(e));

/** Screen-reader users hear of a new request wherever they are; the nav badge counts them. */
function announceRequests(): void {
  // Screen-reader users hear of a new request wherever they are in the workspace.
  const announce = document.getElementById('announce');
  subscribe('event', () => {
    const e = live().lastEvent;
    const a =
      e?.event === 'approvalRequested'
        ? (e.approval as { kind?: string; door?: string; capability?: string; tool?: string })
        : null;
    if (a && announce)
      announce.textContent =
        a.kind === 'policy'
          ? `New policy ask: ${a.tool ?? ''} on ${a.door ?? ''}`
          : `New request: ${a.door ?? ''} ${a.capability ?? ''} access`;
  });

  const badge = document.querySelector<HTMLElement>('[data-badge="approvals"]');
  subscribe('approvals', () => {
    if (!badge) return;
    const n = live().approvals.length;
    badge.hidden = n === 0;
    badge.textContent = String(n);
    badge.setAttribute('aria-label', `${n} pending`);
  });
}

async function start(): Promise<void> {
  const main = document.getElementById('main')!;
  const nav = document.querySelector<HTMLElement>('header nav')!;
  const indicator = document.getElementById('live')!;
  initErrors(document.getElementById('errors')!);
  let mounted = await doors();
  let stop: (() => void) | void;
  let stream: EventStream | null = null;
  let signedIn = false;
  let first = true;

  const show = () => {
    // An OAuth client's connection waits for the owner's consent on this page.
    if (consentId) {
      document.title = 'Connect an MCP client · Airlock workspace';
      if (typeof stop === 'function') stop();
      stop = oauthConsentScreen(main, {
        screen: 'oauth-consent',
        params: [consentId],
        query: new URLSearchParams(),
      });
      return;
    }
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

  const enter = () => {
    signedIn = true;
    nav.hidden = false;
    clearErrors();
    stream = connectEvents({
      onEvent: (e) => handleEvent(e),
      onState: (s) => liveIndicator(indicator, s),
    });
    showAndFinishConnect(show);
    if (bridgeWanted() && mounted.includes('page')) void startBridge();
  };

  const showSignIn = (message?: string) => {
    nav.hidden = true;
    indicator.dataset.state = 'signed-out';
    indicator.textContent = 'Signed out';
    document.title = 'Sign in · Airlock workspace';
    signInScreen(main, { ...(message ? { message } : {}), onSignedIn: enter });
    if (!first) main.querySelector<HTMLElement>('h1')?.focus();
    first = false;
  };

  /** Back to the sign-in screen, dropping everything the session showed (once, however many 401s arrive). */
  const leave = () => {
    if (!signedIn) return;
    signedIn = false;
    stream?.close();
    stream = null;
    if (typeof stop === 'function') stop();
    stop = undefined;
    stopBridge();
    resetLive();
    clearErrors();
    showSignIn();
  };
  onSessionEnded(leave);

  announceRequests();

  window.addEventListener('hashchange', () => {
    if (signedIn) show();
  });
  // Doors may be switched on by a restart; refresh the list when the stream reconnects with a snapshot.
  subscribe('event', () => {
    if (live().lastEvent?.event === 'snapshot')
      void doors().then((d) => {
        if (d.join() !== mounted.join()) {
          mounted = d;
          if (signedIn) show();
        }
      });
  });

  const code = loginCode();
  if (code !== null) {
    // The code works once: take it out of the address bar and history before using it.
    history.replaceState(null, '', '/');
    if (!code) return showSignIn('The sign-in link has no code; open the whole link again.');
    try {
      await signIn({ code });
    } catch (e) {
      return showSignIn(messageOf(e));
    }
    return enter();
  }
  let owner: boolean;
  try {
    owner = await currentSession();
  } catch (e) {
    return showSignIn(
      e instanceof ApiError && e.code === 'unreachable'
        ? `${e.message} Reload the page once it is.`
        : messageOf(e),
    );
  }
  if (owner) enter();
  else showSignIn();
}

// An MCP client asks to connect (authority.md §7): its consent shows once signed in.
const consentId = consentIdOfPage();

// An OAuth upstream's authorization server sent the owner back here: finished once signed in.
const showAndFinishConnect = pendingUpstreamConnect();

// Every owner decision the server refuses without the owner's presence asks for the passkey.
onPresenceNeeded(presenceFor);

window.addEventListener('unhandledrejection', (e) => showError(e.reason, 'Unexpected error'));
void start();
