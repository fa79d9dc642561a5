import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { defineTool, type AnyToolDef, type ToolContext } from '../../src/kernel/tool.js';
import { journalKey } from '../../src/kernel/writes/journal.js';
import { callDigest } from '../../src/kernel/digest.js';
import { failure } from '../../src/kernel/errors.js';
import { utf8String } from '../../src/kernel/calls/schemas.js';
import type { Door } from '../../src/kernel/door.js';
import { conn, testKernel, textOf, type TestKernel } from '../helpers/kernel.js';
import { waitFor } from '../helpers/wait.js';

let tk: TestKernel | undefined;
afterEach(async () => {
  await tk?.dispose();
  tk = undefined;
});

function door(tools: AnyToolDef[], limits: Door['limits'] = {}): Door {
  return { name: 'd', tools, limits };
}

const strictTool = defineTool({
  name: 'strict',
  description: 'strict input',
  input: z.object({ title: utf8String(1, 10), count: z.number().int() }).strict(),
  output: z.object({ title: z.string() }),
  effect: 'read',
  handler: async ({ title }) => ({ title }),
});

describe('validate stage', () => {
  it('publishes additionalProperties false and required fields in the input schema', async () => {
    tk = await testKernel([door([strictTool])]);
    const [descriptor] = tk.kernel.tools('d');
    expect(descriptor!.inputSchema).toMatchObject({
      type: 'object',
      additionalProperties: false,
      required: ['title', 'count'],
    });
    expect(descriptor!.outputSchema).toMatchObject({ type: 'object' });
  });

  it('rejects an unknown field naming it, before the handler runs', async () => {
    tk = await testKernel([door([strictTool])]);
    const r = await tk.kernel.call(
      'd',
      'strict',
      { title: 'a', count: 1, extra: true },
      { connection: conn() },
    );
    expect(r).toMatchObject({ ok: false, code: 'malformedRequest' });
    expect((textOf(r) as { message: string }).message).toContain("'extra'");
  });

  it('rejects a missing field naming it', async () => {
    tk = await testKernel([door([strictTool])]);
    const r = await tk.kernel.call('d', 'strict', { title: 'a' }, { connection: conn() });
    expect((textOf(r) as { message: string }).message).toContain("missing required field 'count'");
  });

  it('rejects a wrong type naming the field', async () => {
    tk = await testKernel([door([strictTool])]);
    const r = await tk.kernel.call(
      'd',
      'strict',
      { title: 'a', count: 'one' },
      { connection: conn() },
    );
    expect(textOf(r)).toMatchObject({ code: 'malformedRequest' });
    expect((textOf(r) as { message: string }).message).toContain("'count'");
  });

  it('answers 5,000-deep arguments with malformedRequest and audits the refusal, without overflowing the stack', async () => {
    tk = await testKernel([door([strictTool])]);
    let deep: unknown = 'x';
    for (let i = 0; i < 5000; i++) deep = [deep];
    const r = await tk.kernel.call(
      'd',
      'strict',
      { title: 'a', count: 1, deep },
      { connection: conn() },
    );
    expect(r).toMatchObject({ ok: false, code: 'malformedRequest' });
    expect((textOf(r) as { message: string }).message).toContain(
      'the arguments nest deeper than 64 levels of objects and arrays; flatten',
    );
    expect((await tk.kernel.audit.list()).map((e) => [e.tool, e.result])).toEqual([
      ['strict', 'malformedRequest'],
    ]);
  });

  it('accepts arguments nested exactly 64 levels deep', async () => {
    const open = defineTool({
      name: 'open',
      description: 'takes any data',
      input: z.object({ data: z.unknown() }).strict(),
      effect: 'read',
      handler: async () => ({ ok: true }),
    });
    tk = await testKernel([door([open])]);
    let data: unknown = 'x';
    for (let i = 0; i < 63; i++) data = [data];
    const r = await tk.kernel.call('d', 'open', { data }, { connection: conn() });
    expect(r).toEqual({ ok: true, value: { ok: true } });
  });

  it('counts UTF-8 bytes, not characters, for byte limits', async () => {
    tk = await testKernel([door([strictTool])]);
    // 4 characters, 12 bytes: over the 10-byte limit.
    const r = await tk.kernel.call(
      'd',
      'strict',
      { title: '日本語日', count: 1 },
      { connection: conn() },
    );
    expect(textOf(r)).toMatchObject({ code: 'malformedRequest' });
    const ok = await tk.kernel.call(
      'd',
      'strict',
      { title: '日本語', count: 1 },
      { connection: conn() },
    );
    expect(ok).toMatchObject({ ok: true, value: { title: '日本語' } });
  });
});

describe('limits stage', () => {
  it('answers requestTooLarge when the arguments exceed the request byte limit', async () => {
    tk = await testKernel([door([strictTool], { requestBytes: 64 })]);
    const r = await tk.kernel.call(
      'd',
      'strict',
      { title: 'a', count: 1, pad: 'x'.repeat(100) },
      { connection: conn() },
    );
    expect(textOf(r)).toMatchObject({ code: 'requestTooLarge' });
  });

  it('answers busy at once for the call beyond the in-flight limit, without queueing it', async () => {
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    let started = 0;
    const slow = defineTool({
      name: 'slow',
      description: 'waits',
      input: z.object({}).strict(),
      effect: 'read',
      handler: async () => {
        started++;
        await gate;
        return { done: true };
      },
    });
    tk = await testKernel([door([slow], { concurrentCalls: 2 })]);
    const a = tk.kernel.call('d', 'slow', {}, { connection: conn() });
    const b = tk.kernel.call('d', 'slow', {}, { connection: conn() });
    await waitFor(() => started === 2, { message: 'both calls in their handler' });
    const c = await tk.kernel.call('d', 'slow', {}, { connection: conn() });
    expect(textOf(c)).toMatchObject({ code: 'busy' });
    // Another connection is not affected.
    const other = tk.kernel.call('d', 'slow', {}, { connection: conn('test:2') });
    await waitFor(() => started === 3, { message: "the other connection's call in its handler" });
    release();
    await Promise.all([a, b, other]);
  });

  it('aborts the handler signal on timeout and answers timeout when nothing was written', async () => {
    let aborted = false;
    const hang = defineTool({
      name: 'hang',
      description: 'never ends',
      input: z.object({}).strict(),
      effect: 'read',
      handler: async (_i, ctx) => {
        await new Promise<void>((resolve) =>
          ctx.signal.addEventListener('abort', () => ((aborted = true), resolve())),
        );
        return { never: true };
      },
    });
    tk = await testKernel([door([hang], { timeoutMs: 50 })]);
    const r = await tk.kernel.call('d', 'hang', {}, { connection: conn() });
    expect(textOf(r)).toMatchObject({ code: 'timeout' });
    expect(aborted).toBe(true);
  });

  it('answers mutationUncertain, never a plain failure, when a write tool times out', async () => {
    const writer = defineTool({
      name: 'writer',
      description: 'writes slowly',
      input: z.object({}).strict(),
      effect: 'write',
      writes: true,
      handler: async (_i, ctx) => {
        await new Promise<void>((resolve) => ctx.signal.addEventListener('abort', () => resolve()));
        return { done: true };
      },
    });
    tk = await testKernel([door([writer], { timeoutMs: 50 })]);
    const r = await tk.kernel.call('d', 'writer', {}, { connection: conn() });
    expect(textOf(r)).toMatchObject({ code: 'mutationUncertain' });
  });

  it('decides per call whether a timed-out call may have written', async () => {
    const upstream = defineTool({
      name: 'upstream',
      description: 'reads or writes upstream slowly',
      input: z.object({ method: z.enum(['GET', 'POST']) }).strict(),
      effect: (input) => (input.method === 'GET' ? 'read' : 'write'),
      writes: (input) => input.method !== 'GET',
      handler: async (_i, ctx) => {
        await new Promise<void>((resolve) => ctx.signal.addEventListener('abort', () => resolve()));
        return { done: true };
      },
    });
    tk = await testKernel([door([upstream], { timeoutMs: 50 })]);
    const get = await tk.kernel.call('d', 'upstream', { method: 'GET' }, { connection: conn() });
    expect(textOf(get)).toMatchObject({ code: 'timeout' });
    const post = await tk.kernel.call('d', 'upstream', { method: 'POST' }, { connection: conn() });
    expect(textOf(post)).toMatchObject({ code: 'mutationUncertain' });
  });

  it('a write tool that says nothing of writes answers mutationUncertain on timeout (writes follows the effect)', async () => {
    const silent = defineTool({
      name: 'silent',
      description: 'writes slowly, says nothing of writes',
      input: z.object({ method: z.enum(['GET', 'POST']) }).strict(),
      effect: (input) => (input.method === 'GET' ? 'read' : 'destructive'),
      handler: async (_i, ctx) => {
        await new Promise<void>((resolve) => ctx.signal.addEventListener('abort', () => resolve()));
        return { done: true };
      },
    });
    tk = await testKernel([door([silent], { timeoutMs: 50 })]);
    const get = await tk.kernel.call('d', 'silent', { method: 'GET' }, { connection: conn() });
    expect(textOf(get)).toMatchObject({ code: 'timeout' });
    const post = await tk.kernel.call('d', 'silent', { method: 'POST' }, { connection: conn() });
    expect(textOf(post)).toMatchObject({ code: 'mutationUncertain' });
  });

  it('writes: false on a write tool is the author saying a timeout leaves nothing written', async () => {
    const declared = defineTool({
      name: 'declared',
      description: 'a write tool whose handler changes nothing before answering',
      input: z.object({}).strict(),
      effect: 'write',
      writes: false,
      handler: async (_i, ctx) => {
        await new Promise<void>((resolve) => ctx.signal.addEventListener('abort', () => resolve()));
        return { done: true };
      },
    });
    tk = await testKernel([door([declared], { timeoutMs: 50 })]);
    const r = await tk.kernel.call('d', 'declared', {}, { connection: conn() });
    expect(textOf(r)).toMatchObject({ code: 'timeout' });
  });

  it('answers resultTooLarge instead of truncating a result over the response limit', async () => {
    const big = defineTool({
      name: 'big',
      description: 'big result',
      input: z.object({}).strict(),
      effect: 'read',
      handler: async () => ({ data: 'x'.repeat(5000) }),
    });
    tk = await testKernel([door([big], { responseBytes: 1000 })]);
    const r = await tk.kernel.call('d', 'big', {}, { connection: conn() });
    expect(textOf(r)).toMatchObject({ code: 'resultTooLarge' });
  });

  it('answers resultTooLarge for a result nested 5,000 levels deep instead of overflowing the stack', async () => {
    let deep: unknown = 'x';
    for (let i = 0; i < 5000; i++) deep = { a: deep };
    const upstream = defineTool({
      name: 'upstream',
      description: 'returns what an upstream answered',
      input: z.object({}).strict(),
      effect: 'read',
      handler: async () => deep,
    });
    tk = await testKernel([door([upstream])]);
    const r = await tk.kernel.call('d', 'upstream', {}, { connection: conn() });
    expect(r).toMatchObject({ ok: false, code: 'resultTooLarge', data: { maxDepth: 64 } });
    expect((textOf(r) as { message: string }).message).toContain('nests deeper than 64 levels');
  });

  it('holds a read to the token budget (resultTooLarge saying how to narrow), but not a write whose change is done', async () => {
    const text = 'x'.repeat(3000);
    const read = defineTool({
      name: 'read',
      description: 'a long read',
      input: z.object({}).strict(),
      effect: 'read',
      handler: async () => ({ text }),
    });
    const write = defineTool({
      name: 'write',
      description: 'a write with a long answer',
      input: z.object({}).strict(),
      effect: 'write',
      handler: async () => ({ text }),
    });
    const budgetFree = defineTool({
      name: 'picture',
      description: 'binary content',
      input: z.object({}).strict(),
      effect: 'read',
      tokenBudget: false,
      handler: async () => ({ text }),
    });
    tk = await testKernel([door([read, write, budgetFree], { resultTokens: 1000 })]);
    const r = await tk.kernel.call('d', 'read', {}, { connection: conn() });
    expect(r).toMatchObject({ ok: false, code: 'resultTooLarge', data: { maxTokens: 1000 } });
    expect((textOf(r) as { message: string }).message).toMatch(
      /about 1\d{3} tokens.*Narrow the call/,
    );
    expect(await tk.kernel.call('d', 'write', {}, { connection: conn() })).toMatchObject({
      ok: true,
    });
    expect(await tk.kernel.call('d', 'picture', {}, { connection: conn() })).toMatchObject({
      ok: true,
    });
  });
});

describe('execute stage', () => {
  it('turns an unexpected throw into internal with a log id and no stack trace', async () => {
    const boom = defineTool({
      name: 'boom',
      description: 'throws',
      input: z.object({}).strict(),
      effect: 'write',
      handler: async () => {
        throw new Error('secret internals at /etc/x');
      },
    });
    tk = await testKernel([door([boom])]);
    const r = await tk.kernel.call('d', 'boom', {}, { connection: conn() });
    const body = textOf(r) as { code: string; message: string; logId: string };
    expect(body.code).toBe('internal');
    expect(body.logId).toMatch(/^[0-9a-f-]{36}$/);
    expect(body.message).toContain(body.logId);
    expect(JSON.stringify(r)).not.toContain('secret internals');
  });

  it('passes a returned Failure through with its code and message', async () => {
    const nf = defineTool({
      name: 'nf',
      description: 'not found',
      input: z.object({}).strict(),
      effect: 'read',
      handler: async () => failure('notFound', 'No such thing; list things first.'),
    });
    tk = await testKernel([door([nf])]);
    const r = await tk.kernel.call('d', 'nf', {}, { connection: conn() });
    expect(textOf(r)).toEqual({ code: 'notFound', message: 'No such thing; list things first.' });
  });
});

describe('journal stage', () => {
  // Counts handler runs; journaled when the call carries an operationID.
  function optionallyJournaled() {
    const seen: (ToolContext['operation'] | 'ran')[] = [];
    const tool = defineTool({
      name: 'bump',
      description: 'bump a counter',
      input: z.object({ by: z.number().int(), operationID: z.string().optional() }).strict(),
      effect: 'write',
      journal: { operationId: (i) => i.operationID ?? null },
      handler: async ({ by }, ctx) => {
        seen.push(ctx.operation);
        if (!ctx.operation) return { runs: seen.length, by };
        return ctx.write(async () => ({ runs: seen.length, by }));
      },
    });
    return { tool, seen };
  }

  it('runs a call whose operationId is null unjournaled: no entry, no ctx.write needed, every call runs', async () => {
    const { tool, seen } = optionallyJournaled();
    tk = await testKernel([door([tool])]);
    const first = await tk.kernel.call('d', 'bump', { by: 1 }, { connection: conn() });
    const second = await tk.kernel.call('d', 'bump', { by: 1 }, { connection: conn() });
    expect(first).toEqual({ ok: true, value: { runs: 1, by: 1 } });
    expect(second).toEqual({ ok: true, value: { runs: 2, by: 1 } });
    expect(seen).toEqual([null, null]);
  });

  it('journals a call whose operationId is given, and tells the handler its journal key and digest', async () => {
    const { tool, seen } = optionallyJournaled();
    tk = await testKernel([door([tool])]);
    const args = { by: 2, operationID: 'op-1' };
    const first = await tk.kernel.call('d', 'bump', args, { connection: conn() });
    const retry = await tk.kernel.call('d', 'bump', args, { connection: conn() });
    expect(retry).toEqual(first);
    expect(seen).toEqual([{ id: journalKey(conn(), 'op-1'), digest: callDigest('bump', args) }]);
    expect(await tk.kernel.journal.state('d', journalKey(conn(), 'op-1'))).toEqual({
      state: 'committed',
      receipt: { runs: 1, by: 2 },
    });
    const reused = await tk.kernel.call(
      'd',
      'bump',
      { by: 3, operationID: 'op-1' },
      { connection: conn() },
    );
    expect(reused).toMatchObject({ ok: false, code: 'malformedRequest' });
  });

  it('replays a committed operation before the policy: a rule added since does not stand between the agent and its receipt, and other arguments are malformedRequest', async () => {
    const { tool, seen } = optionallyJournaled();
    tk = await testKernel([door([tool])]);
    const args = { by: 2, operationID: 'op-replay' };
    const first = await tk.kernel.call('d', 'bump', args, { connection: conn() });
    expect(first).toEqual({ ok: true, value: { runs: 1, by: 2 } });
    await tk.kernel.policy.add({ tool: 'bump', decision: 'deny' });
    const retry = await tk.kernel.call('d', 'bump', args, { connection: conn() });
    expect(retry).toEqual(first);
    const other = await tk.kernel.call(
      'd',
      'bump',
      { by: 3, operationID: 'op-replay' },
      { connection: conn() },
    );
    expect(other).toMatchObject({ ok: false, code: 'malformedRequest' });
    // A new operation is the policy's to decide.
    const fresh = await tk.kernel.call(
      'd',
      'bump',
      { by: 2, operationID: 'op-new' },
      { connection: conn() },
    );
    expect(fresh).toMatchObject({ ok: false, code: 'notAuthorized' });
    expect(seen).toHaveLength(1);
  });
});

describe('audit and events stages', () => {
  it('audits every state-changing call and every refused call, with a digest of redacted arguments', async () => {
    const change = defineTool({
      name: 'change',
      description: 'changes',
      input: z.object({ apiKey: z.string() }).strict(),
      effect: 'write',
      handler: async () => ({ ok: true }),
    });
    tk = await testKernel([door([change, strictTool])]);
    await tk.kernel.call('d', 'change', { apiKey: 'k1' }, { connection: conn() });
    await tk.kernel.call('d', 'change', { apiKey: 'k2' }, { connection: conn() });
    await tk.kernel.call('d', 'strict', { title: 'ok', count: 1 }, { connection: conn() }); // read: not audited
    await tk.kernel.call('d', 'strict', { nope: 1 }, { connection: conn() }); // refused: audited
    const entries = await tk.kernel.audit.list();
    expect(entries.map((e) => [e.tool, e.result])).toEqual([
      ['change', 'ok'],
      ['change', 'ok'],
      ['strict', 'malformedRequest'],
    ]);
    // Secrets are redacted before digesting: different keys give the same digest.
    expect(entries[0]!.argsDigest).toBe(entries[1]!.argsDigest);
    expect(entries[0]!.connection).toBe('test:1');
    const jsonl = await tk.kernel.audit.exportJsonLines();
    expect(jsonl.trim().split('\n')).toHaveLength(3);
    expect(jsonl).not.toContain('k1');
  });

  it('audits a call refused before validation (over the request limit) and a handler that throws a RangeError', async () => {
    const thrower = defineTool({
      name: 'thrower',
      description: 'reads, then fails',
      input: z.object({}).strict(),
      effect: 'read',
      handler: async () => {
        throw new RangeError('Invalid array length');
      },
    });
    tk = await testKernel([door([strictTool, thrower], { requestBytes: 64 })]);
    const big = await tk.kernel.call(
      'd',
      'strict',
      { title: 'x'.repeat(200), count: 1 },
      { connection: conn() },
    );
    expect(big).toMatchObject({ code: 'requestTooLarge' });
    const thrown = await tk.kernel.call('d', 'thrower', {}, { connection: conn() });
    expect(thrown).toMatchObject({ code: 'internal', data: { logId: expect.any(String) } });
    expect((await tk.kernel.audit.list()).map((e) => [e.tool, e.result])).toEqual([
      ['strict', 'requestTooLarge'],
      ['thrower', 'internal'],
    ]);
  });

  it('audits a read whose result is over the response limit as resultTooLarge, the refusal the caller got', async () => {
    const big = defineTool({
      name: 'big',
      description: 'big result',
      input: z.object({}).strict(),
      effect: 'read',
      handler: async () => ({ data: 'x'.repeat(5000) }),
    });
    tk = await testKernel([door([big], { responseBytes: 1000 })]);
    const r = await tk.kernel.call('d', 'big', {}, { connection: conn() });
    expect(r).toMatchObject({ ok: false, code: 'resultTooLarge' });
    expect((await tk.kernel.audit.list()).map((e) => [e.tool, e.result])).toEqual([
      ['big', 'resultTooLarge'],
    ]);
  });

  it('audits a call made with no arguments at all, as one made with {}', async () => {
    const change = defineTool({
      name: 'change',
      description: 'changes, with no arguments',
      input: z.object({}).strict(),
      effect: 'write',
      handler: async () => ({ ok: true }),
    });
    tk = await testKernel([door([change, strictTool])]);
    const written = await tk.kernel.call('d', 'change', undefined, { connection: conn() });
    expect(written).toMatchObject({ ok: true });
    const refused = await tk.kernel.call('d', 'strict', undefined, { connection: conn() });
    expect(refused).toMatchObject({ ok: false, code: 'malformedRequest' });
    const entries = await tk.kernel.audit.list();
    expect(entries.map((e) => [e.tool, e.result])).toEqual([
      ['change', 'ok'],
      ['strict', 'malformedRequest'],
    ]);
    await tk.kernel.call('d', 'change', {}, { connection: conn() });
    expect((await tk.kernel.audit.list())[2]!.argsDigest).toBe(entries[0]!.argsDigest);
  });

  it('publishes a toolCalled event for each call', async () => {
    tk = await testKernel([door([strictTool])]);
    const seen: unknown[] = [];
    tk.events.subscribe((e) => seen.push(e.data));
    await tk.kernel.call('d', 'strict', { title: 'a', count: 1 }, { connection: conn() });
    expect(seen).toContainEqual(
      expect.objectContaining({ event: 'toolCalled', tool: 'strict', result: 'ok' }),
    );
  });
});
