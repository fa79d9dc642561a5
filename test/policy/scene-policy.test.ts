/**
 * The owner's policy on the scene door (authority.md §3): read-only refuses
 * `koharu.apply` and the Koharu REST writes alike (they run as tool calls),
 * reads keep working; removals are destructive and ask an agent's owner;
 * op kinds, pipelines and exports are targets rules can name.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { Client } from '@modelcontextprotocol/client';
import { pageOf, textNodeOf } from '../doors/scene/helpers.js';
import { json, post, sceneServer, type SceneServer } from '../doors/scene/server.js';
import { structuredOf, toolJson } from '../helpers/results.js';

let s: SceneServer;
let client: Client;

const call = (name: string, args: Record<string, unknown> = {}) =>
  client.callTool({ name, arguments: args });
const pages = async () =>
  (structuredOf(await call('koharu.get_scene')) as { scene: { pages: { id: string }[] } }).scene
    .pages;

beforeAll(async () => {
  s = await sceneServer();
  client = await s.mcp();
  await call('koharu.open_project', { path: 'policy', createName: 'Policy' });
  await call('koharu.apply', { op: { addPage: { page: pageOf([textNodeOf()]) } } });
});
afterAll(async () => {
  await s.close();
});
afterEach(async () => {
  const { policy } = s.tk.kernel;
  await policy.setReadOnly(false);
  for (const r of (await policy.view()).rules) await policy.remove(r.id);
});

describe('policy on the scene door', () => {
  it('a rule on a scene target the door never produces is refused with its op kinds; per-kind and per-step targets are accepted', async () => {
    const { policy } = s.tk.kernel;
    const refused = await policy.add({ door: 'scene', target: 'batch', decision: 'deny' });
    expect(refused).toMatchObject({ ok: false, code: 'malformedRequest' });
    const message = 'message' in refused ? refused.message : '';
    expect(message).toContain('`remove_page`');
    expect(message).toContain('`pipeline:<step>`');
    for (const target of ['remove_page', 'pipeline:fill', 'export:png', 'remove_*'])
      expect(await policy.add({ door: 'scene', target, decision: 'deny' })).toMatchObject({
        target,
      });
  });

  it('readOnly on scene refuses koharu.apply and REST writes alike, while get_scene works', async () => {
    await s.tk.kernel.policy.setReadOnly(['scene']);
    const before = await pages();
    const viaTool = await call('koharu.apply', { op: { addPage: { page: pageOf() } } });
    expect(viaTool.isError).toBe(true);
    expect(toolJson(viaTool)).toMatchObject({ code: 'notAuthorized', rule: 'readOnly' });

    const viaRest = await post(s, 'history/apply', { op: { addPage: { page: pageOf() } } });
    expect(viaRest.status).toBe(403);
    expect(await json(viaRest)).toMatchObject({ code: 'notAuthorized' });
    // The owner's own REST writes are refused too: read-only means read-only.
    const asOwner = await fetch(`${s.base}/api/v1/history/apply`, {
      method: 'POST',
      headers: { ...s.owner, 'content-type': 'application/json' },
      body: JSON.stringify({ op: { addPage: { page: pageOf() } } }),
    });
    expect(asOwner.status).toBe(403);
    const undo = await call('koharu.undo');
    expect(toolJson(undo)).toMatchObject({ code: 'notAuthorized' });

    expect(await pages()).toEqual(before);
  });

  it("an agent's removal asks the owner; approved once, it applies", async () => {
    const [page] = await pages();
    const remove = { op: { removePage: { id: page!.id } } };
    const asked = await call('koharu.apply', remove);
    const body = toolJson(asked);
    expect(body).toMatchObject({ code: 'approvalRequired', rule: 'default:destructive' });
    const ask = (await s.tk.kernel.consent.pending()).find((a) => a.id === body.approvalID)!;
    expect(ask).toMatchObject({ target: 'remove_page' });
    expect((ask.preview as { summary: string }).summary).toContain('remove_page');
    // The card says what goes: the page by name, with its node count.
    expect((ask.preview as { removes: string[] }).removes).toEqual(['page "page" (1 node)']);
    expect(await pages()).toHaveLength(1);
    await s.tk.kernel.asks.approve(String(body.approvalID), 'once');
    expect((await call('koharu.apply', remove)).isError).toBeFalsy();
    expect(await pages()).toHaveLength(0);
    // Put a page back for the next test.
    await call('koharu.undo');
  });

  it('an op that cannot apply is refused by the door before the owner is asked', async () => {
    const asked = await call('koharu.apply', {
      op: { removePage: { id: '00000000-0000-4000-8000-000000000000' } },
    });
    expect(toolJson(asked)).toMatchObject({ code: 'notFound' });
    expect(
      (await s.tk.kernel.consent.pending()).filter(
        (a) => a.kind === 'policy' && a.status === 'pending',
      ),
    ).toEqual([]);
  });

  it("an agent's removal while no project is open answers noProject without asking the owner", async () => {
    await call('koharu.close_project');
    try {
      await expect(
        call('koharu.apply', {
          op: { removePage: { id: '00000000-0000-4000-8000-000000000000' } },
        }),
      ).rejects.toMatchObject({ code: -32600 });
      expect(
        (await s.tk.kernel.consent.pending()).filter(
          (a) => a.kind === 'policy' && a.status === 'pending',
        ),
      ).toEqual([]);
    } finally {
      await call('koharu.open_project', { path: 'policy' });
    }
  });

  it('rules name op kinds (also inside a batch), pipelines and exports', async () => {
    const { policy } = s.tk.kernel;
    await policy.add({
      door: 'scene',
      target: 'add_node',
      decision: 'deny',
      reason: 'no new nodes',
    });
    await policy.add({ door: 'scene', target: 'export:pdf', decision: 'deny' });
    await policy.add({ door: 'scene', target: 'pipeline:*llm*', decision: 'deny' });
    const [page] = await pages();
    const batch = {
      batch: {
        label: 'sneaky',
        ops: [
          { updatePage: { id: page!.id, patch: {} } },
          { addNode: { page: page!.id, node: textNodeOf() } },
        ],
      },
    };
    expect(toolJson(await call('koharu.apply', { op: batch }))).toMatchObject({
      code: 'notAuthorized',
    });
    expect(toolJson(await call('koharu.export', { format: 'pdf' }))).toMatchObject({
      code: 'notAuthorized',
    });
    expect((await call('koharu.export', { format: 'khr' })).isError).toBeFalsy();
    // An export writes a file: it is audited like every write.
    const audited = await s.tk.kernel.audit.list({ door: 'scene' });
    expect(audited.map((e) => [e.tool, e.result])).toEqual(
      expect.arrayContaining([
        ['koharu.export', 'ok'],
        ['koharu.export', 'notAuthorized'],
      ]),
    );
    expect(
      toolJson(await call('koharu.start_pipeline', { steps: ['tesseract', 'llm'] })),
    ).toMatchObject({ code: 'notAuthorized' });
  });
});
