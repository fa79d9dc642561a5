/**
 * An upstream with 10,000 tools: the whole `/mcp` `tools/list` stays within
 * its token budget (6,000 by default) by listing the upstream as a search
 * and a call tool; finding and calling the 10,000th tool works, through the
 * same validation and policy as a direct call; `/mcp/NAME` still lists
 * every tool, paged with `nextCursor`.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { fileURLToPath } from 'node:url';
import type { Client } from '@modelcontextprotocol/client';
import {
  callTool,
  errorOf,
  gatewayWorkspace,
  type GatewayWorkspace,
  type Json,
} from './helpers.js';

const script = fileURLToPath(new URL('../../fixtures/mcp/many-upstream.mjs', import.meta.url));
let ws: GatewayWorkspace;
let alice: Client;

beforeAll(async () => {
  ws = await gatewayWorkspace({ many: { command: process.execPath, args: [script] } });
  alice = await ws.agent('alice');
}, 60_000);

afterAll(async () => {
  await ws?.close();
});

afterEach(async () => {
  for (const r of (await ws.rest('GET', 'policy')).body.rules as Array<{
    id: string;
    source: string;
  }>)
    if (r.source === 'owner') await ws.rest('DELETE', `policy/rules/${r.id}`);
});

const json = (r: { content: Array<{ text?: string }> }) => JSON.parse(r.content[0]!.text!) as Json;

describe('an upstream with 10,000 tools', () => {
  it('/mcp lists it as a search and a call tool, within 6,000 tokens', async () => {
    const listed = await alice.listTools();
    expect(listed.tools.map((t) => t.name).sort()).toEqual(['many_call_tool', 'many_search_tools']);
    expect(listed.nextCursor).toBeUndefined();
    expect(JSON.stringify(listed).length / 4).toBeLessThanOrEqual(6000);
  });

  it('finds the 10,000th tool by words of its description and calls it', async () => {
    const found = json(await callTool(alice, 'many_search_tools', { query: 'code word w9999' }));
    expect(found.tools[0]).toEqual({
      name: 'many_tool_9999',
      description: 'Tool number 9999: answers the code word w9999 with x appended.',
      effect: 'read',
    });
    const r = await callTool(alice, 'many_call_tool', {
      name: 'many_tool_9999',
      arguments: { x: 'hi' },
    });
    expect(r.isError).toBeFalsy();
    expect(r.content[0]!.text).toBe('w9999:hi');
    // The tool's own name (the upstream's) works too; so does calling it directly.
    const own = await callTool(alice, 'many_call_tool', { name: 'tool_17', arguments: { x: 'a' } });
    expect(own.content[0]!.text).toBe('w17:a');
    expect((await callTool(alice, 'many_tool_42', { x: 'b' })).content[0]!.text).toBe('w42:b');
  });

  it('a call through the call tool is validated and decided as the tool itself', async () => {
    const wrong = await callTool(alice, 'many_call_tool', {
      name: 'many_tool_9999',
      arguments: { x: 1 },
    });
    expect(errorOf(wrong)).toMatchObject({ code: 'malformedRequest' });
    expect(errorOf(wrong).message).toMatch(/'x' must be string/);
    const rule = await ws.rest('POST', 'policy/rules', {
      target: 'many:tool_9999',
      decision: 'deny',
      reason: 'not this one',
    });
    expect(rule.status).toBe(201);
    const denied = await callTool(alice, 'many_call_tool', {
      name: 'many_tool_9999',
      arguments: { x: 'a' },
    });
    expect(errorOf(denied)).toMatchObject({ code: 'notAuthorized', rule: rule.body.id });
    const audit = await ws.rest('GET', 'audit?door=many');
    expect((audit.body.entries as Json[]).some((e) => e.tool === 'many_tool_9999')).toBe(true);
  });

  it('an unknown name is notFound, saying how to find one', async () => {
    const r = await callTool(alice, 'many_call_tool', { name: 'nope', arguments: {} });
    expect(errorOf(r)).toMatchObject({ code: 'notFound' });
    expect(errorOf(r).message).toMatch(/many_search_tools/);
  });

  it('/mcp/many lists every tool, paged with nextCursor', async () => {
    const one = await ws.agent('bob', { path: 'many' });
    // The first page as the server answers it (listTools without a cursor follows every page).
    const first = (await one.request({ method: 'tools/list', params: {} })) as {
      tools: unknown[];
      nextCursor?: string;
    };
    expect(first.tools).toHaveLength(500);
    expect(first.nextCursor).toBe('500');
    const names: string[] = [];
    let cursor: string | undefined = '0';
    let pages = 0;
    while (cursor !== undefined) {
      const page = await one.listTools({ cursor });
      names.push(...page.tools.map((t) => t.name));
      cursor = page.nextCursor;
      pages++;
    }
    expect(pages).toBe(20);
    expect(names).toHaveLength(10_000);
    expect(names).toContain('many_tool_9999');
    expect(names).not.toContain('many_search_tools');
  }, 30_000);
});
