import pg from 'pg';
import type { BlobStore } from '../kernel/store.js';
import { asBytes, blobHash, isBlobHash } from '../kernel/blob-hash.js';
import { assertSchemaName, lockAndEnsureSchema, quoteIdent } from './postgres/schema.js';

/** A BlobStore in PostgreSQL; `close` ends the pool only when it made it from a URL. */
export interface PostgresBlobStore extends BlobStore {
  close(): Promise<void>;
}

/**
 * Blobs in a `blobs` table (bytea) of `schema`, so every Airlock instance on
 * the database sees the same blobs. The table is created on first use.
 *
 * @example
 * const blobs = createPostgresBlobStore(store.pool, store.schema);
 */
export function createPostgresBlobStore(
  source: pg.Pool | string,
  schema = 'public',
): PostgresBlobStore {
  assertSchemaName(schema);
  const ownsPool = typeof source === 'string';
  const pool = typeof source === 'string' ? new pg.Pool({ connectionString: source }) : source;
  if (ownsPool) pool.on('error', () => undefined);
  // Names are qualified: a shared pool's search_path may point elsewhere.
  const table = `${quoteIdent(schema)}.blobs`;
  let ready: Promise<void> | undefined;

  const ensureTable = (): Promise<void> => {
    ready ??= createTable(pool, schema, table).catch((error: unknown) => {
      ready = undefined;
      throw error;
    });
    return ready;
  };

  return {
    async put(bytes) {
      await ensureTable();
      const hash = blobHash(bytes);
      await pool.query(
        `INSERT INTO ${table} (hash, bytes, size, created_at) VALUES ($1, $2, $3, $4)
         ON CONFLICT (hash) DO NOTHING`,
        [
          hash,
          Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength),
          bytes.byteLength,
          Date.now(),
        ],
      );
      return hash;
    },

    async get(hash) {
      if (!isBlobHash(hash)) return null;
      await ensureTable();
      const result = await pool.query<{ bytes: Buffer }>(
        `SELECT bytes FROM ${table} WHERE hash = $1`,
        [hash],
      );
      const row = result.rows[0];
      return row ? asBytes(row.bytes) : null;
    },

    async has(hash) {
      if (!isBlobHash(hash)) return false;
      await ensureTable();
      const result = await pool.query(`SELECT 1 FROM ${table} WHERE hash = $1`, [hash]);
      return (result.rowCount ?? 0) > 0;
    },

    async close() {
      if (ownsPool) await pool.end();
    },
  };
}

async function createTable(pool: pg.Pool, schema: string, table: string): Promise<void> {
  const client = await pool.connect();
  try {
    await client.query('BEGIN');
    await lockAndEnsureSchema(client, schema);
    await client.query(
      `CREATE TABLE IF NOT EXISTS ${table} (
         hash text PRIMARY KEY,
         bytes bytea NOT NULL,
         size integer NOT NULL,
         created_at double precision NOT NULL
       )`,
    );
    await client.query('COMMIT');
  } catch (error) {
    await client.query('ROLLBACK').catch(() => undefined);
    throw error;
  } finally {
    client.release();
  }
}
