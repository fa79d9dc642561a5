/**
 * `notifications/cancelled` for a call waiting on its ask (issue 30): a
 * 2025-era client shown the card's link (URL elicitation) aborts its
 * tools/call; the wait ends at once and the ask leaves the owner's inbox,
 * as tasks/cancel does for a task. A real SDK client aborts through
 * RequestOptions.signal.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { createLedgerDoor } from '../../src/doors/testing/ledger.js';
import { createHttpApp, type HttpApp } from '../../src/transport/http/http-app.js';
import { silentLogger } from '../../src/kernel/logger.js';
import { testKernel, type TestKernel } from '../helpers/kernel.js';
import { agentHeaders, ownerHeaders } from '../helpers/principals.js';
import { waitFor } from '../helpers/wait.js';

let tk: TestKernel;
let app: HttpApp;
let base: string;
const closers: (() => Promise<unknown>)[] = [];

beforeAll(async () => {
  tk = await testKernel([createLedgerDoor()], {
    policy: { rules: [{ tool: 'ledger_echo', decision: 'ask' }] },
  });
  // The wait is long: only the cancel can end it within the test.
  app = createHttpApp({ kernel: tk.kernel, logger: silentLogger, mcp: { approvalWaitMs: 50_000 } });
  base = `http://127.0.0.1:${(await app.listen(0, '127.0.0.1')).port}`;
});
afterAll(async () => {
  for (const close of closers) await close().catch(() => undefined);
  await app.close();
  await tk.close();
});

const pending = async () =>
  (await tk.kernel.store.read((tx) => tx.approvals.listPending())).map((a) => a.id);

describe('a waiting call cancelled by its client', () => {
  it('notifications/cancelled ends the wait at once and withdraws the ask from the inbox', async () => {
    const headers = await agentHeaders(tk.kernel, 'alice');
    const client = new Client(
      { name: 'canceller', version: '1' },
      { capabilities: { elicitation: { url: {} } } },
    );
    const shown: string[] = [];
    // The client shows the link and says it opened it: the call keeps waiting for the owner.
    client.setRequestHandler('elicitation/create', async (request) => {
      shown.push((request.params as { elicitationId: string }).elicitationId);
      return { action: 'accept' } as never;
    });
    await client.connect(
      new StreamableHTTPClientTransport(new URL(`${base}/mcp`), { requestInit: { headers } }),
    );
    closers.push(() => client.close());
    const abort = new AbortController();
    const call = client
      .callTool({ name: 'ledger_echo', arguments: { text: 'hi' } }, { signal: abort.signal })
      .then(
        () => 'answered',
        (e: unknown) => (e as Error).name,
      );
    await waitFor(() => shown.length === 1, { message: 'the link shown' });
    const id = shown[0]!;
    expect(await pending()).toContain(id);
    abort.abort();
    expect(await call).toBe('SdkError'); // the SDK's "request cancelled"
    await waitFor(async () => !(await pending()).includes(id), { message: 'the ask withdrawn' });
    const ask = await tk.kernel.store.read((tx) => tx.approvals.get(id));
    expect(ask).toMatchObject({ status: 'cancelled', reason: 'the agent cancelled its call' });
    // A decision on it now says it was withdrawn; nothing runs.
    const owner = await ownerHeaders(tk.kernel);
    const late = await fetch(`${base}/api/v1/approvals/${id}/approve`, {
      method: 'POST',
      headers: { ...owner, 'content-type': 'application/json' },
      body: JSON.stringify({ scope: 'once' }),
    });
    expect(late.status).toBe(400);
    expect(((await late.json()) as { message: string }).message).toContain(
      'was withdrawn (the agent cancelled its call)',
    );
  });
});
