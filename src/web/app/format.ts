/** How times, durations and ids read in the UI. */

/** "14 min 05 s", "42 s", or "expired". */
export function remaining(ms: number): string {
  if (ms <= 0) return 'expired';
  const s = Math.floor(ms / 1000);
  const h = Math.floor(s / 3600);
  const m = Math.floor((s % 3600) / 60);
  const sec = s % 60;
  if (h > 0) return `${h} h ${String(m).padStart(2, '0')} min`;
  if (m > 0) return `${m} min ${String(sec).padStart(2, '0')} s`;
  return `${sec} s`;
}

export function time(ms: number): string {
  return new Date(ms).toLocaleString(undefined, { dateStyle: 'short', timeStyle: 'medium' });
}

export function isoTime(ms: number): string {
  return new Date(ms).toISOString();
}

/**
 * The connection key with each long id cut to an 8-character label, the
 * agent's name kept whole (spec/authority.md §1):
 * `agent:default/session:1a2b3c4d…`, `session:1a2b3c4d…`. The server
 * already sends session and process ids cut to their 8-character label;
 * those still end in `…`, so the label never reads as the whole id.
 */
export function shortConnection(connection: string): string {
  return connection.split('/').map(shortPart).join('/');
}

function shortPart(part: string): string {
  const colon = part.indexOf(':');
  const kind = colon < 0 ? '' : part.slice(0, colon + 1);
  const rest = colon < 0 ? part : part.slice(colon + 1);
  if (kind === 'agent:') return part;
  const label = kind === 'session:' || kind === 'process:' ? rest.length >= 8 : rest.length > 12;
  return label ? `${kind}${rest.slice(0, 8)}…` : part;
}

export function percent(value: number): string {
  return `${Math.round(value * 10) / 10} %`;
}

export function bytes(n: number): string {
  if (n < 1024) return `${n} B`;
  if (n < 1024 * 1024) return `${(n / 1024).toFixed(1)} KiB`;
  return `${(n / 1024 / 1024).toFixed(1)} MiB`;
}

/**
 * The agent's name in a connection label (`agent:alice/session:…` →
 * `alice`; `%`, `/` and `~` in names are percent-encoded there); null for a
 * connection that is no agent's.
 */
export function agentOfLabel(connection: string): string | null {
  const m = /^agent:([^/~]+)/.exec(connection);
  if (!m) return null;
  try {
    return decodeURIComponent(m[1]!);
  } catch {
    return m[1]!;
  }
}
