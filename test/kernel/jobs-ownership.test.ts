/**
 * A job belongs to the agent whose call started it (kernel/jobs.ts `seenBy`,
 * issue 24): that agent and the owner find it, another agent finds nothing,
 * and the job's events name the agent so streams can be filtered alike.
 */
import { afterEach, expect, it } from 'vitest';
import { createLedgerDoor } from '../../src/doors/testing/ledger.js';
import { connection } from '../../src/kernel/connection.js';
import { testKernel, textOf, type TestKernel } from '../helpers/kernel.js';

let tk: TestKernel | undefined;
afterEach(async () => {
  await tk?.dispose();
  tk = undefined;
});

const agentConnection = (agent: string) =>
  connection(`agent:${agent}`, 'http-principal', undefined, agent);

async function count(to: number, conn: ReturnType<typeof connection>): Promise<string> {
  const started = textOf(
    await tk!.kernel.call('ledger', 'ledger_count', { to }, { connection: conn }),
  );
  return (started as { jobId: string }).jobId;
}

it('a job an agent’s call starts is that agent’s: it and the owner find it, another agent does not', async () => {
  tk = await testKernel([createLedgerDoor()]);
  const jobId = await count(1000, agentConnection('alice'));
  const jobs = tk.kernel.jobs;
  expect((await jobs.get(jobId))?.agent).toBe('alice');
  expect((await jobs.seenBy('alice').get(jobId))?.id).toBe(jobId);
  expect(await jobs.seenBy('bob').get(jobId)).toBeNull();
  expect((await jobs.seenBy('alice').list()).map((j) => j.id)).toEqual([jobId]);
  expect(await jobs.seenBy('bob').list()).toEqual([]);
  expect((await jobs.seenBy(null).list()).map((j) => j.id)).toEqual([jobId]);
  expect(await jobs.seenBy('bob').cancel(jobId)).toBe(false);
  expect((await jobs.get(jobId))?.status).toMatch(/queued|running/);
  expect(await jobs.seenBy('alice').cancel(jobId)).toBe(true);
  await jobs.settled(jobId);
  expect((await jobs.get(jobId))?.status).toBe('cancelled');
});

it('an agent’s job events name the agent; the owner’s and internal jobs’ events keep the seed’s shapes', async () => {
  tk = await testKernel([createLedgerDoor()]);
  const seen: Record<string, unknown>[] = [];
  tk.events.subscribe((e) => seen.push(e.data as Record<string, unknown>));
  const alices = await count(1, agentConnection('alice'));
  const owners = await count(1, connection('owner/rest:test', 'rest'));
  await tk.kernel.jobs.settled(alices);
  await tk.kernel.jobs.settled(owners);
  expect(await tk.kernel.jobs.seenBy('alice').get(owners)).toBeNull();
  const of = (id: string, event: string) =>
    seen.find((e) => e.event === event && (e.id === id || e.jobId === id));
  expect(of(alices, 'jobStarted')).toEqual({
    event: 'jobStarted',
    id: alices,
    kind: 'count',
    agent: 'alice',
  });
  expect(of(alices, 'jobProgress')).toMatchObject({ agent: 'alice' });
  expect(of(alices, 'jobFinished')).toEqual({
    event: 'jobFinished',
    id: alices,
    status: 'completed',
    agent: 'alice',
  });
  expect(of(owners, 'jobStarted')).toEqual({ event: 'jobStarted', id: owners, kind: 'count' });
  expect(of(owners, 'jobFinished')).toEqual({
    event: 'jobFinished',
    id: owners,
    status: 'completed',
  });
});
