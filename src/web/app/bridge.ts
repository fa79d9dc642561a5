/**
 * The page bridge switch (spec/page.md): when the owner turns it on, the
 * workspace page loads `/bridge.js` from the page door, gets the relay URL
 * and token from the owner-only same-origin route, and connects, so an agent
 * can drive this UI through the `wu_*` tools. Off by default. The switch is
 * remembered per browser; the token is kept in memory only.
 *
 * What an agent may do is the page's permission flags: the bridge defaults
 * plus `readDOM` (so it can see the screens); clicking and typing
 * (`modifyDOM`) is a second, separate switch. Whatever the switches, the
 * owner's controls act only on the owner's own gesture and are marked so the
 * bridge refuses them (dom.ts `onOwner`), and each agent sees only its own
 * requests (dom.ts `forAgent`; the relay names the calling agent).
 */
import type * as Bridge from '../bridge/index.js';
import { get } from './api.js';
import { h, onOwner } from './dom.js';
import { live, subscribe } from './live.js';
import { parseRoute } from './router.js';

const KEY = 'airlock.bridge';
const MODIFY_KEY = 'airlock.bridge.modifyDOM';
const SCREENS = ['approvals', 'notes', 'scenes', 'jobs', 'audit', 'settings'];

type BridgeModule = typeof Bridge;
let bridge: BridgeModule | null = null;
let status: { state: string; detail?: string } = { state: 'off' };
const statusListeners = new Set<() => void>();
let cleanup: (() => void)[] = [];

export const bridgeWanted = () => localStorage.getItem(KEY) === 'on';
const modifyWanted = () => localStorage.getItem(MODIFY_KEY) === 'on';

function setStatus(state: string, detail?: string) {
  status = detail === undefined ? { state } : { state, detail };
  for (const l of statusListeners) l();
}

function permissions(b: BridgeModule) {
  b.setPermissions({ ...b.DEFAULT_PERMISSIONS, readDOM: true, modifyDOM: modifyWanted() });
}

/**
 * What any agent can read with wu_get_state: where the owner is and the
 * recent jobs. Pending requests are per agent: `workspace_status` answers
 * each agent its own.
 */
function stateOf() {
  const { jobs } = live();
  return {
    screen: parseRoute(location.hash).screen,
    jobs: [...jobs.values()].slice(0, 20).map((j) => ({
      id: j.id,
      door: j.door,
      kind: j.kind,
      status: j.status,
      percent: j.progress.overallPercent,
    })),
  };
}

function install(b: BridgeModule): void {
  permissions(b);
  const store = b.createStore(stateOf());
  b.useStore(store);
  const sync = () => {
    for (const [k, v] of Object.entries(stateOf())) store.set(k, v);
  };
  const go = (route: string) => {
    const screen = route.replace(/^[#/]+/, '').split('/')[0] ?? '';
    if (!SCREENS.includes(screen)) return false;
    location.hash = `#/${route.replace(/^[#/]+/, '')}`;
    return true;
  };
  cleanup = [
    subscribe('approvals', sync),
    subscribe('jobs', sync),
    (() => {
      window.addEventListener('hashchange', sync);
      return () => window.removeEventListener('hashchange', sync);
    })(),
    b.events.on('shell:navigate', (data) => {
      const route = (data as { route?: unknown } | null)?.route;
      if (typeof route === 'string') go(route);
    }),
    b.action('workspace_navigate', {
      description: `Show one screen of the Airlock workspace: ${SCREENS.join(', ')}.`,
      parameters: {
        type: 'object',
        properties: { screen: { type: 'string', enum: SCREENS } },
        required: ['screen'],
        additionalProperties: false,
      },
      handler: ({ screen }) => ({ navigated: go(String(screen)), screen }),
    }),
    b.action('workspace_status', {
      description: 'The screen the owner sees, your own pending approval requests and recent jobs.',
      parameters: { type: 'object', properties: {}, additionalProperties: false },
      handler: (_p, a) => ({
        ...stateOf(),
        pendingApprovals: live()
          .approvals.filter((x) => a.caller !== null && x.agent === a.caller)
          .map((x) => ({ id: x.id, door: x.door, capability: x.capability })),
      }),
    }),
    b.onStatus((state, detail) => setStatus(state, detail)),
  ];
}

/** Loads the bridge (once) and connects with a fresh token from the workspace. */
export async function startBridge(): Promise<void> {
  try {
    setStatus('connecting');
    if (!bridge) {
      const url = '/bridge.js';
      bridge = (await import(url)) as BridgeModule;
    }
    if (cleanup.length === 0) install(bridge);
    const { url, token } = await get<{ url: string; token: string }>('page/bridge-token');
    await bridge.connect(url, { token });
    setStatus('authenticated');
  } catch (e) {
    setStatus('failed', e instanceof Error ? e.message : String(e));
  }
}

export function stopBridge(): void {
  bridge?.disconnect();
  for (const c of cleanup.splice(0)) c();
  setStatus('off');
}

const TEXT: Record<string, string> = {
  off: 'Off',
  idle: 'Not connected',
  connecting: 'Connecting to the page relay…',
  authenticated: 'Connected: agents on the page door can use this page.',
  failed: 'Could not connect',
};

export function bridgeSection(pageDoor: boolean): HTMLElement {
  const box = h('input', { id: 'bridge-on', type: 'checkbox', name: 'bridge' });
  const modify = h('input', { id: 'bridge-modify', type: 'checkbox', name: 'bridge-modify' });
  box.checked = bridgeWanted();
  modify.checked = modifyWanted();
  box.disabled = modify.disabled = !pageDoor;
  const line = h('p', { class: 'meta', role: 'status', id: 'bridge-status' });
  const render = () => {
    line.dataset.state = status.state;
    line.textContent = `${TEXT[status.state] ?? status.state}${status.detail ? ` (${status.detail})` : ''}`;
  };
  render();
  statusListeners.add(render);
  // On click, not change: a refused click leaves the box as it was.
  onOwner(box, 'click', () => {
    localStorage.setItem(KEY, box.checked ? 'on' : 'off');
    if (box.checked) void startBridge();
    else stopBridge();
  });
  onOwner(modify, 'click', () => {
    localStorage.setItem(MODIFY_KEY, modify.checked ? 'on' : 'off');
    if (bridge && cleanup.length) permissions(bridge);
  });
  return h(
    'section',
    { 'aria-labelledby': 'bridge-title' },
    h('h2', { id: 'bridge-title' }, 'Agent control of this page'),
    h(
      'p',
      { class: 'meta' },
      pageDoor
        ? 'When on, agents connected to the page door can see this workspace page and move between its screens through the wu_* tools.'
        : 'The page door is not enabled on this server (airlock serve --doors page).',
    ),
    h(
      'div',
      { class: 'row' },
      h('label', { for: 'bridge-on', class: 'check' }, box, 'Let agents drive this page'),
    ),
    h(
      'div',
      { class: 'row' },
      h('label', { for: 'bridge-modify', class: 'check' }, modify, 'Also let them click and type'),
    ),
    h(
      'p',
      { class: 'meta' },
      'Your controls (policy, read-only, approvals, grants, upstreams, these switches, Sign out) always need your own click or key press: an agent’s click on them is refused, and an agent sees only its own requests.',
    ),
    line,
  );
}
