import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { journalEntry, uid, type ContractContext } from './fixtures.js';

export function journalContract({ store }: ContractContext): void {
  describe('journal', () => {
    it('insert returns null for a new entry and get returns it', async () => {
      const entry = journalEntry({ target: 'doc-1', receipt: { ok: true } });
      const result = await store().transaction((tx) => tx.journal.insert(entry));
      expect(result).toBeNull();
      const stored = await store().read((tx) => tx.journal.get(entry.scope, entry.operationId));
      expect(stored).toEqual(entry);
    });

    it('insert of a taken (scope, operationId) returns the existing entry and changes nothing', async () => {
      const entry = journalEntry();
      await store().transaction((tx) => tx.journal.insert(entry));
      const again = { ...entry, digest: 'c'.repeat(64), tool: 'other' };
      const result = await store().transaction((tx) => tx.journal.insert(again));
      expect(result).toEqual(entry);
      const stored = await store().read((tx) => tx.journal.get(entry.scope, entry.operationId));
      expect(stored).toEqual(entry);
    });

    it('the same operationId in another scope is a separate entry', async () => {
      const entry = journalEntry();
      const other = { ...entry, scope: uid('scope') };
      await store().transaction((tx) => tx.journal.insert(entry));
      expect(await store().transaction((tx) => tx.journal.insert(other))).toBeNull();
    });

    it('get of an unknown entry returns null', async () => {
      const result = await store().read((tx) => tx.journal.get(uid('scope'), 'op'));
      expect(result).toBeNull();
    });

    it('update sets state, receipt and updatedAt; false when there is no entry', async () => {
      const entry = journalEntry();
      await store().transaction((tx) => tx.journal.insert(entry));
      const patch = {
        state: 'committed' as const,
        receipt: { id: 'r1' },
        updatedAt: entry.updatedAt + 5,
      };
      const updated = await store().transaction((tx) =>
        tx.journal.update(entry.scope, entry.operationId, patch),
      );
      const missing = await store().transaction((tx) =>
        tx.journal.update(entry.scope, 'no-such-op', patch),
      );
      expect([updated, missing]).toEqual([true, false]);
      const stored = await store().read((tx) => tx.journal.get(entry.scope, entry.operationId));
      expect(stored).toEqual({ ...entry, ...patch });
    });

    it('update without a receipt keeps the receipt', async () => {
      const entry = journalEntry({ receipt: { id: 'kept' } });
      await store().transaction((tx) => tx.journal.insert(entry));
      await store().transaction((tx) =>
        tx.journal.update(entry.scope, entry.operationId, { state: 'uncertain', updatedAt: 9 }),
      );
      const stored = await store().read((tx) => tx.journal.get(entry.scope, entry.operationId));
      expect(stored).toMatchObject({ state: 'uncertain', receipt: { id: 'kept' }, updatedAt: 9 });
    });

    it('delete removes an entry and reports whether one existed', async () => {
      const entry = journalEntry();
      await store().transaction((tx) => tx.journal.insert(entry));
      const del = (): Promise<boolean> =>
        store().transaction((tx) => tx.journal.delete(entry.scope, entry.operationId));
      expect([await del(), await del()]).toEqual([true, false]);
    });

    it('listByState returns the entries in that state oldest first, up to the limit', async () => {
      // The oldest createdAt values in this database: this test owns the head of the list.
      const scope = uid('scope');
      const entries = [3, 1, 2].map((createdAt) =>
        journalEntry({ scope, state: 'uncertain', createdAt, operationId: `op-${createdAt}` }),
      );
      const prepared = journalEntry({ scope, state: 'prepared', createdAt: 0 });
      await store().transaction(async (tx) => {
        for (const entry of [...entries, prepared]) await tx.journal.insert(entry);
      });
      const all = await store().read((tx) => tx.journal.listByState('uncertain'));
      const ours = all.filter((e) => e.scope === scope).map((e) => e.operationId);
      expect(ours).toEqual(['op-1', 'op-2', 'op-3']);
      const firstTwo = await store().read((tx) => tx.journal.listByState('uncertain', 2));
      expect(firstTwo.map((e) => e.operationId)).toEqual(['op-1', 'op-2']);
    });

    it('purgeExpired deletes entries that expired before now and counts them', async () => {
      const scope = uid('scope');
      const old = journalEntry({ scope, expiresAt: 5 });
      const edge = journalEntry({ scope, expiresAt: 10 });
      const fresh = journalEntry({ scope });
      await store().transaction(async (tx) => {
        for (const entry of [old, edge, fresh]) await tx.journal.insert(entry);
      });
      const purged = await store().transaction((tx) => tx.journal.purgeExpired(10));
      expect(purged).toBe(1);
      const left = await store().read(async (tx) =>
        Promise.all([old, edge, fresh].map((e) => tx.journal.get(scope, e.operationId))),
      );
      expect(left.map((e) => e?.operationId ?? null)).toEqual([
        null,
        edge.operationId,
        fresh.operationId,
      ]);
    });

    it('concurrent inserts of one operationId insert it exactly once', async () => {
      const base = journalEntry();
      const attempt = (digest: string) =>
        store().transaction(async (tx) => {
          // Both transactions look first, so both believe the id is free.
          await tx.journal.get(base.scope, base.operationId);
          await sleep(20);
          return tx.journal.insert({ ...base, digest });
        });
      const results = await Promise.all([attempt('1'.repeat(64)), attempt('2'.repeat(64))]);
      expect(results.filter((r) => r === null)).toHaveLength(1);
      const stored = await store().read((tx) => tx.journal.get(base.scope, base.operationId));
      expect(results.find((r) => r !== null)).toEqual(stored);
    });
  });
}
