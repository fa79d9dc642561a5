/**
 * The owner's policy sees what an undo, a redo, a batch or a pipeline
 * changes (issue 24, findings 2, 3 and 5): undo and redo take the effect and
 * targets of the ops they revert or replay; a 15-minute approval of a batch
 * covers only batches of the same op kinds; a pipeline has one target per
 * step.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { Client } from '@modelcontextprotocol/client';
import { pageOf, textNodeOf } from '../doors/scene/helpers.js';
import { json, post, sceneServer, type SceneServer } from '../doors/scene/server.js';
import { structuredOf, toolJson } from '../helpers/results.js';

let s: SceneServer;
let client: Client;

const AGENT = 'scene-test';

const call = (name: string, args: Record<string, unknown> = {}) =>
  client.callTool({ name, arguments: args });

type ScenePage = { id: string; name: string; nodes: { id: string }[] };
const pages = async () =>
  (structuredOf(await call('koharu.get_scene')) as { scene: { pages: ScenePage[] } }).scene.pages;
const pageNames = async () => (await pages()).map((p) => p.name);

/** The owner's own REST write (never asked: the owner is the one who would approve). */
async function asOwner(path: string, body: unknown = {}) {
  const res = await fetch(`${s.base}/api/v1/${path}`, {
    method: 'POST',
    headers: { ...s.owner, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  expect(res.status, JSON.stringify(await res.clone().json())).toBe(200);
  return json(res);
}

/** The owner adds pages as one undo step. */
const ownerAdds = (...names: string[]) =>
  asOwner('history/apply', {
    op: {
      batch: {
        label: `add ${names.length} pages`,
        ops: names.map((name) => ({ addPage: { page: pageOf([], randomUUID(), name) } })),
      },
    },
  });

const pendingAsks = async () =>
  (await s.tk.kernel.consent.pending()).filter(
    (a) => a.kind === 'policy' && a.status === 'pending',
  );

beforeAll(async () => {
  s = await sceneServer();
  client = await s.mcp();
});
afterAll(async () => {
  await s.close();
});
beforeEach(async () => {
  // A fresh project per test: its history is the test's own.
  await call('koharu.open_project', { path: `h-${randomUUID()}`, createName: 'History' });
});
afterEach(async () => {
  const { policy } = s.tk.kernel;
  for (const r of (await policy.view()).rules) await policy.remove(r.id);
  for (const a of await pendingAsks()) await s.tk.kernel.consent.deny(a.id, 'test over');
});

describe('undo and redo are decided by what they change', () => {
  it("an agent's undo that would remove the owner's pages asks the owner, naming the pages", async () => {
    await ownerAdds('cover', 'one', 'two');
    const asked = await call('koharu.undo');
    const body = toolJson(asked);
    expect(body).toMatchObject({ code: 'approvalRequired', rule: 'default:destructive' });
    expect(await pageNames()).toEqual(['cover', 'one', 'two']);

    const ask = (await pendingAsks()).find((a) => a.id === body.approvalID)!;
    expect(ask).toMatchObject({ tool: 'koharu.undo', target: 'remove_page' });
    const preview = ask.preview as { summary: string; effect: string; removes: unknown };
    expect(preview.effect).toBe('destructive');
    expect(preview.summary).toContain('remove_page ×3');
    expect(preview.removes).toEqual(
      expect.arrayContaining([
        'page "cover" (0 nodes)',
        'page "one" (0 nodes)',
        'page "two" (0 nodes)',
      ]),
    );

    await s.tk.kernel.asks.approve(String(body.approvalID), 'once');
    expect((await call('koharu.undo')).isError).toBeFalsy();
    expect(await pages()).toEqual([]);
  });

  it('a deny rule on remove_page stops an undo that would remove pages, over MCP and REST', async () => {
    await s.tk.kernel.policy.add({
      door: 'scene',
      agent: AGENT,
      target: 'remove_page',
      decision: 'deny',
      reason: 'pages stay',
    });
    await ownerAdds('a', 'b', 'c');
    expect(toolJson(await call('koharu.undo'))).toMatchObject({
      code: 'notAuthorized',
      reason: 'pages stay',
    });
    const viaRest = await post(s, 'history/undo', {});
    expect(viaRest.status).toBe(403);
    expect(await json(viaRest)).toMatchObject({ code: 'notAuthorized' });
    expect(await pageNames()).toEqual(['a', 'b', 'c']);
  });

  it('a deny rule on remove_page stops a redo that would remove a page, over MCP and REST', async () => {
    await ownerAdds('kept');
    const [page] = await pages();
    await asOwner('history/apply', { op: { removePage: { id: page!.id } } });
    await asOwner('history/undo');
    await s.tk.kernel.policy.add({
      door: 'scene',
      agent: AGENT,
      target: 'remove_page',
      decision: 'deny',
    });
    expect(toolJson(await call('koharu.redo'))).toMatchObject({ code: 'notAuthorized' });
    expect((await post(s, 'history/redo', {})).status).toBe(403);
    expect(await pageNames()).toEqual(['kept']);
  });

  it('an undo that reverts an edit stays a write and runs unasked', async () => {
    await ownerAdds('draft');
    const [page] = await pages();
    await call('koharu.apply', { op: { updatePage: { id: page!.id, patch: { name: 'final' } } } });
    const undone = await call('koharu.undo');
    expect(undone.isError).toBeFalsy();
    expect(await pageNames()).toEqual(['draft']);
    expect(await pendingAsks()).toEqual([]);
  });

  it('an approval of one undo does not cover an undo of a step made after it', async () => {
    await ownerAdds('first');
    const body = toolJson(await call('koharu.undo'));
    expect(body).toMatchObject({ code: 'approvalRequired' });
    await s.tk.kernel.asks.approve(String(body.approvalID), 'once');
    // The owner adds more before the agent retries: the approved undo would now remove these.
    await ownerAdds('second', 'third');
    const again = toolJson(await call('koharu.undo'));
    expect(again).toMatchObject({ code: 'approvalRequired' });
    expect(again.approvalID).not.toBe(body.approvalID);
    expect(await pageNames()).toEqual(['first', 'second', 'third']);
  });

  it('a retry of an approved undo with its operationID answers the first epoch without asking again', async () => {
    await ownerAdds('a');
    await ownerAdds('b');
    const args = { operationID: randomUUID() };
    const body = toolJson(await call('koharu.undo', args));
    expect(body).toMatchObject({ code: 'approvalRequired' });
    await s.tk.kernel.asks.approve(String(body.approvalID), 'once');
    const first = structuredOf(await call('koharu.undo', args));
    expect(structuredOf(await call('koharu.undo', args))).toEqual(first);
    expect(await pendingAsks()).toEqual([]);
    expect(await pageNames()).toEqual(['a']);
  });

  it('two undos decided on the same edit never revert the step beneath it unasked', async () => {
    await ownerAdds('x', 'y', 'z');
    const [page] = await pages();
    await call('koharu.apply', { op: { updatePage: { id: page!.id, patch: { name: 'x2' } } } });
    const results = await Promise.all([call('koharu.undo'), call('koharu.undo')]);
    expect(results.filter((r) => !r.isError)).toHaveLength(1);
    expect(await pageNames()).toEqual(['x', 'y', 'z']);
  });
});

describe('a batch is decided by its op kinds', () => {
  it('a 15-minute approval of a batch removing nodes does not cover a batch removing pages', async () => {
    const nodes = [textNodeOf('a'), textNodeOf('b'), textNodeOf('c')];
    await asOwner('history/apply', { op: { addPage: { page: pageOf(nodes, randomUUID(), 'p') } } });
    await ownerAdds('q');
    const [p, q] = await pages();
    const removeNodes = (...ids: string[]) => ({
      op: {
        batch: { label: 'tidy', ops: ids.map((id) => ({ removeNode: { page: p!.id, id } })) },
      },
    });

    const body = toolJson(await call('koharu.apply', removeNodes(nodes[0]!.id)));
    expect(body).toMatchObject({ code: 'approvalRequired' });
    const ask = (await pendingAsks()).find((a) => a.id === body.approvalID)!;
    expect(ask.target).toBe('remove_node');
    await s.tk.kernel.asks.approve(String(body.approvalID), '15m');
    expect((await call('koharu.apply', removeNodes(nodes[1]!.id))).isError).toBeFalsy();

    const wider = {
      op: {
        batch: {
          label: 'tidy',
          ops: [{ removeNode: { page: p!.id, id: nodes[2]!.id } }, { removePage: { id: q!.id } }],
        },
      },
    };
    expect(toolJson(await call('koharu.apply', wider))).toMatchObject({
      code: 'approvalRequired',
    });
    expect(await pageNames()).toEqual(['p', 'q']);
  });

  it('an allow rule on one kind does not let a batch that also removes a page through unasked', async () => {
    await s.tk.kernel.policy.add({ door: 'scene', target: 'add_node', decision: 'allow' });
    await ownerAdds('p', 'q');
    const [p, q] = await pages();
    const sneaky = {
      batch: {
        label: 'sneaky',
        ops: [{ addNode: { page: p!.id, node: textNodeOf() } }, { removePage: { id: q!.id } }],
      },
    };
    expect(toolJson(await call('koharu.apply', { op: sneaky }))).toMatchObject({
      code: 'approvalRequired',
      rule: 'default:destructive',
    });
    expect(await pageNames()).toEqual(['p', 'q']);
  });
});

describe('a pipeline has one target per step', () => {
  it('an allow rule on one step does not let through a pipeline with a step a later rule denies', async () => {
    const { policy } = s.tk.kernel;
    await policy.add({ door: 'scene', target: 'pipeline:tesseract', decision: 'allow' });
    await policy.add({ door: 'scene', target: 'pipeline:*', decision: 'deny' });
    expect(
      toolJson(await call('koharu.start_pipeline', { steps: ['tesseract', 'llm'] })),
    ).toMatchObject({ code: 'notAuthorized' });
  });

  it('a deny on pipeline:fill stops a pipeline whose steps include fill', async () => {
    await s.tk.kernel.policy.add({ door: 'scene', target: 'pipeline:fill', decision: 'deny' });
    expect(
      toolJson(await call('koharu.start_pipeline', { steps: ['tesseract', 'fill'] })),
    ).toMatchObject({ code: 'notAuthorized' });
  });
});
