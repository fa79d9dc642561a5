/** A tool's effect and the MCP hints derived from it (authority.md §3). */
import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { defineTool, type AnyToolDef, type Effect } from '../../src/kernel/tool.js';
import { effectOf } from '../../src/kernel/calls/effect.js';
import type { Door } from '../../src/kernel/door.js';
import { conn, testKernel, type TestKernel } from '../helpers/kernel.js';

let tk: TestKernel | undefined;
afterEach(async () => {
  await tk?.dispose();
  tk = undefined;
});

const door = (tools: AnyToolDef[]): Door => ({ name: 'd', tools });

const toolWith = (effect: AnyToolDef['effect'], extra: Partial<AnyToolDef> = {}) =>
  defineTool({
    name: 't',
    description: 't',
    input: z.object({ kind: z.enum(['read', 'write', 'destructive']).optional() }).strict(),
    effect,
    handler: async () => ({ done: true }),
    ...extra,
  });

async function published(tool: AnyToolDef) {
  tk = await testKernel([door([tool])]);
  return tk.kernel.tools('d')[0]!.annotations;
}

describe('published annotations', () => {
  it('a read tool publishes readOnlyHint true', async () => {
    expect(await published(toolWith('read'))).toEqual({ readOnlyHint: true });
  });

  it('a write tool publishes readOnlyHint false and destructiveHint false', async () => {
    expect(await published(toolWith('write'))).toEqual({
      readOnlyHint: false,
      destructiveHint: false,
    });
  });

  it('a destructive tool publishes readOnlyHint false and destructiveHint true', async () => {
    expect(await published(toolWith('destructive'))).toEqual({
      readOnlyHint: false,
      destructiveHint: true,
    });
  });

  it('a per-call effect publishes its publishedEffect', async () => {
    const tool = toolWith(() => 'read', { publishedEffect: 'write' });
    expect(await published(tool)).toEqual({ readOnlyHint: false, destructiveHint: false });
  });

  it('a per-call effect without publishedEffect publishes destructive, the most cautious', async () => {
    expect(await published(toolWith(() => 'read'))).toEqual({
      readOnlyHint: false,
      destructiveHint: true,
    });
  });

  it('states only the hints a tool names', async () => {
    const some = toolWith('destructive', { statedHints: ['destructiveHint'] });
    expect(await published(some)).toEqual({ destructiveHint: true });
  });

  it('publishes no annotations for a tool that states no hints and has none of its own', async () => {
    expect(await published(toolWith('write', { statedHints: [] }))).toBeUndefined();
  });

  it('puts the derived hints before the tool’s own annotations, in their order', async () => {
    const tool = toolWith('destructive', {
      statedHints: ['destructiveHint'],
      annotations: { openWorldHint: true, idempotentHint: false },
    });
    expect(JSON.stringify(await published(tool))).toBe(
      '{"destructiveHint":true,"openWorldHint":true,"idempotentHint":false}',
    );
  });

  it('ignores a hint written among the annotations: the effect decides', async () => {
    const tool = toolWith('write', {
      annotations: { readOnlyHint: true } as AnyToolDef['annotations'],
    });
    expect(await published(tool)).toEqual({ readOnlyHint: false, destructiveHint: false });
  });

  it('refuses to mount a tool that declares no effect', async () => {
    tk = await testKernel([]);
    const bare = { ...toolWith('read'), effect: undefined } as unknown as AnyToolDef;
    expect(() => tk!.kernel.mount(door([bare]))).toThrow(/declares no effect/);
  });
});

describe('effectOf', () => {
  it('answers a static effect for any input', () => {
    expect(effectOf(toolWith('write'), {})).toBe('write');
  });

  it('decides a per-call effect from the input', () => {
    const tool = toolWith((input: { kind?: Effect }) => input.kind ?? 'destructive');
    expect(effectOf(tool, { kind: 'read' })).toBe('read');
    expect(effectOf(tool, {})).toBe('destructive');
  });
});

describe('audit stage', () => {
  const perCall = defineTool({
    name: 'per_call',
    description: 'reads or writes as asked',
    input: z.object({ kind: z.enum(['read', 'write']) }).strict(),
    effect: ({ kind }) => kind,
    handler: async () => ({ done: true }),
  });

  it('does not audit a call whose effect is read', async () => {
    tk = await testKernel([door([perCall])]);
    await tk.kernel.call('d', 'per_call', { kind: 'read' }, { connection: conn() });
    expect(await tk.kernel.audit.list()).toEqual([]);
  });

  it('audits a call of the same tool whose effect is write', async () => {
    tk = await testKernel([door([perCall])]);
    await tk.kernel.call('d', 'per_call', { kind: 'write' }, { connection: conn() });
    const entries = await tk.kernel.audit.list();
    expect(entries.map((e) => [e.tool, e.result])).toEqual([['per_call', 'ok']]);
  });

  it('audits a refused call whose input never validated, whatever its effect', async () => {
    tk = await testKernel([door([perCall])]);
    await tk.kernel.call('d', 'per_call', { kind: 'nope' }, { connection: conn() });
    const entries = await tk.kernel.audit.list();
    expect(entries.map((e) => [e.tool, e.result])).toEqual([['per_call', 'malformedRequest']]);
  });

  it('answers internal when a per-call effect throws, and audits it', async () => {
    const broken = defineTool({
      name: 'broken',
      description: 'effect throws',
      input: z.object({}).strict(),
      effect: () => {
        throw new Error('bug');
      },
      handler: async () => ({ done: true }),
    });
    tk = await testKernel([door([broken])]);
    const r = await tk.kernel.call('d', 'broken', {}, { connection: conn() });
    expect(r).toMatchObject({ ok: false, code: 'internal' });
    expect((await tk.kernel.audit.list()).map((e) => e.result)).toEqual(['internal']);
  });
});
