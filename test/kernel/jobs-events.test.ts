import { afterEach, describe, expect, it } from 'vitest';
import { createLedgerDoor } from '../../src/doors/testing/ledger.js';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createEventBus } from '../../src/kernel/events/events.js';
import { createKernel } from '../../src/kernel/kernel.js';
import { silentLogger } from '../../src/kernel/logger.js';
import { openStore } from '../../src/store/open.js';
import { conn, testKernel, textOf, type TestKernel } from '../helpers/kernel.js';
import { holdsFor, waitFor } from '../helpers/wait.js';

/** Resolves once the job's run has made progress (it is running, not queued). */
const started = (k: TestKernel['kernel'], jobId: string) =>
  waitFor(async () => ((await k.jobs.get(jobId))?.progress.currentUnit ?? 0) > 0, {
    message: `job ${jobId} to make progress`,
  });

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
    await started(tk.kernel, jobId);
    expect(await tk.kernel.jobs.cancel(jobId)).toBe(true);
    await tk.kernel.jobs.settled(jobId);
    const job = await tk.kernel.jobs.get(jobId);
    expect(job?.status).toBe('cancelled');
    expect(job!.progress.currentUnit).toBeLessThan(1000);
  });

  it('a job left running by a previous process is failed with reason interrupted after a restart, once its heartbeat is older than the lease', async () => {
    tk = await testKernel([createLedgerDoor()]);
    const { jobId } = textOf(
      await tk.kernel.call('ledger', 'ledger_count', { to: 1000 }, { connection: conn() }),
    ) as { jobId: string };
    await started(tk.kernel, jobId);
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
    // The restart comes more than a lease (30 s) after the job's last heartbeat.
    tk = await testKernel([createLedgerDoor()], { dir, now: () => Date.now() + 31_000 });
    expect(await tk.kernel.jobs.get(jobId)).toMatchObject({
      status: 'failed',
      error: 'interrupted',
    });
  });
});

describe('jobs across instances on one store', () => {
  const others: TestKernel[] = [];
  afterEach(async () => {
    for (const k of others.splice(0)) await k.close();
  });
  const count = async (k: TestKernel, to: number) =>
    (
      textOf(await k.kernel.call('ledger', 'ledger_count', { to }, { connection: conn() })) as {
        jobId: string;
      }
    ).jobId;

  it("starting another instance leaves a live instance's running job alone", async () => {
    tk = await testKernel([createLedgerDoor()], { jobLeaseMs: 600 });
    const finished: unknown[] = [];
    tk.events.subscribe((e) => e.data.event === 'jobFinished' && finished.push(e.data));
    const jobId = await count(tk, 150);
    await started(tk.kernel, jobId);
    const b = await testKernel([createLedgerDoor()], { dir: tk.dir, jobLeaseMs: 600 });
    others.push(b);
    // Nothing happens, for longer than the lease: B's sweeper runs several
    // times while A's heartbeat keeps the job alive.
    await holdsFor(async () => (await b.kernel.jobs.get(jobId))?.status === 'running', 900, {
      message: 'the job running while its instance heartbeats',
    });
    await tk.kernel.jobs.settled(jobId);
    expect(await b.kernel.jobs.get(jobId)).toMatchObject({ status: 'completed', error: null });
    expect(finished).toEqual([{ event: 'jobFinished', id: jobId, status: 'completed' }]);
  });

  it('a job whose instance stopped heartbeating is failed interrupted by a live instance within the lease', async () => {
    tk = await testKernel([createLedgerDoor()], { jobLeaseMs: 300 });
    const finished: unknown[] = [];
    tk.events.subscribe((e) => e.data.event === 'jobFinished' && finished.push(e.data));
    // A job a dead instance was running: its record says running, last touched 1 s ago.
    const at = Date.now() - 1000;
    await tk.kernel.store.transaction((tx) =>
      tx.jobs.put({
        id: 'dead-job',
        door: 'ledger',
        kind: 'count',
        status: 'running',
        progress: {
          step: 'count',
          currentUnit: 3,
          totalUnits: 10,
          currentStepIndex: 0,
          totalSteps: 1,
          overallPercent: 30,
        },
        warnings: [],
        error: null,
        input: { to: 10 },
        agent: null,
        createdAt: at,
        updatedAt: at,
      }),
    );
    await waitFor(async () => (await tk!.kernel.jobs.get('dead-job'))?.status === 'failed', {
      message: 'the sweeper to fail the dead job',
    });
    expect(await tk.kernel.jobs.get('dead-job')).toMatchObject({
      status: 'failed',
      error: 'interrupted',
    });
    expect(finished).toEqual([
      { event: 'jobFinished', id: 'dead-job', status: 'failed', error: 'interrupted' },
    ]);
  });

  it('a run whose job another instance already failed interrupted stops without flipping it back or a second jobFinished', async () => {
    tk = await testKernel([createLedgerDoor()]);
    const finished: unknown[] = [];
    tk.events.subscribe((e) => e.data.event === 'jobFinished' && finished.push(e.data));
    const jobId = await count(tk, 1000);
    await started(tk.kernel, jobId);
    // What another instance's sweep does when this one stalled past the lease.
    await tk.kernel.store.transaction((tx) =>
      tx.jobs.interruptUnfinished(Date.now(), Date.now() + 1),
    );
    await tk.kernel.jobs.settled(jobId);
    // Nothing happens: no second jobFinished arrives after the run stopped.
    await holdsFor(() => finished.length === 0, 100, { message: 'no jobFinished' });
    expect(await tk.kernel.jobs.get(jobId)).toMatchObject({
      status: 'failed',
      error: 'interrupted',
    });
    expect(finished).toEqual([]);
  });

  it('a job whose instance is gone is cancelled at once from another instance, with one jobFinished', async () => {
    tk = await testKernel([createLedgerDoor()], { jobLeaseMs: 60_000 });
    const finished: unknown[] = [];
    tk.events.subscribe((e) => e.data.event === 'jobFinished' && finished.push(e.data));
    const at = Date.now() - 61_000;
    await tk.kernel.store.transaction((tx) =>
      tx.jobs.put({
        id: 'orphan',
        door: 'ledger',
        kind: 'count',
        status: 'running',
        progress: {
          step: null,
          currentUnit: 0,
          totalUnits: 0,
          currentStepIndex: 0,
          totalSteps: 0,
          overallPercent: 0,
        },
        warnings: [],
        error: null,
        input: null,
        agent: null,
        createdAt: at,
        updatedAt: at,
      }),
    );
    expect(await tk.kernel.jobs.cancel('orphan')).toBe(true);
    expect((await tk.kernel.jobs.get('orphan'))?.status).toBe('cancelled');
    expect(await tk.kernel.jobs.cancel('orphan')).toBe(false);
    await waitFor(() => finished.length > 0, { message: 'jobFinished' });
    // Nothing more happens: the second cancel publishes no second jobFinished.
    await holdsFor(() => finished.length === 1, 100, { message: 'one jobFinished' });
    expect(finished).toEqual([{ event: 'jobFinished', id: 'orphan', status: 'cancelled' }]);
  });

  it('a job is cancelled from another instance over the bus', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'airlock-jobs-'));
    const events = await createEventBus();
    const kernels = await Promise.all(
      [0, 1].map(async () => {
        const { store, blobs } = await openStore({ data: dir });
        const k = createKernel({ store, blobs, events, logger: silentLogger });
        k.mount(createLedgerDoor());
        await k.start();
        return { k, store };
      }),
    );
    const [a, b] = kernels as [(typeof kernels)[0], (typeof kernels)[0]];
    try {
      const { jobId } = textOf(
        await a.k.call('ledger', 'ledger_count', { to: 1000 }, { connection: conn() }),
      ) as { jobId: string };
      await waitFor(async () => ((await a.k.jobs.get(jobId))?.progress.currentUnit ?? 0) > 0, {
        message: 'the job to make progress',
      });
      expect(await b.k.jobs.cancel(jobId)).toBe(true);
      await a.k.jobs.settled(jobId);
      expect((await b.k.jobs.get(jobId))?.status).toBe('cancelled');
      expect(await b.k.jobs.cancel(jobId)).toBe(false);
    } finally {
      for (const { k, store } of kernels) {
        await k.close();
        await store.close();
      }
      await events.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('event bus', () => {
  it('numbers events and replays those after a given id', async () => {
    const bus = await createEventBus({ ringSize: 10, firstId: 0 });
    for (let i = 0; i < 5; i++) bus.publish({ event: 'x', i });
    expect(bus.lastId).toBe(5);
    expect((await bus.since(3))!.map((e) => e.data.i)).toEqual([3, 4]);
    expect(await bus.since(5)).toEqual([]);
  });

  it('says when the ring no longer reaches back to the requested id', async () => {
    const bus = await createEventBus({ ringSize: 3, firstId: 0 });
    for (let i = 0; i < 10; i++) bus.publish({ event: 'x', i });
    expect((await bus.since(7))!.map((e) => e.id)).toEqual([8, 9, 10]);
    expect(await bus.since(6)).toBeNull();
  });

  it('a Last-Event-ID from another run (ahead of this one) gets a snapshot, not silence', async () => {
    const bus = await createEventBus({ firstId: 0 });
    bus.publish({ event: 'x' });
    expect(await bus.since(500)).toBeNull();
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
