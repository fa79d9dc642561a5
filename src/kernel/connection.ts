/**
 * Connection identity (spec/kernel.md §4). The transport computes it; doors
 * only read it. Grants, concurrency limits and audit entries are keyed by `id`.
 */
export type ConnectionKind = 'stdio' | 'http-session' | 'http-principal' | 'rest' | 'internal';

export interface Connection {
  /** Stable key: `stdio:<uuid>`, `session:<mcp-session-id>`, `principal:<name>`. */
  readonly id: string;
  readonly kind: ConnectionKind;
  /** The MCP client's name and version, when it said. */
  readonly client?: { name: string; version: string } | undefined;
}

export function connection(
  id: string,
  kind: ConnectionKind,
  client?: { name: string; version: string },
): Connection {
  return client === undefined ? { id, kind } : { id, kind, client };
}
