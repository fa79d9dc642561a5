import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { createPostgresBlobStore, type PostgresBlobStore } from '../../src/store/blobs-postgres.js';
import { createPostgresStore } from '../../src/store/postgres/index.js';
import { describeLocation } from '../../src/store/postgres/schema.js';
import { blobContract } from './blob-contract.js';
import { storeContract } from './contract.js';
import { describeWithPostgres, dropSchema, PG_URL, uniqueSchema } from '../services/postgres.js';

describe('PostgreSQL location', () => {
  it('never shows the password', () => {
    const location = describeLocation('postgres://airlock:s3cret@db.example:5432/app', 'tenant_a');
    expect(location).toBe('postgres://airlock@db.example:5432/app (schema tenant_a)');
  });
});

await describeWithPostgres('PostgreSQL', () => {
  const storeSchema = uniqueSchema('store');
  storeContract(
    'postgres',
    () => createPostgresStore({ url: PG_URL, schema: storeSchema }),
    () => dropSchema(storeSchema),
  );

  const blobSchema = uniqueSchema('blobs');
  const pool = new pg.Pool({ connectionString: PG_URL, max: 2 });
  let blobs: PostgresBlobStore | undefined;
  blobContract('postgres', async () => (blobs = createPostgresBlobStore(pool, blobSchema)), {
    async countStored() {
      const result = await pool.query<{ n: string }>(
        `SELECT count(*) AS n FROM "${blobSchema}".blobs`,
      );
      return Number(result.rows[0]?.n);
    },
    async cleanup() {
      await blobs?.close();
      await pool.end();
      await dropSchema(blobSchema);
    },
  });

  describe('createPostgresStore', () => {
    const schema = uniqueSchema('open');
    afterAll(() => dropSchema(schema));

    it('creates a missing schema and migrates it again without harm', async () => {
      const first = await createPostgresStore({ url: PG_URL, schema });
      await first.close();
      const second = await createPostgresStore({ url: PG_URL, schema });
      expect(second.kind).toBe('postgres');
      expect(second.location).toContain(`schema ${schema}`);
      await second.close();
    });

    it('rejects a schema name that is not a plain lower-case identifier', async () => {
      await expect(createPostgresStore({ url: PG_URL, schema: 'Bad; drop' })).rejects.toThrow(
        /schema "Bad; drop" is not allowed/,
      );
    });
  });
});
