/**
 * The list-changed part of a `subscriptions/listen` filter (SEP-2575) for a
 * stream Airlock serves itself (mcp-task-listen.ts): the same honored subset
 * and the same notifications the SDK's listen router (v2.4) gives, fed by
 * the same `ServerEventBus` (`createMcpHandler`'s `bus`, which mcp-http.ts
 * feeds). The SDK keeps these helpers internal, so they are restated here.
 */
import type {
  JSONRPCNotification,
  ServerCapabilities,
  ServerEvent,
  ServerEventBus,
} from '@modelcontextprotocol/server';

export interface ChangeFilter {
  toolsListChanged?: true;
  promptsListChanged?: true;
  resourcesListChanged?: true;
  resourceSubscriptions?: string[];
}

/** What the server can deliver of what was asked (the SDK's `honoredSubset`). */
export function honoredChanges(
  requested: Record<string, unknown>,
  capabilities: ServerCapabilities,
): ChangeFilter {
  const honored: ChangeFilter = {};
  if (requested['toolsListChanged'] === true && capabilities.tools?.listChanged === true)
    honored.toolsListChanged = true;
  if (requested['promptsListChanged'] === true && capabilities.prompts?.listChanged === true)
    honored.promptsListChanged = true;
  if (requested['resourcesListChanged'] === true && capabilities.resources?.listChanged === true)
    honored.resourcesListChanged = true;
  const uris = requested['resourceSubscriptions'];
  if (Array.isArray(uris) && uris.length > 0 && capabilities.resources?.subscribe === true)
    honored.resourceSubscriptions = uris.filter((u): u is string => typeof u === 'string');
  return honored;
}

/** The notification an event on the bus is for this filter, or null. */
export function changeNotification(
  filter: ChangeFilter,
  event: ServerEvent,
): Pick<JSONRPCNotification, 'method' | 'params'> | null {
  const params = event.params ?? {};
  switch (event.kind) {
    case 'tools_list_changed':
      return filter.toolsListChanged
        ? { method: 'notifications/tools/list_changed', params }
        : null;
    case 'prompts_list_changed':
      return filter.promptsListChanged
        ? { method: 'notifications/prompts/list_changed', params }
        : null;
    case 'resources_list_changed':
      return filter.resourcesListChanged
        ? { method: 'notifications/resources/list_changed', params }
        : null;
    case 'resource_updated':
      return filter.resourceSubscriptions?.includes(event.uri)
        ? { method: 'notifications/resources/updated', params: { ...params, uri: event.uri } }
        : null;
  }
}

/** Sends the filter's notifications from `bus` until the returned function is called. */
export function followChanges(
  bus: ServerEventBus,
  filter: ChangeFilter,
  send: (notification: Pick<JSONRPCNotification, 'method' | 'params'>) => void,
): () => void {
  if (Object.keys(filter).length === 0) return () => undefined;
  return bus.subscribe((event) => {
    const notification = changeNotification(filter, event);
    if (notification) send(notification);
  });
}
