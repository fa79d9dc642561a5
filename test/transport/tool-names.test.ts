/**
 * `--tool-names portable` (issue 36): names every host accepts, the same
 * tools behind them, and the owner's rules — written with the exact names —
 * still hold; both forms are accepted in either mode; a collision is refused
 * at start, not at an agent's first call.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { randomUUID } from 'node:crypto';
import { join } from 'node:path';
import type { Client } from '@modelcontextprotocol/client';
import { startServe, type Served } from '../helpers/servers.js';
import { connectClient, MODERN_PROTOCOL } from '../helpers/mcp-client.js';
import { run } from '../helpers/cli.js';
import {
  nameTools,
  PORTABLE_TOOL_NAME,
  portableToolName,
} from '../../src/transport/mcp/tool-names.js';

describe('portableToolName', () => {
  it('maps dots and other characters to underscores and keeps portable names as they are', () => {
    expect(portableToolName('koharu.apply')).toBe('koharu_apply');
    expect(portableToolName('rooqi_read_note')).toBe('rooqi_read_note');
    expect(portableToolName('fs:write file/é')).toBe('fs_write_file_e');
    expect(portableToolName('')).toBe('_');
  });

  it('shortens a long name deterministically, keeping two long names apart', () => {
    const a = portableToolName(`up.${'x'.repeat(80)}a`);
    const b = portableToolName(`up.${'x'.repeat(80)}b`);
    for (const n of [a, b]) expect(n).toMatch(PORTABLE_TOOL_NAME);
    expect(a).not.toBe(b);
    expect(portableToolName(`up.${'x'.repeat(80)}a`)).toBe(a);
  });

  it('refuses two tools that would be listed under one portable name, naming both', () => {
    const tools = [
      { mount: 'scene', tool: { name: 'koharu.apply' } },
      { mount: 'other', tool: { name: 'koharu_apply' } },
    ];
    expect(() => nameTools('portable', tools)).toThrow(
      /'koharu\.apply' \('scene'\) and 'koharu_apply' \('other'\) would both be listed as 'koharu_apply'/,
    );
    // Exact names list both; the ambiguous alias is simply not offered.
    const { listed, lookup } = nameTools('exact', tools);
    expect([...listed.keys()]).toEqual(['koharu.apply', 'koharu_apply']);
    expect(lookup.get('koharu_apply')?.mount).toBe('other');
  });
});

describe('airlock serve --tool-names portable', () => {
  const dir = mkdtempSync(join(tmpdir(), 'airlock-tool-names-'));
  const config = join(dir, 'config.json');
  let served: Served;
  const clients: Client[] = [];
  const connect = async (era?: string) => {
    const c = await connectClient(`${served.url}/mcp`, {
      token: served.agentToken!,
      ...(era ? { pin: era } : {}),
    });
    clients.push(c);
    return c;
  };

  beforeAll(async () => {
    writeFileSync(
      config,
      JSON.stringify({
        policy: {
          rules: [
            {
              tool: 'koharu.get_job',
              decision: 'deny',
              reason: 'no job reading today',
            },
          ],
        },
      }),
    );
    served = await startServe([
      '--data',
      join(dir, 'data'),
      '--config',
      config,
      '--tool-names',
      'portable',
    ]);
  });
  afterAll(async () => {
    await Promise.all(clients.map((c) => c.close().catch(() => undefined)));
    served?.child.kill('SIGTERM');
    await served?.exited;
    rmSync(dir, { recursive: true, force: true });
  });

  it('says so at start-up', () => {
    expect(served.stdout()).toMatch(/Tool names\s+portable \(koharu_/);
  });

  for (const era of ['2025', '2026'] as const) {
    it(`lists only names matching ^[a-zA-Z0-9_-]{1,64}$ (${era} era)`, async () => {
      const client = await connect(era === '2026' ? MODERN_PROTOCOL : undefined);
      const names = (await client.listTools()).tools.map((t) => t.name);
      expect(names).toContain('koharu_apply');
      expect(names).toContain('rooqi_read_note');
      expect(names.filter((n) => !PORTABLE_TOOL_NAME.test(n))).toEqual([]);
    });
  }

  it('calls a tool by its portable name and by its exact name', async () => {
    const client = await connect();
    for (const name of ['koharu_list_engines', 'koharu.list_engines']) {
      const result = await client.callTool({ name, arguments: {} });
      expect(result.isError, name).toBeFalsy();
    }
  });

  it("keeps the owner's rule on the exact name for a call by the portable name", async () => {
    const client = await connect();
    const refusal = await client
      .callTool({ name: 'koharu_get_job', arguments: { jobId: randomUUID() } })
      .then(
        (r) => JSON.stringify(r),
        (e: Error) => e.message,
      );
    expect(refusal).toContain('no job reading today');
    const audit = await fetch(`${served.url}/api/v1/audit?limit=50`, {
      headers: { authorization: `Bearer ${served.ownerToken}` },
    }).then((r) => r.json() as Promise<{ entries: { tool: string }[] }>);
    const tools = audit.entries.map((e) => e.tool);
    expect(tools).toContain('koharu.get_job');
    expect(tools).not.toContain('koharu_get_job');
  });
});

describe('airlock serve (exact names)', () => {
  it('accepts the portable form of a name in a call', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'airlock-tool-names-exact-'));
    const served = await startServe(['--data', dir]);
    const client = await connectClient(`${served.url}/mcp`, { token: served.agentToken! });
    try {
      expect(served.stdout()).toMatch(
        /Tool names\s+exact \(koharu\.[a-z_]+, …\).*--tool-names portable/,
      );
      const names = (await client.listTools()).tools.map((t) => t.name);
      expect(names).toContain('koharu.list_engines');
      const result = await client.callTool({ name: 'koharu_list_engines', arguments: {} });
      expect(result.isError).toBeFalsy();
    } finally {
      await client.close();
      served.child.kill('SIGTERM');
      await served.exited;
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('refuses an unknown naming with exit 2', async () => {
    const result = await run(['serve', '--tool-names', 'short', '--port', '0']);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain("--tool-names: 'short' is not a naming; use exact or portable");
  });
});
