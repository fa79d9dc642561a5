/**
 * The bridge's browser files, served by the workspace: `/bridge.js` (the
 * entry, re-exporting `/bridge/index.js`) and `/bridge/*.js`, the modules
 * tsc emits from `src/web/bridge/`. When running from sources (tests, tsx)
 * the `.js` files do not exist yet, so the `.ts` sources are transpiled on
 * first request with TypeScript (a dev dependency), never bundled.
 */
import { readFile, stat } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { join } from 'node:path';
import { DEMO_HTML } from './demo-page.js';

const BRIDGE_DIR = fileURLToPath(new URL('../../web/bridge/', import.meta.url));
/** From sources, `npm run build`'s output, used when it is newer than the source. */
const BUILT_DIR = fileURLToPath(new URL('../../../dist/web/bridge/', import.meta.url));
const MODULE = /^\/bridge\/([a-z][a-z0-9-]*)\.js$/;
const JS = 'text/javascript; charset=utf-8';

export const BRIDGE_ENTRY = `export * from './bridge/index.js';\nexport { default } from './bridge/index.js';\n`;

const cache = new Map<string, Uint8Array>();

async function moduleSource(name: string): Promise<Uint8Array | null> {
  const cached = cache.get(name);
  if (cached) return cached;
  let bytes: Uint8Array;
  try {
    bytes = await readFile(join(BRIDGE_DIR, `${name}.js`));
  } catch {
    const source = join(BRIDGE_DIR, `${name}.ts`);
    let ts: string;
    try {
      ts = await readFile(source, 'utf8');
    } catch {
      return null;
    }
    const built = await newerBuild(source, join(BUILT_DIR, `${name}.js`));
    if (built) {
      cache.set(name, built);
      return built;
    }
    const { default: typescript } = await import('typescript');
    const out = typescript.transpileModule(ts, {
      compilerOptions: {
        module: typescript.ModuleKind.ES2022,
        target: typescript.ScriptTarget.ES2022,
        verbatimModuleSyntax: true,
      },
    });
    bytes = new TextEncoder().encode(out.outputText);
  }
  cache.set(name, bytes);
  return bytes;
}

async function newerBuild(source: string, built: string): Promise<Uint8Array | null> {
  try {
    const [src, out] = await Promise.all([stat(source), stat(built)]);
    return out.mtimeMs >= src.mtimeMs ? await readFile(built) : null;
  } catch {
    return null;
  }
}

/** `Door.serveStatic` for the page door. */
export async function servePageStatic(
  path: string,
): Promise<{ bytes: Uint8Array; contentType: string } | null> {
  if (path === '/bridge.js')
    return { bytes: new TextEncoder().encode(BRIDGE_ENTRY), contentType: JS };
  if (path === '/page-demo' || path === '/page-demo/')
    return { bytes: new TextEncoder().encode(DEMO_HTML), contentType: 'text/html; charset=utf-8' };
  const m = MODULE.exec(path);
  if (!m) return null;
  const bytes = await moduleSource(m[1]!);
  return bytes ? { bytes, contentType: JS } : null;
}
