/**
 * MCP tasks (SEP-2663) for tools that are not jobs themselves: the whole
 * call runs in the background (mcp-task-runner.ts). Through the conformance
 * door's fixtures over real HTTP with the SDK client: progress as the
 * status message, the result inlined, a protocol error as `failed`, a tool
 * error as `completed` + `isError`, input asked with `input_required` and
 * answered with `tasks/update` (also in part), and input gathered before the
 * task starts.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { createConformanceDoor } from '../../src/doors/testing/conformance.js';
import { createHttpApp, type HttpApp } from '../../src/transport/http/http-app.js';
import { silentLogger } from '../../src/kernel/logger.js';
import { testKernel, type TestKernel } from '../helpers/kernel.js';
import { agentHeaders } from '../helpers/principals.js';
import { httpTaskClient, type TaskClient } from '../helpers/mcp-tasks.js';

let tk: TestKernel;
let app: HttpApp;
let tasks: TaskClient;
let url: string;
let token: string;

beforeAll(async () => {
  tk = await testKernel([createConformanceDoor()]);
  app = createHttpApp({ kernel: tk.kernel, logger: silentLogger });
  const base = `http://127.0.0.1:${(await app.listen(0, '127.0.0.1')).port}`;
  token = (await agentHeaders(tk.kernel, 'dora')).authorization!.replace('Bearer ', '');
  url = `${base}/mcp`;
  tasks = await httpTaskClient(url, token);
});
afterAll(async () => {
  await tasks?.close();
  await app.close();
  await tk.dispose();
});

const textOf = (result: Record<string, unknown> | undefined) =>
  (result?.['content'] as { text: string }[] | undefined)?.[0]?.text;

it('a background call shows the tool’s progress as its status message and inlines its result', async () => {
  const { taskId } = (await tasks.create('slow_compute', { seconds: 2, label: 'x' })) as {
    taskId: string;
  };
  const midway = await tasks.until(taskId, (t) => t.statusMessage === 'computed 1s of 2s');
  expect(midway.status).toBe('working');
  const done = await tasks.until(taskId);
  expect(done).toMatchObject({ status: 'completed' });
  expect(textOf(done.result)).toBe('Computed x after 2s.');
});

it('a tool error is completed with isError; a protocol error is failed with the JSON-RPC error', async () => {
  const toolError = await tasks.create('failing_job', {});
  const ended = await tasks.until(String(toolError['taskId']));
  expect(ended).toMatchObject({ status: 'completed', result: { isError: true } });
  const protocolError = await tasks.create('protocol_error_job', {});
  const failed = await tasks.until(String(protocolError['taskId']));
  expect(failed).toMatchObject({ status: 'failed', error: { code: -32603 } });
  expect(failed).not.toHaveProperty('result');
});

it('input the tool asks for waits in input_required until every request is answered by tasks/update', async () => {
  const { taskId } = (await tasks.create('multi_input', {})) as { taskId: string };
  const asked = await tasks.until(taskId, (t) => t.status === 'input_required');
  expect(Object.keys(asked.inputRequests ?? {}).sort()).toEqual(['confirm', 'name']);
  await tasks.update(taskId, { name: { action: 'accept', content: { name: 'Ada' } } });
  const partly = await tasks.get(taskId);
  expect(partly.status).toBe('input_required');
  expect(Object.keys(partly.inputRequests ?? {})).toEqual(['confirm']);
  await tasks.update(taskId, { confirm: { action: 'accept', content: { confirm: true } } });
  const done = await tasks.until(taskId);
  expect(done.status).toBe('completed');
  expect(textOf(done.result)).toBe('Hello, Ada; confirmed.');
});

it('a required-task tool first asks for its input in the tools/call round trip, then runs as a task with it', async () => {
  const first = (await tasks.client.request(
    { method: 'tools/call', params: { name: 'test_tool_with_task', arguments: {} } },
    { allowInputRequired: true },
  )) as unknown as { inputRequests?: Record<string, unknown> };
  expect(Object.keys(first.inputRequests ?? {})).toEqual(['user_name']);
  const created = await tasks.create(
    'test_tool_with_task',
    {},
    { inputResponses: { user_name: { action: 'accept', content: { name: 'Grace' } } } },
  );
  expect(created).toMatchObject({ resultType: 'task' });
  expect(created).not.toHaveProperty('requestState');
  const done = await tasks.until(String(created['taskId']));
  expect(textOf(done.result)).toBe('Hello, Grace!');
});

it('a client without the extension cannot call a required-task tool: -32021 naming the extension', async () => {
  const plain = await httpTaskClient(url, token, { extension: false });
  try {
    const refused = await plain.client.callTool({ name: 'failing_job', arguments: {} }).then(
      () => null,
      (e: unknown) => e as { code?: number; data?: unknown },
    );
    expect(refused).toMatchObject({
      code: -32021,
      data: { requiredCapabilities: { extensions: { 'io.modelcontextprotocol/tasks': {} } } },
    });
    // An optional one runs as an ordinary call.
    const plainResult = await plain.client.callTool({
      name: 'slow_compute',
      arguments: { seconds: 0 },
    });
    expect(plainResult).toMatchObject({ content: [{ text: 'Computed result after 0s.' }] });
  } finally {
    await plain.close();
  }
});

it('tasks/result and tasks/list, removed by SEP-2663, answer -32601 on the 2026 wire', async () => {
  for (const [method, params] of [
    ['tasks/result', { taskId: 'any' }],
    ['tasks/list', {}],
  ] as const) {
    const res = await fetch(url, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${token}`,
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        'mcp-protocol-version': '2026-07-28',
        'mcp-method': method,
      },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 1,
        method,
        params: {
          ...params,
          _meta: {
            'io.modelcontextprotocol/protocolVersion': '2026-07-28',
            'io.modelcontextprotocol/clientCapabilities': {
              extensions: { 'io.modelcontextprotocol/tasks': {} },
            },
          },
        },
      }),
    });
    const body = (await res.json()) as { error?: { code: number } };
    expect(body.error?.code, method).toBe(-32601);
  }
});
