/**
 * Page actions the agent may run: `action(name, {description, parameters,
 * handler(params, api, signal), permissions, confirm})`. The `api` handed to
 * handlers is gated by the same flags as the tools, and the bridge's
 * built-in actions go through it, so no action can do what the matching
 * tool may not.
 */
import { BridgeError } from './errors.js';
import { checkSchema, type JsonSchema } from './json-schema.js';
import { isPermissionFlag, requirePermission, type PermissionFlag } from './permissions.js';
import { redactAt, redactValue } from './redact.js';
import { foldName, mixesScripts } from './action-name.js';
import { emit, recentEvents } from './events.js';
import { pageStore } from './store.js';
import { snapshot } from './a11y.js';
import { click, type as typeText, type Target, type TypeOptions } from './dom.js';
import { consoleEntries } from './diagnostics.js';

export interface ActionApi {
  store: { get(path: string): unknown; set(path: string, value: unknown): void; keys(): string[] };
  emit(event: string, data?: unknown): void;
  navigate(route: string): { navigated: string; currentPathUpdated: boolean };
  snapshot(root?: Element): ReturnType<typeof snapshot>;
  click(target: Target): ReturnType<typeof click>;
  type(options: TypeOptions): ReturnType<typeof typeText>;
  /** The agent the relay names as calling this action, or null (the page's own calls, older relays). */
  caller: string | null;
}

export interface ActionDefinition {
  description?: string;
  /** JSON Schema of `params`. */
  parameters?: JsonSchema;
  handler(params: Record<string, unknown>, api: ActionApi, signal: AbortSignal): unknown;
  /** Flags the action needs besides executeActions. */
  permissions?: PermissionFlag[];
  /** Ask the page's confirm handler before running. */
  confirm?: boolean;
}

export type ConfirmHandler = (
  action: string,
  params: Record<string, unknown>,
) => boolean | Promise<boolean>;

const RESERVED = ['wu:', 'system:', 'app:'];
/** Matched after trimming and case-folding, so ` WU:ready` is as reserved as `wu:ready`. */
export const isReservedEvent = (name: string) => {
  const folded = name.trim().toLowerCase();
  return RESERVED.some((p) => folded.startsWith(p));
};

export function navigate(route: string) {
  requirePermission('emitEvents');
  emit('shell:navigate', { route }, 'agent');
  let currentPathUpdated = false;
  try {
    requirePermission('writeStore');
    pageStore().set('currentPath', route);
    currentPathUpdated = true;
  } catch {
    // Without writeStore the event alone is sent (spec/page.md wu_navigate).
  }
  return { navigated: route, currentPathUpdated };
}

export function emitChecked(event: string, data: unknown) {
  requirePermission('emitEvents');
  if (isReservedEvent(event))
    throw new BridgeError(
      'WU_RESERVED_EVENT',
      `Event '${event}' is in a reserved namespace (wu:, system:, app:); use your own prefix.`,
    );
  emit(event, data, 'agent');
}

export const api: ActionApi = {
  store: {
    get: (path) => (requirePermission('readStore'), pageStore().get(path)),
    set: (path, value) => (requirePermission('writeStore'), pageStore().set(path, value)),
    keys: () => (requirePermission('readStore'), pageStore().keys()),
  },
  emit: emitChecked,
  navigate,
  snapshot: (root) => (requirePermission('readDOM'), snapshot(root ?? document.body)),
  click: (target) => (requirePermission('modifyDOM'), click(target)),
  type: (options) => (requirePermission('modifyDOM'), typeText(options)),
  caller: null,
};

const actions = new Map<string, ActionDefinition>();
/** Registered names by folded name (action-name.ts): one name for one action. */
const byFolded = new Map<string, string>();
let confirmHandler: ConfirmHandler | null = null;

/** Registers (or replaces) an action; returns a function that removes it. */
export function action(name: string, def: ActionDefinition): () => void {
  if (typeof name !== 'string' || name.length === 0 || name.length > 200)
    throw new BridgeError('WU_INVALID_ACTION', 'An action name must be 1 to 200 characters.');
  if (typeof def?.handler !== 'function')
    throw new BridgeError('WU_INVALID_ACTION', `Action '${name}' needs a handler function.`);
  for (const p of def.permissions ?? [])
    if (!isPermissionFlag(p))
      throw new BridgeError(
        'WU_INVALID_ACTION',
        `Unknown permission '${String(p)}' in action '${name}'.`,
      );
  if (mixesScripts(name))
    throw new BridgeError(
      'WU_INVALID_ACTION',
      `Action name '${name}' mixes Latin letters with look-alike letters of another script; spell it in one script.`,
    );
  const folded = foldName(name);
  const twin = byFolded.get(folded);
  if (twin !== undefined && twin !== name)
    throw new BridgeError(
      'WU_INVALID_ACTION',
      `Action name '${name}' is the same as the registered '${twin}' once case, width and invisible characters are set aside; pick a distinct name.`,
    );
  actions.set(name, def);
  byFolded.set(folded, name);
  return () => {
    if (actions.get(name) === def) removeAction(name);
  };
}

/** The registered action an agent's name means (compared folded), if any. */
function registered(name: string): [string, ActionDefinition] | null {
  const actual = byFolded.get(foldName(name));
  const def = actual === undefined ? undefined : actions.get(actual);
  return actual !== undefined && def ? [actual, def] : null;
}

export function setConfirmHandler(handler: ConfirmHandler | null): void {
  confirmHandler = handler;
}

export function listActions() {
  const list = [...actions].map(([name, d]) => ({
    name,
    description: d.description ?? '',
    parameters: d.parameters ?? { type: 'object' },
    permissions: ['executeActions', ...(d.permissions ?? [])],
    confirm: d.confirm === true,
  }));
  return { actions: list, count: list.length };
}

export const actionCount = () => actions.size;

/**
 * Runs an action with the page's permission checks (`wu.ai.execute`).
 * Resolves `{action, success, result?, reason?}`; throws a BridgeError when
 * the call itself is refused (unknown action, permission, invalid params).
 */
export async function execute(
  asked: string,
  params: Record<string, unknown> = {},
  signal: AbortSignal = new AbortController().signal,
  caller: string | null = null,
) {
  requirePermission('executeActions');
  const found = registered(asked);
  if (!found)
    throw new BridgeError(
      'WU_ACTION_NOT_FOUND',
      `No action '${asked}' is registered; call wu_list_actions for the names.`,
    );
  const [name, def] = found;
  for (const flag of def.permissions ?? []) requirePermission(flag);
  const problem = checkSchema(def.parameters, params);
  if (problem)
    throw new BridgeError(
      'WU_INVALID_PARAMS',
      `Invalid params for '${name}': ${problem}; see its parameters in wu_list_actions.`,
    );
  if (def.confirm) {
    const ok = confirmHandler ? await confirmHandler(name, params) : false;
    if (!ok)
      return { action: name, success: false, reason: 'The page did not confirm this action.' };
  }
  try {
    const out = await def.handler(params, { ...api, caller }, signal);
    if (signal.aborted) return { action: name, success: false, reason: 'cancelled' };
    if (out && typeof out === 'object' && (out as { success?: unknown }).success === false) {
      const o = out as { reason?: unknown; error?: unknown };
      return {
        action: name,
        success: false,
        reason: String(o.reason ?? o.error ?? 'The action failed.'),
      };
    }
    return out === undefined
      ? { action: name, success: true }
      : { action: name, success: true, result: redactValue(out) ?? null };
  } catch (error) {
    // A refusal from the gated api is a refusal of the call, not an action failure.
    if (error instanceof BridgeError && error.code === 'WU_PERMISSION_DENIED') throw error;
    return {
      action: name,
      success: false,
      reason: error instanceof Error ? error.message : String(error),
    };
  }
}

/** Built-in actions, each going through the gated api (and declaring the flag it needs). */
export function registerBuiltins(): void {
  action('navigate', {
    description: 'Navigate the shell to a route (emits shell:navigate).',
    parameters: {
      type: 'object',
      properties: { route: { type: 'string', minLength: 1 } },
      required: ['route'],
    },
    permissions: ['emitEvents'],
    handler: (p, a) => a.navigate(String(p.route)),
  });
  action('getState', {
    description: 'Read the store at a dot path.',
    parameters: { type: 'object', properties: { path: { type: 'string' } } },
    permissions: ['readStore'],
    handler: (p, a) => {
      const path = String(p.path ?? '');
      return { path, value: redactAt(path, a.store.get(path)) ?? null };
    },
  });
  action('setState', {
    description: 'Write a value at a dot path of the store.',
    parameters: {
      type: 'object',
      properties: { path: { type: 'string', minLength: 1 } },
      required: ['path', 'value'],
    },
    permissions: ['writeStore'],
    handler: (p, a) => (a.store.set(String(p.path), p.value), { path: p.path, updated: true }),
  });
  action('emitEvent', {
    description: 'Emit an event on the page bus (reserved namespaces refused).',
    parameters: {
      type: 'object',
      properties: { event: { type: 'string', minLength: 1, maxLength: 200 } },
      required: ['event'],
    },
    permissions: ['emitEvents'],
    handler: (p, a) => (a.emit(String(p.event), p.data), { emitted: p.event }),
  });
  action('snapshot', {
    description: 'Accessibility tree of the page.',
    parameters: { type: 'object' },
    permissions: ['readDOM'],
    handler: (_p, a) => a.snapshot(),
  });
  action('click', {
    description: 'Click an element by selector, text or ref.',
    parameters: {
      type: 'object',
      properties: {
        selector: { type: 'string' },
        text: { type: 'string' },
        ref: { type: 'string' },
      },
    },
    permissions: ['modifyDOM'],
    handler: (p, a) => a.click(p as Target),
  });
  action('readEvents', {
    description: 'Recent events (redacted).',
    parameters: {
      type: 'object',
      properties: { limit: { type: 'integer', minimum: 1, maximum: 200 } },
    },
    permissions: ['readDiagnostics'],
    handler: (p) => (requirePermission('readDiagnostics'), recentEvents(Number(p.limit ?? 20))),
  });
  action('readConsole', {
    description: 'Recent console entries (redacted).',
    parameters: {
      type: 'object',
      properties: { limit: { type: 'integer', minimum: 1, maximum: 500 } },
    },
    permissions: ['readDiagnostics'],
    handler: (p) => (
      requirePermission('readDiagnostics'),
      consoleEntries('all', Number(p.limit ?? 50))
    ),
  });
}

/** Removes an action by name (built-ins included). */
export function removeAction(name: string): boolean {
  const found = registered(name);
  if (!found) return false;
  byFolded.delete(foldName(found[0]));
  return actions.delete(found[0]);
}
