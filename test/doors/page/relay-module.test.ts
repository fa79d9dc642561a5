import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { InMemoryTransport } from '@modelcontextprotocol/server';
import { Client } from '@modelcontextprotocol/client';
import {
  createCommandRunner,
  createMcpServer,
  type WuMcpServer,
} from '../../../src/relay/relay.js';
import type { Puente } from '../../../src/doors/page/puente.js';
import { authenticated, startRelay, type TestBridge } from './relay-helpers.js';
import { toolJson } from '../../helpers/results.js';
import { waitFor } from '../../helpers/wait.js';

let puente: Puente;
let server: WuMcpServer;
let client: Client;
let bridge: TestBridge;
const answers = new Map<string, (params: Record<string, unknown>) => Record<string, unknown>>();
const cancels: string[] = [];
/** Commands the fake page has received, in order. */
const received: string[] = [];

beforeAll(async () => {
  const r = await startRelay();
  puente = r.puente;
  server = createMcpServer(puente, puente.config);
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  await server.connect(serverSide);
  client = new Client({ name: 'module-test', version: '1' });
  await client.connect(clientSide);
  bridge = (await authenticated(r.url)).b;
  bridge.ws.on('message', (data) => {
    const m = JSON.parse(String(data)) as {
      type: string;
      id: string;
      command: string;
      params: Record<string, unknown>;
    };
    if (m.type === 'cancel') cancels.push(m.id);
    if (m.type !== 'request') return;
    received.push(m.command);
    // As a real page does: the door reads the action list to learn whether an action asks to confirm.
    const answer =
      answers.get(m.command) ??
      (m.command === 'list_actions' ? () => ({ result: { actions: [], count: 0 } }) : undefined);
    if (answer) bridge.send({ type: 'response', id: m.id, ...answer(m.params) });
  });
});
afterAll(async () => {
  await client.close();
  await server.close();
  await puente.close();
});

describe('createMcpServer and createCommandRunner', () => {
  it('an action that ran and returned success:false is not isError; a page error is', async () => {
    answers.set('execute_action', (p) =>
      p.action === 'bad'
        ? { error: { code: 'WU_ACTION_NOT_FOUND', message: 'No action bad' } }
        : { result: { action: p.action, success: false, reason: 'out of stock' } },
    );
    const ran = await client.callTool({ name: 'wu_execute_action', arguments: { action: 'buy' } });
    expect(ran.isError).toBeFalsy();
    expect(toolJson(ran)).toEqual({ action: 'buy', success: false, reason: 'out of stock' });
    expect(ran.structuredContent).toEqual({
      action: 'buy',
      success: false,
      reason: 'out of stock',
    });
    const bad = await client.callTool({ name: 'wu_execute_action', arguments: { action: 'bad' } });
    expect(bad.isError).toBe(true);
    expect(toolJson(bad)).toMatchObject({ code: 'WU_ACTION_NOT_FOUND', message: 'No action bad' });

    const runner = createCommandRunner(puente);
    expect((await runner('execute_action', { action: 'buy' })).isError).toBeUndefined();
    expect((await runner('execute_action', { action: 'bad' })).isError).toBe(true);
  });

  it('validates arguments with the reference ranges before anything reaches the page', async () => {
    for (const [name, args] of [
      ['wu_list_events', { limit: 201 }],
      ['wu_console', { limit: 0 }],
      ['wu_console', { level: 'debug' }],
      ['wu_network', { status: 600 }],
      ['wu_screenshot', { quality: 1.5 }],
      ['wu_emit_event', { event: '' }],
      ['wu_emit_event', { event: 'x'.repeat(201) }],
      ['wu_set_state', { path: '', value: 1 }],
      ['wu_type', { text: 'x' }],
      ['wu_click', {}],
      ['wu_status', { extra: 1 }],
    ] as const) {
      const r = await client.callTool({ name, arguments: args });
      expect(r.isError, `${name} ${JSON.stringify(args)}`).toBe(true);
      expect(toolJson(r).code).toBe('malformedRequest');
    }
  });

  it('fills the documented defaults', async () => {
    const seen: Record<string, unknown>[] = [];
    for (const c of ['list_events', 'console', 'network', 'screenshot', 'type', 'get_state'])
      answers.set(c, (p) => (seen.push(p), { result: {} }));
    await client.callTool({ name: 'wu_list_events', arguments: {} });
    await client.callTool({ name: 'wu_console', arguments: {} });
    await client.callTool({ name: 'wu_network', arguments: {} });
    await client.callTool({ name: 'wu_screenshot', arguments: {} });
    await client.callTool({ name: 'wu_type', arguments: { selector: '#a', text: 'x' } });
    await client.callTool({ name: 'wu_get_state', arguments: {} });
    expect(seen).toEqual([
      { limit: 20 },
      { level: 'all', limit: 50 },
      { limit: 50 },
      // The page is told who calls where it may keep parts of itself from some agents.
      { quality: 0.8, caller: 'stdio:module-test' },
      { selector: '#a', text: 'x', clear: false, submit: false, caller: 'stdio:module-test' },
      { path: '' },
    ]);
  });

  it('cancelling the MCP call sends a cancel frame to the page', async () => {
    answers.delete('execute_action');
    const controller = new AbortController();
    const call = client
      .callTool(
        { name: 'wu_execute_action', arguments: { action: 'slow' } },
        { signal: controller.signal },
      )
      .catch((e: unknown) => e);
    // Abort once the page holds the action request (after the door's list_actions
    // look-up of the action's effect), so there is a call to cancel.
    await waitFor(() => received.at(-1) === 'execute_action' && puente.pending() === 1, {
      message: 'the relay to send the action request',
    });
    controller.abort();
    await call;
    await expect.poll(() => cancels.length).toBe(1);
    expect(puente.pending()).toBe(0);
  });

  it('answers a screenshot as metadata text followed by PNG image content', async () => {
    answers.set('screenshot', () => ({
      result: {
        width: 1,
        height: 1,
        mimeType: 'image/png',
        image: { data: 'iVBORw0KGgo=', mimeType: 'image/png' },
      },
    }));
    const r = (await client.callTool({ name: 'wu_screenshot', arguments: {} })) as {
      content: { type: string; text?: string; data?: string }[];
    };
    expect(r.content[0]).toEqual({
      type: 'text',
      text: JSON.stringify({ width: 1, height: 1, mimeType: 'image/png' }),
    });
    expect(r.content[1]).toEqual({ type: 'image', data: 'iVBORw0KGgo=', mimeType: 'image/png' });
  });
});

describe('the workspace createMcpServer opens', () => {
  const connected = async (options: Parameters<typeof createMcpServer>[2]) => {
    const own = createMcpServer(puente, puente.config, options);
    const [, serverSide] = InMemoryTransport.createLinkedPair();
    return { own, connecting: own.connect(serverSide) };
  };

  it('is the one serve and stdio open: the data folder keeps its audit signing key', async () => {
    const data = mkdtempSync(join(tmpdir(), 'airlock-relay-ws-'));
    const { own, connecting } = await connected({ data });
    try {
      await connecting;
      expect(existsSync(join(data, 'audit-signing.key'))).toBe(true);
    } finally {
      await own.close();
      rmSync(data, { recursive: true, force: true });
    }
  });

  it('refuses a policy rule that can never match a call of its page door, as serve does', async () => {
    const { own, connecting } = await connected({
      policy: { rules: [{ door: 'page', tool: 'wu_clik', decision: 'deny' }] },
    });
    try {
      await expect(connecting).rejects.toThrow(
        /policy\.rules\.0: .*wu_click.*fix the rule or remove it/,
      );
    } finally {
      await own.close();
    }
  });
});
