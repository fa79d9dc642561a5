/**
 * The sealed `requestState` of an approval offered to a 2026-era client
 * (spec/authority.md §2): any instance on the same store opens it; nothing
 * altered, expired or minted for another agent or tool opens.
 */
import { afterAll, beforeAll, expect, it, vi } from 'vitest';
import { testKernel, type TestKernel } from '../helpers/kernel.js';
import { getEventListeners } from 'node:events';
import { createApprovalStateSeal, decided } from '../../src/transport/mcp/approval-delivery.js';

let tk: TestKernel;
beforeAll(async () => {
  tk = await testKernel([]);
});
afterAll(() => tk.dispose());

const state = { approvalId: 'a1', agent: 'alice', tool: 'notes_request' };

it('another instance on the same store opens a sealed state (the key is in the store)', async () => {
  const sealed = await createApprovalStateSeal(tk.kernel).seal(state);
  const elsewhere = createApprovalStateSeal(tk.kernel);
  expect(await elsewhere.open(sealed, { agent: 'alice', tool: 'notes_request' })).toEqual(state);
});

it('refuses a state that was altered, or minted for another agent or tool', async () => {
  const seal = createApprovalStateSeal(tk.kernel);
  const sealed = await seal.seal(state);
  const [prefix, body, tag] = [sealed.slice(0, 5), ...sealed.slice(5).split('.')];
  const forged = Buffer.from(
    JSON.stringify({ ...state, agent: 'mallory', exp: Date.now() + 60_000 }),
  ).toString('base64url');
  expect(
    await seal.open(`${prefix}${forged}.${tag}`, { agent: 'mallory', tool: 'notes_request' }),
  ).toBeNull();
  expect(
    await seal.open(`${prefix}${body}.${tag}x`, { agent: 'alice', tool: 'notes_request' }),
  ).toBeNull();
  expect(await seal.open(sealed, { agent: 'bob', tool: 'notes_request' })).toBeNull();
  expect(await seal.open(sealed, { agent: 'alice', tool: 'other_tool' })).toBeNull();
});

it('refuses a state older than 15 minutes', async () => {
  const seal = createApprovalStateSeal(tk.kernel);
  const sealed = await seal.seal(state);
  vi.useFakeTimers({ now: Date.now() + 15 * 60 * 1000 + 1 });
  try {
    expect(await seal.open(sealed, { agent: 'alice', tool: 'notes_request' })).toBeNull();
  } finally {
    vi.useRealTimers();
  }
});

it('waiting for a decision in rounds on one signal leaves no abort listener behind (a task waits for days)', async () => {
  const waiting = new AbortController();
  for (let round = 0; round < 20; round++)
    expect(await decided(tk.kernel, 'no-such-approval', 1, waiting.signal)).toBe(false);
  expect(getEventListeners(waiting.signal, 'abort')).toHaveLength(0);
});
