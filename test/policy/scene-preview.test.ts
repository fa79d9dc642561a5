/**
 * The scene door's asks (issue 27): each op in words with what it touches,
 * the totals, before/after thumbnails of each page touched (small PNGs kept
 * with the ask), and the page as the subject a 15-minute approval may be
 * narrowed to.
 */
import { randomUUID } from 'node:crypto';
import { createCanvas, loadImage } from '@napi-rs/canvas';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Client } from '@modelcontextprotocol/client';
import { comicPage, pageOf, textNodeOf } from '../doors/scene/helpers.js';
import { sceneServer, uploadPages, type SceneServer } from '../doors/scene/server.js';
import { toolJson } from '../helpers/results.js';
import type { Approval } from '../../src/kernel/records.js';
import { readablePreview, thumbnailsOf } from '../../src/web/app/preview.js';
import { THUMB_BYTES, THUMB_MAX } from '../../src/doors/scene/op-thumbnails.js';

let s: SceneServer;
let client: Client;

type ScenePreview = {
  summary: string;
  changes: string;
  totals: string;
  subject?: string;
  thumbnails?: { page: string; before: string; after: string | null }[];
};

const call = (name: string, args: Record<string, unknown> = {}) =>
  client.callTool({ name, arguments: args });

async function asOwner(op: unknown) {
  const res = await fetch(`${s.base}/api/v1/history/apply`, {
    method: 'POST',
    headers: { ...s.owner, 'content-type': 'application/json' },
    body: JSON.stringify({ op }),
  });
  expect(res.status).toBe(200);
}

async function askFor(op: unknown): Promise<Approval & { preview: ScenePreview }> {
  const asked = toolJson(await call('koharu.apply', { op }));
  expect(asked.code).toBe('approvalRequired');
  const card = (await s.tk.kernel.consent.pending()).find((a) => a.id === asked.approvalID)!;
  return card as Approval & { preview: ScenePreview };
}

const pngOf = async (url: string) => {
  expect(url).toMatch(/^data:image\/png;base64,/);
  const bytes = Buffer.from(url.slice(url.indexOf(',') + 1), 'base64');
  expect(bytes.byteLength).toBeLessThanOrEqual(THUMB_BYTES);
  return loadImage(bytes);
};

const pages: string[] = [];
beforeAll(async () => {
  s = await sceneServer();
  client = await s.mcp();
  await call('koharu.open_project', { path: `p-${randomUUID()}`, createName: 'Chapter 1' });
  for (let i = 1; i <= 4; i++) {
    const id = randomUUID();
    pages.push(id);
    const nodes =
      i === 4
        ? Array.from({ length: 6 }, (_, k) => textNodeOf(`line ${k}`))
        : [textNodeOf(i === 3 ? 'Where are you going?' : `hello ${i}`)];
    await asOwner({ addPage: { page: pageOf(nodes, id, `p${i}`) } });
  }
});
afterAll(async () => {
  await s.close();
});

describe('scene asks', () => {
  it('a node removal says which text goes from which page, with totals and before/after thumbnails', async () => {
    const page = pages[2]!;
    const scene = toolJson(await call('koharu.get_scene')) as {
      scene: { pages: { id: string; nodes: { id: string }[] }[] };
    };
    const node = scene.scene.pages.find((p) => p.id === page)!.nodes[0]!.id;
    const card = await askFor({ removeNode: { page, id: node } });
    const p = card.preview;
    expect(p.changes).toBe('remove text "Where are you going?" from page 3 "p3"');
    expect(p.summary).toContain('Chapter 1: remove_node — remove text "Where are you going?"');
    expect(p.totals).toBe('1 op on 1 existing page: 1 node removed');
    expect(p.subject).toBe(`page "p3" ${page}`);

    const [thumbs] = thumbnailsOf(p);
    expect(thumbs!.page).toBe('page 3 "p3"');
    const before = await pngOf(thumbs!.before);
    const after = await pngOf(thumbs!.after!);
    expect(Math.max(before.width, before.height)).toBeLessThanOrEqual(THUMB_MAX);
    expect([after.width, after.height]).toEqual([before.width, before.height]);
    // The text box is drawn before and gone after.
    expect(thumbs!.after).not.toBe(thumbs!.before);

    // The CLI and the card's text list: the change first, never the pictures.
    const { summary, details } = readablePreview(p, card.summary);
    expect(summary).toContain('Where are you going?');
    expect(details[0]).toMatchObject({ key: 'changes' });
    expect(details.some((d) => d.key === 'thumbnails')).toBe(false);
  });

  it('a page removal names the page and what it holds; its after is "removed"', async () => {
    const card = await askFor({ removePage: { id: pages[3]! } });
    expect(card.preview.changes).toBe('remove page 4 "p4" (6 text nodes)');
    expect(card.preview.totals).toBe('1 op on 1 existing page: 1 page removed');
    expect(card.preview.thumbnails![0]!.after).toBeNull();
  });

  it('a long batch is bounded with a "… N more" line; its thumbnails cover at most three pages', async () => {
    const ops = pages.flatMap((page) =>
      Array.from({ length: 6 }, (_, i) => ({
        addNode: { page, node: textNodeOf(`new ${i}`) },
      })),
    );
    const card = await askFor({
      batch: { label: 'many', ops: [...ops, { removePage: { id: pages[0]! } }] },
    });
    const lines = card.preview.changes.split('\n');
    expect(lines).toHaveLength(21);
    expect(lines.at(-1)).toBe('… 5 more');
    expect(card.preview.totals).toBe('25 ops on 4 existing pages: 1 page removed, 24 nodes added');
    expect(card.preview.thumbnails).toHaveLength(3);
    // A batch over several pages names no single subject.
    expect(card.preview.subject).toBeUndefined();
  });

  it('a page with an image is drawn with it, and a busy image stays within the size bound', async () => {
    const words = await comicPage([{ text: 'HELLO', x: 40, y: 120 }]);
    const noise = createCanvas(1200, 1800);
    const g = noise.getContext('2d');
    for (let i = 0; i < 4000; i++) {
      g.fillStyle = `rgb(${(i * 37) % 255},${(i * 91) % 255},${(i * 13) % 255})`;
      g.fillRect((i * 53) % 1200, (i * 97) % 1800, 40, 30);
    }
    const uploaded = await uploadPages(s, [
      { name: 'words.png', bytes: words },
      { name: 'busy.png', bytes: new Uint8Array(await noise.encode('png')) },
    ]);
    expect(uploaded.status).toBeLessThan(300);
    const scene = toolJson(await call('koharu.get_scene')) as {
      scene: { pages: { id: string; name: string }[] };
    };
    const [wordsPage, busyPage] = scene.scene.pages.slice(-2);
    for (const [p, darkExpected] of [
      [wordsPage!, true],
      [busyPage!, false],
    ] as const) {
      const card = await askFor({ removePage: { id: p.id } });
      const before = await pngOf(card.preview.thumbnails![0]!.before);
      const c = createCanvas(before.width, before.height);
      c.getContext('2d').drawImage(before, 0, 0);
      const px = c.getContext('2d').getImageData(0, 0, before.width, before.height).data;
      let dark = 0;
      for (let i = 0; i < px.length; i += 4) if (px[i]! + px[i + 1]! + px[i + 2]! < 150) dark++;
      // The page's words are in the picture (the image was drawn, not only boxes).
      if (darkExpected) expect(dark).toBeGreaterThan(10);
    }
  });
});
