/**
 * The real `@modelcontextprotocol/server-memory` from npm behind the mcp
 * door: a knowledge-graph session end to end through Airlock, once with a
 * 2025-era client (negotiated, session) and once with a 2026-era client
 * (pinned 2026-07-28, stateless), each on its own graph.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Client } from '@modelcontextprotocol/client';
import { MODERN_PROTOCOL } from '../../helpers/mcp-client.js';
import {
  callTool,
  errorOf,
  gatewayWorkspace,
  serverBin,
  type GatewayWorkspace,
} from './helpers.js';

let ws: GatewayWorkspace;
let dir: string;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'airlock-memory-'));
  const memory = (file: string) => ({
    command: process.execPath,
    args: [serverBin('memory')],
    env: { MEMORY_FILE_PATH: join(dir, file) },
  });
  ws = await gatewayWorkspace({ mem: memory('legacy.jsonl'), mem2: memory('modern.jsonl') });
}, 30_000);

afterAll(async () => {
  await ws?.close();
  rmSync(dir, { recursive: true, force: true });
});

async function session(client: Client, prefix: string) {
  const era = await callTool(client, `${prefix}_create_entities`, {
    entities: [
      { name: 'Ada', entityType: 'person', observations: ['wrote the first program'] },
      { name: 'Engine', entityType: 'machine', observations: ['analytical'] },
    ],
    operationID: `${prefix}-entities-1`,
  });
  expect(era.isError).toBeFalsy();
  expect(era.structuredContent).toMatchObject({ entities: [{ name: 'Ada' }, { name: 'Engine' }] });

  const relation = await callTool(client, `${prefix}_create_relations`, {
    relations: [{ from: 'Ada', to: 'Engine', relationType: 'programmed' }],
  });
  expect(relation.isError).toBeFalsy();
  const observed = await callTool(client, `${prefix}_add_observations`, {
    observations: [{ entityName: 'Ada', contents: ['born 1815'] }],
  });
  expect(observed.isError).toBeFalsy();

  const found = await callTool(client, `${prefix}_search_nodes`, { query: 'Ada' });
  expect(JSON.stringify(found.structuredContent)).toContain('born 1815');

  // Retrying the first write with its operationID returns its first result, nothing twice.
  const again = await callTool(client, `${prefix}_create_entities`, {
    entities: [
      { name: 'Ada', entityType: 'person', observations: ['wrote the first program'] },
      { name: 'Engine', entityType: 'machine', observations: ['analytical'] },
    ],
    operationID: `${prefix}-entities-1`,
  });
  expect(again).toEqual(era);

  // Deleting is destructive: the owner is asked first.
  const asked = await callTool(client, `${prefix}_delete_entities`, { entityNames: ['Engine'] });
  expect(errorOf(asked)).toMatchObject({ code: 'approvalRequired' });
  const graph = await callTool(client, `${prefix}_read_graph`);
  expect(graph.structuredContent?.entities).toHaveLength(2);
  await ws.rest('POST', `approvals/${errorOf(asked).approvalID}/approve`, { scope: 'once' });
  const deleted = await callTool(client, `${prefix}_delete_entities`, { entityNames: ['Engine'] });
  expect(deleted.isError).toBeFalsy();
  const after = await callTool(client, `${prefix}_open_nodes`, { names: ['Ada', 'Engine'] });
  expect(after.structuredContent).toMatchObject({
    entities: [{ name: 'Ada', observations: ['wrote the first program', 'born 1815'] }],
    relations: [],
  });
}

describe('memory upstream', () => {
  it('a knowledge-graph session works end to end with a 2025-era client', async () => {
    const client = await ws.agent('legacy');
    expect(client.getNegotiatedProtocolVersion()).not.toBe(MODERN_PROTOCOL);
    await session(client, 'mem');
  });

  it('a knowledge-graph session works end to end with a 2026-era client', async () => {
    const client = await ws.agent('modern', { pin: MODERN_PROTOCOL });
    expect(client.getNegotiatedProtocolVersion()).toBe(MODERN_PROTOCOL);
    await session(client, 'mem2');
  });

  it('the knowledge-graph resource is listed and read through Airlock', async () => {
    const client = await ws.agent('reader');
    const { resources } = await client.listResources();
    expect(resources.map((r) => r.uri)).toEqual(
      expect.arrayContaining(['mem+memory://knowledge-graph', 'mem2+memory://knowledge-graph']),
    );
    const read = await client.readResource({ uri: 'mem+memory://knowledge-graph' });
    expect(JSON.stringify(read.contents)).toContain('Ada');
  });
});
