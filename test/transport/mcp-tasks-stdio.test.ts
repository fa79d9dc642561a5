/**
 * MCP tasks (SEP-2663) over stdio: `airlock stdio --doors ledger` (the built
 * CLI) with the SDK client pinned to 2026-07-28 and declaring the tasks
 * extension. The process is the connection; its tasks live in its store.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import { BIN, testEnv } from '../helpers/cli.js';
import { taskClient, type TaskClient } from '../helpers/mcp-tasks.js';

let dir: string;
let tasks: TaskClient;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'airlock-tasks-stdio-'));
  tasks = await taskClient(
    new StdioClientTransport({
      command: process.execPath,
      args: [BIN, 'stdio', '--doors', 'ledger', '--data', dir],
      env: testEnv() as Record<string, string>,
      stderr: 'pipe',
    }),
    { name: 'stdio-tasks' },
  );
});

afterAll(async () => {
  await tasks?.close();
  rmSync(dir, { recursive: true, force: true });
});

it('over stdio a job-starting tool answers a task that reports progress and completes with the job', async () => {
  const created = await tasks.create('ledger_count', { to: 40 });
  expect(created).toMatchObject({ resultType: 'task', status: 'working' });
  const taskId = String(created['taskId']);
  const running = await tasks.until(taskId, (t) => /count: \d+\/40/.test(t.statusMessage ?? ''));
  expect(running.status).toBe('working');
  const done = await tasks.until(taskId);
  expect(done.status).toBe('completed');
  expect(done.result?.['structuredContent']).toMatchObject({ status: 'completed' });
});

it('over stdio tasks/cancel stops the task and its job; an unknown id is -32602', async () => {
  const { taskId } = (await tasks.create('ledger_count', { to: 5000 })) as { taskId: string };
  await tasks.until(taskId, (t) => /count: [1-9]/.test(t.statusMessage ?? ''));
  await tasks.cancel(taskId);
  expect((await tasks.get(taskId)).status).toBe('cancelled');
  const failure = await tasks.get('no-such-task').catch((e: unknown) => e as { code?: number });
  expect(failure).toMatchObject({ code: -32602 });
});
