/**
 * Jobs belong to the principal that started them (issue 24, findings 4 and 6):
 * another agent can neither list, read nor cancel them (the answer for an
 * unknown id), and its event stream carries none of their events, no other
 * principal's scene labels and no absolute paths; the owner sees everything.
 * Two agents with their own tokens and the owner, over real HTTP and MCP.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Client } from '@modelcontextprotocol/client';
import { connectClient } from '../../helpers/mcp-client.js';
import { waitFor } from '../../helpers/wait.js';
import { agentHeaders } from '../../helpers/principals.js';
import { structuredOf, toolText } from '../../helpers/results.js';
import { pageOf } from './helpers.js';
import { json, post, sceneServer, sse, until, type Endpoint, type SceneServer } from './server.js';

const SECRET = 'PRIVATE-PROMPT-of-alice-5b1e';

let s: SceneServer;
/** Agent B: its own token, its own MCP client. */
let bob: Endpoint;
let bobMcp: Client;
let owner: Endpoint;

beforeAll(async () => {
  s = await sceneServer();
  const headers = await agentHeaders(s.tk.kernel, 'bob');
  const as = (h: Record<string, string>): Endpoint => ({
    base: s.base,
    headers: h,
    owner: s.owner,
    fetch: (url, init = {}) =>
      fetch(url, {
        ...init,
        headers: { ...h, ...((init.headers as Record<string, string> | undefined) ?? {}) },
      }),
  });
  bob = as(headers);
  owner = as(s.owner);
  bobMcp = await connectClient(new URL('/mcp', s.base), {
    name: 'bob-client',
    token: headers.authorization!.slice('Bearer '.length),
  });
  await post(s, 'projects', { name: 'Owned' });
  const page = pageOf();
  await post(s, 'history/apply', { op: { AddPage: { page } } });
  await post(s, 'history/apply', {
    op: {
      AddNode: {
        page: page.id,
        node: {
          id: randomUUID(),
          transform: { x: 10, y: 10, width: 100, height: 40, rotationDeg: 0 },
          visible: true,
          kind: { text: { text: 'HELLO', style: { fontFamilies: [], color: [0, 0, 0, 255] } } },
        },
      },
    },
  });
});
afterAll(async () => {
  await bobMcp?.close();
  await s.close();
});

/** Alice (the scene server's agent) starts an llm pipeline with a private prompt; it runs until cancelled. */
async function alicesRunningJob(): Promise<string> {
  s.llm.delayMs = 60_000;
  const sent = s.llm.requests.length;
  const started = await post(s, 'pipelines', { steps: ['llm'], systemPrompt: SECRET });
  expect(started.status).toBe(202);
  const jobId = String((await json(started)).jobId);
  await until(() => s.llm.requests.length > sent, 30_000, 'the pipeline to reach the llm');
  return jobId;
}

async function cancelAs(at: Endpoint, jobId: string) {
  return at.fetch(`${at.base}/api/v1/operations/${jobId}`, { method: 'DELETE' });
}

async function finished(jobId: string) {
  await waitFor(
    async () =>
      (await json(await s.fetch(`${s.base}/api/v1/operations/${jobId}`))).status !== 'running',
    { timeoutMs: 30_000, message: `job ${jobId} to finish` },
  );
}

describe('jobs belong to the agent that started them', () => {
  it('another agent does not find them over REST: not listed, not readable, not cancellable', async () => {
    const jobId = await alicesRunningJob();
    try {
      const listed = await bob.fetch(`${s.base}/api/v1/operations`);
      expect(listed.status).toBe(200);
      const text = await listed.text();
      expect(text).not.toContain(jobId);
      expect(text).not.toContain(SECRET);

      const unknownId = randomUUID();
      const unknown = await bob.fetch(`${s.base}/api/v1/operations/${unknownId}`);
      const foreign = await bob.fetch(`${s.base}/api/v1/operations/${jobId}`);
      expect(foreign.status).toBe(unknown.status);
      expect(foreign.status).toBe(404);
      const foreignBody = await foreign.text();
      expect(foreignBody.replaceAll(jobId, 'ID')).toBe(
        (await unknown.text()).replaceAll(unknownId, 'ID'),
      );

      const cancelUnknown = await cancelAs(bob, unknownId);
      const cancelForeign = await cancelAs(bob, jobId);
      expect(cancelForeign.status).toBe(404);
      expect((await cancelForeign.text()).replaceAll(jobId, 'ID')).toBe(
        (await cancelUnknown.text()).replaceAll(unknownId, 'ID'),
      );
      // Still running: bob's cancel did nothing.
      expect((await json(await s.fetch(`${s.base}/api/v1/operations/${jobId}`))).status).toBe(
        'running',
      );
    } finally {
      await cancelAs(s, jobId);
      s.llm.delayMs = 0;
      await finished(jobId);
    }
  });

  it('another agent does not find them over MCP: get_job and cancel_job answer as for an unknown id', async () => {
    const jobId = await alicesRunningJob();
    try {
      const unknownId = randomUUID();
      const read = async (name: string, id: string) => {
        const result = await bobMcp.callTool({ name, arguments: { jobId: id } });
        expect(result.isError).toBe(true);
        return toolText(result).replaceAll(id, 'ID');
      };
      expect(await read('koharu.get_job', jobId)).toBe(await read('koharu.get_job', unknownId));
      expect(await read('koharu.cancel_job', jobId)).toBe(
        await read('koharu.cancel_job', unknownId),
      );
      expect((await json(await s.fetch(`${s.base}/api/v1/operations/${jobId}`))).status).toBe(
        'running',
      );
    } finally {
      await cancelAs(s, jobId);
      s.llm.delayMs = 0;
      await finished(jobId);
    }
  });

  it('the agent that started a job lists, reads and cancels it; the owner sees it too', async () => {
    const jobId = await alicesRunningJob();
    try {
      const mine = (await json(await s.fetch(`${s.base}/api/v1/operations`))) as {
        operations: { id: string; input: { systemPrompt?: string } }[];
      };
      expect(mine.operations.find((o) => o.id === jobId)?.input.systemPrompt).toBe(SECRET);
      const client = await s.mcp();
      expect(
        structuredOf(await client.callTool({ name: 'koharu.get_job', arguments: { jobId } })),
      ).toMatchObject({ id: jobId, status: 'running' });

      const ownerOps = (await json(await owner.fetch(`${s.base}/api/v1/operations`))) as {
        operations: { id: string }[];
      };
      expect(ownerOps.operations.map((o) => o.id)).toContain(jobId);
      const ownerJobs = (await json(await owner.fetch(`${s.base}/api/v1/jobs`))) as {
        jobs: { id: string }[];
      };
      expect(ownerJobs.jobs.map((j) => j.id)).toContain(jobId);
      expect((await owner.fetch(`${s.base}/api/v1/operations/${jobId}`)).status).toBe(200);

      const cancelled = await client.callTool({ name: 'koharu.cancel_job', arguments: { jobId } });
      expect(structuredOf(cancelled)).toMatchObject({ jobId, cancelled: true });
    } finally {
      s.llm.delayMs = 0;
      await finished(jobId);
    }
  });

  it('the owner cancels any agent’s job', async () => {
    const jobId = await alicesRunningJob();
    s.llm.delayMs = 0;
    const cancelled = await cancelAs(owner, jobId);
    expect(cancelled.status).toBe(200);
    expect(await json(cancelled)).toMatchObject({ cancelled: true });
    await finished(jobId);
    expect((await json(await s.fetch(`${s.base}/api/v1/operations/${jobId}`))).status).toBe(
      'cancelled',
    );
  });
});

describe('an agent’s event stream carries only its own', () => {
  it('no other agent’s job events, prompts, scene labels or absolute paths; the owner’s stream is complete', async () => {
    const alice = sse(s);
    const bobs = sse(bob);
    const owners = sse(owner);
    await Promise.all([alice.ready(), bobs.ready(), owners.ready()]);

    const jobId = await alicesRunningJob();
    await cancelAs(s, jobId);
    s.llm.delayMs = 0;
    await until(() => alice.events.some((e) => e.event === 'jobFinished' && e.id === jobId));
    // A scene change after the job: once bob sees it, he has seen all that came before.
    const applied = await post(s, 'history/apply', {
      op: { batch: { label: `alice renames ${SECRET}`, ops: [{ AddPage: { page: pageOf() } }] } },
    });
    expect(applied.status).toBe(200);
    const { epoch } = await json(applied);
    const sawEpoch = (events: { event: string; epoch?: unknown }[]) =>
      events.some((e) => e.event === 'sceneChanged' && e.epoch === epoch);
    await until(() => sawEpoch(bobs.events) && sawEpoch(owners.events));
    alice.stop();
    bobs.stop();
    owners.stop();

    const bobText = JSON.stringify(bobs.events);
    expect(bobText).not.toContain(jobId);
    expect(bobText).not.toContain(SECRET);
    expect(bobText).not.toContain(s.data);
    expect(bobs.events.some((e) => e.event.startsWith('job'))).toBe(false);
    expect(bobs.events.find((e) => e.event === 'sceneChanged' && e.epoch === epoch)).toEqual({
      event: 'sceneChanged',
      epoch,
    });

    const alicesOwn = alice.events.filter((e) => e.id === jobId || e.jobId === jobId);
    expect(alicesOwn[0]).toEqual({ event: 'jobStarted', id: jobId, kind: 'pipeline' });
    expect(alicesOwn.at(-1)).toEqual({ event: 'jobFinished', id: jobId, status: 'cancelled' });
    expect(JSON.stringify(alice.events)).not.toContain(s.data);

    expect(owners.events.find((e) => e.event === 'jobStarted' && e.id === jobId)).toMatchObject({
      kind: 'pipeline',
    });
    expect(owners.events.find((e) => e.event === 'sceneChanged' && e.epoch === epoch)).toEqual({
      event: 'sceneChanged',
      epoch,
      label: `alice renames ${SECRET}`,
    });
    const ownerSnapshot = owners.events.find((e) => e.event === 'snapshot')!;
    expect(JSON.stringify(ownerSnapshot)).toContain(s.data);
  });

  it('a fresh agent stream’s snapshot lists only its own running jobs', async () => {
    const jobId = await alicesRunningJob();
    try {
      const bobs = sse(bob);
      const alices = sse(s);
      await Promise.all([bobs.ready(), alices.ready()]);
      bobs.stop();
      alices.stop();
      const snapshotOf = (events: { event: string }[]) =>
        events.find((e) => e.event === 'snapshot') as unknown as { jobs: { id: string }[] };
      expect(snapshotOf(bobs.events).jobs).toEqual([]);
      expect(snapshotOf(alices.events).jobs.map((j) => j.id)).toEqual([jobId]);
    } finally {
      await cancelAs(s, jobId);
      s.llm.delayMs = 0;
      await finished(jobId);
    }
  });
});
