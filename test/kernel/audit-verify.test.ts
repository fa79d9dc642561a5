/**
 * The audit trail's hash chain and its signatures (spec/kernel.md §10,
 * issue 33): a fresh store verifies; one row edited, deleted or reordered
 * directly in SQLite or PostgreSQL is named; the newest entries deleted after
 * a checkpoint are named; pruning moves the anchor and the chain still
 * verifies; a signed export verifies with the public key alone.
 */
import { generateKeyPairSync } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import pg from 'pg';
import { afterAll, afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createAudit } from '../../src/kernel/audit/audit.js';
import {
  exportSigned,
  verifyExport,
  verifyStoredChain,
  writeCheckpoint,
} from '../../src/kernel/audit/audit-seal.js';
import { createAuditSigner } from '../../src/kernel/audit/audit-signing.js';
import { createRetention } from '../../src/kernel/audit/retention.js';
import { silentLogger } from '../../src/kernel/logger.js';
import type { Store } from '../../src/kernel/store.js';
import type { Journal } from '../../src/kernel/writes/journal.js';
import { createSqliteStore } from '../../src/store/sqlite/index.js';
import { migrate } from '../../src/store/sqlite/migrations.js';
import { createPostgresStore } from '../../src/store/postgres/index.js';
import { describeWithPostgres, dropSchema, PG_URL, uniqueSchema } from '../services/postgres.js';

const newSigner = () => createAuditSigner(generateKeyPairSync('ed25519').privateKey);

/** Records `n` calls; returns their ids, oldest first. */
async function record(store: Store, n: number, at = Date.now): Promise<number[]> {
  const audit = createAudit({ store, now: at });
  const ids: number[] = [];
  for (let i = 0; i < n; i += 1) {
    const entry = await audit.record({
      connection: `session:agent${i}`,
      door: 'notes',
      tool: 'notes.write',
      args: { i },
      provenance: null,
      result: i % 2 ? 'ok' : 'denied',
      durationMs: 1.5 + i,
      decision: i % 2 ? 'allow' : 'deny',
      rule: i % 2 ? null : 'r1',
    });
    ids.push(entry.id);
  }
  return ids;
}

interface Backend {
  open(): Promise<Store>;
  /** Runs SQL on the store's database behind Airlock's back. */
  sql(statement: string): Promise<void>;
  cleanup(): Promise<void>;
}

function tamperSuite(name: string, backend: () => Backend): void {
  describe(`audit chain on ${name}`, () => {
    let db: Backend;
    let store: Store;
    let ids: number[];
    beforeEach(async () => {
      db = backend();
      store = await db.open();
      ids = await record(store, 6);
    });
    afterEach(async () => {
      await store.close();
      await db.cleanup();
    });

    it('verifies on a fresh store', async () => {
      expect(await verifyStoredChain(store)).toMatchObject({
        ok: true,
        count: 6,
        firstId: ids[0],
        lastId: ids[5],
      });
    });

    it('an entry edited in the database is named', async () => {
      await db.sql(`UPDATE audit SET result = 'ok' WHERE id = ${ids[2]}`);
      const report = await verifyStoredChain(store);
      expect(report).toMatchObject({ ok: false, brokenId: ids[2] });
      expect(report.reason).toMatch(/was changed after it was written/);
    });

    it('an entry deleted in the database is named by the entry after it', async () => {
      await db.sql(`DELETE FROM audit WHERE id = ${ids[2]}`);
      const report = await verifyStoredChain(store);
      expect(report).toMatchObject({ ok: false, brokenId: ids[3] });
      expect(report.reason).toContain(`does not follow entry ${ids[1]}`);
    });

    it('two entries swapped in the database are named', async () => {
      // Every column but the id swapped (PostgreSQL's identity column cannot be updated).
      const [a, b] = [ids[2], ids[3]];
      const cols =
        'at, connection, door, tool, args_digest, provenance, result, duration_ms, decision, rule, prev_hash, hash';
      await db.sql(
        `CREATE TEMP TABLE swap AS SELECT * FROM audit WHERE id IN (${a}, ${b}); UPDATE audit SET (${cols}) = (SELECT ${cols} FROM swap WHERE swap.id = CASE audit.id WHEN ${a} THEN ${b} ELSE ${a} END) WHERE id IN (${a}, ${b})`,
      );
      expect(await verifyStoredChain(store)).toMatchObject({ ok: false, brokenId: ids[2] });
    });

    it('an entry whose hashes were recomputed after an edit breaks the link to the next', async () => {
      // Whoever edits a row and rehashes it still breaks the next entry's link.
      await db.sql(`UPDATE audit SET hash = repeat('a', 64) WHERE id = ${ids[2]}`);
      expect(await verifyStoredChain(store)).toMatchObject({ ok: false, brokenId: ids[2] });
    });

    it('the newest entry deleted after a checkpoint is named by the checkpoint', async () => {
      const signer = newSigner();
      await writeCheckpoint(store, signer);
      await db.sql(`DELETE FROM audit WHERE id = ${ids[5]}`);
      const report = await verifyStoredChain(store);
      expect(report).toMatchObject({ ok: false, brokenId: ids[5] });
      expect(report.reason).toMatch(/is missing: entries were deleted/);
    });

    it('verifies from an id, and names a break after it', async () => {
      expect(await verifyStoredChain(store, { fromId: ids[3]! })).toMatchObject({
        ok: true,
        count: 3,
      });
      await db.sql(`UPDATE audit SET tool = 'x' WHERE id = ${ids[4]}`);
      expect(await verifyStoredChain(store, { fromId: ids[3]! })).toMatchObject({
        ok: false,
        brokenId: ids[4],
      });
    });

    it('retention moves the anchor forward: the pruned chain still verifies, the checkpoint signature is valid', async () => {
      const signer = newSigner();
      const later = Date.now() + 60_000;
      const fresh = await record(store, 2, () => later + 10_000);
      const retention = createRetention({
        store,
        journal: { purgeExpired: async () => 0 } as unknown as Journal,
        options: { auditMs: 30_000, auditSigner: signer },
        logger: silentLogger,
        now: () => later,
      });
      expect(await retention.sweep()).toMatchObject({ audit: 6 });
      const keys = [(await import('node:crypto')).createPublicKey(signer.publicKeyPem)];
      expect(await verifyStoredChain(store, { keys })).toMatchObject({
        ok: true,
        count: 2,
        firstId: fresh[0],
        anchor: { id: ids[5], signature: 'valid' },
        checkpoint: { headId: fresh[1], signature: 'valid' },
      });
      // New appends follow the kept head.
      await record(store, 1);
      expect(await verifyStoredChain(store, { keys })).toMatchObject({ ok: true, count: 3 });
      // The oldest kept entry deleted as if it had been pruned: it no longer follows the anchor.
      await db.sql(`DELETE FROM audit WHERE id = ${fresh[0]}`);
      expect(await verifyStoredChain(store, { keys })).toMatchObject({
        ok: false,
        brokenId: fresh[1],
      });
    });

    it('a signed export verifies with the public key alone, and not after one byte changed', async () => {
      const signer = newSigner();
      const text = await exportSigned(store, signer);
      const key = (await import('node:crypto')).createPublicKey(signer.publicKeyPem);
      expect(verifyExport(text, key)).toMatchObject({ ok: true, count: 6, headId: ids[5] });
      expect(verifyExport(text, newSignerKey())).toMatchObject({ ok: false });
      // One byte changed anywhere: in an entry, in its hash, in the seal.
      for (const at of [
        text.indexOf('denied') + 1,
        text.indexOf('"hash":"') + 9,
        text.lastIndexOf('"signature":"') + 20,
        text.lastIndexOf('"count":') + 8,
      ]) {
        const changed = text.slice(0, at) + (text[at] === '1' ? '2' : '1') + text.slice(at + 1);
        expect(verifyExport(changed, key).ok, `byte ${at}`).toBe(false);
      }
    });
  });
}

function newSignerKey() {
  return generateKeyPairSync('ed25519').publicKey;
}

const dirs: string[] = [];
afterAll(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));

describe('entries an older Airlock wrote', () => {
  it('precede the chain: verify and signed exports cover the entries after them', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'airlock-audit-legacy-'));
    dirs.push(dir);
    // The newest schema version, then a database as the Airlock before the chain left it.
    const fresh = join(dir, 'fresh.db');
    await (await createSqliteStore({ path: fresh })).close();
    const probe = new Database(fresh);
    const { v } = probe.prepare('SELECT MAX(version) AS v FROM schema_version').get() as {
      v: number;
    };
    probe.close();
    const path = join(dir, 'old.db');
    const old = new Database(path);
    old.pragma('journal_mode = WAL');
    migrate(old, v - 1);
    const insert = old.prepare(
      "INSERT INTO audit (at, connection, door, tool, args_digest, result, duration_ms) VALUES (1, 'owner', 'airlock', 'agents.add', ?, 'ok', 0)",
    );
    insert.run('e'.repeat(64));
    insert.run('f'.repeat(64));
    old.close();

    const store = await createSqliteStore({ path });
    try {
      const ids = await record(store, 3);
      expect(await verifyStoredChain(store)).toMatchObject({
        ok: true,
        unchained: 2,
        count: 3,
        firstId: ids[0],
      });
      const signer = newSigner();
      const text = await exportSigned(store, signer);
      const key = (await import('node:crypto')).createPublicKey(signer.publicKeyPem);
      expect(verifyExport(text, key)).toMatchObject({ ok: true, count: 3 });
    } finally {
      await store.close();
    }
  });
});

tamperSuite('SQLite', () => {
  const dir = mkdtempSync(join(tmpdir(), 'airlock-audit-'));
  dirs.push(dir);
  const path = join(dir, 'airlock.db');
  return {
    open: () => createSqliteStore({ path }),
    async sql(statement) {
      const db = new Database(path);
      try {
        db.exec(statement.replace(/repeat\('a', 64\)/, `'${'a'.repeat(64)}'`));
      } finally {
        db.close();
      }
    },
    async cleanup() {},
  };
});

await describeWithPostgres('PostgreSQL', () => {
  const pool = new pg.Pool({ connectionString: PG_URL, max: 2 });
  afterAll(() => pool.end());
  tamperSuite('PostgreSQL', () => {
    const schema = uniqueSchema('audit');
    return {
      open: () => createPostgresStore({ url: PG_URL, schema }),
      async sql(statement) {
        await pool.query(`SET search_path TO "${schema}"; ${statement}`);
      },
      cleanup: () => dropSchema(schema),
    };
  });
});
