/**
 * The Agents screen's numbers (issue 27): `GET /api/v1/agents/activity`
 * answers, from the audit in the store, each agent's last seen time, its
 * calls today by effect and outcome, and its last calls. Owner only.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { createLedgerDoor } from '../../src/doors/testing/ledger.js';
import { createHttpApp, type HttpApp } from '../../src/transport/http/http-app.js';
import { silentLogger } from '../../src/kernel/logger.js';
import { testKernel, type TestKernel } from '../helpers/kernel.js';
import { connectClient, MODERN_PROTOCOL } from '../helpers/mcp-client.js';
import { agentHeaders, ownerHeaders } from '../helpers/principals.js';
import type { AgentActivity } from '../../src/transport/rest/rest-agent-activity.js';

let tk: TestKernel;
let app: HttpApp;
let base: string;
let owner: Record<string, string>;

beforeAll(async () => {
  tk = await testKernel([createLedgerDoor()]);
  app = createHttpApp({ kernel: tk.kernel, logger: silentLogger });
  base = `http://127.0.0.1:${(await app.listen(0, '127.0.0.1')).port}`;
  owner = await ownerHeaders(tk.kernel);
});
afterAll(async () => {
  await app.close();
  await tk.dispose();
});

const activity = async (headers: Record<string, string>) =>
  fetch(`${base}/api/v1/agents/activity`, { headers });

it("counts an agent's calls today by effect and outcome, with its last seen time and last calls", async () => {
  const header = await agentHeaders(tk.kernel, 'ivy');
  await agentHeaders(tk.kernel, 'idle');
  const token = header.authorization!.replace(/^Bearer /, '');
  const c = await connectClient(`${base}/mcp`, { token, pin: MODERN_PROTOCOL });
  const before = Date.now();
  // Writes and refusals are audited (reads that pass are not, by default).
  await c.callTool({ name: 'ledger_count', arguments: { to: 1 } });
  await c.callTool({ name: 'ledger_count', arguments: { to: 2 } });
  await c.callTool({ name: 'ledger_echo', arguments: { wrong: true } });
  await c.close();

  const res = await activity(owner);
  expect(res.status).toBe(200);
  const { activity: all } = (await res.json()) as { activity: AgentActivity[] };
  const ivy = all.find((a) => a.agent === 'ivy')!;
  expect(ivy.lastSeen).toBeGreaterThanOrEqual(before);
  expect(ivy.today.calls).toBe(3);
  expect(ivy.today.byEffect).toEqual({ write: 2, read: 1 });
  expect(ivy.today.byOutcome.ok).toBe(2);
  expect(Object.values(ivy.today.byOutcome).reduce((n, v) => n + v, 0)).toBe(3);
  expect(ivy.lastCalls.map((x) => x.tool)).toEqual(['ledger_echo', 'ledger_count', 'ledger_count']);
  expect(ivy.lastCalls[0]!.result).not.toBe('ok');
  expect(all.find((a) => a.agent === 'idle')).toBeUndefined();
});

it('refuses an agent', async () => {
  const res = await activity(await agentHeaders(tk.kernel, 'nosy'));
  expect(res.status).toBe(403);
});
