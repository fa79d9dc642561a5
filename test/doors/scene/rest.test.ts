/** The scene REST API, pipelines without OCR (text nodes set by ops), exports and import. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { randomUUID } from 'node:crypto';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { loadImage } from '@napi-rs/canvas';
import { unzipSync } from 'fflate';
import { PDFDocument } from 'pdf-lib';
import type { Client } from '@modelcontextprotocol/client';
import type { Scene } from '../../../src/doors/scene/model/model.js';
import { comicPage, pageOf } from './helpers.js';
import {
  json,
  post,
  sceneServer,
  sse,
  trustHistoryMoves,
  until,
  uploadPages,
  type SceneServer,
  type SseEvent,
} from './server.js';
import { structuredOf } from '../../helpers/results.js';

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

const scene = async () =>
  (await json(await s.fetch(`${s.base}/api/v1/scene.json`))) as { epoch: number; scene: Scene };

/** A project with two pages, each with a translated text node over drawn text. */
async function projectWithTranslations(name: string) {
  const created = await post(s, 'projects', { name });
  expect(created.status).toBe(201);
  const up = await uploadPages(s, [
    { name: 'a.png', bytes: await comicPage([{ text: 'ONE', x: 30, y: 80 }]) },
    { name: 'b.png', bytes: await comicPage([{ text: 'TWO', x: 30, y: 80 }]) },
  ]);
  const pages = up.body.pages as { id: string }[];
  for (const page of pages) {
    const apply = await post(s, 'history/apply', {
      op: {
        AddNode: {
          page: page.id,
          node: {
            id: randomUUID(),
            transform: { x: 20, y: 40, width: 200, height: 60, rotationDeg: 0 },
            visible: true,
            kind: {
              text: {
                text: 'ONE',
                translation: 'UM',
                style: {
                  fontFamilies: ['No Such Font'],
                  color: [200, 0, 0, 255],
                  stroke: { color: [255, 255, 255, 255], widthPx: 2 },
                  textAlign: 'left',
                },
              },
            },
          },
        },
      },
    });
    expect(apply.status).toBe(200);
  }
  return pages.map((p) => p.id);
}

async function runPipeline(start: () => Promise<string>) {
  const events = sse(s);
  await events.ready();
  const jobId = await start();
  await until(() => events.events.some((e) => e.event === 'jobFinished' && e.id === jobId));
  events.stop();
  return {
    jobId,
    events: events.events.filter((e) => e.id === jobId || e.jobId === jobId),
  };
}

const normalise = (events: SseEvent[], jobId: string) =>
  events.map((e) => JSON.parse(JSON.stringify(e).replaceAll(jobId, 'JOB'))) as SseEvent[];

describe('scene REST API', () => {
  it('answers {status, code, message} errors, e.g. 409 noProject and 404 for an unknown operation', async () => {
    const res = await post(s, 'history/undo');
    expect(res.status).toBe(409);
    expect(await json(res)).toEqual({
      status: 409,
      code: 'noProject',
      message: 'invalid request: no project open',
    });
    const unknown = await s.fetch(`${s.base}/api/v1/operations/${randomUUID()}`, {
      method: 'DELETE',
    });
    expect(unknown.status).toBe(404);
    expect(await json(unknown)).toMatchObject({ status: 404, code: 'notFound' });
  });

  it('runs REST writes as the matching tool call, so they are audited like MCP calls', async () => {
    await post(s, 'projects', { name: 'Audited' });
    expect(
      await json(await post(s, 'history/apply', { op: { AddPage: { page: pageOf() } } })),
    ).toEqual({
      epoch: 1,
    });
    const bad = await post(s, 'history/apply', { op: { addSticker: {} } });
    expect(bad.status).toBe(400);
    expect(await json(bad)).toMatchObject({ status: 400, code: 'malformedRequest' });
    // The audit is the owner's to read; the REST writes show as the agent that made them.
    const { entries } = (await json(
      await fetch(`${s.base}/api/v1/audit?door=scene`, { headers: s.owner }),
    )) as {
      entries: { connection: string; tool: string; result: string }[];
    };
    const rest = entries.filter((e) => e.connection === 'agent:scene-test/rest');
    expect(rest.map((e) => [e.tool, e.result])).toEqual(
      expect.arrayContaining([
        ['koharu.undo', 'noProject'],
        ['koharu.apply', 'ok'],
        ['koharu.apply', 'malformedRequest'],
      ]),
    );
    await s.fetch(`${s.base}/api/v1/projects/current`, { method: 'DELETE' });
  });

  it('serves meta and engines, and documents the routes in openapi.json', async () => {
    expect(await json(await s.fetch(`${s.base}/api/v1/meta`))).toMatchObject({
      door: 'scene',
      project: null,
      engines: ['tesseract', 'dbnet', 'llm', 'fill', 'renderer'],
    });
    const engines = (await json(await s.fetch(`${s.base}/api/v1/engines`))).engines as unknown[];
    expect(engines).toHaveLength(5);
    const doc = (await json(await s.fetch(`${s.base}/api/v1/openapi.json`))) as {
      paths: Record<string, unknown>;
    };
    for (const path of [
      '/api/v1/scene.json',
      '/api/v1/pages',
      '/api/v1/projects/current/export',
      '/api/v1/pipelines',
    ])
      expect(Object.keys(doc.paths).some((p) => p.endsWith(path.replace('/api/v1', '')))).toBe(
        true,
      );
  });

  it('lists the installed fonts the renderer can use, and documents the route', async () => {
    const body = (await json(await s.fetch(`${s.base}/api/v1/fonts`))) as {
      fonts: string[];
      defaultFont: string;
    };
    expect(body.fonts.length).toBeGreaterThan(0);
    expect(body.fonts).toContain(body.defaultFont);
    expect([...body.fonts].sort((a, b) => a.localeCompare(b))).toEqual(body.fonts);
    if (!body.fonts.includes('Noto Sans CJK JP'))
      console.warn('Noto Sans CJK JP is not installed (apt-get install fonts-noto-cjk)');
    const doc = (await json(await s.fetch(`${s.base}/api/v1/openapi.json`))) as {
      paths: Record<string, unknown>;
    };
    expect(Object.keys(doc.paths).some((p) => p.endsWith('/fonts'))).toBe(true);
  });

  it('creates, lists, switches, closes and deletes projects', async () => {
    const a = await json(await post(s, 'projects', { name: 'Alpha Book' }));
    expect(a).toMatchObject({ id: 'alpha-book', name: 'Alpha Book' });
    const b = await json(await post(s, 'projects', { name: 'Beta' }));
    const list = await json(await s.fetch(`${s.base}/api/v1/projects`));
    expect(list.current).toMatchObject({ id: b.id });
    expect((list.projects as { id: string }[]).map((p) => p.id)).toEqual(
      expect.arrayContaining(['alpha-book', 'beta']),
    );
    const switched = await post(s, 'projects/current', { id: 'alpha-book' }, 'PUT');
    expect(await json(switched)).toMatchObject({ name: 'Alpha Book' });
    // Deleting is destructive: the agent waits for the owner; the owner's own call runs unasked.
    const asked = await s.fetch(`${s.base}/api/v1/projects/beta`, { method: 'DELETE' });
    expect(await json(asked)).toMatchObject({ code: 'approvalRequired' });
    expect(existsSync(String(b.path))).toBe(true);
    const deleted = await fetch(`${s.base}/api/v1/projects/beta`, {
      method: 'DELETE',
      headers: s.owner,
    });
    expect(deleted.status).toBe(204);
    expect(existsSync(String(b.path))).toBe(false);
    expect((await s.fetch(`${s.base}/api/v1/projects/current`, { method: 'DELETE' })).status).toBe(
      204,
    );
    expect((await s.fetch(`${s.base}/api/v1/projects/nope`, { method: 'DELETE' })).status).toBe(
      404,
    );
  });

  it('uploads pages as one batch, serves their blobs and thumbnails of at most 320 px', async () => {
    await post(s, 'projects', { name: 'Uploads' });
    const big = await comicPage([{ text: 'BIG', x: 10, y: 100 }], 800, 600);
    const up = await uploadPages(s, [
      { name: 'big.png', bytes: big },
      { name: 'small.png', bytes: await comicPage([], 100, 50) },
    ]);
    expect(up.status).toBe(201);
    expect(up.body).toMatchObject({
      epoch: 1,
      pages: [{ name: 'big', width: 800, height: 600 }, { name: 'small' }],
    });
    const { scene: sc } = await scene();
    const blob = (sc.pages[0]!.nodes[0]!.kind as { image: { blob: string } }).image.blob;
    const served = new Uint8Array(
      await (await s.fetch(`${s.base}/api/v1/blobs/${blob}`)).arrayBuffer(),
    );
    expect(Buffer.from(served).equals(Buffer.from(big))).toBe(true);
    expect((await s.fetch(`${s.base}/api/v1/blobs/nothex`)).status).toBe(400);
    expect((await s.fetch(`${s.base}/api/v1/blobs/${'0'.repeat(64)}`)).status).toBe(404);
    const thumb = await s.fetch(`${s.base}/api/v1/pages/${sc.pages[0]!.id}/thumbnail`);
    expect(thumb.headers.get('content-type')).toBe('image/png');
    const image = await loadImage(Buffer.from(await thumb.arrayBuffer()));
    expect([image.width, image.height]).toEqual([320, 240]);
    expect((await post(s, 'history/undo')).status).toBe(200);
    expect((await scene()).scene.pages).toHaveLength(0);
  });

  it('exports texts as JSON and CSV and imports them back as one batch', async () => {
    await projectWithTranslations('Texts');
    const exported = await json(
      await s.fetch(`${s.base}/api/v1/projects/current/texts?format=json`),
    );
    const rows = exported.texts as { nodeId: string; translation: string }[];
    expect(rows.map((r) => r.translation)).toEqual(['UM', 'UM']);
    const csv = await (await s.fetch(`${s.base}/api/v1/projects/current/texts?format=csv`)).text();
    expect(csv.split('\r\n')[0]).toBe('pageId,pageName,nodeId,text,translation');
    const edited = csv.replace(/,UM\r\n/, ',"um, dois ""três"""\r\n');
    const put = await s.fetch(`${s.base}/api/v1/projects/current/texts?format=csv`, {
      method: 'PUT',
      headers: { 'content-type': 'text/csv' },
      body: edited,
    });
    expect(await json(put)).toMatchObject({ updated: 2 });
    const back = (await json(await s.fetch(`${s.base}/api/v1/projects/current/texts`))).texts as {
      translation: string;
    }[];
    expect(back.map((r) => r.translation)).toEqual(['um, dois "três"', 'UM']);
    const viaJson = await post(
      s,
      'projects/current/texts',
      { texts: [{ nodeId: rows[1]!.nodeId, translation: null }] },
      'PUT',
    );
    expect(viaJson.status).toBe(200);
    await post(s, 'history/undo');
    await post(s, 'history/undo');
    const restored = (await json(await s.fetch(`${s.base}/api/v1/projects/current/texts`)))
      .texts as {
      translation: string;
    }[];
    expect(restored.map((r) => r.translation)).toEqual(['UM', 'UM']);
    const bad = await post(
      s,
      'projects/current/texts',
      { texts: [{ nodeId: randomUUID(), text: 'x' }] },
      'PUT',
    );
    expect(bad.status).toBe(404);
  });

  it('a pipeline started over MCP emits exactly the events of one started over REST', async () => {
    await projectWithTranslations('Events');
    const viaRest = await runPipeline(async () => {
      const res = await post(s, 'pipelines', { steps: ['renderer', 'fill'] });
      expect(res.status).toBe(202);
      return String((await json(res)).jobId);
    });
    const viaMcp = await runPipeline(async () => {
      const r = await client.callTool({
        name: 'koharu.start_pipeline',
        arguments: { steps: ['renderer', 'fill'] },
      });
      return String(structuredOf(r).jobId);
    });
    expect(normalise(viaMcp.events, viaMcp.jobId)).toEqual(
      normalise(viaRest.events, viaRest.jobId),
    );
    expect(viaRest.events.map((e) => e.event)).toEqual([
      'jobStarted',
      'jobProgress',
      'jobProgress',
      'jobProgress',
      'jobProgress',
      'jobProgress',
      'jobProgress',
      'jobFinished',
    ]);
    // Dependency order: fill (→ Inpainted) runs before renderer whatever order was given.
    expect(viaRest.events[1]).toMatchObject({
      step: 'fill',
      currentPage: 0,
      totalPages: 2,
      currentStepIndex: 0,
    });
    expect(viaRest.events.at(-1)).toMatchObject({ status: 'completed' });
  });

  it('exports khr (project zip without lock), rendered PNG/zip, inpainted PNG and a PDF of rendered pages', async () => {
    const pages = await projectWithTranslations('Exports');
    await runPipeline(async () =>
      String((await json(await post(s, 'pipelines', { steps: ['fill', 'renderer'] }))).jobId),
    );

    const khr = await post(s, 'projects/current/export', { format: 'khr' });
    expect(khr.headers.get('content-type')).toBe('application/zip');
    const entries = Object.keys(unzipSync(new Uint8Array(await khr.arrayBuffer())));
    expect(entries).toContain('project.json');
    expect(entries).toContain('snapshot.json');
    expect(entries.some((e) => /^blobs\/[0-9a-f]{2}\/[0-9a-f]{62}$/.test(e))).toBe(true);
    expect(entries).not.toContain('lock');

    const rendered = await post(s, 'projects/current/export', { format: 'rendered' });
    const zip = unzipSync(new Uint8Array(await rendered.arrayBuffer()));
    expect(Object.keys(zip)).toEqual(['001-a.png', '002-b.png']);
    const inpainted = await post(s, 'projects/current/export', {
      format: 'inpainted',
      pages: [pages[1]],
    });
    expect(inpainted.headers.get('content-type')).toBe('image/png');

    const pdf = await post(s, 'projects/current/export', { format: 'pdf' });
    const doc = await PDFDocument.load(new Uint8Array(await pdf.arrayBuffer()));
    expect(doc.getPageCount()).toBe(2);
    expect(doc.getPage(0).getSize()).toEqual({ width: 480, height: 320 });

    // Import the khr as a new project: same scene, now the active one.
    const before = await scene();
    const imported = await s.fetch(`${s.base}/api/v1/projects/import`, {
      method: 'POST',
      headers: { 'content-type': 'application/zip' },
      body: new Uint8Array(
        await (await post(s, 'projects/current/export', { format: 'khr' })).arrayBuffer(),
      ),
    });
    expect(imported.status).toBe(201);
    const info = await json(imported);
    expect(info).toMatchObject({ name: 'Exports', id: 'exports-2' });
    const after = await scene();
    expect(after.scene.pages).toEqual(before.scene.pages);
    expect(existsSync(join(String(info.path), 'lock'))).toBe(false);

    // The same export as a multipart form upload.
    const khrBytes = new Uint8Array(
      await (await post(s, 'projects/current/export', { format: 'khr' })).arrayBuffer(),
    );
    const form = new FormData();
    form.append('file', new Blob([khrBytes], { type: 'application/zip' }), 'exports.khr');
    const viaForm = await s.fetch(`${s.base}/api/v1/projects/import`, {
      method: 'POST',
      body: form,
    });
    expect(await json(viaForm)).toMatchObject({ name: 'Exports', id: 'exports-3' });
    expect((await scene()).scene.pages).toEqual(before.scene.pages);
  });

  it('a page that fails a step gets a jobWarning, skips its later steps, and the job ends completed_with_errors', async () => {
    const [first] = await projectWithTranslations('Warnings');
    const { scene: sc } = await scene();
    const source = sc.pages[0]!.nodes[0]!.id;
    // Removing is destructive: the owner does it (an agent's removal waits for approval).
    const removed = await fetch(`${s.base}/api/v1/history/apply`, {
      method: 'POST',
      headers: { ...s.owner, 'content-type': 'application/json' },
      body: JSON.stringify({ op: { removeNode: { page: first, id: source } } }),
    });
    expect(removed.status).toBe(200);
    const run = await runPipeline(async () =>
      String((await json(await post(s, 'pipelines', { steps: ['fill', 'renderer'] }))).jobId),
    );
    const warnings = run.events.filter((e) => e.event === 'jobWarning');
    expect(warnings).toEqual([
      {
        event: 'jobWarning',
        jobId: run.jobId,
        pageIndex: 0,
        stepId: 'fill',
        message: expect.stringContaining('no source image'),
      },
    ]);
    expect(run.events.at(-1)).toMatchObject({ status: 'completed_with_errors' });
    const roles = (await scene()).scene.pages.map((p) =>
      p.nodes.flatMap((n) => ('image' in n.kind ? [n.kind.image.role] : [])),
    );
    expect(roles).toEqual([[], ['source', 'inpainted', 'rendered']]);
  });

  it('cancelling a running pipeline stops it within one page and reports cancelled', async () => {
    await projectWithTranslations('Cancel');
    await uploadPages(s, [
      { name: 'c.png', bytes: await comicPage([], 60, 40) },
      { name: 'd.png', bytes: await comicPage([], 60, 40) },
    ]);
    s.llm.delayMs = 400;
    const sent = s.llm.requests.length;
    const events = sse(s);
    await events.ready();
    const jobId = String((await json(await post(s, 'pipelines', { steps: ['llm'] }))).jobId);
    await until(() => s.llm.requests.length > sent);
    const cancel = await s.fetch(`${s.base}/api/v1/operations/${jobId}`, { method: 'DELETE' });
    expect(await json(cancel)).toMatchObject({ cancelled: true });
    await until(() => events.events.some((e) => e.event === 'jobFinished' && e.id === jobId));
    events.stop();
    s.llm.delayMs = 0;
    expect(events.events.find((e) => e.event === 'jobFinished' && e.id === jobId)).toEqual({
      event: 'jobFinished',
      id: jobId,
      status: 'cancelled',
    });
    expect(s.llm.requests.length - sent).toBe(1);
    const job = await json(await s.fetch(`${s.base}/api/v1/operations/${jobId}`));
    expect(job.status).toBe('cancelled');
  });
});
