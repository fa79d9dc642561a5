/**
 * Connection identity (spec/kernel.md §4). The transport computes it; doors
 * only read it. Grants, concurrency limits and audit entries are keyed by `id`.
 */
export type ConnectionKind = 'stdio' | 'http-session' | 'http-principal' | 'rest' | 'internal';

export interface Connection {
  /**
   * Stable key: `agent:<name>` (2026-era), `agent:<name>/session:<id>`
   * (2025-era), `agent:stdio:<client>/process:<uuid>` (stdio).
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
 * The `agent:<name>` part of a connection id. A stdio agent is named after
 * its client (`stdio:@langchain/mcp-adapters`), and `/` separates the id's
 * parts, so `%` and `/` in the name are percent-encoded there;
 * `agentOfConnection` decodes them, and the name is kept whole.
 */
export function agentPart(agent: string): string {
  return `agent:${agent.replace(/%/g, '%25').replace(/\//g, '%2F')}`;
}

/** The agent's name in a connection id made with `agentPart`. */
export function agentOfConnectionId(id: string): string | null {
  const m = /^agent:([^/]+)/.exec(id);
  return m ? m[1]!.replace(/%2F/g, '/').replace(/%25/g, '%') : null;
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
    label = id.replace(/(session|process):([^/]{8})[^/]*/g, '$1:$2');
    labels.set(id, label);
  }
  return label;
}
const labels = new Map<string, string>();
