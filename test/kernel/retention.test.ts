/**
 * Bounded growth (issue #16): the retention sweep prunes expired journal
 * entries and old audit entries, archiving the audit first when asked.
 */
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createJournal } from '../../src/kernel/writes/journal.js';
import { createRetention, retentionFromConfig } from '../../src/kernel/audit/retention.js';
import { silentLogger } from '../../src/kernel/logger.js';
import type { Store } from '../../src/kernel/store.js';
import { createSqliteStore } from '../../src/store/sqlite/index.js';
import { configRetention } from '../../src/cli/config/config-file.js';
import { auditEntry, journalEntry } from '../store/fixtures.js';

const HOUR = 3_600_000;
let dir: string;
let store: Store;
let clock: number;
const now = () => clock;

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'airlock-retention-'));
  store = await createSqliteStore({ path: join(dir, 'airlock.db') });
  clock = Date.now();
});

afterEach(async () => {
  await store.close();
  await rm(dir, { recursive: true, force: true });
});

async function seedAudit(ages: number[]): Promise<void> {
  for (const age of ages)
    await store.transaction((tx) => tx.audit.append(auditEntry({ at: clock - age })));
}

const auditCount = async () => (await store.read((tx) => tx.audit.list())).length;

describe('retention', () => {
  it('purges journal entries past their retention and keeps the others', async () => {
    const journal = createJournal({ store, now, retentionMs: HOUR });
    const old = journalEntry({ expiresAt: clock - 1 });
    const fresh = journalEntry({ expiresAt: clock + HOUR });
    await store.transaction(async (tx) => {
      await tx.journal.insert(old);
      await tx.journal.insert(fresh);
    });
    const retention = createRetention({ store, journal, logger: silentLogger, now });
    expect((await retention.sweep()).journal).toBe(1);
    expect(await store.read((tx) => tx.journal.get(old.scope, old.operationId))).toBeNull();
    expect(await store.read((tx) => tx.journal.get(fresh.scope, fresh.operationId))).not.toBeNull();
  });

  it('archives audit entries older than the retention as JSON lines, then deletes only them', async () => {
    await seedAudit([3 * HOUR, 2 * HOUR, 10]);
    const archived: string[] = [];
    const retention = createRetention({
      store,
      journal: createJournal({ store, now }),
      logger: silentLogger,
      now,
      options: { auditMs: HOUR, archiveAudit: async (lines) => void archived.push(lines) },
    });
    expect((await retention.sweep()).audit).toBe(2);
    const lines = archived
      .join('')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { at: number });
    expect(lines.map((e) => clock - e.at)).toEqual([3 * HOUR, 2 * HOUR]);
    expect(await auditCount()).toBe(1);
  });

  it('deletes nothing when the archive fails', async () => {
    await seedAudit([3 * HOUR]);
    const retention = createRetention({
      store,
      journal: createJournal({ store, now }),
      logger: silentLogger,
      now,
      options: {
        auditMs: HOUR,
        archiveAudit: async () => {
          throw new Error('disk full');
        },
      },
    });
    await expect(retention.sweep()).rejects.toThrow(/disk full/);
    expect(await auditCount()).toBe(1);
  });

  it('keeps the audit forever when its retention is null', async () => {
    await seedAudit([1000 * 24 * HOUR]);
    const retention = createRetention({
      store,
      journal: createJournal({ store, now }),
      logger: silentLogger,
      now,
      options: { auditMs: null },
    });
    expect((await retention.sweep()).audit).toBe(0);
    expect(await auditCount()).toBe(1);
  });

  it('reads the config file section in hours and days, with an archive in the data folder', async () => {
    expect(retentionFromConfig({ journalHours: 2, auditDays: 0, sweepMinutes: 5 })).toEqual({
      journalMs: 2 * HOUR,
      auditMs: null,
      sweepEveryMs: 300_000,
    });
    const options = configRetention({ retention: { auditDays: 1, auditArchive: 'a.jsonl' } }, dir)!;
    expect(options.auditMs).toBe(24 * HOUR);
    await options.archiveAudit!('{"id":1}\n');
    expect(await readFile(join(dir, 'a.jsonl'), 'utf8')).toBe('{"id":1}\n');
    expect(() => configRetention({ retention: { auditDays: -1 } }, dir)).toThrow(
      /retention\.auditDays/,
    );
  });
});
