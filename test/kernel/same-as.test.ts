/** ToolDef.sameAs: a call that is another tool's runs as that tool, through every stage. */
import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { defineTool } from '../../src/kernel/tool.js';
import { connection } from '../../src/kernel/connection.js';
import { testKernel, type TestKernel } from '../helpers/kernel.js';

let tk: TestKernel | undefined;
afterEach(async () => {
  await tk?.dispose();
  tk = undefined;
});

const ran: string[] = [];
const read = defineTool({
  name: 'd_read',
  description: 'reads a key',
  input: z.object({ key: z.string() }).strict(),
  effect: 'read',
  handler: async ({ key }) => (ran.push(`read ${key}`), { key }),
});
const run = defineTool({
  name: 'd_run',
  description: 'runs a named operation; `read` is d_read',
  input: z.object({ op: z.string(), args: z.unknown().optional() }).strict(),
  effect: 'write',
  sameAs: (args) =>
    (args as { op?: unknown }).op === 'read'
      ? { tool: 'd_read', args: (args as { args?: unknown }).args ?? {} }
      : null,
  handler: async ({ op }) => (ran.push(`run ${op}`), { op }),
});
const alice = connection('agent:alice', 'http-principal', undefined, 'alice');

describe('a tool call that is another tool', () => {
  it('is decided, validated, audited and answered as that tool', async () => {
    tk = await testKernel([{ name: 'd', tools: [read, run] }]);
    ran.length = 0;
    await tk.kernel.policy.add({ tool: 'd_read', decision: 'deny' });
    const denied = await tk.kernel.call(
      'd',
      'd_run',
      { op: 'read', args: { key: 'k' } },
      {
        connection: alice,
      },
    );
    expect(!denied.ok && denied.code).toBe('notAuthorized');
    const malformed = await tk.kernel.call(
      'd',
      'd_run',
      { op: 'read', args: { nope: 1 } },
      {
        connection: alice,
      },
    );
    expect(!malformed.ok && malformed.code).toBe('malformedRequest');
    expect(ran).toEqual([]);
    expect((await tk.kernel.audit.list({})).map((e) => e.tool)).toEqual(['d_read', 'd_read']);
    // A call that is its own runs as itself.
    expect(await tk.kernel.call('d', 'd_run', { op: 'write' }, { connection: alice })).toEqual({
      ok: true,
      value: { op: 'write' },
    });
    expect(ran).toEqual(['run write']);
  });
});
