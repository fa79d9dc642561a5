/**
 * The token budget of `tools/list` (issue 17): an agent pays for every tool
 * description and schema on every turn, so the default doors' list stays
 * within 6k tokens (characters / 4 of the JSON the client receives), over
 * real HTTP from a real `airlock serve` with the default doors, in both
 * protocol eras.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Client } from '@modelcontextprotocol/client';
import { startServe, type Served } from '../helpers/servers.js';
import { connectClient, MODERN_PROTOCOL } from '../helpers/mcp-client.js';

const BUDGET_TOKENS = 6_000;
const dir = mkdtempSync(join(tmpdir(), 'airlock-tools-budget-'));
let served: Served;

beforeAll(async () => {
  served = await startServe(['--data', dir]);
});
afterAll(async () => {
  served?.child.kill('SIGTERM');
  await served?.exited;
  rmSync(dir, { recursive: true, force: true });
});

async function listed(pin?: string) {
  const client: Client = await connectClient(`${served.url}/mcp`, {
    token: served.agentToken!,
    ...(pin ? { pin } : {}),
  });
  try {
    return (await client.listTools()).tools;
  } finally {
    await client.close();
  }
}

const tokens = (v: unknown) => Math.ceil(JSON.stringify(v).length / 4);

describe('tools/list of the default doors', () => {
  for (const era of ['2025', '2026'] as const) {
    it(`stays within ${BUDGET_TOKENS} tokens (${era} era) and still lists every door's tools`, async () => {
      const tools = await listed(era === '2026' ? MODERN_PROTOCOL : undefined);
      const names = tools.map((t) => t.name);
      // The default doors are all there: scene, notes and page.
      expect(names).toEqual(
        expect.arrayContaining(['koharu.get_scene', 'rooqi_read_note', 'wu_snapshot']),
      );
      const perDoor: Record<string, number> = {};
      for (const t of tools) {
        const door = t.name.startsWith('koharu.')
          ? 'scene'
          : t.name.startsWith('rooqi_')
            ? 'notes'
            : t.name.startsWith('wu_')
              ? 'page'
              : 'other';
        perDoor[door] = (perDoor[door] ?? 0) + tokens(t);
      }
      const total = tokens(tools);
      console.log(`tools/list ${era}: ${tools.length} tools, ~${total} tokens`, perDoor);
      expect(total).toBeLessThanOrEqual(BUDGET_TOKENS);
    });
  }

  it('every tool keeps a description and an input schema an agent can act on', async () => {
    for (const t of await listed()) {
      expect(t.description, t.name).toMatch(/\w{3,}/);
      expect(t.inputSchema.type, t.name).toBe('object');
    }
  });
});
