/**
 * Scene writes idempotent on retry (spec/kernel.md §6): koharu.apply, undo
 * and redo with an optional operationID, over real MCP and REST, and the
 * resolution at restart of an operation a crash left prepared.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { randomUUID } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';
import type { Client } from '@modelcontextprotocol/client';
import { pageOf, sceneDoor, tempDir } from './helpers.js';
import { json, post, sceneServer, trustHistoryMoves, type SceneServer } from './server.js';
import { structuredOf, toolJson } from '../../helpers/results.js';
import { conn, testKernel, textOf, type TestKernel } from '../../helpers/kernel.js';
import { journalKey } from '../../../src/kernel/writes/journal.js';
import { callDigest } from '../../../src/kernel/digest.js';
import { validateInput } from '../../../src/kernel/calls/validate.js';
import type { JournalEntry } from '../../../src/kernel/records.js';
import type { ServedDoor } from '../../../src/transport/surface.js';

describe('scene writes with an operationID, over MCP and REST', () => {
  let s: SceneServer;
  let client: Client;
  beforeAll(async () => {
    s = await sceneServer();
    client = await s.mcp();
    await trustHistoryMoves(s);
  });
  afterAll(async () => {
    await s.close();
  });

  const call = (name: string, args: Record<string, unknown> = {}) =>
    client.callTool({ name, arguments: args });
  const epochOf = async (name: string, args: Record<string, unknown> = {}) =>
    structuredOf(await call(name, args)).epoch;
  const scene = async () =>
    structuredOf(await call('koharu.get_scene')) as {
      epoch: number;
      scene: { pages: { id: string; name: string }[] };
    };
  let projects = 0;
  const freshProject = () =>
    call('koharu.open_project', { path: `idem-${++projects}`, createName: `Idem ${projects}` });

  it('a retry of koharu.apply with the same operationID applies once and answers the same epoch', async () => {
    await freshProject();
    const args = { op: { addPage: { page: pageOf() } }, operationID: randomUUID() };
    const first = await call('koharu.apply', args);
    expect(first.isError).toBeFalsy();
    const epoch = structuredOf(first).epoch;
    await call('koharu.apply', { op: { addPage: { page: pageOf() } } });
    // The epoch has moved on; the retry still answers its own first epoch.
    expect(await epochOf('koharu.apply', args)).toBe(epoch);
    const after = await scene();
    expect(after.scene.pages).toHaveLength(2);
    expect(after.epoch).toBe(Number(epoch) + 1);
  });

  it('the same operationID with different arguments is malformedRequest and changes nothing', async () => {
    await freshProject();
    const operationID = randomUUID();
    await call('koharu.apply', { op: { addPage: { page: pageOf() } }, operationID });
    const before = await scene();
    const reused = await call('koharu.apply', { op: { addPage: { page: pageOf() } }, operationID });
    expect(reused.isError).toBe(true);
    expect(toolJson(reused)).toMatchObject({
      code: 'malformedRequest',
      message: expect.stringContaining('already used for a different request'),
    });
    const undo = await call('koharu.undo', { operationID });
    expect(toolJson(undo)).toMatchObject({ code: 'malformedRequest' });
    expect(await scene()).toEqual(before);
  });

  it('undo and redo with an operationID each happen once, and their retries answer the same epoch', async () => {
    await freshProject();
    await call('koharu.apply', { op: { addPage: { page: pageOf([], randomUUID(), 'one') } } });
    await call('koharu.apply', { op: { addPage: { page: pageOf([], randomUUID(), 'two') } } });
    const undo = { operationID: randomUUID() };
    const undone = await epochOf('koharu.undo', undo);
    expect(await epochOf('koharu.undo', undo)).toBe(undone);
    expect((await scene()).scene.pages.map((p) => p.name)).toEqual(['one']);

    const redo = { operationID: randomUUID() };
    const redone = await epochOf('koharu.redo', redo);
    expect(redone).toBe(Number(undone) + 1);
    expect(await epochOf('koharu.redo', redo)).toBe(redone);
    const after = await scene();
    expect(after.scene.pages.map((p) => p.name)).toEqual(['one', 'two']);
    expect(after.epoch).toBe(redone);
  });

  it('an undo at the stack boundary with an operationID answers epoch null, and so does its retry', async () => {
    await freshProject();
    const undo = { operationID: randomUUID() };
    expect(await epochOf('koharu.undo', undo)).toBeNull();
    await call('koharu.apply', { op: { addPage: { page: pageOf() } } });
    // The retry is the same request: it answers what it answered, it does not undo now.
    expect(await epochOf('koharu.undo', undo)).toBeNull();
    expect((await scene()).scene.pages).toHaveLength(1);
  });

  it('without an operationID every call applies, as before', async () => {
    await freshProject();
    const page = pageOf();
    await call('koharu.apply', { op: { addPage: { page } } });
    const rename = { op: { updatePage: { id: page.id, patch: { name: 'x' } } } };
    const first = await epochOf('koharu.apply', rename);
    expect(await epochOf('koharu.apply', rename)).toBe(Number(first) + 1);
    const undone = await epochOf('koharu.undo');
    expect(await epochOf('koharu.undo')).toBe(Number(undone) + 1);
    expect(await epochOf('koharu.undo')).toBe(Number(undone) + 2);
    expect((await scene()).scene.pages).toHaveLength(0);
  });

  it('REST history/apply, undo and redo take operationID in the body and answer a retry with the first epoch', async () => {
    await freshProject();
    const apply = { op: { addPage: { page: pageOf() } }, operationID: randomUUID() };
    const applied = await json(await post(s, 'history/apply', apply));
    expect(applied).toEqual({ epoch: expect.any(Number) });
    expect(await json(await post(s, 'history/apply', apply))).toEqual(applied);

    const undo = { operationID: randomUUID() };
    const undone = await json(await post(s, 'history/undo', undo));
    expect(undone).toEqual({ epoch: Number(applied.epoch) + 1 });
    expect(await json(await post(s, 'history/undo', undo))).toEqual(undone);
    const redo = { operationID: randomUUID() };
    const redone = await json(await post(s, 'history/redo', redo));
    expect(await json(await post(s, 'history/redo', redo))).toEqual(redone);
    expect((await scene()).scene.pages).toHaveLength(1);

    const reused = await post(s, 'history/apply', {
      ...apply,
      op: { addPage: { page: pageOf() } },
    });
    expect(reused.status).toBe(400);
    expect(await json(reused)).toMatchObject({ code: 'malformedRequest' });
    // A body without operationID (or none at all) undoes as before.
    expect((await post(s, 'history/undo')).status).toBe(200);
    expect((await scene()).scene.pages).toHaveLength(0);
  });

  it('an agent retrying over REST an apply it sent over MCP gets the MCP answer', async () => {
    await freshProject();
    const args = { op: { addPage: { page: pageOf() } }, operationID: randomUUID() };
    const epoch = await epochOf('koharu.apply', args);
    expect(await json(await post(s, 'history/apply', args))).toEqual({ epoch });
    expect((await scene()).scene.pages).toHaveLength(1);
  });

  it("a retry of an applied removal under the owner's ask answers its receipt without asking again, never refused by the door's dry run", async () => {
    await freshProject();
    const page = pageOf();
    await call('koharu.apply', { op: { addPage: { page } } });
    const remove = { op: { removePage: { id: page.id } }, operationID: randomUUID() };
    const asked = toolJson(await call('koharu.apply', remove));
    expect(asked).toMatchObject({ code: 'approvalRequired' });
    await s.tk.kernel.asks.approve(String(asked.approvalID), 'once');
    const removed = await epochOf('koharu.apply', remove);
    // The replay comes before the policy (kernel §6): the owner is not asked again.
    expect(await epochOf('koharu.apply', remove)).toBe(removed);
    expect((await scene()).epoch).toBe(removed);
  });
});

describe('scene operations left open by a crash', () => {
  let tk: TestKernel | undefined;
  let data = '';
  afterEach(async () => {
    await tk?.dispose();
    tk = undefined;
  });

  const start = async () => {
    const door = await sceneDoor(data);
    tk = await testKernel([door], { dir: data });
    return door;
  };
  const restart = async () => {
    await tk!.close();
    return start();
  };
  const call = (tool: string, args: unknown) =>
    tk!.kernel.call('scene', tool, args, { connection: conn() });
  const open = () => call('koharu.open_project', { path: 'crash', createName: 'Crash' });
  const reopen = () => call('koharu.open_project', { path: 'crash' });
  const projectDir = () => join(data, 'projects', 'crash');
  const epoch = async () =>
    ((await call('koharu.get_scene', {})) as { ok: true; value: { epoch: number } }).value.epoch;
  const pageCount = async () =>
    ((await call('koharu.get_scene', {})) as { ok: true; value: { scene: { pages: [] } } }).value
      .scene.pages.length;

  /** The journal entry an apply with these arguments is begun with (as the pipeline does). */
  function applyEntry(args: Record<string, unknown>): JournalEntry {
    const tool = tk!.kernel.tool('scene', 'koharu.apply')!;
    const parsed = validateInput(tool.input, args);
    if (!parsed.ok) throw new Error(parsed.message);
    const at = Date.now();
    return {
      scope: 'scene',
      operationId: journalKey(conn(), String(args.operationID)),
      digest: callDigest('koharu.apply', parsed.value),
      tool: 'koharu.apply',
      connection: conn().id,
      target: projectDir(),
      provenance: null,
      state: 'prepared',
      receipt: null,
      createdAt: at,
      updatedAt: at,
      expiresAt: at + 60_000,
    };
  }

  it('a restart resolves a prepared entry whose op is in the project history to its receipt', async () => {
    data = tempDir();
    await start();
    await open();
    const args = { op: { addPage: { page: pageOf() } }, operationID: randomUUID() };
    const first = textOf(await call('koharu.apply', args));
    expect(first).toEqual({ epoch: 1 });
    // What a crash between the history append and the journal commit leaves:
    // the op is in the fsynced history, its journal entry is still prepared.
    const { scope, operationId } = applyEntry(args);
    await tk!.kernel.store.transaction((tx) =>
      tx.journal.update(scope, operationId, { state: 'prepared', receipt: null, updatedAt: 0 }),
    );
    expect(await tk!.kernel.journal.state(scope, operationId)).toEqual({
      state: 'prepared-not-submitted',
    });

    await restart();
    expect(await tk!.kernel.journal.state(scope, operationId)).toEqual({
      state: 'committed',
      receipt: { epoch: 1 },
    });
    expect(textOf(await reopen())).toMatchObject({ name: 'Crash' });
    expect(textOf(await call('koharu.apply', args))).toEqual({ epoch: 1 });
    expect(await pageCount()).toBe(1);
    expect(await epoch()).toBe(1);
  });

  it('a restart leaves a prepared entry whose op never reached the history prepared, and its retry applies once', async () => {
    data = tempDir();
    await start();
    await open();
    const args = { op: { addPage: { page: pageOf() } }, operationID: randomUUID() };
    // A crash before the history append: the entry was begun, nothing was written.
    const entry = applyEntry(args);
    await tk!.kernel.store.transaction((tx) => tx.journal.insert(entry));

    await restart();
    expect(await tk!.kernel.journal.state(entry.scope, entry.operationId)).toEqual({
      state: 'prepared-not-submitted',
    });
    expect(textOf(await reopen())).toMatchObject({ name: 'Crash' });
    expect(textOf(await call('koharu.apply', args))).toEqual({ epoch: 1 });
    expect(textOf(await call('koharu.apply', args))).toEqual({ epoch: 1 });
    expect(await pageCount()).toBe(1);
  });

  it('a retry after the journal lost its entry (a store failure after the history append) answers the first epoch from the history', async () => {
    data = tempDir();
    await start();
    await open();
    const args = { op: { addPage: { page: pageOf() } }, operationID: randomUUID() };
    expect(textOf(await call('koharu.apply', args))).toEqual({ epoch: 1 });
    // A failed store commit rolls the entry back and the kernel forgets it; the change stays logged.
    const { scope, operationId } = applyEntry(args);
    await tk!.kernel.store.transaction((tx) => tx.journal.delete(scope, operationId));
    expect(textOf(await call('koharu.apply', args))).toEqual({ epoch: 1 });
    expect(await pageCount()).toBe(1);
    expect(await tk!.kernel.journal.state(scope, operationId)).toEqual({
      state: 'committed',
      receipt: { epoch: 1 },
    });
  });

  it('resolveOperation reads the open project, and a closed one from its log (an old whole-project lock file changes nothing)', async () => {
    data = tempDir();
    const door: ServedDoor = await start();
    await open();
    const args = { op: { addPage: { page: pageOf() } }, operationID: randomUUID() };
    await call('koharu.apply', args);
    const entry = applyEntry(args);
    expect(await door.resolveOperation!(entry)).toEqual({ exists: true, receipt: { epoch: 1 } });
    expect(await door.resolveOperation!({ ...entry, digest: 'f'.repeat(64) })).toEqual({
      exists: false,
    });
    expect(await door.resolveOperation!({ ...entry, target: null })).toEqual({ exists: false });

    await call('koharu.close_project', {});
    expect(await door.resolveOperation!(entry)).toEqual({ exists: true, receipt: { epoch: 1 } });
    // Every process may hold the project open now: its log is read as it stands.
    writeFileSync(
      join(projectDir(), 'lock'),
      JSON.stringify({ pid: process.pid, host: hostname() }),
    );
    expect(await door.resolveOperation!(entry)).toEqual({ exists: true, receipt: { epoch: 1 } });
    expect(
      await door.resolveOperation!({ ...entry, target: join(data, 'projects', 'missing') }),
    ).toEqual({ exists: 'unknown' });
  });
});
