import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { openWriter } from '../../src/store/sqlite/connection.js';
import { migrate } from '../../src/store/sqlite/migrations.js';
import { createSqliteStore } from '../../src/store/sqlite/index.js';

const dir = await mkdtemp(join(tmpdir(), 'airlock-migrate-'));
afterAll(() => rm(dir, { recursive: true, force: true }));

/** A database as Airlock left it at schema 3 (records in a WITHOUT ROWID table). */
function schemaThree(path: string, rows: Array<[string, string, unknown]>): void {
  const db = openWriter(path, 1000);
  migrate(db, 3);
  const insert = db.prepare(
    'INSERT INTO records (collection, key, value, updated_at) VALUES (?, ?, ?, ?)',
  );
  for (const [collection, key, value] of rows)
    insert.run(collection, key, JSON.stringify(value), 1_700_000_000_000);
  db.close();
}

describe('SQLite schema 4: records by rowid', () => {
  it('keeps the records of a schema 3 database, with their update times', async () => {
    const path = join(dir, 'keeps.db');
    const big = 'x'.repeat(200_000);
    schemaThree(path, [
      ['notes.blocks', 'd1/0000000000', { text: big }],
      ['notes.byProject', 'p1/d1', { title: 'one' }],
      ['notes.byProject', 'p2/d2', { title: 'two' }],
    ]);
    const store = await createSqliteStore({ path });
    try {
      const listed = await store.read((tx) =>
        tx.records.list('notes.byProject', { prefix: 'p1/' }),
      );
      expect(listed).toEqual([
        {
          collection: 'notes.byProject',
          key: 'p1/d1',
          value: { title: 'one' },
          updatedAt: 1_700_000_000_000,
        },
      ]);
      const block = await store.read((tx) =>
        tx.records.get<{ text: string }>('notes.blocks', 'd1/0000000000'),
      );
      expect(block?.value.text).toBe(big);
    } finally {
      await store.close();
    }
  });

  it('a migrated database keeps one record per key: put replaces it', async () => {
    const path = join(dir, 'upsert.db');
    schemaThree(path, [['c', 'k', 1]]);
    const store = await createSqliteStore({ path });
    try {
      await store.transaction((tx) => tx.records.put('c', 'k', 2));
      await store.transaction((tx) => tx.records.put('c', 'k2', 3));
      const all = await store.read((tx) => tx.records.list<number>('c'));
      expect(all.map((r) => [r.key, r.value])).toEqual([
        ['k', 2],
        ['k2', 3],
      ]);
    } finally {
      await store.close();
    }
  });

  it('stores records in a rowid table with the value last and a unique key index', async () => {
    const path = join(dir, 'shape.db');
    schemaThree(path, []);
    await (await createSqliteStore({ path })).close();
    const db = openWriter(path, 1000);
    try {
      const columns = db.pragma('table_info(records)') as Array<{ name: string }>;
      expect(columns.map((c) => c.name)).toEqual([
        'id',
        'collection',
        'key',
        'updated_at',
        'value',
      ]);
      const indexes = db.pragma('index_list(records)') as Array<{ name: string; unique: number }>;
      expect(indexes).toEqual([expect.objectContaining({ name: 'records_by_key', unique: 1 })]);
      const version = db.prepare('SELECT MAX(version) AS v FROM schema_version').get() as {
        v: number;
      };
      expect(version.v).toBeGreaterThanOrEqual(4);
    } finally {
      db.close();
    }
  });
});
