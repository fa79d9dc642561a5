import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { afterAll, describe, it } from 'vitest';
import { createPostgresStore, type PostgresStore } from '../../src/store/postgres/index.js';

/** The test database; override with AIRLOCK_TEST_PG_URL. */
export const PG_URL = process.env.AIRLOCK_TEST_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
/** `npm run test:fast` sets AIRLOCK_TEST_SERVICES=none: the suites needing a service skip even when it answers. */
const UNUSED = process.env.AIRLOCK_TEST_SERVICES === 'none';
const SKIP = process.env.AIRLOCK_TEST_SKIP_SERVICES === '1' || UNUSED;

export function requiredMessage(cause: string): string {
  return (
    `PostgreSQL is required at ${PG_URL} for these tests (${cause}). Start it with ` +
    '`pg_ctlcluster --skip-systemctl-redirect $(ls /etc/postgresql) main start`, ' +
    'point AIRLOCK_TEST_PG_URL at another server, or set AIRLOCK_TEST_SKIP_SERVICES=1 to skip them.'
  );
}

export async function probe(): Promise<string | null> {
  if (UNUSED) return 'not used in this lane: AIRLOCK_TEST_SERVICES=none';
  const client = new pg.Client({ connectionString: PG_URL, connectionTimeoutMillis: 3_000 });
  try {
    await client.connect();
    await client.query('SELECT 1');
    return null;
  } catch (error) {
    return error instanceof Error ? error.message : String(error);
  } finally {
    await client.end().catch(() => undefined);
  }
}

/**
 * `describe(name, body)` when PostgreSQL answers. Otherwise one failing test
 * that says how to start it, or, with AIRLOCK_TEST_SKIP_SERVICES=1, a skip.
 */
export async function describeWithPostgres(name: string, body: () => void): Promise<void> {
  const problem = await probe();
  if (problem === null) {
    describe(name, body);
  } else if (SKIP) {
    describe.skip(`${name}: ${requiredMessage(problem)}`, () => {
      it('needs PostgreSQL', () => undefined);
    });
  } else {
    describe(name, () => {
      it('PostgreSQL is reachable', () => {
        throw new Error(requiredMessage(problem));
      });
    });
  }
}

/** A schema name no other test run uses. */
export function uniqueSchema(label: string): string {
  return `airlock_test_${label}_${process.pid}_${randomBytes(4).toString('hex')}`;
}

export async function dropSchema(schema: string): Promise<void> {
  const client = new pg.Client({ connectionString: PG_URL });
  await client.connect();
  try {
    await client.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
  } finally {
    await client.end();
  }
}

/**
 * Opens PostgreSQL stores for one test file, each in a schema of its own;
 * after the file's tests they are closed and their schemas dropped.
 */
export function freshStores(label: string): () => Promise<PostgresStore> {
  const opened: { store: PostgresStore; schema: string }[] = [];
  afterAll(async () => {
    for (const { store, schema } of opened) {
      await store.close().catch(() => undefined);
      await dropSchema(schema).catch(() => undefined);
    }
  });
  return async () => {
    const schema = uniqueSchema(label);
    const store = await createPostgresStore({ url: PG_URL, schema });
    opened.push({ store, schema });
    return store;
  };
}
