/**
 * A journaled write run as an upstream task (2025-11-25 tasks) is forwarded
 * as faithfully as a plain call (issue 28): the progress the task reports
 * — with the call's own token, after the CreateTaskResult — reaches the
 * agent (2025-era HTTP client with `onprogress`, and a 2026-era client),
 * over a stdio and an HTTP upstream; the agent's cancellation cancels the
 * upstream's task (`tasks/cancel`), which then does not write. The upstream
 * is the SDK task fixture (test/fixtures/mcp/task-upstream.mjs).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { MODERN_PROTOCOL } from '../../helpers/mcp-client.js';
import { waitFor } from '../../helpers/wait.js';
import { TASKS } from '../../../src/doors/mcp/outcomes.js';
import { gatewayWorkspace, TASK_UPSTREAM, type GatewayWorkspace } from './helpers.js';

let ws: GatewayWorkspace | undefined;
let dir: string | undefined;
let child: ChildProcess | undefined;
afterEach(async () => {
  await ws?.close();
  ws = undefined;
  child?.kill('SIGKILL');
  child = undefined;
  if (dir) rmSync(dir, { recursive: true, force: true });
});

/** The fixture over loopback HTTP; resolves its URL once it printed its port. */
async function httpUpstream(args: string[]): Promise<string> {
  const proc = (child = spawn(process.execPath, [TASK_UPSTREAM, ...args, '--http', '0'], {
    stdio: ['ignore', 'pipe', 'inherit'],
  }));
  const port = await new Promise<number>((resolve, reject) => {
    let out = '';
    proc.stdout!.on('data', (chunk: Buffer) => {
      out += chunk.toString();
      const m = /port (\d+)/.exec(out);
      if (m) resolve(Number(m[1]));
    });
    proc.once('exit', (code) => reject(new Error(`task upstream exited (${code})`)));
  });
  return `http://127.0.0.1:${port}/mcp`;
}

async function open(transport: 'stdio' | 'http', extra: (folder: string) => string[]) {
  const folder = (dir = mkdtempSync(join(tmpdir(), 'airlock-mcp-task-progress-')));
  const ledger = join(folder, 'ledger');
  const args = ['--ledger', ledger, ...extra(folder)];
  const where =
    transport === 'stdio'
      ? { command: process.execPath, args: [TASK_UPSTREAM, ...args] }
      : { url: await httpUpstream(args) };
  ws = await gatewayWorkspace({ rec: { ...where, tools: { record: { effect: 'write' } } } });
  return {
    folder,
    lines: () =>
      existsSync(ledger) ? readFileSync(ledger, 'utf8').split('\n').filter(Boolean) : [],
  };
}

describe('mcp door: calls run as upstream tasks', () => {
  for (const transport of ['stdio', 'http'] as const)
    it(`a task’s progress reaches a 2025-era and a 2026-era client (${transport} upstream)`, async () => {
      const up = await open(transport, () => ['--tasks', 'memory', '--progress', '3']);
      const clients = [
        await ws!.agent('progress-2025'),
        await ws!.agent('progress-2026', { pin: MODERN_PROTOCOL }),
      ];
      for (const [i, client] of clients.entries()) {
        const seen: number[] = [];
        const r = await client.callTool(
          { name: 'rec_record', arguments: { text: `t${i}`, operationID: `op-progress-${i}` } },
          { onprogress: (p) => void seen.push(p.progress) },
        );
        expect(r.isError).toBeFalsy();
        expect(JSON.stringify(r.content)).toMatch(new RegExp(`recorded 't${i}'`));
        expect(seen.length).toBeGreaterThanOrEqual(2);
        expect(seen).toEqual([1, 2, 3].slice(0, seen.length));
      }
      // Each was run as a task (its id kept with the operation), once.
      expect(up.lines()).toEqual(['t0', 't1']);
    }, 30_000);

  it('a task call without onprogress asks no progress and answers as before', async () => {
    const up = await open('stdio', () => ['--tasks', 'memory', '--progress', '3']);
    const alice = await ws!.agent('quiet');
    const r = await alice.callTool({
      name: 'rec_record',
      arguments: { text: 'quiet', operationID: 'op-quiet' },
    });
    expect(r.isError).toBeFalsy();
    expect(up.lines()).toEqual(['quiet']);
  }, 30_000);

  for (const transport of ['stdio', 'http'] as const)
    it(`the agent’s cancellation cancels the upstream task, which does not write (${transport} upstream)`, async () => {
      let hold = '';
      let tasksFile = '';
      const up = await open(transport, (folder) => {
        hold = join(folder, 'hold');
        tasksFile = join(folder, 'tasks.json');
        return ['--tasks', `file:${tasksFile}`, '--hold', hold, '--cancel'];
      });
      const statuses = (): string[] =>
        existsSync(tasksFile)
          ? Object.values(
              JSON.parse(readFileSync(tasksFile, 'utf8')) as Record<
                string,
                { task: { status: string } }
              >,
            ).map((t) => t.task.status)
          : [];
      const alice = await ws!.agent('canceller');
      const controller = new AbortController();
      const call = alice.callTool(
        { name: 'rec_record', arguments: { text: 'never', operationID: 'op-cancel' } },
        { signal: controller.signal },
      );
      call.catch(() => undefined);
      await waitFor(() => existsSync(`${hold}.started`), {
        timeoutMs: 10_000,
        message: 'the task to start',
      });
      // The task id is kept before Airlock waits for the result; then the agent cancels.
      await waitFor(
        async () =>
          (await ws!.tk.kernel.store.read((tx) => tx.records.list(TASKS, { prefix: 'rec ' })))
            .length > 0,
        { timeoutMs: 10_000, message: 'the task id to be kept' },
      );
      expect(statuses()).toEqual(['working']);
      controller.abort();
      await expect(call).rejects.toThrow();
      // The upstream heard tasks/cancel: its task is cancelled.
      await waitFor(() => statuses()[0] === 'cancelled', {
        timeoutMs: 10_000,
        message: 'the upstream task to be cancelled',
      });
      // Released, the cancelled task does not write.
      writeFileSync(hold, '');
      await waitFor(() => existsSync(`${hold}.skipped`), {
        timeoutMs: 10_000,
        message: 'the task to see it was cancelled',
      });
      expect(up.lines()).toEqual([]);
    }, 30_000);
});
