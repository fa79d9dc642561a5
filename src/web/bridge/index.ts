/**
 * `airlock/bridge` (served at `/bridge.js`): the page side of the `page`
 * door. Browser ESM, no dependencies, nothing Node-only. Every export here is
 * a promise: it keeps its name and meaning across releases.
 *
 * @example
 * import wu, { connect, action, useStore, setPermissions } from '/bridge.js';
 * useStore({ cart: { items: [] } });
 * action('sum', { parameters: { type: 'object', properties: { a: { type: 'number' }, b: { type: 'number' } } },
 *   handler: ({ a, b }) => Number(a) + Number(b) });
 * const { url, token } = await (await fetch('/api/v1/page/bridge-token')).json();
 * await connect(url, { token });
 */
import { bridgeState, connect, disconnect, isConnected, onStatus } from './connection.js';
import {
  action,
  execute,
  listActions,
  registerBuiltins,
  removeAction,
  setConfirmHandler,
} from './actions.js';
import { createStore, pageStore, useStore } from './store.js';
import { events } from './events.js';
import { app } from './apps.js';
import {
  DEFAULT_PERMISSIONS,
  getPermissions,
  setPermissions,
  type Permissions,
} from './permissions.js';
import { FRAMEWORK } from './commands.js';

registerBuiltins();

export { connect, disconnect, isConnected, onStatus, bridgeState } from './connection.js';
export type { ConnectOptions, BridgeState } from './connection.js';
export { action, execute, listActions, removeAction, setConfirmHandler } from './actions.js';
export type { ActionDefinition, ActionApi, ConfirmHandler } from './actions.js';
export { createStore, useStore, type PageStore } from './store.js';
export { events } from './events.js';
export { app, type AppDefinition } from './apps.js';
export {
  setPermissions,
  getPermissions,
  DEFAULT_PERMISSIONS,
  PERMISSION_FLAGS,
} from './permissions.js';
export type { Permissions, PermissionFlag } from './permissions.js';
export { BridgeError } from './errors.js';

/** The `wu`-shaped facade for pages written for the reference (`wu.mcp.connect`, `wu.ai.action`…). */
export const wu = {
  framework: FRAMEWORK,
  mcp: { connect, disconnect, isConnected, onStatus, state: bridgeState },
  ai: {
    action,
    execute,
    list: listActions,
    remove: removeAction,
    confirm: setConfirmHandler,
    /** Reads the flags, or sets some and returns the flags now in force. */
    permissions: (flags?: Partial<Permissions>) =>
      flags ? setPermissions(flags) : getPermissions(),
    defaults: DEFAULT_PERMISSIONS,
  },
  aiReady: () => Promise.resolve(),
  store: {
    get: (path: string) => pageStore().get(path),
    set: (path: string, value: unknown) => pageStore().set(path, value),
    keys: () => pageStore().keys(),
    use: useStore,
    create: createStore,
  },
  events,
  on: events.on,
  off: events.off,
  emit: events.emit,
  app,
};

export default wu;
