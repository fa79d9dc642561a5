import { access, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { openStore } from '../../src/store/open.js';
import { describeWithPostgres, dropSchema, PG_URL, uniqueSchema } from '../services/postgres.js';

const root = await mkdtemp(join(tmpdir(), 'airlock-open-'));
afterAll(() => rm(root, { recursive: true, force: true }));

describe('openStore', () => {
  it('opens SQLite at <data>/airlock.db with blobs in <data>/blobs by default, creating the folder', async () => {
    const data = join(root, 'fresh', 'data');
    const { store, blobs } = await openStore({ data });
    try {
      expect(store.kind).toBe('sqlite');
      expect(store.location).toBe(join(data, 'airlock.db'));
      const hash = await blobs.put(new TextEncoder().encode('x'));
      await access(join(data, 'blobs', hash.slice(0, 2), hash.slice(2)));
    } finally {
      await store.close();
    }
  });

  it('opens SQLite for "sqlite:"', async () => {
    const data = join(root, 'explicit');
    const { store } = await openStore({ data, store: 'sqlite:' });
    expect(store.kind).toBe('sqlite');
    expect(store.location).toBe(join(data, 'airlock.db'));
    await store.close();
  });

  it('rejects an unknown store, naming it and the accepted forms', async () => {
    await expect(openStore({ data: join(root, 'bad'), store: 'mysql://x' })).rejects.toThrow(
      /"mysql:\/\/x".*sqlite:.*postgres:\/\/.*postgresql:\/\//,
    );
  });
});

await describeWithPostgres('openStore with PostgreSQL', () => {
  const schema = uniqueSchema('openstore');
  afterAll(() => dropSchema(schema));

  it('opens PostgreSQL with blobs in the same database for a postgres:// URL', async () => {
    const url = new URL(PG_URL);
    url.searchParams.set('schema', schema);
    const { store, blobs } = await openStore({ data: join(root, 'pg'), store: url.toString() });
    try {
      expect(store.kind).toBe('postgres');
      expect(store.location).toContain(`schema ${schema}`);
      const hash = await blobs.put(new TextEncoder().encode('shared'));
      expect(await blobs.has(hash)).toBe(true);
    } finally {
      await store.close();
    }
  });
});
