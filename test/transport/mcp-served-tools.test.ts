/**
 * The tools an MCP endpoint serves are derived once per kernel and mounts
 * and shared by every server (one per 2025-era session, one per 2026-era
 * request) until a door's tools change (issue #16).
 */
import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { defineTool, type AnyToolDef } from '../../src/kernel/index.js';
import { servedTools } from '../../src/transport/mcp/mcp-server.js';
import type { ServedDoor } from '../../src/transport/surface.js';
import { testKernel, type TestKernel } from '../helpers/kernel.js';

let tk: TestKernel | undefined;
afterEach(async () => {
  await tk?.dispose();
  tk = undefined;
});

const tool = (name: string) =>
  defineTool({
    name,
    description: `The tool ${name}.`,
    input: z.object({}).strict(),
    effect: 'read',
    handler: async () => name,
  });

function door(name: string, names: string[]) {
  const tools: AnyToolDef[] = names.map(tool);
  const served: ServedDoor = {
    name,
    get tools() {
      return tools;
    },
  };
  return { door: served, tools };
}

describe('servedTools', () => {
  it('servers of one kernel and mounts share one tool index and list', async () => {
    tk = await testKernel([door('a', ['a_one']).door, door('b', ['b_one']).door]);
    const first = servedTools(tk.kernel, ['a', 'b']);
    expect(servedTools(tk.kernel, ['a', 'b'])).toBe(first);
    expect(first.tools.map((t) => t.name)).toEqual(['a_one', 'b_one']);
    expect(first.index.get('b_one')?.mount).toBe('b');
    expect(servedTools(tk.kernel, ['a']).tools.map((t) => t.name)).toEqual(['a_one']);
  });

  it('after refreshTools the next servers get the new list; one taken before is unchanged', async () => {
    const changing = door('a', ['a_one']);
    tk = await testKernel([changing.door]);
    const before = servedTools(tk.kernel, ['a']);
    changing.tools.push(tool('a_two'));
    tk.kernel.refreshTools('a');
    const after = servedTools(tk.kernel, ['a']);
    expect(after.tools.map((t) => t.name)).toEqual(['a_one', 'a_two']);
    expect(before.tools.map((t) => t.name)).toEqual(['a_one']);
  });

  it('two doors offering one tool name are refused, naming both', async () => {
    tk = await testKernel([door('a', ['same']).door, door('b', ['same']).door]);
    expect(() => servedTools(tk!.kernel, ['a', 'b'])).toThrow(
      "tool 'same' is offered by both 'a' and 'b'; give one of them another --prefix",
    );
  });
});
