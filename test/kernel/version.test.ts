import { describe, expect, it } from 'vitest';
import { readFileSync } from 'node:fs';
import { AIRLOCK_VERSION } from '../../src/kernel/version.js';

describe('AIRLOCK_VERSION', () => {
  it("is package.json's version", () => {
    const manifest = JSON.parse(
      readFileSync(new URL('../../package.json', import.meta.url), 'utf8'),
    ) as { version: string };
    expect(AIRLOCK_VERSION).toBe(manifest.version);
  });
});
