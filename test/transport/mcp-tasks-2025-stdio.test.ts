/**
 * Long approvals as 2025-11-25 tasks over stdio (issue 30): a v1 SDK client
 * spawns `airlock stdio` on the data folder of a running `airlock serve`;
 * its task-augmented call of a tool the policy asks about answers a task,
 * `tasks/result` elicits the card of that server, the owner approves there,
 * and the task completes with the result.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import {
  CallToolResultSchema,
  CreateTaskResultSchema,
  ElicitRequestSchema,
} from '@modelcontextprotocol/sdk/types.js';
import { startServe, type Served } from '../helpers/servers.js';
import { BIN, testEnv } from '../helpers/cli.js';
import { waitFor } from '../helpers/wait.js';

const dir = mkdtempSync(join(tmpdir(), 'airlock-tasks25-stdio-'));
const data = join(dir, 'data');
const config = join(dir, 'config.json');
let served: Served;
let client: Client | undefined;

beforeAll(async () => {
  writeFileSync(
    config,
    JSON.stringify({ policy: { rules: [{ tool: 'ledger_echo', decision: 'ask' }] } }),
  );
  served = await startServe(['--data', data, '--doors', 'ledger', '--config', config]);
});
afterAll(async () => {
  await client?.close().catch(() => undefined);
  served?.child.kill('SIGTERM');
  await served?.exited;
  rmSync(dir, { recursive: true, force: true });
});

it('over stdio, a task-augmented call the policy asks about waits for the owner of the server on the same folder, then completes', async () => {
  client = new Client(
    { name: 'stdio-tasks', version: '1' },
    { capabilities: { elicitation: { url: {} }, tasks: { list: {}, cancel: {} } } },
  );
  const shown: { url: string; _meta?: Record<string, unknown> }[] = [];
  client.setRequestHandler(ElicitRequestSchema, (request) => {
    shown.push(request.params as never);
    return { action: 'accept' };
  });
  await client.connect(
    new StdioClientTransport({
      command: process.execPath,
      args: [BIN, 'stdio', '--doors', 'ledger', '--data', data, '--config', config],
      env: testEnv() as Record<string, string>,
      stderr: 'pipe',
    }),
  );
  expect(client.getServerCapabilities()?.tasks).toMatchObject({
    requests: { tools: { call: {} } },
  });
  const { task } = await client.request(
    { method: 'tools/call', params: { name: 'ledger_echo', arguments: { text: 'piped' } } },
    CreateTaskResultSchema,
    { task: { ttl: 60_000 } },
  );
  const result = client.experimental.tasks.getTaskResult(task.taskId, CallToolResultSchema, {
    timeout: 30_000,
  });
  await waitFor(() => shown.length > 0, { timeoutMs: 15_000 });
  expect(shown[0]!.url.startsWith(`${served.url}/#/approvals/`)).toBe(true);
  expect(shown[0]!._meta).toMatchObject({
    'io.modelcontextprotocol/related-task': { taskId: task.taskId },
  });
  expect((await client.experimental.tasks.getTask(task.taskId)).status).toBe('input_required');
  const id = decodeURIComponent(shown[0]!.url.split('/#/approvals/')[1]!);
  const approved = await fetch(`${served.url}/api/v1/approvals/${id}/approve`, {
    method: 'POST',
    headers: {
      authorization: `Bearer ${served.ownerToken!}`,
      'content-type': 'application/json',
    },
    body: JSON.stringify({ scope: 'once' }),
  });
  expect(approved.status, await approved.clone().text()).toBe(200);
  expect(JSON.stringify(await result)).toMatch(/piped/);
  expect((await client.experimental.tasks.getTask(task.taskId)).status).toBe('completed');
});
