import type { PoolClient } from 'pg';

const SCHEMA_NAME = /^[a-z_][a-z0-9_]{0,62}$/;

/**
 * Only plain lower-case identifiers: they mean the same quoted or not, so
 * `search_path` (a connection option) and DDL cannot disagree.
 */
export function assertSchemaName(schema: string): void {
  if (!SCHEMA_NAME.test(schema)) {
    throw new Error(
      `PostgreSQL schema "${schema}" is not allowed; use lower-case letters, digits and _ (at most 63, not starting with a digit).`,
    );
  }
}

export function quoteIdent(name: string): string {
  return `"${name.replace(/"/g, '""')}"`;
}

/**
 * Inside the caller's transaction: wait for any other Airlock migrating the
 * same schema, then create the schema if missing. (CREATE SCHEMA IF NOT
 * EXISTS needs the CREATE privilege even when the schema exists.)
 */
export async function lockAndEnsureSchema(client: PoolClient, schema: string): Promise<void> {
  await client.query('SELECT pg_advisory_xact_lock(hashtext($1))', [`airlock:${schema}`]);
  const found = await client.query('SELECT 1 FROM pg_namespace WHERE nspname = $1', [schema]);
  if (found.rowCount === 0) await client.query(`CREATE SCHEMA ${quoteIdent(schema)}`);
}

/** The URL without password, and the schema: safe for logs. */
export function describeLocation(url: string, schema: string): string {
  try {
    const parsed = new URL(url);
    parsed.password = '';
    parsed.searchParams.delete('password');
    return `${parsed.toString()} (schema ${schema})`;
  } catch {
    return `postgres (schema ${schema})`;
  }
}
