/**
 * Schemas simple clients read (issue 36): every top-level property of every
 * tool's input schema, of every door — scene, notes, page, an openapi mount
 * and an mcp upstream — states its `type`, and a recursive schema stays
 * valid after one level of `$ref`s is inlined (what LangChain's adapters and
 * the Inspector 0.x do), over real HTTP from a real `airlock serve`.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { startServe, type Served } from '../helpers/servers.js';
import { connectClient } from '../helpers/mcp-client.js';

type Json = Record<string, unknown>;
const isObject = (v: unknown): v is Json =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

const petstore = fileURLToPath(new URL('../fixtures/openapi/petstore.yaml', import.meta.url));
const memory = fileURLToPath(new URL('../../node_modules/.bin/mcp-server-memory', import.meta.url));
const dir = mkdtempSync(join(tmpdir(), 'airlock-tool-schemas-'));
let served: Served;
const tools: { name: string; inputSchema: Json }[] = [];

beforeAll(async () => {
  served = await startServe([
    '--data',
    dir,
    '--openapi',
    petstore,
    '--base-url',
    'http://127.0.0.1:9',
    '--prefix',
    'pets',
    '--upstream',
    `mem=${process.execPath} ${memory}`,
  ]);
  // `/mcp` over its token budget lists an upstream by its search/call pair; `/mcp/mem` lists its own.
  for (const path of ['/mcp', '/mcp/mem']) {
    const client = await connectClient(`${served.url}${path}`, { token: served.agentToken! });
    try {
      const listed = (await client.listTools()).tools as typeof tools;
      tools.push(...listed.filter((t) => !tools.some((known) => known.name === t.name)));
    } finally {
      await client.close();
    }
  }
}, 60_000);
afterAll(async () => {
  served?.child.kill('SIGTERM');
  await served?.exited;
  rmSync(dir, { recursive: true, force: true });
});

/** Every `$ref` in `node` that does not resolve in `defs`. */
function danglingRefs(node: unknown, defs: Json): string[] {
  if (Array.isArray(node)) return node.flatMap((n) => danglingRefs(n, defs));
  if (!isObject(node)) return [];
  const own =
    typeof node.$ref === 'string' && !(/^#\/\$defs\/(.+)$/.exec(node.$ref)?.[1] ?? '' in defs)
      ? [node.$ref]
      : [];
  return [
    ...own,
    ...Object.entries(node)
      .filter(([k]) => k !== 'enum' && k !== 'const' && k !== 'default')
      .flatMap(([, v]) => danglingRefs(v, defs)),
  ];
}

describe('published input schemas', () => {
  it('lists the tools of every door (scene, notes, page, openapi, mcp)', () => {
    const names = tools.map((t) => t.name);
    expect(names).toEqual(
      expect.arrayContaining([
        'koharu.apply',
        'rooqi_append_text',
        'wu_click',
        'pets_call',
        'mem_create_entities',
      ]),
    );
  });

  it('every top-level property of every tool states its type', () => {
    const untyped = tools.flatMap((t) =>
      Object.entries((t.inputSchema.properties as Json | undefined) ?? {})
        .filter(([, p]) => !isObject(p) || p.type === undefined)
        .map(([name]) => `${t.name}.${name}`),
    );
    expect(untyped).toEqual([]);
  });

  it("koharu.apply's op keeps its $ref beside type object", () => {
    const apply = tools.find((t) => t.name === 'koharu.apply')!;
    const op = (apply.inputSchema.properties as Json).op as Json;
    expect(op.type).toBe('object');
  });

  it('stays valid after one level of $refs is inlined', () => {
    for (const t of tools) {
      const defs = (t.inputSchema.$defs as Json | undefined) ?? {};
      const props = (t.inputSchema.properties as Json | undefined) ?? {};
      const inlined = Object.fromEntries(
        Object.entries(props).map(([k, p]) => {
          const ref =
            isObject(p) && typeof p.$ref === 'string'
              ? /^#\/\$defs\/(.+)$/.exec(p.$ref)?.[1]
              : undefined;
          return [k, ref !== undefined ? defs[ref] : p];
        }),
      );
      expect(danglingRefs(inlined, defs), t.name).toEqual([]);
    }
  });
});
