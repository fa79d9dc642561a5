/**
 * `koharu.get_scene` within the token budget (issue 17): a 200-page scene
 * comes in parts, each answer under 20k tokens (characters of text plus
 * structuredContent, / 4), and following nextCursor returns every page
 * exactly once; `fields: "text"` trims nodes to their texts; a cursor from
 * another request or an older epoch is refused, never silently followed.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { randomUUID } from 'node:crypto';
import type { Client } from '@modelcontextprotocol/client';
import { imageNodeOf, pageOf, textNodeOf, HASH_A } from './helpers.js';
import { sceneServer, type SceneServer } from './server.js';
import { structuredOf, toolJson } from '../../helpers/results.js';

let s: SceneServer;
let client: Client;
const PAGES = 200;

beforeAll(async () => {
  s = await sceneServer();
  client = await s.mcp();
  const opened = await call('koharu.open_project', { path: 'big', createName: 'Big' });
  expect(opened.isError).toBeFalsy();
  const ops = Array.from({ length: PAGES }, (_, i) => ({
    addPage: {
      page: pageOf(
        [
          imageNodeOf('source', HASH_A),
          ...Array.from({ length: 8 }, (_, j) =>
            textNodeOf(`page ${i + 1} line ${j + 1}: ${'some dialogue '.repeat(6)}`),
          ),
        ],
        randomUUID(),
        `page ${i + 1}`,
      ),
    },
  }));
  const applied = await call('koharu.apply', { op: { batch: { ops, label: 'big' } } });
  expect(applied.isError, JSON.stringify(toolJson(applied)).slice(0, 300)).toBeFalsy();
}, 60_000);
afterAll(async () => {
  await s.close();
});

const call = (name: string, args: Record<string, unknown> = {}) =>
  client.callTool({ name, arguments: args });

/** Tokens as issue 17 counts them: the characters the client reads (text content and structuredContent), / 4. */
const tokensOf = (r: Awaited<ReturnType<typeof call>>) =>
  ((r.content as { text?: string }[]).reduce((n, c) => n + (c.text?.length ?? 0), 0) +
    JSON.stringify(r.structuredContent ?? null).length) /
  4;

type View = {
  epoch: number;
  scene: { pages: { id: string; name: string; nodes: { kind: Record<string, unknown> }[] }[] };
  nextCursor?: string;
  note?: string;
};

async function all(args: Record<string, unknown>) {
  const seen: View['scene']['pages'] = [];
  let cursor: string | undefined;
  let answers = 0;
  do {
    const r = await call('koharu.get_scene', { ...args, ...(cursor ? { cursor } : {}) });
    expect(r.isError, JSON.stringify(toolJson(r)).slice(0, 300)).toBeFalsy();
    expect(tokensOf(r)).toBeLessThanOrEqual(20_000);
    const view = structuredOf(r) as View;
    seen.push(...view.scene.pages);
    cursor = view.nextCursor;
    if (cursor) expect(view.note).toMatch(/cursor/);
    answers++;
  } while (cursor);
  return { seen, answers };
}

describe('koharu.get_scene paging', () => {
  it('a 200-page scene comes in parts under the budget, every page exactly once, in order', async () => {
    const { seen, answers } = await all({});
    expect(answers).toBeGreaterThan(1);
    expect(seen.map((p) => p.name)).toEqual(
      Array.from({ length: PAGES }, (_, i) => `page ${i + 1}`),
    );
  });

  it('fields "text" keeps text nodes with their text only, in fewer answers', async () => {
    const full = await all({});
    const text = await all({ fields: 'text' });
    expect(text.answers).toBeLessThan(full.answers);
    expect(text.seen).toHaveLength(PAGES);
    for (const page of text.seen) {
      expect(page.nodes).toHaveLength(8);
      for (const node of page.nodes) expect(Object.keys(node.kind)).toEqual(['text']);
    }
  });

  it('refuses a cursor from another request, a changed scene, or garbage', async () => {
    const first = structuredOf(await call('koharu.get_scene')) as View;
    expect(first.nextCursor).toBeTruthy();
    const other = await call('koharu.get_scene', { fields: 'text', cursor: first.nextCursor });
    expect(other.isError).toBe(true);
    expect(JSON.stringify(toolJson(other))).toMatch(/another request/);
    const garbage = await call('koharu.get_scene', { cursor: 'not-a-cursor' });
    expect(JSON.stringify(toolJson(garbage))).toMatch(/not a cursor get_scene gave/);
    const firstPage = first.scene.pages[0]!.id;
    await call('koharu.apply', {
      op: { updatePage: { id: firstPage, patch: { name: 'renamed' } } },
    });
    const stale = await call('koharu.get_scene', { cursor: first.nextCursor });
    expect(stale.isError).toBe(true);
    expect(JSON.stringify(toolJson(stale))).toMatch(/scene changed since this cursor/);
  });
});
