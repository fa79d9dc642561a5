import { describe, expect, it } from 'vitest';
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));

describe('package entry points', () => {
  it('airlock/page keeps the reference export names, and importing it starts nothing', () => {
    // The child exits on its own only if the import left no listener or timer behind.
    const r = spawnSync(
      process.execPath,
      [
        '--input-type=module',
        '-e',
        "const m = await import('airlock/page'); process.stdout.write(Object.keys(m).sort().join(','));",
      ],
      { cwd: ROOT, encoding: 'utf8', timeout: 10_000 },
    );
    expect(r.status).toBe(0);
    const names = r.stdout.split(',');
    for (const name of [
      'loadConfig',
      'Puente',
      'main',
      'createMcpServer',
      'createCommandRunner',
      'isOriginAllowed',
      'tokenMatches',
      'isReservedEvent',
    ])
      expect(names).toContain(name);
  });

  it('airlock/bridge resolves to the emitted browser module', () => {
    const r = spawnSync(
      process.execPath,
      ['--input-type=module', '-e', "process.stdout.write(import.meta.resolve('airlock/bridge'))"],
      { cwd: ROOT, encoding: 'utf8', timeout: 10_000 },
    );
    expect(r.stdout).toMatch(/dist\/web\/bridge\/index\.js$/);
  });
});
