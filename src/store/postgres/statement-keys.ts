import type { SqlParam } from '../sql/sql-client.js';

/**
 * The rows a keyed statement of the shared repositories touches, named by
 * table and key (`records`, collection, key; `journal`, scope, operation id),
 * so the group writer can tell whether two writes of one transaction could
 * meet (concurrent-group.ts). `null`: a statement it does not know — a range
 * read, a list, another table — which may touch anything.
 *
 * Only statements addressing one row of `records` or `journal` by its whole
 * primary key are known, and the advisory key lock taken before reading an
 * absent key (sql/key-lock.ts), which names its table and key itself.
 */
type KeyOf = (params: readonly SqlParam[]) => string | null;

const KEYED_TABLES = new Set(['records', 'journal']);
const join = (parts: readonly unknown[]): string | null =>
  parts.every((p) => typeof p === 'string') ? parts.join('\u0000') : null;

/** SELECT/DELETE … FROM t WHERE a = ? AND b = ? [FOR UPDATE]: the two parameters. */
const BY_KEY =
  /^(?:SELECT [\w, ]+|DELETE) FROM (\w+) WHERE (\w+) = \? AND (\w+) = \?(?: FOR UPDATE)?$/;
/** INSERT INTO t (a, b, …) VALUES (?, …) …: the first two parameters. */
const INSERT =
  /^INSERT INTO (\w+) \((\w+), (\w+),[\w, ]+\) VALUES \([?, ]+\)(?:\s+ON CONFLICT \((\w+), (\w+)\)[\s\S]*)?$/;
/** UPDATE t SET … WHERE a = ? AND b = ?: the last two parameters. */
const UPDATE = /^UPDATE (\w+) SET [\w =?,]+ WHERE (\w+) = \? AND (\w+) = \?$/;
const KEY_LOCK = /^SELECT pg_advisory_xact_lock\(hashtextextended\(\?, 0\)\)$/;

/** Primary key columns of the tables whose keyed statements are known. */
const PRIMARY: Record<string, readonly [string, string]> = {
  records: ['collection', 'key'],
  journal: ['scope', 'operation_id'],
};
const isPrimary = (table: string, a: string | undefined, b: string | undefined): boolean =>
  KEYED_TABLES.has(table) && PRIMARY[table]![0] === a && PRIMARY[table]![1] === b;

function classify(sql: string): KeyOf | null {
  const text = sql.trim();
  let m = BY_KEY.exec(text);
  if (m && isPrimary(m[1]!, m[2], m[3])) {
    const table = m[1]!;
    return (p) => join([table, p[0], p[1]]);
  }
  m = INSERT.exec(text);
  if (m && isPrimary(m[1]!, m[2], m[3]) && (m[4] === undefined || isPrimary(m[1]!, m[4], m[5]))) {
    const table = m[1]!;
    return (p) => join([table, p[0], p[1]]);
  }
  m = UPDATE.exec(text);
  if (m && isPrimary(m[1]!, m[2], m[3])) {
    const table = m[1]!;
    return (p) => join([table, p[p.length - 2], p[p.length - 1]]);
  }
  if (KEY_LOCK.test(text)) {
    return (p) => {
      if (typeof p[0] !== 'string') return null;
      const named: unknown = JSON.parse(p[0]);
      return Array.isArray(named) && KEYED_TABLES.has(named[0] as string) ? join(named) : null;
    };
  }
  return null;
}

const shapes = new Map<string, KeyOf | null>();

/** The key a statement touches, or null when it is not one of the known keyed statements. */
export function statementKey(sql: string, params: readonly SqlParam[]): string | null {
  let keyOf = shapes.get(sql);
  if (keyOf === undefined) {
    keyOf = classify(sql);
    shapes.set(sql, keyOf);
  }
  return keyOf ? keyOf(params) : null;
}
