/**
 * Rules that say what they match (issue 24 finding 9), over the real
 * filesystem server behind the mcp door as upstream `fs`: a rule whose target
 * can match none of the upstream's targets (`fs:<tool>`) is refused with
 * them, or kept with `force` and a warning; `policy test` takes the tool's
 * own effect and targets from its arguments.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { existsSync, mkdtempSync, realpathSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Client } from '@modelcontextprotocol/client';
import {
  callTool,
  errorOf,
  gatewayWorkspace,
  serverBin,
  type GatewayWorkspace,
} from './helpers.js';

let ws: GatewayWorkspace;
let alice: Client;
let dir: string;

beforeAll(async () => {
  dir = realpathSync(mkdtempSync(join(tmpdir(), 'airlock-fs-rules-')));
  ws = await gatewayWorkspace({
    fs: { command: process.execPath, args: [serverBin('filesystem'), dir] },
  });
  alice = await ws.agent('alice');
}, 30_000);
afterAll(async () => {
  await ws?.close();
  rmSync(dir, { recursive: true, force: true });
});

const removeAll = async () => {
  const { body } = await ws.rest('GET', 'policy');
  for (const rule of body.rules as Array<{ id: string }>)
    await ws.rest('DELETE', `policy/rules/${rule.id}`);
};

describe('a rule whose target cannot match its door is refused with the door’s target forms', () => {
  it('door fs with target write_file is refused, naming fs:<tool> and the target meant', async () => {
    const r = await ws.rest('POST', 'policy/rules', {
      door: 'fs',
      target: 'write_file',
      decision: 'deny',
    });
    expect(r.status).toBe(400);
    expect(r.body.code).toBe('malformedRequest');
    expect(r.body.message).toContain('`fs:<tool>`');
    expect(r.body.message).toContain('Did you mean target `fs:write_file`?');
    expect((await ws.rest('GET', 'policy')).body.rules).toEqual([]);
  });

  it('with force the rule is kept, and the answer carries a warning', async () => {
    const r = await ws.rest('POST', 'policy/rules', {
      door: 'fs',
      target: 'write_file',
      decision: 'deny',
      force: true,
    });
    expect(r.status).toBe(201);
    expect(r.body).toMatchObject({ door: 'fs', target: 'write_file' });
    expect(r.body.warning).toMatch(/never matches/);
    await removeAll();
  });

  it('a tool no upstream has is refused with the closest tool', async () => {
    const r = await ws.rest('POST', 'policy/rules', {
      door: 'mcp',
      tool: 'fs_write_fle',
      decision: 'deny',
    });
    expect(r.status).toBe(400);
    expect(r.body.message).toContain('did you mean `fs_write_file`?');
  });

  it('editing a rule into one that cannot match is refused the same way', async () => {
    const added = await ws.rest('POST', 'policy/rules', { door: 'fs', decision: 'ask' });
    expect(added.status).toBe(201);
    const r = await ws.rest('PUT', `policy/rules/${String(added.body.id)}`, {
      door: 'fs',
      target: 'write_file',
      decision: 'deny',
    });
    expect(r.status).toBe(400);
    expect(r.body.message).toContain('`fs:<tool>`');
    await removeAll();
  });

  it('GET policy/targets lists each mounted door with its target forms', async () => {
    const r = await ws.rest('GET', 'policy/targets');
    expect(r.body.doors).toEqual([
      expect.objectContaining({ door: 'mcp', mount: 'fs', targets: ['fs:<tool>'] }),
    ]);
  });
});

describe('policy test derives the call’s effect and targets from the tool and its arguments', () => {
  it('a rule on fs:write_file denies the call, and policy test says deny without --target', async () => {
    const added = await ws.rest('POST', 'policy/rules', {
      door: 'mcp',
      target: 'fs:write_file',
      decision: 'deny',
      reason: 'no writes',
    });
    expect(added.status).toBe(201);
    const path = join(dir, 'x.txt');
    const tested = await ws.rest('POST', 'policy/test', {
      door: 'fs',
      tool: 'fs_write_file',
      agent: 'alice',
      args: { path, content: 'x' },
    });
    expect(tested.status).toBe(200);
    expect(tested.body).toMatchObject({
      decision: 'deny',
      rule: added.body.id,
      targets: ['fs:write_file'],
    });
    const r = await callTool(alice, 'fs_write_file', { path, content: 'x' });
    expect(errorOf(r)).toMatchObject({ code: 'notAuthorized' });
    expect(existsSync(path)).toBe(false);
    await removeAll();
  });

  it('without arguments for a tool whose targets come from them, it asks for them', async () => {
    const tested = await ws.rest('POST', 'policy/test', { door: 'fs', tool: 'fs_write_file' });
    expect(tested.status).toBe(400);
    expect(tested.body.message).toMatch(/give them as `args`/);
  });
});
