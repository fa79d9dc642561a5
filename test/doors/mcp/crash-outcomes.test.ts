/**
 * Writes a crash left open are settled (issue 28): an upstream killed
 * mid-call, a real SDK upstream process (test/fixtures/mcp/task-upstream.mjs,
 * v1 SDK tasks) whose `record` appends to a ledger file and then kills
 * itself before it answers. An upstream that keeps its tasks can say how the
 * write ended: the operation commits the task's result when the upstream is
 * back, and the agent's retry with the same operationID answers it. One that
 * cannot say leaves it explicitly uncertain, and the retry's
 * `mutationUncertain` says what to check. Never run twice: one ledger line.
 * (Airlock itself killed mid-call: crash-restart.test.ts.)
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { operationOf } from '../../../src/kernel/index.js';
import type { JournalState } from '../../../src/kernel/records.js';
import { TASKS } from '../../../src/doors/mcp/outcomes.js';
import {
  callTool,
  errorOf,
  gatewayWorkspace,
  TASK_UPSTREAM,
  type GatewayWorkspace,
} from './helpers.js';
import { waitFor } from '../../helpers/wait.js';

let ws: GatewayWorkspace | undefined;
let dir: string | undefined;
afterEach(async () => {
  await ws?.close();
  ws = undefined;
  if (dir) rmSync(dir, { recursive: true, force: true });
});

/**
 * A workspace over the task upstream with `flags(dir)`, killing itself after
 * each write; `record` is a write (allowed by the default policy).
 */
async function open(
  flags: (dir: string) => string[],
  options: { die?: boolean; timeoutMs?: number } = {},
) {
  const folder = (dir = mkdtempSync(join(tmpdir(), 'airlock-mcp-crash-')));
  const ledger = join(folder, 'ledger');
  ws = await gatewayWorkspace(
    {
      rec: {
        command: process.execPath,
        args: [
          TASK_UPSTREAM,
          '--ledger',
          ledger,
          ...(options.die === false ? [] : ['--die-after-write']),
          ...flags(folder),
        ],
        tools: { record: { effect: 'write' } },
      },
    },
    options.timeoutMs ? { kernel: { limits: { rec: { timeoutMs: options.timeoutMs } } } } : {},
  );
  const kernel = ws.tk.kernel;
  return {
    alice: await ws.agent('alice'),
    lines: () => readFileSync(ledger, 'utf8').split('\n').filter(Boolean),
    /** The journal state of alice's operation `id` on `rec`. */
    async state(id: string): Promise<JournalState | null> {
      for (const state of ['prepared', 'uncertain', 'committed'] as const) {
        const entries = await kernel.store.read((tx) => tx.journal.listByState(state));
        if (entries.some((e) => e.scope === 'rec' && operationOf(e.operationId) === id))
          return state;
      }
      return null;
    },
    tasksKept: () => kernel.store.read((tx) => tx.records.list(TASKS, { prefix: 'rec ' })),
    status: () => ws!.gateway.runtime('rec')!.upstream.status(),
  };
}

describe('mcp door: writes a crash left open', () => {
  it('an upstream killed mid-call that kept its task: the write commits when it is back, and the retry with the same operationID answers its result', async () => {
    const up = await open((d) => ['--tasks', `file:${join(d, 'tasks.json')}`]);
    const first = await callTool(up.alice, 'rec_record', { text: 'once', operationID: 'op-1' });
    expect(errorOf(first)).toMatchObject({ code: 'unavailable', mutationUncertain: true });
    expect(up.lines()).toEqual(['once']);
    // Restarted by Airlock, the upstream still knows the task: settled from it.
    await waitFor(async () => (await up.state('op-1')) === 'committed', {
      timeoutMs: 15_000,
      message: 'op-1 committed from the upstream task',
    });
    const retry = await callTool(up.alice, 'rec_record', { text: 'once', operationID: 'op-1' });
    expect(retry.isError, retry.content[0]?.text).toBeFalsy();
    expect(retry.content).toEqual([{ type: 'text', text: "recorded 'once' as line 1" }]);
    expect(up.lines()).toEqual(['once']);
    expect(up.status().restarts).toBeGreaterThanOrEqual(1);
    // Its task record goes once the operation is settled.
    await ws!.gateway.runtime('rec')!.outcomes.settle();
    expect(await up.tasksKept()).toEqual([]);
  }, 30_000);

  it('an upstream killed mid-call that lost its task (kept in memory): settled as unknown, and the retry is mutationUncertain saying what to check, never run again', async () => {
    const up = await open(() => ['--tasks', 'memory']);
    const first = await callTool(up.alice, 'rec_record', { text: 'once', operationID: 'op-2' });
    expect(errorOf(first)).toMatchObject({ code: 'unavailable', mutationUncertain: true });
    // Asked when it was back, the upstream did not know the task: its record is dropped.
    await waitFor(
      async () => (await up.tasksKept()).length === 0 && up.status().state === 'running',
      {
        timeoutMs: 15_000,
        message: 'the lost task given up',
      },
    );
    expect(await up.state('op-2')).toBe('uncertain');
    const retry = await callTool(up.alice, 'rec_record', { text: 'once', operationID: 'op-2' });
    expect(errorOf(retry)).toMatchObject({ code: 'mutationUncertain' });
    expect(errorOf(retry).message).toMatch(
      /Operation op-2 of rec_record may or may not have been applied.*Check whether its change is there/,
    );
    expect(up.lines()).toEqual(['once']);
  }, 30_000);

  it('an upstream without tasks killed mid-call: the write stays uncertain, its retry is mutationUncertain and never runs it again', async () => {
    const up = await open(() => ['--tasks', 'none']);
    const first = await callTool(up.alice, 'rec_record', { text: 'once', operationID: 'op-3' });
    expect(errorOf(first)).toMatchObject({ code: 'unavailable', mutationUncertain: true });
    await waitFor(() => up.status().state === 'running', { timeoutMs: 15_000 });
    await ws!.gateway.runtime('rec')!.outcomes.settle();
    expect(await up.state('op-3')).toBe('uncertain');
    const retry = await callTool(up.alice, 'rec_record', { text: 'once', operationID: 'op-3' });
    expect(errorOf(retry)).toMatchObject({ code: 'mutationUncertain' });
    expect(up.lines()).toEqual(['once']);
  }, 30_000);

  it('a write whose call timed out while its upstream task ran on is committed when the task ends, and the retry answers its result', async () => {
    const up = await open(
      (d) => ['--tasks', `file:${join(d, 'tasks.json')}`, '--hold', join(d, 'hold')],
      {
        die: false,
        timeoutMs: 1_000,
      },
    );
    const first = await callTool(up.alice, 'rec_record', { text: 'late', operationID: 'op-4' });
    expect(errorOf(first)).toMatchObject({ code: 'mutationUncertain' });
    expect(await up.state('op-4')).toBe('uncertain');
    writeFileSync(join(dir!, 'hold'), '');
    await waitFor(async () => (await up.state('op-4')) === 'committed', {
      timeoutMs: 15_000,
      message: 'op-4 committed once its task ended',
    });
    const retry = await callTool(up.alice, 'rec_record', { text: 'late', operationID: 'op-4' });
    expect(retry.content).toEqual([{ type: 'text', text: "recorded 'late' as line 1" }]);
    expect(up.lines()).toEqual(['late']);
    expect(up.status().restarts).toBe(0);
  }, 30_000);
});
