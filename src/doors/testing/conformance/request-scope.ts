/**
 * The MCP request a fixture tool runs under. The transport hands it to the
 * door per `tools/call` (`Door.withMcpRequest`); the door keeps it in an
 * AsyncLocalStorage so handlers, deep inside the kernel pipeline, can read
 * multi-round-trip input and send log notifications.
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import type { McpRequestScope } from '../../../transport/surface.js';

const storage = new AsyncLocalStorage<McpRequestScope>();

/** What a call sees when it did not arrive over MCP (e.g. a direct kernel call in a test). */
const NO_REQUEST: McpRequestScope = {
  clientCapabilities: {},
  inputResponses: undefined,
  requestState: undefined,
  log: async () => undefined,
};

export function runWithRequest<T>(scope: McpRequestScope, call: () => Promise<T>): Promise<T> {
  return storage.run(scope, call);
}

export function currentRequest(): McpRequestScope {
  return storage.getStore() ?? NO_REQUEST;
}
