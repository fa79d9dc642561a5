/**
 * `koharu.start_pipeline` as an MCP task (SEP-2663): a client that
 * negotiated the tasks extension gets a task that follows the pipeline job —
 * its steps and pages as they run, the job's outcome when it ends — and can
 * stop it with `tasks/cancel`. A client without the extension keeps the
 * reference `{jobId}` answer.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { comicPage } from './helpers.js';
import { sceneServer, uploadPages, type SceneServer } from './server.js';
import { httpTaskClient, type TaskClient } from '../../helpers/mcp-tasks.js';
import { structuredOf } from '../../helpers/results.js';

let s: SceneServer;
let tasks: TaskClient;
beforeAll(async () => {
  s = await sceneServer();
  const client = await s.mcp();
  await client.callTool({
    name: 'koharu.open_project',
    arguments: { path: 'tasks.khrproj', createName: 'Tasks' },
  });
  const page = await comicPage([{ text: 'HELLO', x: 40, y: 90 }]);
  const upload = await uploadPages(s, [
    { name: 'one.png', bytes: page },
    { name: 'two.png', bytes: page },
  ]);
  expect(upload.status).toBe(201);
  tasks = await httpTaskClient(`${s.base}/mcp`, s.headers.authorization!.slice('Bearer '.length));
});
afterAll(async () => {
  await tasks?.close();
  await s.close();
});

it('start_pipeline as a task reports the pipeline’s step and pages, then completes with the job', async () => {
  const created = await tasks.create('koharu.start_pipeline', { steps: ['tesseract'] });
  expect(created).toMatchObject({ resultType: 'task', status: 'working' });
  const taskId = String(created['taskId']);
  const seen = new Set<string>();
  const done = await tasks.until(
    taskId,
    (t) => {
      if (t.statusMessage) seen.add(t.statusMessage);
      return false;
    },
    90_000,
  );
  expect(done.status).toBe('completed');
  expect([...seen].some((m) => /^tesseract: \d\/2 /.test(m))).toBe(true);
  const job = done.result?.['structuredContent'] as { jobId: string; status: string };
  expect(job.status).toBe('completed');
  expect((await s.tk.kernel.jobs.get(job.jobId))?.kind).toBe('pipeline');
});

it('tasks/cancel stops the pipeline job; a client without the extension still gets {jobId}', async () => {
  s.llm.delayMs = 2000;
  const { taskId } = (await tasks.create('koharu.start_pipeline', {
    steps: ['tesseract', 'llm'],
  })) as { taskId: string };
  await tasks.until(taskId, (t) => /^(tesseract|llm):/.test(t.statusMessage ?? ''), 30_000);
  await tasks.cancel(taskId);
  expect((await tasks.until(taskId)).status).toBe('cancelled');
  const pipelines = await s.tk.kernel.jobs.list({ door: 'scene' });
  await expect
    .poll(async () => (await s.tk.kernel.jobs.get(pipelines[0]!.id))?.status, { timeout: 30_000 })
    .toBe('cancelled');

  const plain = await s.mcp();
  const started = await plain.callTool({
    name: 'koharu.start_pipeline',
    arguments: { steps: ['tesseract'] },
  });
  const { jobId } = structuredOf(started) as { jobId: string };
  expect(jobId).toMatch(/^[0-9a-f-]{36}$/);
  await plain.callTool({ name: 'koharu.cancel_job', arguments: { jobId } });
});
