/**
 * The newest client majors, which need Node 22 (issue 36 item 9): the Vercel
 * AI SDK's MCP client 2.x, mcp-use 1.34 and the MCP Inspector 2.12 CLI, run by
 * the Node 22 binary of .cache/node22 from their own cache .cache/clients22
 * (scripts/node22.mjs pins and installs both; .ci/run does it before the
 * tests). Against a real `airlock serve`, over HTTP and stdio: connect, list
 * the tools (every schema accepted), read, ask — the card's link visible to
 * the client's user — the owner approves over REST, the retry runs exactly
 * once; and with `--tool-names portable` every listed name is portable.
 * With no cache and no registry to fill it, the suite says so and skips.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomUUID } from 'node:crypto';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { startServe, type Served } from '../helpers/servers.js';
import { CLIENT_RULES, ownerSide } from './owner-side.js';
import { BIN, testEnv } from '../helpers/cli.js';
import { waitFor } from '../helpers/wait.js';
// @ts-expect-error plain .mjs helper shared with scripts/conformance.mjs
import * as node22 from '../../scripts/node22.mjs';

const { NODE22, CLIENTS22_PREFIX, ensureClients22 } = node22 as {
  NODE22: string;
  CLIENTS22_PREFIX: string;
  ensureClients22(quiet: boolean): void;
};
let unavailable = '';
try {
  ensureClients22(true);
} catch (error) {
  unavailable = `${(error as Error).message} (no registry?)`;
  console.warn(`SKIPPED: the Node 22 client suite cannot run: ${unavailable}`);
}

const DRIVER = fileURLToPath(new URL('./node22/drive.mjs', import.meta.url));
const INSPECTOR = join(
  CLIENTS22_PREFIX,
  'node_modules/@modelcontextprotocol/inspector/clients/cli/build/index.js',
);
const DOORS = 'ledger,scene,notes';
const dir = mkdtempSync(join(tmpdir(), 'airlock-clients22-'));
const data = join(dir, 'data');
const portableData = join(dir, 'portable');
const config = join(dir, 'config.json');
let served: Served;
let portable: Served;

beforeAll(async () => {
  if (unavailable) return;
  writeFileSync(config, JSON.stringify({ policy: { rules: CLIENT_RULES } }));
  [served, portable] = await Promise.all([
    startServe(['--data', data, '--doors', DOORS, '--config', config]),
    startServe([
      ...['--data', portableData, '--doors', DOORS, '--config', config],
      ...['--tool-names', 'portable'],
    ]),
  ]);
});
afterAll(async () => {
  for (const s of [served, portable]) s?.child.kill('SIGTERM');
  await served?.exited;
  await portable?.exited;
  rmSync(dir, { recursive: true, force: true });
});

interface Target {
  url: string;
  token: string;
  command: string;
  args: string[];
  env: Record<string, string>;
}
const target = (on: Served, folder: string, extra: string[] = []): Target => ({
  url: on.url,
  token: on.agentToken ?? '',
  command: process.execPath,
  args: [BIN, 'stdio', '--doors', DOORS, '--data', folder, '--config', config, ...extra],
  env: testEnv() as Record<string, string>,
});
const exact = () => target(served, data);
const portableTarget = () => target(portable, portableData, ['--tool-names', 'portable']);

interface Driven {
  tools: string[];
  call(name: string, args: Record<string, string>): Promise<string>;
  close(): Promise<void>;
}

/** A client library in a Node 22 process of its own, spoken to in JSON lines. */
async function library(kind: string, transport: string, to: Target): Promise<Driven> {
  const child = spawn(NODE22, [DRIVER, kind, transport, JSON.stringify(to), CLIENTS22_PREFIX], {
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  let stderr = '';
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  const lines = createInterface({ input: child.stdout })[Symbol.asyncIterator]();
  const next = async () => {
    const line = await lines.next();
    if (line.done) throw new Error(`${kind} driver ended: ${stderr}`);
    return JSON.parse(line.value as string) as { tools?: string[]; text?: string };
  };
  const { tools } = await next();
  return {
    tools: tools!,
    call: async (name, args) => {
      child.stdin.write(JSON.stringify({ call: name, args }) + '\n');
      return (await next()).text!;
    },
    close: async () => {
      child.stdin.end(JSON.stringify({ close: true }) + '\n');
      await new Promise((r) => child.once('exit', r));
    },
  };
}

/** The Inspector 2.12 CLI: one process per command, as its users run it. */
function inspectorRun(transport: string, to: Target, method: string[]): Promise<string> {
  const where =
    transport === 'http'
      ? [`${to.url}/mcp`, '--transport', 'http', '--header', `Authorization: Bearer ${to.token}`]
      : [
          '-e',
          'AIRLOCK_ENABLE_TEST_DOORS=1',
          '-e',
          'AIRLOCK_LOG_LEVEL=warn',
          '--',
          to.command,
          ...to.args,
        ];
  const args = transport === 'http' ? [...where, ...method] : [...method, ...where];
  const child = spawn(NODE22, [INSPECTOR, ...args], {
    env: { ...process.env, HOME: dir },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  child.stdout.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr.on('data', (d: Buffer) => (out += d.toString()));
  return new Promise((resolve) => child.once('exit', () => resolve(out)));
}
async function inspector(transport: string, to: Target): Promise<Driven> {
  const listed = await inspectorRun(transport, to, ['--method', 'tools/list']);
  const tools = [...listed.matchAll(/"name":\s*"([^"]+)"/g)].map((m) => m[1]!);
  return {
    tools,
    call: (name, args) =>
      inspectorRun(transport, to, [
        ...['--method', 'tools/call', '--tool-name', name],
        ...Object.entries(args).flatMap(([k, v]) => ['--tool-arg', `${k}=${v}`]),
      ]),
    close: async () => undefined,
  };
}

const { askedId, approveOnce, auditAfter } = ownerSide(() => served);

const drivers: [string, (to: Target) => Promise<Driven>][] = [
  ['AI SDK 2 over HTTP', (to) => library('ai-sdk2', 'http', to)],
  ['AI SDK 2 over stdio', (to) => library('ai-sdk2', 'stdio', to)],
  ['mcp-use 1.34 over HTTP', (to) => library('mcp-use', 'http', to)],
  ['mcp-use 1.34 over stdio', (to) => library('mcp-use', 'stdio', to)],
  ['Inspector 2.12 CLI over HTTP', (to) => inspector('http', to)],
  ['Inspector 2.12 CLI over stdio', (to) => inspector('stdio', to)],
];

// A Node 22 process per client (and per Inspector command) is slow on a busy 2-core machine.
describe
  .skipIf(!!unavailable)
  .sequential('the newest client majors on Node 22', { timeout: 90_000 }, () => {
    for (const [label, drive] of drivers) {
      it(`${label}: connect, list, read, ask with the card's link, approve, the retry runs once`, async () => {
        const client = await drive(exact());
        try {
          expect(client.tools).toEqual(
            expect.arrayContaining(['ledger_echo', 'koharu.apply', 'rooqi_append_text']),
          );
          expect(
            await client.call('ledger_query_operation', { operationID: randomUUID() }),
          ).toContain('not-found');
          const text = `hello from ${label}`;
          const asked = await client.call('ledger_echo', { text });
          const { last } = await auditAfter(0);
          await approveOnce(askedId(asked));
          const ran = await client.call('ledger_echo', { text });
          expect(ran).toContain(text);
          expect(ran).not.toContain('approvalRequired');
          expect(await client.call('ledger_echo', { text })).toContain('approvalRequired');
          await waitFor(async () => (await auditAfter(last)).echoes >= 1, {
            message: 'the approved call in the audit',
          });
          expect((await auditAfter(last)).echoes).toBe(1);
        } finally {
          await client.close();
        }
      });

      it(`${label}: with --tool-names portable every listed name is portable and the rule on the exact name holds`, async () => {
        const client = await drive(portableTarget());
        try {
          expect(client.tools).toEqual(
            expect.arrayContaining(['koharu_apply', 'koharu_list_engines']),
          );
          for (const name of client.tools) expect(name).toMatch(/^[a-zA-Z0-9_-]{1,64}$/);
          const refused = await client.call('koharu_list_engines', {});
          expect(refused).toMatch(/notAuthorized|denied/i);
        } finally {
          await client.close();
        }
      });
    }
  });

// Not silent: with no cache the run shows a skipped test that names the reason.
if (unavailable) it.skip(`the Node 22 clients: not installed (${unavailable})`, () => undefined);
