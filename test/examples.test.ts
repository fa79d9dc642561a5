import { describe, expect, it } from 'vitest';
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';

describe('examples', () => {
  it('hello-door serves a custom door through the kernel and refuses an unknown field', () => {
    const script = fileURLToPath(new URL('../examples/hello-door.mjs', import.meta.url));
    const r = spawnSync(process.execPath, [script], { encoding: 'utf8', timeout: 30_000 });
    expect(r.status, r.stderr).toBe(0);
    const out = JSON.parse(r.stdout.trim()) as {
      ok: unknown;
      refused: { code: string; message: string };
    };
    expect(out.ok).toEqual({ greeting: 'Hello, Ada!' });
    expect(out.refused.code).toBe('malformedRequest');
    expect(out.refused.message).toContain("'extra'");
  });
});
