import { describe, expect, it } from 'vitest';
import { approval, grant, uid, type ContractContext } from './fixtures.js';

export function accessContract({ store }: ContractContext): void {
  describe('grants', () => {
    it('insert then get returns the grant; an unknown id returns null', async () => {
      const g = grant({ resource: { id: 'p1', name: 'Project 1' } });
      await store().transaction((tx) => tx.grants.insert(g));
      const [found, missing] = await store().read((tx) =>
        Promise.all([tx.grants.get(g.id), tx.grants.get(uid('grant'))]),
      );
      expect(found).toEqual(g);
      expect(missing).toBeNull();
    });

    it('listActive returns unexpired, unrevoked grants of a connection, newest first', async () => {
      const connection = uid('conn');
      const now = 1_000_000;
      const older = grant({ connection, createdAt: now - 20, expiresAt: now + 1 });
      const newer = grant({ connection, createdAt: now - 10, expiresAt: now + 100 });
      const expired = grant({ connection, createdAt: now - 5, expiresAt: now });
      const revoked = grant({
        connection,
        createdAt: now - 5,
        revokedAt: now - 1,
        expiresAt: now + 100,
      });
      const otherConnection = grant({
        connection: uid('conn'),
        createdAt: now - 5,
        expiresAt: now + 100,
      });
      await store().transaction(async (tx) => {
        for (const g of [older, newer, expired, revoked, otherConnection])
          await tx.grants.insert(g);
      });
      const active = await store().read((tx) => tx.grants.listActive(now, connection));
      expect(active).toEqual([newer, older]);
    });

    it('listActive without a connection includes every connection', async () => {
      const a = grant({ connection: uid('conn') });
      const b = grant({ connection: uid('conn') });
      await store().transaction(async (tx) => {
        await tx.grants.insert(a);
        await tx.grants.insert(b);
      });
      const ids = (await store().read((tx) => tx.grants.listActive(Date.now()))).map((g) => g.id);
      expect(ids).toEqual(expect.arrayContaining([a.id, b.id]));
    });

    it('revoke sets revokedAt once; again, or for an unknown id, it returns false', async () => {
      const g = grant();
      await store().transaction((tx) => tx.grants.insert(g));
      const first = await store().transaction((tx) => tx.grants.revoke(g.id, 111));
      const second = await store().transaction((tx) => tx.grants.revoke(g.id, 222));
      const unknown = await store().transaction((tx) => tx.grants.revoke(uid('grant'), 333));
      expect([first, second, unknown]).toEqual([true, false, false]);
      expect(await store().read((tx) => tx.grants.get(g.id))).toEqual({ ...g, revokedAt: 111 });
    });
  });

  describe('approvals', () => {
    it('insert then get returns the approval; an unknown id returns null', async () => {
      const a = approval();
      await store().transaction((tx) => tx.approvals.insert(a));
      expect(await store().read((tx) => tx.approvals.get(a.id))).toEqual(a);
      expect(await store().read((tx) => tx.approvals.get(uid('approval')))).toBeNull();
    });

    it('listPending returns only pending approvals, oldest first', async () => {
      const connection = uid('conn');
      const second = approval({ connection, createdAt: 20 });
      const first = approval({ connection, createdAt: 10 });
      const decided = approval({ connection, status: 'denied', decidedAt: 30 });
      await store().transaction(async (tx) => {
        for (const a of [second, first, decided]) await tx.approvals.insert(a);
      });
      const pending = await store().read((tx) => tx.approvals.listPending());
      expect(pending.filter((a) => a.connection === connection)).toEqual([first, second]);
    });

    it('latest returns the newest approval for connection, door and capability in any status', async () => {
      const connection = uid('conn');
      const old = approval({ connection, createdAt: 10 });
      const newest = approval({ connection, createdAt: 30, status: 'denied', decidedAt: 31 });
      const otherCapability = approval({ connection, createdAt: 40, capability: 'read' });
      await store().transaction(async (tx) => {
        for (const a of [old, newest, otherCapability]) await tx.approvals.insert(a);
      });
      const latest = await store().read((tx) => tx.approvals.latest(connection, 'notes', 'write'));
      expect(latest).toEqual(newest);
      expect(
        await store().read((tx) => tx.approvals.latest(connection, 'scene', 'write')),
      ).toBeNull();
    });

    it('decide updates a pending approval once; a second decision returns null', async () => {
      const a = approval();
      await store().transaction((tx) => tx.approvals.insert(a));
      const decision = {
        status: 'approved' as const,
        decidedAt: 500,
        resource: { id: 'p1', name: 'Project' },
        grantId: 'grant-1',
      };
      const decided = await store().transaction((tx) => tx.approvals.decide(a.id, decision));
      expect(decided).toEqual({ ...a, ...decision });
      const again = await store().transaction((tx) =>
        tx.approvals.decide(a.id, {
          status: 'denied',
          decidedAt: 600,
          resource: null,
          grantId: null,
        }),
      );
      expect(again).toBeNull();
      expect(await store().read((tx) => tx.approvals.get(a.id))).toEqual({ ...a, ...decision });
    });

    it('orphan marks a pending approval once; it stays pending, and a decided one is not marked', async () => {
      const a = approval();
      await store().transaction((tx) => tx.approvals.insert(a));
      const orphaned = await store().transaction((tx) => tx.approvals.orphan(a.id, 700));
      expect(orphaned).toEqual({ ...a, orphanedAt: 700 });
      expect(await store().transaction((tx) => tx.approvals.orphan(a.id, 800))).toBeNull();
      expect(await store().read((tx) => tx.approvals.get(a.id))).toEqual({ ...a, orphanedAt: 700 });
      const b = approval();
      await store().transaction((tx) => tx.approvals.insert(b));
      await store().transaction((tx) =>
        tx.approvals.decide(b.id, {
          status: 'denied',
          decidedAt: 1,
          resource: null,
          grantId: null,
        }),
      );
      expect(await store().transaction((tx) => tx.approvals.orphan(b.id, 900))).toBeNull();
    });

    it('decide of an unknown approval returns null', async () => {
      const result = await store().transaction((tx) =>
        tx.approvals.decide(uid('approval'), {
          status: 'denied',
          decidedAt: 1,
          resource: null,
          grantId: null,
        }),
      );
      expect(result).toBeNull();
    });
  });
}
