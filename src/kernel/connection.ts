/**
 * Connection identity (spec/kernel.md §4). The transport computes it; doors
 * only read it. Grants, concurrency limits and audit entries are keyed by `id`.
 */
export type ConnectionKind = 'stdio' | 'http-session' | 'http-principal' | 'rest' | 'internal';

export interface Connection {
  /**
   * Stable key: `agent:<agent key>` (2026-era), `agent:<agent key>/session:<id>`
   * (2025-era), `agent:stdio:<client>/process:<uuid>` (stdio). The agent key
   * carries the id the agent was made with (`agentKey`), so nothing keyed by
   * a connection passes to a later agent of the same name.
   */
  readonly id: string;
  readonly kind: ConnectionKind;
  /** The agent the call acts as (authority.md §1); absent for owner and internal calls. */
  readonly agent?: string | undefined;
  /** The MCP session or process, when the connection has one. */
  readonly session?: string | undefined;
  /** The MCP client's name and version, when it said. */
  readonly client?: { name: string; version: string } | undefined;
}

export function connection(
  id: string,
  kind: ConnectionKind,
  client?: { name: string; version: string },
  agent?: string,
): Connection {
  return {
    id,
    kind,
    ...(client === undefined ? {} : { client }),
    ...(agent === undefined ? {} : { agent }),
  };
}

/**
 * The `agent:<name>` part of a connection id, with the agent's id when it
 * has one (`agent:alice~3f9a1c2e4b7d`, see `agentKey`). A stdio agent is
 * named after its client (`stdio:@langchain/mcp-adapters`), and `/`
 * separates the id's parts and `~` the agent's id, so `%`, `/` and `~` in
 * the name are percent-encoded there; `agentOfConnection` decodes them, and
 * the name is kept whole.
 */
export function agentPart(agent: string, id?: string | null): string {
  return `agent:${agentKey(encodeName(agent), id)}`;
}

const encodeName = (name: string) =>
  name.replace(/%/g, '%25').replace(/\//g, '%2F').replace(/~/g, '%7E');
const decodeName = (name: string) =>
  name.replace(/%7E/g, '~').replace(/%2F/g, '/').replace(/%25/g, '%');

/**
 * An agent's key: its name and the id it was made with, `alice~3f9a1c2e4b7d`
 * (`~` is never in a name). Grants, approvals, journal keys, sealed
 * `requestState` and MCP tasks are bound to it, so an agent revoked and made
 * again under the same name starts with nothing (authority.md §1). Agents
 * made before ids existed, and those outside the store (`anonymous`, stdio
 * clients), have no id: their key is the name.
 */
export const agentKey = (name: string, id?: string | null): string =>
  id ? `${name}${AGENT_ID_MARK}${id}` : name;
const AGENT_ID_MARK = '~';

/** The name part of an agent key (`alice~3f9a…` → `alice`), decoded. */
export function agentNameOf(key: string): string {
  const at = key.indexOf(AGENT_ID_MARK);
  return decodeName(at < 0 ? key : key.slice(0, at));
}

/** `agent:alice~3f9a…/session:…` → `alice~3f9a…`; null for connections that are no agent's. */
export function agentKeyOfConnection(id: string): string | null {
  const m = /^agent:([^/]+)/.exec(id);
  return m ? m[1]! : null;
}

/** `agent:alice~3f9a…/session:…` → `alice`; null for connections that are no agent's. */
export function agentOfConnection(id: string): string | null {
  const key = agentKeyOfConnection(id);
  return key === null ? null : agentNameOf(key);
}
/** The agent's name in a connection id made with `agentPart` (`agentOfConnection`). */
export const agentOfConnectionId = agentOfConnection;

/**
 * The key a call's agent-wide state is bound to: the agent key its
 * connection carries, else the agent's name; null for the owner and
 * internal calls.
 */
export function agentKeyOf(c: Pick<Connection, 'id' | 'agent'>): string | null {
  if (c.agent === undefined) return null;
  const key = agentKeyOfConnection(c.id);
  return key !== null && agentNameOf(key) === c.agent ? key : c.agent;
}

/**
 * A connection id as people and other agents may see it (authority.md §1):
 * session and process ids cut to an 8-character label, since knowing the
 * whole id must never be worth anything.
 *
 * @example
 * connectionLabel('agent:alice/session:0c9f3e12-…') // 'agent:alice/session:0c9f3e12'
 */
export function connectionLabel(id: string): string {
  // Asked for on every call (audit, events) about the same few connections.
  let label = labels.get(id);
  if (label === undefined) {
    if (labels.size >= 1000) labels.clear();
    // The agent's id is left out too: people tell agents apart by name.
    label = id
      .replace(/^(agent:[^/~]+)~[^/]*/, '$1')
      .replace(/(session|process):([^/]{8})[^/]*/g, '$1:$2');
    labels.set(id, label);
  }
  return label;
}
const labels = new Map<string, string>();
