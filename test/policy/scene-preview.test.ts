/**
 * The scene door's asks (issue 27): each op in words with what it touches,
 * the totals, before/after thumbnails of each page touched (small PNGs kept
 * with the ask, lettered by the door's renderer), and the page as the
 * subject a 15-minute approval may be narrowed to.
 */
import { randomUUID } from 'node:crypto';
import { createCanvas, loadImage, type Image } from '@napi-rs/canvas';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Client } from '@modelcontextprotocol/client';
import { comicPage, pageOf, textNodeOf } from '../doors/scene/helpers.js';
import {
  json,
  post,
  sceneServer,
  sse,
  until,
  uploadPages,
  type SceneServer,
} from '../doors/scene/server.js';
import { toolJson } from '../helpers/results.js';
import type { Approval } from '../../src/kernel/records.js';
import { readablePreview, thumbnailsOf } from '../../src/web/app/preview.js';
import { THUMB_BYTES, THUMB_MAX } from '../../src/doors/scene/policy/op-thumbnails.js';

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

/** RGBA pixels of an image, drawn at its size or at w × h. */
function pixelsOf(image: Image, w = image.width, h = image.height) {
  const c = createCanvas(w, h);
  c.getContext('2d').drawImage(image, 0, 0, w, h);
  return c.getContext('2d').getImageData(0, 0, w, h).data;
}

/** An image scaled down to w × h by averaging each target pixel's footprint (no aliasing). */
function areaDown(image: Image, w: number, h: number): Float64Array {
  const src = pixelsOf(image);
  const out = new Float64Array(w * h * 4);
  const count = new Float64Array(w * h);
  for (let y = 0; y < image.height; y++)
    for (let x = 0; x < image.width; x++) {
      const t = Math.floor((y * h) / image.height) * w + Math.floor((x * w) / image.width);
      for (let k = 0; k < 4; k++) out[t * 4 + k]! += src[(y * image.width + x) * 4 + k]!;
      count[t]!++;
    }
  for (let t = 0; t < w * h; t++) for (let k = 0; k < 4; k++) out[t * 4 + k]! /= count[t]!;
  return out;
}

type Box = { x0: number; y0: number; x1: number; y1: number };

/** How much ink a box holds (mean darkness, 0–255) and where its weight lies. */
function inkIn(px: ArrayLike<number>, width: number, b: Box) {
  let sum = 0;
  let sx = 0;
  let sy = 0;
  let n = 0;
  for (let y = b.y0; y < b.y1; y++)
    for (let x = b.x0; x < b.x1; x++) {
      const i = (y * width + x) * 4;
      const ink = 255 - (0.299 * px[i]! + 0.587 * px[i + 1]! + 0.114 * px[i + 2]!);
      sum += ink;
      sx += ink * x;
      sy += ink * y;
      n++;
    }
  return { coverage: sum / n, cx: sx / Math.max(sum, 1), cy: sy / Math.max(sum, 1) };
}

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

  it('the thumbnails are the renderer lettering: before and after match what the pipeline renderer draws, scaled down', async () => {
    // A blank 480 × 320 page with two lettered translations.
    expect((await uploadPages(s, [{ name: 'blank.png', bytes: await comicPage([]) }])).status).toBe(
      201,
    );
    const scene = toolJson(await call('koharu.get_scene')) as {
      scene: { pages: { id: string; width: number; height: number }[] };
    };
    const page = scene.scene.pages.at(-1)!;
    expect([page.width, page.height]).toEqual([480, 320]);
    const [a, b] = [randomUUID(), randomUUID()];
    const lettered = (id: string, x: number, y: number, w: number, h: number, tr: string) => ({
      addNode: {
        page: page.id,
        node: {
          id,
          transform: { x, y, width: w, height: h, rotationDeg: 0 },
          visible: true,
          kind: { text: { text: '行く', translation: tr } },
        },
      },
    });
    await asOwner({
      batch: {
        label: 'letters',
        ops: [lettered(a, 250, 40, 210, 240, 'GO'), lettered(b, 20, 200, 160, 90, 'BYE')],
      },
    });

    /** The page as the pipeline's `renderer` step writes it, at full size. */
    const rendered = async () => {
      const events = sse(s);
      await events.ready();
      const res = await post(s, 'pipelines', { steps: ['renderer'], pages: [page.id] });
      const { jobId } = (await res.json()) as { jobId: string };
      expect(res.status).toBe(202);
      await until(() => events.events.some((e) => e.event === 'jobFinished' && e.id === jobId));
      events.stop();
      const now = (await json(await s.fetch(`${s.base}/api/v1/scene.json`))) as {
        scene: {
          pages: { id: string; nodes: { kind: { image?: { role: string; blob: string } } }[] }[];
        };
      };
      const node = now.scene.pages
        .find((p) => p.id === page.id)!
        .nodes.find((n) => n.kind.image?.role === 'rendered')!;
      const bytes = await (
        await s.fetch(`${s.base}/api/v1/blobs/${node.kind.image!.blob}`)
      ).arrayBuffer();
      return loadImage(Buffer.from(bytes));
    };

    const reword = {
      batch: {
        label: 'reword',
        ops: [
          {
            updateNode: { page: page.id, id: a, patch: { data: { text: { translation: 'NO!' } } } },
          },
          { removeNode: { page: page.id, id: b } },
        ],
      },
    };
    const beforeRender = await rendered();
    const card = await askFor(reword);
    const [thumbs] = thumbnailsOf(card.preview);
    const before = await pngOf(thumbs!.before);
    const after = await pngOf(thumbs!.after!);
    // The same change made by the owner, rendered by the pipeline: what "after" must show.
    await asOwner(reword);
    const afterRender = await rendered();

    const { width: w, height: h } = before;
    expect([w, h]).toEqual([128, 85]);
    // Inside each text box (its thin outline left out), at thumbnail scale.
    const inner = (x: number, y: number, bw: number, bh: number): Box => {
      const k = w / 480;
      return {
        x0: Math.ceil(x * k) + 3,
        y0: Math.ceil(y * k) + 3,
        x1: Math.floor((x + bw) * k) - 3,
        y1: Math.floor((y + bh) * k) - 3,
      };
    };
    const boxA = inner(250, 40, 210, 240);
    const boxB = inner(20, 200, 160, 90);
    const compare = (thumb: Image, truth: Image, box: Box) => {
      const got = inkIn(pixelsOf(thumb), w, box);
      const want = inkIn(areaDown(truth, w, h), w, box);
      // The big fitted lettering, not a small caption in the box's corner.
      expect(want.coverage).toBeGreaterThan(20);
      expect(got.coverage).toBeGreaterThan(want.coverage * 0.85);
      expect(got.coverage).toBeLessThan(want.coverage * 1.15);
      expect(Math.abs(got.cx - want.cx)).toBeLessThan(1.5);
      expect(Math.abs(got.cy - want.cy)).toBeLessThan(1.5);
    };
    compare(before, beforeRender, boxA);
    compare(before, beforeRender, boxB);
    compare(after, afterRender, boxA);
    // "GO" became "NO!": other lettering in the same box.
    const pb = pixelsOf(before);
    const pa = pixelsOf(after);
    let changed = 0;
    for (let y = boxA.y0; y < boxA.y1; y++)
      for (let x = boxA.x0; x < boxA.x1; x++) {
        const i = (y * w + x) * 4;
        if (Math.abs(pb[i]! - pa[i]!) > 64) changed++;
      }
    expect(changed).toBeGreaterThan(50);
    // The removed "BYE" is gone from after: its box holds only the blank page.
    expect(inkIn(pa, w, boxB).coverage).toBeLessThan(15);
  });
});
