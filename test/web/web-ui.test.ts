import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createServer, type Server } from 'node:http';
import { mkdtempSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { listenLoopback } from '../helpers/servers.js';
import { createWebUi, CONTENT_SECURITY_POLICY } from '../../src/web/web-ui.js';

const appDir = mkdtempSync(join(tmpdir(), 'airlock-web-app-'));
mkdirSync(join(appDir, 'screens'));
writeFileSync(join(appDir, 'main.js'), 'export {};\n');
writeFileSync(join(appDir, 'screens', 'jobs.js'), 'export {};\n');
writeFileSync(join(appDir, 'main.d.ts'), 'export {};\n');
let server: Server;
let base: string;

beforeAll(async () => {
  const ui = createWebUi({ appDir });
  server = createServer((req, res) => {
    void ui(req, res).then((handled) => {
      if (!handled) res.writeHead(404).end('not mine');
    });
  });
  base = `http://127.0.0.1:${await listenLoopback(server)}`;
});
afterAll(async () => {
  await new Promise((r) => server.close(r));
  rmSync(appDir, { recursive: true, force: true });
});

describe('createWebUi', () => {
  it('serves the HTML shell at / with a same-origin content security policy', async () => {
    const res = await fetch(`${base}/`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('text/html; charset=utf-8');
    expect(res.headers.get('content-security-policy')).toBe(CONTENT_SECURITY_POLICY);
    expect(res.headers.get('x-content-type-options')).toBe('nosniff');
    const html = await res.text();
    expect(html).toContain('<script type="module" src="/ui/main.js"></script>');
    expect(html).not.toMatch(/https?:\/\//);
  });

  it('serves the same page at /login, where the printed sign-in link points', async () => {
    const [root, login] = await Promise.all([fetch(`${base}/`), fetch(`${base}/login`)]);
    expect(login.status).toBe(200);
    expect(login.headers.get('content-security-policy')).toBe(CONTENT_SECURITY_POLICY);
    expect(await login.text()).toBe(await root.text());
  });

  it('serves the stylesheet and the compiled browser modules as JavaScript', async () => {
    expect((await fetch(`${base}/ui/style.css`)).headers.get('content-type')).toBe(
      'text/css; charset=utf-8',
    );
    const js = await fetch(`${base}/ui/screens/jobs.js`);
    expect(js.status).toBe(200);
    expect(js.headers.get('content-type')).toBe('text/javascript; charset=utf-8');
  });

  it("serves pdf.js's browser build from the installed package, offline", async () => {
    const res = await fetch(`${base}/ui/vendor/pdfjs/build/pdf.mjs`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('text/javascript; charset=utf-8');
    expect((await fetch(`${base}/ui/vendor/pdfjs/package.json`)).status).toBe(404);
  });

  it('leaves everything else to the next handler: other paths, type declarations, traversal, other methods', async () => {
    for (const path of [
      '/api/v1/x',
      '/ui/main.d.ts',
      '/ui/../web-ui.js',
      '/ui/%2e%2e/x.js',
      '/ui/nope.js',
    ])
      expect((await fetch(`${base}${path}`)).status, path).toBe(404);
    expect((await fetch(`${base}/`, { method: 'POST' })).status).toBe(404);
  });
});
