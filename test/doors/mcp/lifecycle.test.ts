/**
 * Upstream lifecycle and limits: an upstream that keeps dying is marked
 * failed with its last stderr lines and answers `unavailable` saying so; a
 * lazy upstream publishes the tools it listed last time and is spawned only
 * at the first call; a result over the response limit is refused with a
 * "narrow the call" message.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { mkdtempSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createUpstream } from '../../../src/doors/mcp/upstream/upstream.js';
import type { UpstreamAuthorization } from '../../../src/doors/mcp/oauth/client.js';
import { createMcpDoorsFrom, parseUpstreams } from '../../../src/doors/mcp/index.js';
import { silentLogger } from '../../../src/kernel/logger.js';
import { testKernel, type TestKernel } from '../../helpers/kernel.js';
import { connection } from '../../../src/kernel/connection.js';
import { waitFor } from '../../helpers/wait.js';
import {
  callTool,
  errorOf,
  gatewayWorkspace,
  serverBin,
  type GatewayWorkspace,
} from './helpers.js';

const agent = { ...connection('agent:alice/process:1', 'stdio'), agent: 'alice' };
const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

describe('upstream lifecycle', () => {
  it('an upstream that keeps dying is failed, keeps its last stderr lines, and calls say so', async () => {
    const upstream = createUpstream({
      name: 'broken',
      config: parseUpstreams({
        broken: {
          command: process.execPath,
          args: [
            '-e',
            "console.error('boom: no config file at /etc/broken.json'); process.exit(3)",
          ],
        },
      }).broken!,
      env: {},
      headers: {},
      logger: silentLogger,
      scrub: (t) => t,
      onListChanged: () => undefined,
      onConnected: async () => undefined,
      backoffMs: [10],
    });
    cleanups.push(() => upstream.stop());
    await expect(upstream.start()).rejects.toThrow();
    await waitFor(() => upstream.status().state === 'failed', { timeoutMs: 10_000 });
    const status = upstream.status();
    expect(status.stderr).toContain('boom: no config file at /etc/broken.json');
    expect(status.lastError).toBeTruthy();
    const answer = await upstream.client(100);
    expect(answer).toMatchObject({ ok: false, code: 'unavailable', data: { state: 'failed' } });
    expect((answer as { message: string }).message).toMatch(/failed and is no longer restarted/);
  }, 20_000);

  it('start after the owner connects connects even when an attempt that read the grant before the connect is under way', async () => {
    // The grant as the upstream reads it: each call answers the next scripted value.
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    const answers: Array<() => Promise<string | null>> = [
      async () => 'the owner has not connected it yet', // the start at boot
      async () => null, // the call's own look: connected by now
      async () => {
        await gate; // the retry it starts read the store before the connect was written
        return 'the owner has not connected it yet';
      },
    ];
    const authorization = {
      blocked: () => (answers.shift() ?? (async () => null))(),
    } as unknown as UpstreamAuthorization;
    let connected = 0;
    const upstream = createUpstream({
      name: 'gh',
      config: parseUpstreams({ gh: { command: process.execPath, args: [serverBin('memory')] } })
        .gh!,
      env: {},
      headers: {},
      logger: silentLogger,
      scrub: (t) => t,
      onListChanged: () => undefined,
      onConnected: async () => void connected++,
      authorization,
    });
    cleanups.push(() => upstream.stop());
    await expect(upstream.start()).rejects.toThrow(/connect/);
    expect(upstream.status().state).toBe('unauthorized');
    await upstream.client(0); // starts the attempt that will read the stale grant
    expect(answers).toHaveLength(0);
    const started = upstream.start(); // the owner's connect just finished
    release();
    await started;
    expect(upstream.status().state).toBe('running');
    expect(connected).toBe(1);
  }, 20_000);

  it('a lazy upstream publishes the tools listed last time and is spawned at the first call', async () => {
    const cache = mkdtempSync(join(tmpdir(), 'airlock-mcp-cache-'));
    const files = realpathSync(mkdtempSync(join(tmpdir(), 'airlock-mcp-lazy-')));
    writeFileSync(join(files, 'lazy.txt'), 'lazy hello');
    cleanups.push(() => rmSync(cache, { recursive: true, force: true }));
    cleanups.push(() => rmSync(files, { recursive: true, force: true }));
    const upstreams = parseUpstreams({
      fs: { command: process.execPath, args: [serverBin('filesystem'), files], start: 'lazy' },
    });
    const open = async () => {
      const built = createMcpDoorsFrom({
        upstreams,
        env: process.env,
        logger: silentLogger,
        cacheDir: cache,
      });
      const tk: TestKernel = await testKernel(built.doors);
      return { tk, gateway: built.gateway };
    };
    // First start: no list kept yet, so it connects at start and keeps the list.
    const first = await open();
    expect(first.tk.kernel.tools('fs').map((t) => t.name)).toContain('fs_read_text_file');
    await first.tk.dispose();
    // Second start: the kept list is published, nothing is spawned until a call.
    const second = await open();
    cleanups.push(() => second.tk.dispose());
    expect(second.gateway.runtime('fs')!.upstream.status()).toMatchObject({
      state: 'idle',
      pid: null,
    });
    expect(second.tk.kernel.tools('fs').map((t) => t.name)).toContain('fs_read_text_file');
    const r = await second.tk.kernel.call(
      'fs',
      'fs_read_text_file',
      { path: join(files, 'lazy.txt') },
      { connection: agent },
    );
    expect(r).toMatchObject({
      ok: true,
      value: { content: [{ type: 'text', text: 'lazy hello' }] },
    });
    expect(second.gateway.runtime('fs')!.upstream.status().state).toBe('running');
  }, 30_000);
});

describe('limits and auditReads', () => {
  let ws: GatewayWorkspace | undefined;
  afterEach(async () => {
    await ws?.close();
    ws = undefined;
  });

  it('a result over the response limit is refused with a message to narrow the call; with auditReads false plain reads are not audited', async () => {
    const files = realpathSync(mkdtempSync(join(tmpdir(), 'airlock-mcp-big-')));
    cleanups.push(() => rmSync(files, { recursive: true, force: true }));
    writeFileSync(join(files, 'big.txt'), 'a line of text\n'.repeat(2_000));
    ws = await gatewayWorkspace(
      {
        fs: {
          command: process.execPath,
          args: [serverBin('filesystem'), files],
          auditReads: false,
        },
      },
      { kernel: { limits: { fs: { responseBytes: 4_000 } } } },
    );
    const alice = await ws.agent('alice');
    const r = await callTool(alice, 'fs_read_text_file', { path: join(files, 'big.txt') });
    expect(errorOf(r)).toMatchObject({ code: 'resultTooLarge', max: 4_000 });
    expect(errorOf(r).message).toMatch(/Narrow the call: ask the upstream tool for less/);
    const small = await callTool(alice, 'fs_read_text_file', {
      path: join(files, 'big.txt'),
      head: 3,
    });
    expect(small.isError).toBeFalsy();
    // auditReads: false — the refused read is audited, the plain one is not.
    const audit = (await ws.rest('GET', 'audit?door=fs')).body.entries as Array<{ result: string }>;
    expect(audit.map((e) => e.result)).toEqual(['resultTooLarge']);
  }, 30_000);
});
