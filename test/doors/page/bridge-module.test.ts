import { describe, expect, it } from 'vitest';
import { readdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { join } from 'node:path';
import { servePageStatic } from '../../../src/doors/page/static.js';

const DIR = fileURLToPath(new URL('../../../src/web/bridge/', import.meta.url));
const sources = readdirSync(DIR).filter((f) => f.endsWith('.ts'));
const specifiers = (text: string) =>
  [
    ...text.matchAll(
      /(?:import|export)\s[^'"]*?from\s+['"]([^'"]+)['"]|import\(\s*['"]([^'"]+)['"]\s*\)/g,
    ),
  ].map((m) => m[1] ?? m[2]!);

describe('the browser bridge module', () => {
  it('imports nothing Node-only: every import is a sibling module of the bridge', () => {
    expect(sources).toContain('index.ts');
    for (const file of sources) {
      // Code only: comments may show usage examples.
      const text = readFileSync(join(DIR, file), 'utf8')
        .replace(/\/\*[\s\S]*?\*\//g, '')
        .replace(/^\s*\/\/.*$/gm, '');
      for (const spec of specifiers(text)) {
        expect(spec, `${file} imports ${spec}`).toMatch(/^\.\/[a-z][a-z0-9-]*\.js$/);
        expect(sources, `${file} imports ${spec}`).toContain(spec.slice(2).replace(/\.js$/, '.ts'));
      }
      expect(text, file).not.toMatch(/\brequire\(|\bprocess\.|\bBuffer\b|['"]node:/);
    }
  });

  it('serves /bridge.js as an ES module re-exporting the emitted modules, and nothing else', async () => {
    const entry = await servePageStatic('/bridge.js');
    expect(entry?.contentType).toMatch(/^text\/javascript/);
    expect(new TextDecoder().decode(entry!.bytes)).toContain("from './bridge/index.js'");
    const index = await servePageStatic('/bridge/index.js');
    const js = new TextDecoder().decode(index!.bytes);
    expect(js).toContain('export');
    expect(js).not.toMatch(/:\s*(string|boolean|Record<)/); // compiled, not TypeScript
    expect(await servePageStatic('/bridge/../config.js')).toBeNull();
    expect(await servePageStatic('/bridge/nope.js')).toBeNull();
    expect(await servePageStatic('/other.js')).toBeNull();
  });
});
