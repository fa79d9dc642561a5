/**
 * The real `@modelcontextprotocol/server-everything` from npm behind the mcp
 * door: progress and cancellation of its long-running operation, its
 * resources and prompts through Airlock, an upstream killed mid-call
 * (`unavailable`, restarted, the next call works) and a configured secret
 * scrubbed from results in every encoding.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Client } from '@modelcontextprotocol/client';
import {
  callTool,
  errorOf,
  gatewayWorkspace,
  serverBin,
  type GatewayWorkspace,
} from './helpers.js';
import { waitFor } from '../../helpers/wait.js';
import { MODERN_PROTOCOL } from '../../helpers/mcp-client.js';

const SECRET = 'sk-everything-S3cr3t/value+42';
let ws: GatewayWorkspace;
let alice: Client;

const everything = () => ({ command: process.execPath, args: [serverBin('everything')] });

beforeAll(async () => {
  ws = await gatewayWorkspace(
    {
      ev: { ...everything(), env: { EV_TOKEN: '${AIRLOCK_TEST_EV_TOKEN}' } },
      // The same server again, where the owner says the long operation writes.
      evw: { ...everything(), tools: { 'trigger-long-running-operation': { effect: 'write' } } },
    },
    { env: { ...process.env, AIRLOCK_TEST_EV_TOKEN: SECRET } },
  );
  alice = await ws.agent('alice');
}, 60_000);

afterAll(async () => {
  await ws?.close();
});

const running = (name: string) =>
  waitFor(() => ws.gateway.runtime(name)!.upstream.status().state === 'running', {
    timeoutMs: 20_000,
  });

describe('everything upstream', () => {
  it('forwards the long-running operation’s progress to the caller', async () => {
    const seen: number[] = [];
    const r = await alice.callTool(
      { name: 'ev_trigger-long-running-operation', arguments: { duration: 1, steps: 4 } },
      { onprogress: (p) => void seen.push(p.progress) },
    );
    expect(r.isError).toBeFalsy();
    // The SDK client drops a progress notification that arrives in the same read as its
    // response (notifications are handled a microtask later), so the last step may be missing.
    expect(seen.length).toBeGreaterThanOrEqual(3);
    expect(seen).toEqual([1, 2, 3, 4].slice(0, seen.length));
  });

  it('forwards progress to a 2025-era HTTP client and to a 2026-era client alike', async () => {
    const modern = await ws.agent('modern', { pin: MODERN_PROTOCOL });
    for (const client of [alice, modern]) {
      const seen: number[] = [];
      const r = await client.callTool(
        { name: 'ev_trigger-long-running-operation', arguments: { duration: 2, steps: 4 } },
        { onprogress: (p) => void seen.push(p.progress) },
      );
      expect(r.isError).toBeFalsy();
      expect(seen.length).toBeGreaterThanOrEqual(2);
      expect(seen).toEqual([1, 2, 3, 4].slice(0, seen.length));
    }
  }, 30_000);

  it('forwards the caller’s cancellation: the call ends at once and the upstream keeps serving', async () => {
    const controller = new AbortController();
    const started = Date.now();
    const call = alice.callTool(
      { name: 'ev_trigger-long-running-operation', arguments: { duration: 10, steps: 10 } },
      { signal: controller.signal, onprogress: () => controller.abort() },
    );
    await expect(call).rejects.toThrow();
    expect(Date.now() - started).toBeLessThan(5_000);
    const echo = await callTool(alice, 'ev_echo', { message: 'still here' });
    expect(echo.content[0]!.text).toBe('Echo: still here');
  });

  it('lists and reads the upstream’s resources with the upstream’s name as prefix', async () => {
    const { resources } = await alice.listResources();
    const doc = resources.find(
      (r) => r.uri === 'ev+demo://resource/static/document/architecture.md',
    );
    expect(doc).toBeDefined();
    expect(doc!.name.startsWith('ev_')).toBe(true);
    const read = await alice.readResource({ uri: doc!.uri });
    expect(read.contents[0]).toMatchObject({ uri: doc!.uri });
    expect(JSON.stringify(read.contents[0])).toMatch(/rchitecture/);
    const { resourceTemplates } = await alice.listResourceTemplates();
    expect(resourceTemplates.map((t) => t.uriTemplate)).toContain(
      'ev+demo://resource/dynamic/text/{resourceId}',
    );
  });

  it('resource links in a tool result carry the prefixed URI, which reads through Airlock', async () => {
    const r = await callTool(alice, 'ev_get-resource-links', { count: 1 });
    const link = r.content.find((c) => c.type === 'resource_link') as { uri: string } | undefined;
    expect(link?.uri.startsWith('ev+demo://')).toBe(true);
    const read = await alice.readResource({ uri: link!.uri });
    expect(read.contents[0]).toMatchObject({ uri: link!.uri });
  });

  it('lists and gets the upstream’s prompts with the prefix', async () => {
    const { prompts } = await alice.listPrompts();
    const names = prompts.map((p) => p.name);
    expect(names).toContain('ev_simple-prompt');
    expect(names).toContain('evw_args-prompt');
    const got = await alice.getPrompt({ name: 'ev_args-prompt', arguments: { city: 'Lisbon' } });
    expect(JSON.stringify(got.messages)).toContain('Lisbon');
  });

  it('an upstream killed mid-call answers unavailable, is restarted, and the next call works', async () => {
    await running('ev');
    const pid = ws.gateway.runtime('ev')!.upstream.status().pid!;
    const r = await alice.callTool(
      { name: 'ev_trigger-long-running-operation', arguments: { duration: 10, steps: 10 } },
      { onprogress: () => process.kill(pid, 'SIGKILL') },
    );
    expect(r.isError).toBe(true);
    const error = errorOf(r as never);
    expect(error).toMatchObject({ code: 'unavailable', upstream: 'ev' });
    expect(error.mutationUncertain).toBeUndefined();
    await running('ev');
    const status = ws.gateway.runtime('ev')!.upstream.status();
    expect(status.pid).not.toBe(pid);
    expect(status.restarts).toBeGreaterThanOrEqual(1);
    const echo = await callTool(alice, 'ev_echo', { message: 'back' });
    expect(echo.content[0]!.text).toBe('Echo: back');
  }, 30_000);

  it('a write in flight when its upstream dies is mutationUncertain, and its operationID stays uncertain', async () => {
    await running('evw');
    const pid = ws.gateway.runtime('evw')!.upstream.status().pid!;
    const args = { duration: 10, steps: 10, operationID: 'op-dies-1' };
    // The owner's override makes it a write: writes are allowed by the default policy.
    const r = await alice.callTool(
      { name: 'evw_trigger-long-running-operation', arguments: args },
      { onprogress: () => process.kill(pid, 'SIGKILL') },
    );
    expect(errorOf(r as never)).toMatchObject({ code: 'unavailable', mutationUncertain: true });
    await running('evw');
    const retry = await callTool(alice, 'evw_trigger-long-running-operation', args);
    expect(errorOf(retry)).toMatchObject({ code: 'mutationUncertain' });
  }, 30_000);

  it('a configured secret in a tool result shows as [REDACTED] in every encoding', async () => {
    const env = await callTool(alice, 'ev_get-env');
    const text = JSON.stringify(env);
    expect(text).toContain('[REDACTED]');
    expect(text).not.toContain(SECRET);
    const forms = [
      SECRET,
      encodeURIComponent(SECRET),
      Buffer.from(SECRET).toString('base64'),
      Buffer.from(SECRET).toString('base64url'),
      JSON.stringify(SECRET).slice(1, -1),
    ];
    for (const form of forms) {
      const r = await callTool(alice, 'ev_echo', { message: `value=${form};` });
      // base64 padding (`=`) may stay; the value never does.
      expect(r.content[0]!.text).toMatch(/^Echo: value=\[REDACTED\]=*;$/);
    }
  });
});
