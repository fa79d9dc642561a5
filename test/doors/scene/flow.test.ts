/**
 * The reference's suggested agent flow, end to end against a real
 * `airlock serve` (dist/) through an MCP client and HTTP: open_project with createName, upload generated comic pages,
 * start_pipeline tesseract → llm (fake endpoint on loopback) → fill →
 * renderer while /events is followed, export, undo, close.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createCanvas, loadImage } from '@napi-rs/canvas';
import type { Scene } from '../../../src/doors/scene/model/model.js';
import { comicPage } from './helpers.js';
import { json, post, servedScene, sse, until, uploadPages } from './server.js';
import { structuredOf, toolJson } from '../../helpers/results.js';

let s: Awaited<ReturnType<typeof servedScene>>;
beforeAll(async () => {
  s = await servedScene();
});
afterAll(async () => {
  await s.close();
});

async function pixels(bytes: Uint8Array) {
  const image = await loadImage(Buffer.from(bytes));
  const canvas = createCanvas(image.width, image.height);
  const g = canvas.getContext('2d');
  g.drawImage(image, 0, 0);
  return g.getImageData(0, 0, image.width, image.height);
}

describe('the seed flow', () => {
  it('OCRs, translates, erases and renders generated pages; undo reverts the renderer batch', async () => {
    const client = await s.mcp();
    const opened = await client.callTool({
      name: 'koharu.open_project',
      arguments: { path: 'comic.khrproj', createName: 'Comic' },
    });
    expect(structuredOf(opened)).toMatchObject({ name: 'Comic' });

    const sourceBytes = await comicPage([
      { text: 'HELLO', x: 40, y: 90 },
      { text: 'WORLD', x: 220, y: 250 },
    ]);
    const second = await comicPage([{ text: 'GOOD NIGHT', x: 60, y: 170 }]);
    const upload = await uploadPages(s, [
      { name: 'one.png', bytes: sourceBytes },
      { name: 'two.png', bytes: second },
    ]);
    expect(upload.status).toBe(201);

    const events = sse(s);
    await events.ready();
    const started = await client.callTool({
      name: 'koharu.start_pipeline',
      arguments: { steps: ['tesseract', 'llm', 'fill', 'renderer'], targetLanguage: 'Portuguese' },
    });
    const { jobId } = structuredOf(started) as { jobId: string };
    await until(
      () => events.events.some((e) => e.event === 'jobFinished' && e.id === jobId),
      90_000,
    );
    events.stop();

    const mine = events.events.filter((e) => e.id === jobId || e.jobId === jobId);
    expect(mine[0]).toEqual({ event: 'jobStarted', id: jobId, kind: 'pipeline' });
    const progress = mine.filter((e) => e.event === 'jobProgress');
    const percents = progress.map((e) => e.overallPercent as number);
    expect(percents).toEqual([...percents].sort((a, b) => a - b));
    expect(percents.at(-1)).toBe(100);
    expect(progress[0]).toMatchObject({
      step: 'tesseract',
      currentPage: 0,
      totalPages: 2,
      totalSteps: 4,
    });
    expect(mine.at(-1)).toEqual({ event: 'jobFinished', id: jobId, status: 'completed' });
    expect(events.events.filter((e) => e.event === 'sceneChanged').length).toBeGreaterThanOrEqual(
      8,
    );

    const { epoch, scene } = (await json(await s.fetch(`${s.base}/api/v1/scene.json`))) as {
      epoch: number;
      scene: Scene;
    };
    const texts = (page: number) =>
      scene.pages[page]!.nodes.flatMap((n) =>
        'text' in n.kind ? [{ node: n, text: n.kind.text }] : [],
      );
    expect(texts(0).map((t) => t.text.text)).toEqual(['HELLO', 'WORLD']);
    expect(texts(1).map((t) => t.text.text)).toEqual(['GOOD NIGHT']);
    expect(texts(0).map((t) => t.text.translation)).toEqual(['hello [pt]', 'world [pt]']);
    expect(s.llm.requests[0]!.system).toContain('Portuguese');
    expect(s.llm.requests[0]!.user).toBe('1: HELLO\n2: WORLD');
    // Each page is translated with its neighbours' text as context (issue 18), not as segments.
    expect(s.llm.requests[0]!.system).toMatch(/For context only[\s\S]*Next page:\nGOOD NIGHT/);
    expect(s.llm.requests[1]!.system).toMatch(/Previous page:\nHELLO\nWORLD/);
    expect(s.llm.requests[1]!.system).not.toContain('Next page:');

    // The rendered export differs from the source exactly inside the text regions.
    const exported = await post(s, 'projects/current/export', {
      format: 'rendered',
      pages: [scene.pages[0]!.id],
    });
    expect(exported.headers.get('content-type')).toBe('image/png');
    const rendered = await pixels(new Uint8Array(await exported.arrayBuffer()));
    const source = await pixels(sourceBytes);
    const regions = texts(0).map((t) => t.node.transform);
    let inside = 0;
    let outside = 0;
    for (let y = 0; y < source.height; y++) {
      for (let x = 0; x < source.width; x++) {
        const i = (y * source.width + x) * 4;
        const same =
          source.data[i] === rendered.data[i] &&
          source.data[i + 1] === rendered.data[i + 1] &&
          source.data[i + 2] === rendered.data[i + 2];
        if (same) continue;
        const inRegion = regions.some(
          (r) => x >= r.x && x < r.x + r.width && y >= r.y && y < r.y + r.height,
        );
        if (inRegion) inside++;
        else outside++;
      }
    }
    expect(outside).toBe(0);
    expect(inside).toBeGreaterThan(200);

    // One undo reverts the renderer's batch on the last page; the epoch rises. It removes
    // the rendered image, so the owner is asked first (issue 24) and approves it once.
    const asked = toolJson(await client.callTool({ name: 'koharu.undo', arguments: {} }));
    expect(asked).toMatchObject({ code: 'approvalRequired', rule: 'default:destructive' });
    const approved = await fetch(`${s.base}/api/v1/approvals/${String(asked.approvalID)}/approve`, {
      method: 'POST',
      headers: { ...s.owner, 'content-type': 'application/json' },
      body: JSON.stringify({ scope: 'once' }),
    });
    expect(approved.status).toBe(200);
    const undone = await client.callTool({ name: 'koharu.undo', arguments: {} });
    expect(structuredOf(undone)).toEqual({ epoch: epoch + 1 });
    const after = (await json(await s.fetch(`${s.base}/api/v1/scene.json`))) as { scene: Scene };
    const roles = (p: number) =>
      after.scene.pages[p]!.nodes.flatMap((n) => ('image' in n.kind ? [n.kind.image.role] : []));
    expect(roles(1)).toEqual(['source', 'inpainted']);
    expect(roles(0)).toEqual(['source', 'inpainted', 'rendered']);

    const closed = await client.callTool({ name: 'koharu.close_project', arguments: {} });
    expect(structuredOf(closed)).toEqual({});
  });
});
