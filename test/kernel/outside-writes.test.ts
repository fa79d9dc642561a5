/**
 * Kernel support for doors whose tools and writes live elsewhere (the mcp
 * door): `ctx.writeOutside` journals a write outside the store,
 * `refreshTools` re-reads a door's tools and announces `toolsChanged`, and a
 * tool may publish a foreign JSON Schema unchanged.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { defineTool, failure, type AnyToolDef } from '../../src/kernel/index.js';
import { conn, testKernel, type TestKernel } from '../helpers/kernel.js';
import type { ServedDoor } from '../../src/transport/surface.js';

let tk: TestKernel | undefined;
afterEach(async () => {
  await tk?.dispose();
  tk = undefined;
});

function outsideDoor(world: { writes: number; answer: 'ok' | 'refused' | 'uncertain' }) {
  const tools: AnyToolDef[] = [
    defineTool({
      name: 'poke',
      description: 'Changes the outside world.',
      input: z.object({ operationID: z.string().optional() }).strict(),
      inputJsonSchema: {
        type: 'object',
        properties: { operationID: { type: 'string' } },
        'x-own': true,
      },
      effect: 'write',
      writes: true,
      journal: { operationId: (i) => i.operationID ?? null },
      handler: async (_input, ctx) =>
        ctx.writeOutside(async () => {
          if (world.answer === 'refused')
            return failure('upstreamError', 'refused; nothing changed');
          world.writes++;
          if (world.answer === 'uncertain')
            return failure('unavailable', 'gone mid-call', { mutationUncertain: true });
          return { writes: world.writes };
        }),
    }),
  ];
  const door: ServedDoor = {
    name: 'outside',
    get tools() {
      return tools;
    },
  };
  return { door, tools };
}

describe('writes outside the store', () => {
  it('writeOutside commits the receipt: the same operationID answers the first result, the world changes once', async () => {
    const world = { writes: 0, answer: 'ok' as const };
    tk = await testKernel([outsideDoor(world).door]);
    const first = await tk.kernel.call(
      'outside',
      'poke',
      { operationID: 'a' },
      { connection: conn() },
    );
    const again = await tk.kernel.call(
      'outside',
      'poke',
      { operationID: 'a' },
      { connection: conn() },
    );
    expect(first).toEqual({ ok: true, value: { writes: 1 } });
    expect(again).toEqual(first);
    expect(world.writes).toBe(1);
  });

  it('a refusal from writeOutside leaves no entry: the same operationID runs again', async () => {
    const world = { writes: 0, answer: 'refused' as 'ok' | 'refused' };
    tk = await testKernel([outsideDoor(world).door]);
    const refused = await tk.kernel.call(
      'outside',
      'poke',
      { operationID: 'b' },
      { connection: conn() },
    );
    expect(refused).toMatchObject({ ok: false, code: 'upstreamError' });
    world.answer = 'ok';
    const ran = await tk.kernel.call(
      'outside',
      'poke',
      { operationID: 'b' },
      { connection: conn() },
    );
    expect(ran).toEqual({ ok: true, value: { writes: 1 } });
  });

  it('an uncertain answer keeps the operation uncertain: a retry answers mutationUncertain and changes nothing', async () => {
    const world = { writes: 0, answer: 'uncertain' as 'ok' | 'uncertain' };
    tk = await testKernel([outsideDoor(world).door]);
    await tk.kernel.call('outside', 'poke', { operationID: 'c' }, { connection: conn() });
    world.answer = 'ok';
    const retry = await tk.kernel.call(
      'outside',
      'poke',
      { operationID: 'c' },
      { connection: conn() },
    );
    expect(retry).toMatchObject({ ok: false, code: 'mutationUncertain' });
    expect(world.writes).toBe(1);
  });
});

describe('tools that change', () => {
  it('refreshTools re-reads the door’s tools and publishes toolsChanged', async () => {
    const { door, tools } = outsideDoor({ writes: 0, answer: 'ok' });
    tk = await testKernel([door]);
    const seen: unknown[] = [];
    tk.events.subscribe(({ data }) => seen.push(data));
    tools.push(
      defineTool({
        name: 'added',
        description: 'Added later.',
        input: z.object({}).strict(),
        effect: 'read',
        handler: async () => 'hi',
      }),
    );
    expect(tk.kernel.tools('outside').map((t) => t.name)).toEqual(['poke']);
    tk.kernel.refreshTools('outside');
    expect(tk.kernel.tools('outside').map((t) => t.name)).toEqual(['poke', 'added']);
    expect(await tk.kernel.call('outside', 'added', {}, { connection: conn() })).toEqual({
      ok: true,
      value: 'hi',
    });
    expect(seen).toContainEqual({ event: 'toolsChanged', door: 'outside' });
  });

  it('a tool’s inputJsonSchema is published unchanged', async () => {
    tk = await testKernel([outsideDoor({ writes: 0, answer: 'ok' }).door]);
    expect(tk.kernel.tools('outside')[0]!.inputSchema).toEqual({
      type: 'object',
      properties: { operationID: { type: 'string' } },
      'x-own': true,
    });
  });
});
