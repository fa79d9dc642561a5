/**
 * Serves the workspace web UI at `/` (spec/README.md, issue #7) and at
 * `/login` (the owner's sign-in link, spec/authority.md §1): the HTML
 * shell, its stylesheet, the browser modules that `tsc` emits from
 * `src/web/app/` to `dist/web/app/`, and pdf.js's browser build from the
 * installed `pdfjs-dist` and `@simplewebauthn/browser`'s ESM build (offline;
 * no CDN). Everything the UI does goes
 * through the REST API and the event stream; this module only serves files.
 *
 * @example
 * createHttpApp({ kernel, logger, staticHandler: createWebUi() });
 */
import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { dirname, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { shellHtml } from './shell-html.js';
import { styles } from './styles.js';
import { MANIFEST, SERVICE_WORKER } from './service-worker.js';

export interface WebUiOptions {
  /** Folder of the compiled browser modules (default: `app/` beside this file). */
  appDir?: string;
}

export type StaticHandler = (req: IncomingMessage, res: ServerResponse) => Promise<boolean>;

/** The Content-Security-Policy of every UI response: own origin only, plus the page relay's WebSocket on loopback. */
export const CONTENT_SECURITY_POLICY = [
  "default-src 'self'",
  "script-src 'self' 'wasm-unsafe-eval'",
  "style-src 'self'",
  "img-src 'self' blob: data:",
  "worker-src 'self' blob:",
  "connect-src 'self' ws://127.0.0.1:* ws://localhost:*",
  "object-src 'none'",
  "base-uri 'none'",
  "frame-ancestors 'none'",
].join('; ');

const TYPES: Record<string, string> = {
  '.js': 'text/javascript; charset=utf-8',
  '.mjs': 'text/javascript; charset=utf-8',
  '.map': 'application/json; charset=utf-8',
  '.wasm': 'application/wasm',
  '.pfb': 'application/octet-stream',
  '.ttf': 'font/ttf',
};

/** `@simplewebauthn/browser`'s ESM build (passkeys, issue 25), served from the installed package. */
function webauthnDir(): string | null {
  try {
    const require = createRequire(import.meta.url);
    // The package exports only its entry (`script/index.js` for require); `esm/` sits beside it.
    return resolve(dirname(require.resolve('@simplewebauthn/browser')), '..', 'esm');
  } catch {
    return null;
  }
}

/** The parts of `pdfjs-dist` the browser may fetch. */
const PDFJS_FOLDERS = ['build/', 'standard_fonts/', 'wasm/'];

function pdfjsDir(): string | null {
  try {
    const require = createRequire(import.meta.url);
    return dirname(require.resolve('pdfjs-dist/package.json'));
  } catch {
    return null;
  }
}

/** A path inside `root`, or null when `rel` would leave it or names an odd file. */
function inside(root: string, rel: string): string | null {
  if (!/^[\w./-]+$/.test(rel) || rel.split('/').includes('..')) return null;
  const full = resolve(root, rel);
  return full.startsWith(resolve(root) + sep) ? full : null;
}

export function createWebUi(options: WebUiOptions = {}): StaticHandler {
  const appDir = options.appDir ?? fileURLToPath(new URL('./app/', import.meta.url));
  const pdfDir = pdfjsDir();
  const webauthn = webauthnDir();
  const html = Buffer.from(shellHtml());
  const css = Buffer.from(styles);
  const worker = Buffer.from(SERVICE_WORKER);
  const manifest = Buffer.from(MANIFEST);

  const send = (req: IncomingMessage, res: ServerResponse, type: string, bytes: Buffer) => {
    res.writeHead(200, {
      'content-type': type,
      'content-length': String(bytes.byteLength),
      'cache-control': 'no-cache',
      'x-content-type-options': 'nosniff',
      'referrer-policy': 'no-referrer',
      'content-security-policy': CONTENT_SECURITY_POLICY,
    });
    res.end(req.method === 'HEAD' ? undefined : bytes);
    return true;
  };

  const file = async (path: string | null) => {
    if (!path) return null;
    try {
      return await readFile(path);
    } catch {
      return null;
    }
  };

  return async (req, res) => {
    if (req.method !== 'GET' && req.method !== 'HEAD') return false;
    const path = new URL(req.url ?? '/', 'http://localhost').pathname;
    // `/login` is the same page: the sign-in link printed at start carries its code in the fragment.
    // `/upstream-oauth/callback`: an OAuth upstream's authorization server sends the owner back here (the mcp door's CALLBACK_PATH).
    if (
      path === '/' ||
      path === '/index.html' ||
      path === '/login' ||
      path === '/upstream-oauth/callback' ||
      // An MCP client's OAuth connection waits here for the owner's consent (authority.md §7).
      /^\/oauth\/consent\/[\w-]{1,100}$/.test(path)
    )
      return send(req, res, 'text/html; charset=utf-8', html);
    if (path === '/ui/style.css') return send(req, res, 'text/css; charset=utf-8', css);
    // At the root so its scope is the whole UI (issue 30).
    if (path === '/sw.js') return send(req, res, 'text/javascript; charset=utf-8', worker);
    if (path === '/manifest.webmanifest')
      return send(req, res, 'application/manifest+json; charset=utf-8', manifest);
    let full: string | null = null;
    if (path.startsWith('/ui/vendor/pdfjs/') && pdfDir) {
      const rel = path.slice('/ui/vendor/pdfjs/'.length);
      if (PDFJS_FOLDERS.some((f) => rel.startsWith(f))) full = inside(pdfDir, rel);
    } else if (path.startsWith('/ui/vendor/simplewebauthn/') && webauthn) {
      full = inside(webauthn, path.slice('/ui/vendor/simplewebauthn/'.length));
    } else if (path.startsWith('/ui/')) full = inside(appDir, path.slice('/ui/'.length));
    const ext = full ? full.slice(full.lastIndexOf('.')) : '';
    const type = TYPES[ext];
    if (!full || !type) return false;
    const bytes = await file(full);
    return bytes ? send(req, res, type, bytes) : false;
  };
}
