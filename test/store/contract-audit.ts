import { describe, expect, it } from 'vitest';
import { ANCHOR_KEY, CHAIN_COLLECTION, walkChain } from '../../src/kernel/audit/audit-chain.js';
import type { AuditEntry } from '../../src/kernel/records.js';
import { auditEntry, uid, type ContractContext } from './fixtures.js';

/** An entry without the store's numbering and chain links: what was appended. */
const content = ({ id: _id, prevHash: _p, hash: _h, ...entry }: AuditEntry) => entry;

export function auditContract({ store }: ContractContext): void {
  describe('audit', () => {
    it('append returns the entry with an id, increasing with every append', async () => {
      const door = uid('door');
      const first = await store().transaction((tx) => tx.audit.append(auditEntry({ door })));
      const second = await store().transaction((tx) =>
        tx.audit.append(
          auditEntry({
            door,
            result: 'notFound',
            provenance: { provider: 'p', model: 'm', promptVersion: '2' },
          }),
        ),
      );
      expect(content(first)).toEqual(auditEntry({ door, at: first.at }));
      expect(Number.isInteger(first.id)).toBe(true);
      expect(second.id).toBeGreaterThan(first.id);
    });

    it('appendMany appends a batch in order, ids increasing along it, as one append each would', async () => {
      const door = uid('door');
      // More than one INSERT's worth (audit-repo.ts CHUNK), each entry told apart by its tool.
      const batch = Array.from({ length: 120 }, (_, i) => auditEntry({ door, tool: `t${i}` }));
      const appended = await store().transaction((tx) => tx.audit.appendMany(batch));
      expect(appended.map(content)).toEqual(batch);
      const ids = appended.map((e) => e.id);
      expect(ids).toEqual([...ids].sort((a, b) => a - b));
      expect(new Set(ids).size).toBe(120);
      expect(await store().read((tx) => tx.audit.list({ door }))).toEqual(appended);
      expect(await store().transaction((tx) => tx.audit.appendMany([]))).toEqual([]);
    });

    it('lists entries recorded before a time, and deletes through an id', async () => {
      const door = uid('door');
      const [old, mid, recent] = await store().transaction(async (tx) => [
        await tx.audit.append(auditEntry({ door, at: 1_000 })),
        await tx.audit.append(auditEntry({ door, at: 2_000 })),
        await tx.audit.append(auditEntry({ door, at: Date.now() })),
      ]);
      const before = await store().read((tx) => tx.audit.list({ door, before: 3_000 }));
      expect(before.map((e) => e.id)).toEqual([old!.id, mid!.id]);
      const deleted = await store().transaction((tx) => tx.audit.deleteThrough(mid!.id));
      expect(deleted).toBeGreaterThanOrEqual(2);
      const left = await store().read((tx) => tx.audit.list({ door }));
      expect(left.map((e) => e.id)).toEqual([recent!.id]);
    });

    it('list returns entries after afterId, oldest first', async () => {
      const door = uid('door');
      const appended = await store().transaction(async (tx) => [
        await tx.audit.append(auditEntry({ door, tool: 't1' })),
        await tx.audit.append(auditEntry({ door, tool: 't2' })),
        await tx.audit.append(auditEntry({ door, tool: 't3' })),
      ]);
      const after = await store().read((tx) => tx.audit.list({ afterId: appended[0]!.id }));
      expect(after.filter((e) => e.door === door)).toEqual(appended.slice(1));
      const all = await store().read((tx) => tx.audit.list());
      const ids = all.map((e) => e.id);
      expect(ids).toEqual([...ids].sort((a, b) => a - b));
    });

    it('list filters by door and honours the limit', async () => {
      const door = uid('door');
      const appended = await store().transaction(async (tx) => {
        await tx.audit.append(auditEntry({ door: uid('door') }));
        const ours = [];
        for (let i = 0; i < 3; i += 1) ours.push(await tx.audit.append(auditEntry({ door })));
        return ours;
      });
      expect(await store().read((tx) => tx.audit.list({ door }))).toEqual(appended);
      expect(await store().read((tx) => tx.audit.list({ door, limit: 2 }))).toEqual(
        appended.slice(0, 2),
      );
    });

    it('every append links the entry to the one before it, so the chain walks intact', async () => {
      const door = uid('door');
      const single = await store().transaction((tx) =>
        tx.audit.append(
          auditEntry({ door, provenance: { provider: 'p', model: 'm', promptVersion: '1' } }),
        ),
      );
      const mixed = await store().transaction(async (tx) => [
        await tx.audit.append(auditEntry({ door, tool: 'a', decision: 'ask', rule: 'r1' })),
        ...(await tx.audit.appendMany(
          Array.from({ length: 60 }, (_, i) => auditEntry({ door, tool: `b${i}` })),
        )),
        await tx.audit.append(auditEntry({ door, tool: 'c', durationMs: 0.1 + 0.2 })),
      ]);
      const listed = await store().read((tx) => tx.audit.list({ afterId: single.id - 1 }));
      expect(listed.slice(0, 1 + mixed.length)).toEqual([single, ...mixed]);
      const walk = walkChain(single.prevHash!);
      walk.next(listed);
      expect(walk.result()).toMatchObject({ ok: true, count: listed.length });
    });

    it('the first entry after every entry was pruned follows the anchor retention left', async () => {
      const last = await store().transaction((tx) => tx.audit.append(auditEntry()));
      await store().transaction(async (tx) => {
        await tx.audit.deleteThrough(last.id);
        await tx.records.put(CHAIN_COLLECTION, ANCHOR_KEY, { id: last.id, hash: last.hash, at: 1 });
      });
      const next = await store().transaction((tx) => tx.audit.append(auditEntry()));
      expect(next.prevHash).toBe(last.hash);
      expect(next.id).toBeGreaterThan(last.id);
      await store().transaction((tx) => tx.records.delete(CHAIN_COLLECTION, ANCHOR_KEY));
    });
  });
}
