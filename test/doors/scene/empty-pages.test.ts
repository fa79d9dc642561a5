/**
 * A page with no text (issue 32 item 6): detection finds nothing, and every
 * later step — in the same run or a later one — completes with nothing to
 * do, says so in the job (a `jobWarning` with `skipped: 'nothingToDo'`, the
 * page not failed), and the job ends `completed`.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createCanvas } from '@napi-rs/canvas';
import type { Scene } from '../../../src/doors/scene/model/model.js';
import { json, post, sceneServer, sse, until, uploadPages, type SceneServer } from './server.js';

let s: SceneServer;
beforeAll(async () => {
  s = await sceneServer();
});
afterAll(async () => {
  await s?.close();
});

async function blankPage(): Promise<Uint8Array> {
  const c = createCanvas(160, 120);
  const g = c.getContext('2d');
  g.fillStyle = '#e8e0d0';
  g.fillRect(0, 0, 160, 120);
  g.fillStyle = '#777';
  g.beginPath();
  g.arc(80, 60, 30, 0, Math.PI * 2);
  g.fill();
  return new Uint8Array(await c.encode('png'));
}

type JobBody = {
  status: string;
  warnings: { where: Record<string, unknown>; message: string }[];
};

/** Starts a pipeline over REST and waits for its jobFinished; the job as GET operations/{id} shows it. */
async function run(steps: string[]): Promise<JobBody> {
  const events = sse(s);
  await events.ready();
  const res = await post(s, 'pipelines', { steps, targetLanguage: 'English' });
  const body = (await res.json()) as { jobId?: string; message?: string };
  expect(res.status, body.message).toBe(202);
  await until(() => events.events.some((e) => e.event === 'jobFinished' && e.id === body.jobId));
  events.stop();
  return (await json(await s.fetch(`${s.base}/api/v1/operations/${body.jobId}`))) as never;
}

const said = (job: JobBody) =>
  job.warnings.filter((w) => w.where.skipped === 'nothingToDo').map((w) => String(w.where.stepId));

describe('a page with no text', () => {
  it('finishes every step with nothing to do and says so, in the same run and in a later one', async () => {
    const client = await s.mcp();
    await client.callTool({
      name: 'koharu.open_project',
      arguments: { path: 'empty.khrproj', createName: 'Empty' },
    });
    expect((await uploadPages(s, [{ name: 'blank.png', bytes: await blankPage() }])).status).toBe(
      201,
    );
    const first = await run(['dbnet', 'llm', 'fill', 'renderer']);
    expect(first.status).toBe('completed');
    expect(said(first).sort()).toEqual(['dbnet', 'fill', 'llm', 'renderer']);
    expect(s.llm.requests).toHaveLength(0);

    // A later run of the text steps alone is planned (the page was read: no text is an answer).
    const later = await run(['llm', 'fill', 'renderer']);
    expect(later.status).toBe('completed');
    expect(said(later).sort()).toEqual(['fill', 'llm', 'renderer']);
    const { scene } = (await json(await s.fetch(`${s.base}/api/v1/scene.json`))) as {
      scene: Scene;
    };
    const roles = scene.pages[0]!.nodes.flatMap((n) =>
      'image' in n.kind ? [n.kind.image.role] : [],
    );
    expect(roles.sort()).toEqual(['inpainted', 'rendered', 'source']);
  });

  it('is still refused for fill when no detection has run on it', async () => {
    // The page above was detected; a fresh project's page was not.
    const client = await s.mcp();
    await client.callTool({
      name: 'koharu.open_project',
      arguments: { path: 'fresh.khrproj', createName: 'Fresh' },
    });
    await uploadPages(s, [{ name: 'blank.png', bytes: await blankPage() }]);
    const refused = await post(s, 'pipelines', { steps: ['fill'] });
    expect(refused.status).toBe(400);
    expect(((await refused.json()) as { message: string }).message).toMatch(/needs TextBoxes/);
  });
});
