import { describe, expect, it } from 'vitest';
import type { JobStatus } from '../../src/kernel/records.js';
import { job, uid, type ContractContext } from './fixtures.js';

export function jobsContract({ store }: ContractContext): void {
  describe('jobs', () => {
    it('put then get returns the job; put again replaces it', async () => {
      const j = job({ warnings: [{ at: 1, where: { page: 3 }, message: 'blurry' }] });
      await store().transaction((tx) => tx.jobs.put(j));
      expect(await store().read((tx) => tx.jobs.get(j.id))).toEqual(j);
      const done = { ...j, status: 'completed' as const, updatedAt: j.updatedAt + 1 };
      await store().transaction((tx) => tx.jobs.put(done));
      expect(await store().read((tx) => tx.jobs.get(j.id))).toEqual(done);
      expect(await store().read((tx) => tx.jobs.get(uid('job')))).toBeNull();
    });

    it('updateUnfinished replaces a queued or running job, and changes nothing once it finished', async () => {
      const running = job({ status: 'running' });
      await store().transaction((tx) => tx.jobs.put(running));
      const progressed = { ...running, error: null, updatedAt: running.updatedAt + 1 };
      expect(await store().transaction((tx) => tx.jobs.updateUnfinished(progressed))).toBe(true);
      const failed = { ...running, status: 'failed' as const, error: 'interrupted' };
      expect(await store().transaction((tx) => tx.jobs.updateUnfinished(failed))).toBe(true);
      const late = { ...running, status: 'completed' as const };
      expect(await store().transaction((tx) => tx.jobs.updateUnfinished(late))).toBe(false);
      expect(await store().read((tx) => tx.jobs.get(running.id))).toEqual(failed);
    });

    it('updateUnfinished with savedAt saves only over that save (a run taken over stops saving)', async () => {
      const running = job({ status: 'running', updatedAt: 1_000 });
      await store().transaction((tx) => tx.jobs.put(running));
      const next = { ...running, updatedAt: 2_000 };
      expect(await store().transaction((tx) => tx.jobs.updateUnfinished(next, 1_000))).toBe(true);
      const stale = { ...running, updatedAt: 3_000 };
      expect(await store().transaction((tx) => tx.jobs.updateUnfinished(stale, 1_000))).toBe(false);
      expect(await store().read((tx) => tx.jobs.get(running.id))).toEqual(next);
    });

    it('takeOver replaces a stale unfinished job once: not a fresh one, not one taken or finished since', async () => {
      const stale = job({ status: 'running', updatedAt: 1_000 });
      await store().transaction((tx) => tx.jobs.put(stale));
      const mine = { ...stale, updatedAt: 5_000 };
      // Its heartbeat is not older than the threshold: not taken.
      expect(await store().transaction((tx) => tx.jobs.takeOver(mine, 1_000))).toBe(false);
      expect(await store().transaction((tx) => tx.jobs.takeOver(mine, 2_000))).toBe(true);
      // A second instance with the same threshold finds it fresh again.
      const theirs = { ...stale, updatedAt: 5_001 };
      expect(await store().transaction((tx) => tx.jobs.takeOver(theirs, 2_000))).toBe(false);
      expect(await store().read((tx) => tx.jobs.get(stale.id))).toEqual(mine);
      const done = { ...mine, status: 'completed' as const };
      await store().transaction((tx) => tx.jobs.put(done));
      expect(await store().transaction((tx) => tx.jobs.takeOver(theirs, 10_000))).toBe(false);
    });

    it('list returns newest first, filtered by door and status, up to the limit', async () => {
      const door = uid('door');
      const a = job({ door, createdAt: 10, status: 'running' });
      const b = job({ door, createdAt: 20, status: 'completed' });
      const c = job({ door, createdAt: 30, status: 'queued' });
      const elsewhere = job({ door: uid('door'), createdAt: 40 });
      await store().transaction(async (tx) => {
        for (const j of [a, b, c, elsewhere]) await tx.jobs.put(j);
      });
      const list = (query: { door?: string; status?: JobStatus[]; limit?: number }) =>
        store().read(async (tx) => (await tx.jobs.list(query)).map((j) => j.id));
      expect(await list({ door })).toEqual([c.id, b.id, a.id]);
      expect(await list({ door, status: ['queued', 'running'] })).toEqual([c.id, a.id]);
      expect(await list({ door, limit: 1 })).toEqual([c.id]);
      expect(await list({ door, status: [] })).toEqual([]);
      expect(await list({})).toEqual(expect.arrayContaining([elsewhere.id, a.id]));
    });

    it('a job keeps the agent that started it; list with agent finds only that agent’s jobs', async () => {
      const door = uid('door');
      const alices = job({ door, agent: 'alice', createdAt: 10 });
      const bobs = job({ door, agent: 'bob', createdAt: 20 });
      const owners = job({ door, agent: null, createdAt: 30 });
      await store().transaction(async (tx) => {
        for (const j of [alices, bobs, owners]) await tx.jobs.put(j);
      });
      expect(await store().read((tx) => tx.jobs.get(alices.id))).toEqual(alices);
      const ids = (query: { agent?: string; limit?: number }) =>
        store().read(async (tx) => (await tx.jobs.list({ door, ...query })).map((j) => j.id));
      expect(await ids({ agent: 'alice' })).toEqual([alices.id]);
      // The limit counts the agent's own jobs, not everyone's.
      expect(await ids({ agent: 'alice', limit: 1 })).toEqual([alices.id]);
      expect(await ids({ agent: 'carol' })).toEqual([]);
      expect(await ids({})).toEqual([owners.id, bobs.id, alices.id]);
    });

    it('interruptUnfinished fails queued and running jobs with error "interrupted" and leaves finished ones', async () => {
      const door = uid('door');
      const queued = job({ door, status: 'queued', createdAt: 1 });
      const running = job({ door, status: 'running', createdAt: 2 });
      const finished = job({ door, status: 'completed', createdAt: 3 });
      const cancelled = job({ door, status: 'cancelled', createdAt: 4 });
      await store().transaction(async (tx) => {
        for (const j of [queued, running, finished, cancelled]) await tx.jobs.put(j);
      });
      const changed = await store().transaction((tx) => tx.jobs.interruptUnfinished(777));
      const interrupted = { status: 'failed', error: 'interrupted', updatedAt: 777 } as const;
      expect(changed.filter((j) => j.door === door)).toEqual([
        { ...queued, ...interrupted },
        { ...running, ...interrupted },
      ]);
      const after = await store().read((tx) => tx.jobs.list({ door }));
      expect(after).toEqual([
        cancelled,
        finished,
        { ...running, ...interrupted },
        { ...queued, ...interrupted },
      ]);
    });
  });
}
