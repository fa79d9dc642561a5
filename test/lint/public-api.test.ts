/**
 * The public API is curated (issue 26): every name `airlock`, `airlock/bridge`
 * and `airlock/page` export is a promise kept across minor versions. This
 * pins the runtime exports of each entry point, so an export is added or
 * removed on purpose — by editing `public-api.json` in the same change — and
 * never by an `export *` picking up an internal helper.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';

const pinned = JSON.parse(
  readFileSync(new URL('./public-api.json', import.meta.url), 'utf8'),
) as Record<string, string[]>;

const entries: Record<string, () => Promise<Record<string, unknown>>> = {
  'src/index.ts': () => import('../../src/index.js'),
  'src/relay/index.ts': () => import('../../src/relay/index.js'),
  'src/web/bridge/index.ts': () => import('../../src/web/bridge/index.js'),
};

describe('the public API', () => {
  it('names the same entry points as package.json exports', () => {
    const pkg = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8'));
    const sources = Object.values(pkg.exports as Record<string, { default: string }>).map((e) =>
      e.default.replace(/^\.\/dist\//, 'src/').replace(/\.js$/, '.ts'),
    );
    expect(sources.sort()).toEqual(Object.keys(pinned).sort());
    expect(Object.keys(entries).sort()).toEqual(Object.keys(pinned).sort());
  });

  for (const [entry, load] of Object.entries(entries)) {
    it(`${entry} exports exactly the pinned names (edit test/lint/public-api.json to change it)`, async () => {
      const names = Object.keys(await load()).sort();
      expect(names).toEqual(pinned[entry]);
    });
  }
});
