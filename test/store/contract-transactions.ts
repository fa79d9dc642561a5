import { setImmediate as tick } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { ONE_STATEMENT } from '../../src/kernel/store.js';
import { auditEntry, grant, journalEntry, uid, type ContractContext } from './fixtures.js';

export function transactionsContract({ store, open }: ContractContext): void {
  describe('transactions', () => {
    it('a transaction resolves with its function result', async () => {
      expect(await store().transaction(async () => 42)).toBe(42);
      expect(await store().read(async () => 'read')).toBe('read');
    });

    it('a single-statement read answers its one query and refuses a second', async () => {
      const collection = uid('rec');
      await store().transaction((tx) => tx.records.put(collection, 'k', { v: 1 }));
      const one = await store().read((tx) => tx.records.get(collection, 'k'), ONE_STATEMENT);
      expect(one?.value).toEqual({ v: 1 });
      await expect(
        store().read(async (tx) => {
          await tx.records.get(collection, 'k');
          return tx.records.get(collection, 'k');
        }, ONE_STATEMENT),
      ).rejects.toThrow(/single-statement/);
      // The store still answers afterwards (the connection went back clean).
      expect(await store().read((tx) => tx.records.get(collection, 'k'))).toMatchObject({
        value: { v: 1 },
      });
    });

    it('a rejected transaction leaves nothing behind', async () => {
      const collection = uid('rec');
      const entry = journalEntry();
      const g = grant();
      const door = uid('door');
      const failure = new Error('door failed');
      await expect(
        store().transaction(async (tx) => {
          await tx.records.put(collection, 'k', 1);
          await tx.journal.insert(entry);
          await tx.grants.insert(g);
          await tx.audit.append(auditEntry({ door }));
          throw failure;
        }),
      ).rejects.toBe(failure);
      const left = await store().read((tx) =>
        Promise.all([
          tx.records.get(collection, 'k'),
          tx.journal.get(entry.scope, entry.operationId),
          tx.grants.get(g.id),
          tx.audit.list({ door }),
        ]),
      );
      expect(left).toEqual([null, null, null, []]);
    });

    it('a failed statement rolls the transaction back even when the function caught it', async () => {
      const g = grant();
      const collection = uid('rec');
      await store().transaction((tx) => tx.grants.insert(g));
      await expect(
        store().transaction(async (tx) => {
          await tx.records.put(collection, 'k', 1);
          await tx.grants.insert(g).catch(() => undefined);
          return 'swallowed';
        }),
      ).rejects.toThrow();
      expect(await store().read((tx) => tx.records.get(collection, 'k'))).toBeNull();
    });

    it('a write in an open transaction is invisible to read until commit', async () => {
      const collection = uid('rec');
      let seenInside: unknown = 'not read';
      await store().transaction(async (tx) => {
        await tx.records.put(collection, 'k', 'v');
        seenInside = await store().read((r) => r.records.get(collection, 'k'));
      });
      expect(seenInside).toBeNull();
      const after = await store().read((r) => r.records.get(collection, 'k'));
      expect(after?.value).toBe('v');
    });

    it('concurrent read-modify-write transactions lose no update', async () => {
      const collection = uid('rec');
      const increment = () =>
        store().transaction(async (tx) => {
          const current = await tx.records.get<number>(collection, 'counter');
          await tick(); // let the other writer run in between, if it can
          await tx.records.put(collection, 'counter', (current?.value ?? 0) + 1);
        });
      const worker = async () => {
        for (let i = 0; i < 20; i += 1) await increment();
      };
      await Promise.all([worker(), worker()]);
      const counter = await store().read((tx) => tx.records.get<number>(collection, 'counter'));
      expect(counter?.value).toBe(40);
    });

    it('keyed read-modify-write transactions lose no update, starting from an absent key', async () => {
      const collection = uid('rec');
      const increment = () =>
        store().transaction(
          async (tx) => {
            const current = await tx.records.get<number>(collection, 'counter');
            await tick();
            await tx.records.put(collection, 'counter', (current?.value ?? 0) + 1);
          },
          { isolation: 'keyed' },
        );
      await Promise.all(Array.from({ length: 4 }, () => increment()));
      const worker = async () => {
        for (let i = 0; i < 10; i += 1) await increment();
      };
      await Promise.all([worker(), worker(), worker()]);
      const counter = await store().read((tx) => tx.records.get<number>(collection, 'counter'));
      expect(counter?.value).toBe(34);
    });

    it('read refuses to write', async () => {
      const collection = uid('rec');
      await expect(store().read((tx) => tx.records.put(collection, 'k', 1))).rejects.toThrow();
      expect(await store().read((tx) => tx.records.get(collection, 'k'))).toBeNull();
    });

    it('a tx used after its transaction ended is rejected', async () => {
      const leaked = await store().transaction(async (tx) => tx);
      await expect(leaked.records.put(uid('rec'), 'k', 1)).rejects.toThrow(/ended/);
    });

    it('a transaction started inside another of the same store is rejected', async () => {
      await expect(
        store().transaction(() => store().transaction(async () => 'inner')),
      ).rejects.toThrow(/inside a transaction/);
      // The store still works afterwards.
      expect(await store().transaction(async () => 'ok')).toBe('ok');
    });

    it('a transaction started inside another is rejected after earlier ones ended, and while others are open', async () => {
      // The guard's context is switched off when no transaction is open (nesting-guard.ts).
      await store().transaction(async () => 'first');
      let release!: () => void;
      const held = new Promise<void>((resolve) => (release = resolve));
      const other = store().transaction(() => held);
      // Its expectation is attached at once: the refusal may come before `other` ends.
      const nested = expect(
        store().transaction(() => store().transaction(async () => 'inner')),
      ).rejects.toThrow(/inside a transaction/);
      release();
      await other;
      await nested;
    });

    it('committed data survives closing and reopening the store', async () => {
      const collection = uid('rec');
      const entry = journalEntry();
      const first = await open();
      await first.transaction(async (tx) => {
        await tx.records.put(collection, 'k', { kept: true });
        await tx.journal.insert(entry);
      });
      await first.close();
      const second = await open();
      try {
        const [record, journal] = await second.read((tx) =>
          Promise.all([
            tx.records.get(collection, 'k'),
            tx.journal.get(entry.scope, entry.operationId),
          ]),
        );
        expect(record?.value).toEqual({ kept: true });
        expect(journal).toEqual(entry);
      } finally {
        await second.close();
      }
    });
  });
}
