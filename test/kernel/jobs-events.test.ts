import { afterEach, describe, expect, it } from 'vitest';
import { createLedgerDoor } from '../../src/doors/testing/ledger.js';
import { createEventBus } from '../../src/kernel/events.js';
import { conn, testKernel, textOf, type TestKernel } from '../helpers/kernel.js';

let tk: TestKernel | undefined;
afterEach(async () => {
  await tk?.dispose();
  tk = undefined;
});

describe('jobs', () => {
  it('start answers a job id at once and the job reports progress to completion', async () => {
    tk = await testKernel([createLedgerDoor()]);
    const seen: Record<string, unknown>[] = [];
    tk.events.subscribe((e) => seen.push(e.data as Record<string, unknown>));
    const { jobId } = textOf(
      await tk.kernel.call('ledger', 'ledger_count', { to: 5 }, { connection: conn() }),
    ) as { jobId: string };
    expect((await tk.kernel.jobs.get(jobId))?.status).toMatch(/queued|running/);
    await tk.kernel.jobs.settled(jobId);
    const job = await tk.kernel.jobs.get(jobId);
    expect(job).toMatchObject({
      status: 'completed',
      progress: { currentUnit: 5, totalUnits: 5, overallPercent: 100 },
    });
    const names = seen.map((e) => e.event).filter((e) => String(e).startsWith('job'));
    expect(names[0]).toBe('jobStarted');
    expect(names.at(-1)).toBe('jobFinished');
    expect(seen.filter((e) => e.event === 'jobProgress')).toHaveLength(5);
    expect(seen.find((e) => e.event === 'jobFinished')).toEqual({
      event: 'jobFinished',
      id: jobId,
      status: 'completed',
    });
  });

  it('cancellation reaches the run through its AbortSignal and ends cancelled', async () => {
    tk = await testKernel([createLedgerDoor()]);
    const { jobId } = textOf(
      await tk.kernel.call('ledger', 'ledger_count', { to: 1000 }, { connection: conn() }),
    ) as { jobId: string };
    await new Promise((r) => setTimeout(r, 50));
    expect(await tk.kernel.jobs.cancel(jobId)).toBe(true);
    await tk.kernel.jobs.settled(jobId);
    const job = await tk.kernel.jobs.get(jobId);
    expect(job?.status).toBe('cancelled');
    expect(job!.progress.currentUnit).toBeLessThan(1000);
  });

  it('a job left running by a previous process is failed with reason interrupted after a restart', async () => {
    tk = await testKernel([createLedgerDoor()]);
    const { jobId } = textOf(
      await tk.kernel.call('ledger', 'ledger_count', { to: 1000 }, { connection: conn() }),
    ) as { jobId: string };
    await new Promise((r) => setTimeout(r, 50));
    // Simulate a crash: the store still says running; the process is gone.
    await tk.kernel.store.transaction(async (tx) => {
      const job = await tx.jobs.get(jobId);
      await tx.jobs.put({ ...job!, status: 'running' });
    });
    const dir = tk.dir;
    await tk.kernel.jobs.cancel(jobId);
    await tk.kernel.jobs.settled(jobId);
    await tk.kernel.store.transaction(async (tx) => {
      const job = await tx.jobs.get(jobId);
      await tx.jobs.put({ ...job!, status: 'running', error: null });
    });
    await tk.close();
    tk = await testKernel([createLedgerDoor()], { dir });
    expect(await tk.kernel.jobs.get(jobId)).toMatchObject({
      status: 'failed',
      error: 'interrupted',
    });
  });
});

describe('event bus', () => {
  it('numbers events and replays those after a given id', async () => {
    const bus = await createEventBus({ ringSize: 10, firstId: 0 });
    for (let i = 0; i < 5; i++) bus.publish({ event: 'x', i });
    expect(bus.lastId).toBe(5);
    expect(bus.since(3)!.map((e) => e.data.i)).toEqual([3, 4]);
    expect(bus.since(5)).toEqual([]);
  });

  it('says when the ring no longer reaches back to the requested id', async () => {
    const bus = await createEventBus({ ringSize: 3, firstId: 0 });
    for (let i = 0; i < 10; i++) bus.publish({ event: 'x', i });
    expect(bus.since(7)!.map((e) => e.id)).toEqual([8, 9, 10]);
    expect(bus.since(6)).toBeNull();
  });

  it('a Last-Event-ID from another run (ahead of this one) gets a snapshot, not silence', async () => {
    const bus = await createEventBus({ firstId: 0 });
    bus.publish({ event: 'x' });
    expect(bus.since(500)).toBeNull();
  });

  it('numbers events above the previous run after a restart', async () => {
    let clock = 1_000;
    const first = await createEventBus({ now: () => clock });
    for (let i = 0; i < 5; i++) first.publish({ event: 'x' });
    clock += 10;
    const second = await createEventBus({ now: () => clock });
    second.publish({ event: 'y' });
    expect(second.lastId).toBeGreaterThan(first.lastId);
  });

  it('a throwing listener does not stop delivery to the others', async () => {
    const errors: unknown[] = [];
    const bus = await createEventBus({ onError: (e) => errors.push(e), firstId: 0 });
    const got: number[] = [];
    bus.subscribe(() => {
      throw new Error('bad listener');
    });
    bus.subscribe((e) => got.push(e.id));
    bus.publish({ event: 'x' });
    expect(got).toEqual([1]);
    expect(errors).toHaveLength(1);
  });
});
