/**
 * Airlock itself SIGKILLed mid-call (issue 28), the built CLI (dist/) as a
 * real process: `airlock mcp --config …` over stdio in front of the SDK task
 * upstream (test/fixtures/mcp/task-upstream.mjs), which holds the write
 * until the test lets it go. Airlock is killed while the upstream holds;
 * the upstream finishes the write; Airlock is started again on the same data
 * folder. An upstream that keeps its tasks lets the next start settle the
 * write: the agent's retry with the same operationID answers the upstream's
 * result. One without tasks cannot say: the retry is `mutationUncertain`
 * naming what to check. Either way the write ran once.
 */
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import { Client } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import { BIN, testEnv } from '../../helpers/cli.js';
import { waitFor } from '../../helpers/wait.js';
import { errorOf, TASK_UPSTREAM, type CallResult } from './helpers.js';

let dir: string;
const clients: Client[] = [];
afterEach(async () => {
  await Promise.all(clients.splice(0).map((c) => c.close().catch(() => undefined)));
  rmSync(dir, { recursive: true, force: true });
});

/** The folder, config and ledger of one test; `tasks` is the upstream's `--tasks`. */
function setUp(tasks: (dir: string) => string) {
  dir = mkdtempSync(join(tmpdir(), 'airlock-mcp-kill-'));
  const ledger = join(dir, 'ledger');
  const hold = join(dir, 'hold');
  const config = join(dir, 'airlock.json');
  writeFileSync(
    config,
    JSON.stringify({
      upstreams: {
        rec: {
          command: process.execPath,
          args: [TASK_UPSTREAM, '--ledger', ledger, '--hold', hold, '--tasks', tasks(dir)],
          tools: { record: { effect: 'write' } },
        },
      },
    }),
  );
  const data = join(dir, 'data');
  return {
    ledger,
    hold,
    lines: () =>
      existsSync(ledger) ? readFileSync(ledger, 'utf8').split('\n').filter(Boolean) : [],
    /** `airlock mcp` on the folder's data, and the agent's client of it. */
    async start() {
      const transport = new StdioClientTransport({
        command: process.execPath,
        args: [BIN, 'mcp', '--config', config, '--data', data],
        env: testEnv() as Record<string, string>,
        stderr: 'pipe',
      });
      const client = new Client({ name: 'crash-agent', version: '1' });
      await client.connect(transport);
      clients.push(client);
      return { client, pid: transport.pid! };
    },
    /** How many upstream task ids Airlock's store keeps (read beside the live process). */
    tasksKept() {
      const db = new Database(join(data, 'airlock.db'), { readonly: true, fileMustExist: true });
      try {
        const row = db
          .prepare("SELECT count(*) AS n FROM records WHERE collection = 'mcp.tasks'")
          .get() as { n: number };
        return row.n;
      } finally {
        db.close();
      }
    },
  };
}

const record = (client: Client, operationID: string) =>
  client.callTool({
    name: 'rec_record',
    arguments: { text: 'once', operationID },
  }) as Promise<CallResult>;

/** Airlock killed while the upstream holds the write; the write then runs; Airlock started again. */
async function killMidCall(t: ReturnType<typeof setUp>, sent: () => boolean) {
  const first = await t.start();
  const call = record(first.client, 'op-k').catch((error: unknown) => error);
  await waitFor(() => existsSync(`${t.hold}.started`) && sent(), {
    timeoutMs: 15_000,
    message: 'the upstream holding the write',
  });
  process.kill(first.pid, 'SIGKILL');
  expect(await call).toBeInstanceOf(Error);
  writeFileSync(t.hold, '');
  await waitFor(() => t.lines().length === 1, { timeoutMs: 10_000, message: 'the write done' });
  return t.start();
}

describe('Airlock killed mid-call', () => {
  it('an upstream that kept its task: the next start settles the write, and the retry with the same operationID answers its result', async () => {
    const t = setUp((d) => `file:${join(d, 'tasks.json')}`);
    // Killed only once Airlock has stored the upstream's task id.
    const again = await killMidCall(t, () => t.tasksKept() === 1);
    const retry = await record(again.client, 'op-k');
    expect(retry.isError, retry.content[0]?.text).toBeFalsy();
    expect(retry.content).toEqual([{ type: 'text', text: "recorded 'once' as line 1" }]);
    expect(t.lines()).toEqual(['once']);
  }, 60_000);

  it('an upstream without tasks: the next start leaves the write uncertain, and the retry is mutationUncertain saying what to check', async () => {
    const t = setUp(() => 'none');
    const again = await killMidCall(t, () => true);
    const retry = await record(again.client, 'op-k');
    expect(errorOf(retry)).toMatchObject({ code: 'mutationUncertain' });
    expect(errorOf(retry).message).toMatch(
      /^Operation op-k of rec_record may or may not have been applied.*Check whether its change is there/,
    );
    expect(t.lines()).toEqual(['once']);
  }, 60_000);
});
