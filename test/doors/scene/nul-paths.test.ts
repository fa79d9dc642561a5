/** A NUL byte in a project path or id, over real MCP and HTTP: a malformed field, never a failing syscall. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Client } from '@modelcontextprotocol/client';
import { json, post, sceneServer, type SceneServer } from './server.js';
import { toolJson } from '../../helpers/results.js';

let s: SceneServer;
let client: Client;
beforeAll(async () => {
  s = await sceneServer();
  client = await s.mcp();
});
afterAll(async () => {
  await s.close();
});

const call = (name: string, args: Record<string, unknown> = {}) =>
  client.callTool({ name, arguments: args });

describe('a NUL byte in a project path', () => {
  it('open_project with a NUL byte in path answers malformedRequest naming the field', async () => {
    for (const args of [{ path: 'nul\u0000.khrproj', createName: 'Nul' }, { path: 'a\u0000b' }]) {
      const r = await call('koharu.open_project', args);
      expect(r.isError).toBe(true);
      expect(toolJson(r)).toMatchObject({
        code: 'malformedRequest',
        message: expect.stringMatching(/'path'.*NUL/),
      });
    }
  });

  it('the REST open with a NUL byte in id answers 400 malformedRequest naming the field', async () => {
    const res = await post(s, 'projects/current', { id: 'a\u0000b' }, 'PUT');
    expect(await json(res)).toMatchObject({
      status: 400,
      code: 'malformedRequest',
      message: expect.stringMatching(/'id'.*NUL/),
    });
  });
});
