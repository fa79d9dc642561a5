import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { randomUUID } from 'node:crypto';
import { createNotesDoor } from '../../../src/doors/notes/index.js';
import { createHttpApp, type HttpApp } from '../../../src/transport/http/http-app.js';
import { silentLogger } from '../../../src/kernel/logger.js';
import { testKernel, type TestKernel } from '../../helpers/kernel.js';
import { connectClient } from '../../helpers/mcp-client.js';
import { agentHeaders } from '../../helpers/principals.js';
import { toolJson } from '../../helpers/results.js';
import { waitFor } from '../../helpers/wait.js';

let tk: TestKernel;
let app: HttpApp;
let base: string;
let release!: () => void;
let gate = new Promise<void>((r) => (release = r));
let entered = 0;

beforeAll(async () => {
  tk = await testKernel([
    createNotesDoor({
      hooks: {
        beforeHandler: async (tool) => {
          if (tool !== 'rooqi_status') return;
          entered++;
          await gate;
        },
      },
    }),
  ]);
  app = createHttpApp({ kernel: tk.kernel, logger: silentLogger });
  base = `http://127.0.0.1:${(await app.listen(0, '127.0.0.1')).port}`;
  token = (await agentHeaders(tk.kernel, 'limits')).authorization!.slice('Bearer '.length);
});
afterAll(async () => {
  release();
  await app.close();
  await tk.dispose();
});

const envelope = (r: unknown) => {
  const env = toolJson(r) as { code: string };
  expect((r as { isError?: boolean }).isError).toBe(env.code !== 'ready');
  return env;
};

let token: string;
const client = () => connectClient(new URL('/mcp', base), { name: 'limits', version: '1', token });

describe('notes limits over the real MCP HTTP stack', () => {
  it('the 9th concurrent call of one session answers busy; another session is unaffected', async () => {
    const c = await client();
    const other = await client();
    entered = 0;
    gate = new Promise<void>((r) => (release = r));
    const held = Array.from({ length: 8 }, () =>
      c.callTool({ name: 'rooqi_status', arguments: {} }),
    );
    await waitFor(() => entered >= 8, { intervalMs: 5, message: '8 calls held in the handler' });
    expect(envelope(await c.callTool({ name: 'rooqi_status', arguments: {} })).code).toBe('busy');
    expect(
      envelope(await other.callTool({ name: 'rooqi_request_read_access', arguments: {} })).code,
    ).toBe('approvalRequired');
    release();
    expect((await Promise.all(held)).map((r) => envelope(r).code)).toEqual(Array(8).fill('ready'));
    await c.close();
    await other.close();
  });

  it('a 16,385-byte request answers requestTooLarge inside the envelope', async () => {
    const c = await client();
    const args = { documentID: randomUUID(), pad: '' };
    args.pad = 'x'.repeat(16_385 - JSON.stringify(args).length);
    const r = await c.callTool({ name: 'rooqi_read_note', arguments: args });
    expect(envelope(r).code).toBe('requestTooLarge');
    const ok = { documentID: 'not-a-uuid' };
    expect(envelope(await c.callTool({ name: 'rooqi_read_note', arguments: ok })).code).toBe(
      'malformedRequest',
    );
    await c.close();
  });
});
