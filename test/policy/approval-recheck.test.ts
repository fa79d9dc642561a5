/**
 * Approvals re-checked at run time (issue 27 item 2): an ask keeps the
 * state it showed the owner; an approved-once call whose target changed in
 * between (the owner or another agent edited the page) does not run — the
 * owner is asked again, and the new card and the agent's answer say what
 * changed.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Client } from '@modelcontextprotocol/client';
import { pageOf, textNodeOf } from '../doors/scene/helpers.js';
import { sceneServer, type SceneServer } from '../doors/scene/server.js';
import { structuredOf, toolJson } from '../helpers/results.js';

let s: SceneServer;
let client: Client;

const call = (name: string, args: Record<string, unknown> = {}) =>
  client.callTool({ name, arguments: args });

type ScenePage = { id: string; name: string; nodes: { id: string }[] };
const nodesOn = async (page: string) =>
  (structuredOf(await call('koharu.get_scene')) as { scene: { pages: ScenePage[] } }).scene.pages
    .find((p) => p.id === page)!
    .nodes.map((n) => n.id);

async function asOwner(path: string, body: unknown) {
  const res = await fetch(`${s.base}/api/v1/${path}`, {
    method: 'POST',
    headers: { ...s.owner, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  expect(res.status).toBe(200);
}

beforeAll(async () => {
  s = await sceneServer();
  client = await s.mcp();
  await call('koharu.open_project', { path: `r-${randomUUID()}`, createName: 'Recheck' });
});
afterAll(async () => {
  await s.close();
});

describe('an approved call whose target changed is asked again', () => {
  it('the owner edits the page after approving a removal: nothing runs, the new card says what changed', async () => {
    const page = randomUUID();
    const keep = randomUUID();
    const doomed = randomUUID();
    await asOwner('history/apply', {
      op: {
        addPage: {
          page: pageOf([textNodeOf('keep', keep), textNodeOf('remove me', doomed)], page, 'p1'),
        },
      },
    });
    const remove = { op: { removeNode: { page, id: doomed } } };
    const asked = toolJson(await call('koharu.apply', remove));
    expect(asked.code).toBe('approvalRequired');
    await s.tk.kernel.asks.approve(String(asked.approvalID), 'once');

    // The owner changes the page the owner judged.
    await asOwner('history/apply', {
      op: { updateNode: { page, id: keep, patch: { visible: false } } },
    });

    const retried = toolJson(await call('koharu.apply', remove));
    expect(retried.code).toBe('approvalRequired');
    expect(retried.approvalID).not.toBe(asked.approvalID);
    expect(String(retried.message)).toMatch(
      new RegExp(`changed after you approved request ${String(asked.approvalID)}`),
    );
    expect(await nodesOn(page)).toContain(doomed);
    const card = (await s.tk.kernel.consent.pending()).find((a) => a.id === retried.approvalID)!;
    expect((card.preview as { changed?: string }).changed).toMatch(/nothing ran/);

    // Judged again and approved: now it runs, once.
    await s.tk.kernel.asks.approve(String(retried.approvalID), 'once');
    expect(toolJson(await call('koharu.apply', remove)).code).toBeUndefined();
    expect(await nodesOn(page)).not.toContain(doomed);
  });

  it('an approval whose target did not change runs as approved', async () => {
    const page = randomUUID();
    const doomed = randomUUID();
    await asOwner('history/apply', {
      op: { addPage: { page: pageOf([textNodeOf('bye', doomed)], page, 'p2') } },
    });
    const remove = { op: { removeNode: { page, id: doomed } } };
    const asked = toolJson(await call('koharu.apply', remove));
    await s.tk.kernel.asks.approve(String(asked.approvalID), 'once');
    expect(toolJson(await call('koharu.apply', remove)).code).toBeUndefined();
    expect(await nodesOn(page)).not.toContain(doomed);
  });
});
