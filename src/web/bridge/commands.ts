/**
 * The relay's commands as the page answers them (spec/page.md "Tools": the
 * `wu_x` tool sends command `x`). Each checks its permission flag here, in
 * the page, whatever the relay did.
 */
import { BridgeError } from './errors.js';
import { getPermissions, requirePermission } from './permissions.js';
import { actionCount, emitChecked, execute, listActions, navigate } from './actions.js';
import { eventCount, recentEvents, redactEventData } from './events.js';
import { forbiddenSegment, pageStore } from './store.js';
import { listApps, mountApp, mountedContainer, unmountApp } from './apps.js';
import { hiddenFromAgent, snapshot, type SnapshotResult } from './a11y.js';
import { diffAndRemember, type SnapshotDelta } from './snapshot-delta.js';
import { click, screenshot, type } from './dom.js';
import { consoleEntries, networkEntries } from './diagnostics.js';
import { redactAt, redactUrl } from './redact.js';

export const FRAMEWORK = { name: 'airlock-bridge', version: '1.0.0' };

type Params = Record<string, unknown>;
const str = (v: unknown): string | undefined => (typeof v === 'string' ? v : undefined);
/** The agent the relay names as calling (spec/page.md "Tools"), or null. */
const callerOf = (p: Params): string | null => str(p.caller) ?? null;
const int = (v: unknown, fallback: number, min: number, max: number) =>
  typeof v === 'number' && Number.isInteger(v) ? Math.min(max, Math.max(min, v)) : fallback;

const COMMANDS: Record<string, (p: Params, signal: AbortSignal) => unknown> = {
  list_actions: () => listActions(),
  execute_action: (p, signal) => {
    const action = str(p.action);
    if (!action) throw new BridgeError('WU_INVALID_PARAMS', "Give the action's name in 'action'.");
    const params =
      p.params && typeof p.params === 'object' && !Array.isArray(p.params)
        ? (p.params as Params)
        : {};
    return execute(action, params, signal, callerOf(p));
  },
  status: () => {
    const readable = getPermissions().readStore;
    return {
      framework: FRAMEWORK.name,
      version: FRAMEWORK.version,
      url: redactUrl(location.href),
      title: document.title,
      apps: listApps(),
      storeKeys: readable ? pageStore().keys() : [],
      actionCount: actionCount(),
      eventCount: eventCount(),
      permissions: getPermissions(),
    };
  },
  list_apps: () => {
    const apps = listApps();
    return { apps, count: apps.length };
  },
  list_events: (p) => (
    requirePermission('readDiagnostics'),
    recentEvents(int(p.limit, 20, 1, 200))
  ),
  get_state: (p) => {
    requirePermission('readStore');
    const path = checkedPath(str(p.path) ?? '');
    const value =
      path === ''
        ? Object.fromEntries(
            pageStore()
              .keys()
              .map((k) => [k, pageStore().get(k)]),
          )
        : pageStore().get(path);
    return { path, value: redactAt(path, value) ?? null };
  },
  set_state: (p) => {
    requirePermission('writeStore');
    const path = str(p.path);
    if (!path) throw new BridgeError('WU_INVALID_PARAMS', 'Give a non-empty path to write.');
    pageStore().set(checkedPath(path), p.value);
    return { path, value: redactAt(path, p.value) ?? null, updated: true };
  },
  emit_event: (p) => {
    const event = str(p.event);
    if (!event || event.length > 200)
      throw new BridgeError('WU_INVALID_PARAMS', 'Give an event name of 1 to 200 characters.');
    emitChecked(event, p.data);
    return { emitted: event, data: redactEventData(event, p.data) };
  },
  navigate: (p) => {
    const route = str(p.route);
    if (!route) throw new BridgeError('WU_INVALID_PARAMS', 'Give the route to navigate to.');
    return navigate(route);
  },
  snapshot: (p) => {
    requirePermission('readDOM');
    const appName = str(p.appName);
    const selector = str(p.selector);
    const maxChars =
      typeof p.maxChars === 'number' && p.maxChars > 0 ? Math.floor(p.maxChars) : Infinity;
    let root: Element = appName ? mountedContainer(appName) : document.body;
    if (selector !== undefined) {
      let found: Element | null;
      try {
        found = root.querySelector(selector);
      } catch {
        throw new BridgeError('WU_INVALID_SELECTOR', `'${selector}' is not a valid CSS selector.`);
      }
      if (!found || hiddenFromAgent(found, callerOf(p)))
        throw new BridgeError(
          'WU_ELEMENT_NOT_FOUND',
          `No element matches selector '${selector}'; take a wu_snapshot without selector to see the page.`,
        );
      root = found;
    }
    const url = redactUrl(location.href);
    const scope = `${appName ?? ''}\u0000${selector ?? ''}`;
    if (p.delta === true) {
      const whole = snapshot(root, 1500, Infinity, callerOf(p));
      const diff = diffAndRemember(scope, location.href, whole.tree);
      if (diff) return deltaAnswer(diff, { appName, selector, url, maxChars, whole });
    }
    const tree = snapshot(root, 1500, maxChars, callerOf(p));
    if (p.delta !== true) diffAndRemember(scope, location.href, tree.tree);
    return {
      app: appName ?? null,
      ...(selector !== undefined ? { selector } : {}),
      url: redactUrl(location.href),
      title: document.title,
      ...tree,
      ...(tree.truncated
        ? {
            note: `Cut at ${tree.nodeCount} nodes${tree.maxChars ? ` (about ${tree.maxChars} characters)` : ''}; take a wu_snapshot with selector (a CSS selector of the part you need) or appName to see the rest.`,
          }
        : {}),
      ...(p.delta === true
        ? {
            delta: false,
            deltaNote:
              'No earlier snapshot of this part of the page to compare with (first one, or the URL changed): this is the whole tree; the next delta compares with it.',
          }
        : {}),
      timestamp: Date.now(),
    };
  },
  screenshot: (p) => {
    requirePermission('readDOM');
    const quality =
      typeof p.quality === 'number' && p.quality >= 0 && p.quality <= 1 ? p.quality : 0.8;
    return screenshot({ selector: str(p.selector), quality, caller: callerOf(p) });
  },
  click: (p) => (
    requirePermission('modifyDOM'),
    click({ selector: str(p.selector), text: str(p.text), ref: str(p.ref), caller: callerOf(p) })
  ),
  type: (p) => {
    requirePermission('modifyDOM');
    return type({
      selector: str(p.selector),
      ref: str(p.ref),
      caller: callerOf(p),
      text: str(p.text) ?? '',
      clear: p.clear === true,
      submit: p.submit === true,
    });
  },
  console: (p) => {
    requirePermission('readDiagnostics');
    const level = ['all', 'log', 'warn', 'error'].includes(str(p.level) ?? '')
      ? str(p.level)!
      : 'all';
    return consoleEntries(level, int(p.limit, 50, 1, 500));
  },
  network: (p) => {
    requirePermission('readDiagnostics');
    return networkEntries({
      ...(str(p.method) ? { method: str(p.method)! } : {}),
      ...(typeof p.status === 'number' ? { status: p.status } : {}),
      limit: int(p.limit, 50, 1, 500),
    });
  },
  mount_app: (p) => {
    requirePermission('modifyDOM');
    const name = str(p.appName);
    if (!name) throw new BridgeError('WU_INVALID_PARAMS', "Give the app's name in 'appName'.");
    return mountApp(name, str(p.container));
  },
  unmount_app: (p) => {
    requirePermission('modifyDOM');
    const name = str(p.appName);
    if (!name) throw new BridgeError('WU_INVALID_PARAMS', "Give the app's name in 'appName'.");
    return unmountApp(name);
  },
};

export async function runCommand(
  command: string,
  params: unknown,
  signal: AbortSignal,
): Promise<unknown> {
  const handler = Object.hasOwn(COMMANDS, command) ? COMMANDS[command] : undefined;
  if (!handler)
    throw new BridgeError(
      'WU_UNKNOWN_COMMAND',
      `This bridge does not know the command '${command}'; update the page's bridge.`,
    );
  const p =
    params && typeof params === 'object' && !Array.isArray(params) ? (params as Params) : {};
  return handler(p, signal);
}

/** Refused before any store sees it, whatever store the page installed. */
function checkedPath(path: string): string {
  const bad = forbiddenSegment(path);
  if (bad !== null)
    throw new BridgeError(
      'WU_INVALID_PARAMS',
      `The path segment '${bad}' is not allowed (it would reach an object's prototype); name the page's own data.`,
    );
  return path;
}

/**
 * A delta answer, cut to `maxChars` characters of JSON when it is larger
 * (entries dropped from the end, with a note saying how to see the rest).
 */
function deltaAnswer(
  diff: { delta: SnapshotDelta; since: number },
  at: {
    appName: string | undefined;
    selector: string | undefined;
    url: string;
    maxChars: number;
    whole: SnapshotResult;
  },
) {
  const { added, changed, removed, unchanged } = diff.delta;
  const lists = { added: [...added], changed: [...changed], removed: [...removed] };
  const size = () => JSON.stringify(lists).length;
  let cut = false;
  while (size() > at.maxChars) {
    cut = true;
    const longest = (['added', 'changed', 'removed'] as const).reduce((a, b) =>
      lists[a].length >= lists[b].length ? a : b,
    );
    if (lists[longest].length === 0) break;
    lists[longest].length = Math.floor(lists[longest].length / 2);
  }
  return {
    app: at.appName ?? null,
    ...(at.selector !== undefined ? { selector: at.selector } : {}),
    url: at.url,
    title: document.title,
    delta: true,
    since: diff.since,
    ...lists,
    unchanged,
    nodeCount: at.whole.nodeCount,
    truncated: cut || at.whole.truncated,
    ...(cut
      ? {
          note: `The changes are larger than maxChars (${at.maxChars}): ${added.length} added, ${changed.length} changed, ${removed.length} removed, only part shown; take a wu_snapshot with selector for the part you need.`,
        }
      : at.whole.truncated
        ? {
            note: `The page has more than ${at.whole.maxNodes} nodes; changes past them are not seen. Take a wu_snapshot with selector to watch one part.`,
          }
        : {}),
    timestamp: Date.now(),
  };
}
