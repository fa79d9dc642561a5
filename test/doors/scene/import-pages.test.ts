/**
 * `koharu.import_pages` over a real MCP client: page images from files in
 * the project roots, loopback or file: URLs, and base64 — each import one
 * undoable batch — and what a hostile agent might name instead (a file
 * outside the roots, another host, a redirect, a non-image) refused with
 * the field and what to do.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createServer, type Server } from 'node:http';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { Client } from '@modelcontextprotocol/client';
import { comicPage } from './helpers.js';
import { sceneServer, trustHistoryMoves, type SceneServer } from './server.js';
import { structuredOf, toolJson } from '../../helpers/results.js';
import { listenLoopback } from '../../helpers/servers.js';

let s: SceneServer;
let client: Client;
let images: Server;
let imagesBase: string;
let fetched: string[];
let inbox: string;

beforeAll(async () => {
  s = await sceneServer();
  client = await s.mcp();
  await trustHistoryMoves(s);
  const png = Buffer.from(await comicPage([{ text: 'HI', x: 40, y: 90 }]));
  fetched = [];
  images = createServer((req, res) => {
    fetched.push(req.url ?? '');
    if (req.url === '/page.png') {
      res.writeHead(200, { 'content-type': 'image/png' }).end(png);
    } else if (req.url === '/moved.png') {
      res.writeHead(302, { location: 'http://example.com/x.png' }).end();
    } else res.writeHead(404).end();
  });
  imagesBase = `http://127.0.0.1:${await listenLoopback(images)}`;
  const opened = await call('koharu.open_project', { path: 'imports', createName: 'Imports' });
  expect(opened.isError).toBeFalsy();
  inbox = join(s.data, 'projects', 'inbox');
  mkdirSync(inbox, { recursive: true });
  writeFileSync(join(inbox, 'one.png'), png);
  writeFileSync(join(inbox, 'two.png'), png);
  writeFileSync(join(inbox, 'notes.txt'), 'not an image');
});
afterAll(async () => {
  images?.closeAllConnections();
  images?.close();
  await s.close();
});

const call = (name: string, args: Record<string, unknown> = {}) =>
  client.callTool({ name, arguments: args });

async function pageCount(): Promise<number> {
  const r = await call('koharu.get_scene');
  return (structuredOf(r).scene as { pages: unknown[] }).pages.length;
}

describe('koharu.import_pages', () => {
  it('adds files inside the project roots as pages in one undoable batch', async () => {
    const before = await pageCount();
    const r = await call('koharu.import_pages', {
      paths: [join(inbox, 'one.png'), 'inbox/two.png'],
    });
    expect(r.isError).toBeFalsy();
    const out = structuredOf(r) as { epoch: number; pages: { name: string; width: number }[] };
    expect(out.pages.map((p) => [p.name, p.width])).toEqual([
      ['one', 480],
      ['two', 480],
    ]);
    expect(await pageCount()).toBe(before + 2);
    await call('koharu.undo');
    expect(await pageCount()).toBe(before);
    await call('koharu.redo');
    expect(await pageCount()).toBe(before + 2);
  });

  it('fetches a loopback URL and reads a file: URL', async () => {
    const before = await pageCount();
    const r = await call('koharu.import_pages', {
      urls: [`${imagesBase}/page.png`, pathToFileURL(join(inbox, 'one.png')).href],
    });
    expect(r.isError).toBeFalsy();
    expect(await pageCount()).toBe(before + 2);
    expect(fetched).toContain('/page.png');
  });

  it('takes base64 images, with or without a data: URL prefix', async () => {
    const data = Buffer.from(await comicPage([])).toString('base64');
    const before = await pageCount();
    const r = await call('koharu.import_pages', {
      base64: [
        { name: 'inline.png', data },
        { name: 'prefixed.png', data: `data:image/png;base64,${data}` },
      ],
    });
    expect(r.isError).toBeFalsy();
    expect((structuredOf(r).pages as { name: string }[]).map((p) => p.name)).toEqual([
      'inline',
      'prefixed',
    ]);
    expect(await pageCount()).toBe(before + 2);
  });

  it('refuses what a hostile agent names instead, adding nothing and fetching nothing elsewhere', async () => {
    const before = await pageCount();
    const cases: [Record<string, unknown>, string, RegExp][] = [
      [{ paths: ['/etc/passwd'] }, 'malformedRequest', /outside the project roots/],
      [{ paths: ['../../../etc/hostname'] }, 'malformedRequest', /outside the project roots/],
      [{ urls: ['file:///etc/passwd'] }, 'malformedRequest', /outside the project roots/],
      [{ urls: ['http://example.com/page.png'] }, 'malformedRequest', /loopback/],
      [{ urls: ['http://169.254.169.254/latest'] }, 'malformedRequest', /loopback/],
      [{ urls: [`${imagesBase}/moved.png`] }, 'malformedRequest', /redirects/],
      [{ urls: [`${imagesBase}/missing.png`] }, 'notFound', /HTTP 404/],
      [{ paths: ['inbox/notes.txt'] }, 'malformedRequest', /not an image/],
      [{ paths: ['inbox/nothing.png'] }, 'notFound', /paths\[0\]: no file/],
      [{ base64: [{ name: 'x.png', data: '!!not base64!!' }] }, 'malformedRequest', /base64/],
      [{}, 'malformedRequest', /at least one image/],
    ];
    for (const [args, code, message] of cases) {
      const r = await call('koharu.import_pages', args);
      expect(r.isError, JSON.stringify(args)).toBe(true);
      expect(toolJson(r), JSON.stringify(args)).toMatchObject({
        code,
        message: expect.stringMatching(message),
      });
    }
    expect(await pageCount()).toBe(before);
    expect(
      fetched.filter((u) => u !== '/page.png' && u !== '/moved.png' && u !== '/missing.png'),
    ).toEqual([]);
  });
});
