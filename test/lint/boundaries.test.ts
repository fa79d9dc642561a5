/**
 * The layering rules of eslint.config.js (docs/architecture.md), checked on
 * code written as if it lived at a path inside src/: a wrong import fails the
 * build, the right one passes.
 */
import { describe, expect, it } from 'vitest';
import { ESLint } from 'eslint';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('../..', import.meta.url));
const eslint = new ESLint({ cwd: root });

async function importErrors(filePath: string, code: string): Promise<string[]> {
  const [result] = await eslint.lintText(`${code}\nexport const used = [x];\n`, { filePath });
  return (result?.messages ?? [])
    .filter((m) => m.ruleId === 'no-restricted-imports' || m.ruleId === 'airlock/no-cross-door')
    .map((m) => m.message);
}

describe('door boundaries', () => {
  it('refuses a door that imports store/', async () => {
    const errors = await importErrors(
      'src/doors/scene/lint-fixture.ts',
      "import { openStore as x } from '../../store/open.js';",
    );
    expect(errors).toHaveLength(1);
    expect(errors[0]).toContain('never imports store/');
  });

  it("refuses a file in a door's subfolder that imports store/ (scene/model/)", async () => {
    const errors = await importErrors(
      'src/doors/scene/model/lint-fixture.ts',
      "import { openStore as x } from '../../../store/open.js';",
    );
    expect(errors).toEqual([expect.stringContaining('never imports store/')]);
  });

  it('refuses a door that imports a kernel internal instead of kernel/index.js', async () => {
    const errors = await importErrors(
      'src/doors/notes/lint-fixture.ts',
      "import { validateInput as x } from '../../kernel/calls/validate.js';",
    );
    expect(errors).toEqual([expect.stringContaining('kernel/index.js')]);
  });

  it('refuses a door that imports the transport at run time', async () => {
    const errors = await importErrors(
      'src/doors/page/lint-fixture.ts',
      "import { createHttpApp as x } from '../../transport/http/http-app.js';",
    );
    expect(errors).toEqual([expect.stringContaining('never imports transport/')]);
  });

  it('refuses a door that imports another door', async () => {
    const errors = await importErrors(
      'src/doors/openapi/tools/lint-fixture.ts',
      "import { createNotesDoor as x } from '../../notes/index.js';",
    );
    expect(errors).toEqual([expect.stringContaining('another door')]);
  });

  it('refuses an mcp-door file that imports store/', async () => {
    const errors = await importErrors(
      'src/doors/mcp/lint-fixture.ts',
      "import { openStore as x } from '../../store/open.js';",
    );
    expect(errors).toEqual([expect.stringContaining('never imports store/')]);
  });

  it('refuses another door importing the mcp door', async () => {
    const errors = await importErrors(
      'src/doors/scene/lint-fixture.ts',
      "import { createMcpDoor as x } from '../mcp/index.js';",
    );
    expect(errors).toEqual([expect.stringContaining('another door')]);
  });

  it('guards a new door folder without editing the config', async () => {
    const storeErrors = await importErrors(
      'src/doors/brand-new-door/lint-fixture.ts',
      "import { openStore as x } from '../../store/open.js';",
    );
    expect(storeErrors).toEqual([expect.stringContaining('never imports store/')]);
    const crossErrors = await importErrors(
      'src/doors/brand-new-door/deep/lint-fixture.ts',
      "import { createNotesDoor as x } from '../../notes/index.js';",
    );
    expect(crossErrors).toEqual([expect.stringContaining('another door')]);
  });

  it('refuses a re-export and a dynamic import of another door', async () => {
    const [result] = await eslint.lintText(
      "export { createNotesDoor } from '../notes/index.js';\nexport const later = () => import('../page/index.js');\n",
      { filePath: 'src/doors/scene/lint-fixture.ts' },
    );
    const crossDoor = (result?.messages ?? []).filter((m) => m.ruleId === 'airlock/no-cross-door');
    expect(crossDoor).toHaveLength(2);
  });

  it('lets a door import the kernel barrel, surface types and its own modules', async () => {
    const errors = await importErrors(
      'src/doors/scene/lint-fixture.ts',
      [
        "import { failure as x } from '../../kernel/index.js';",
        "import type { RestRoute } from '../../transport/surface.js';",
        "import { sceneReducer } from './reducer.js';",
        'export type R = RestRoute;',
        'export const s = sceneReducer;',
      ].join('\n'),
    );
    expect(errors).toEqual([]);
  });

  it('refuses a value import from transport/surface.ts in a door', async () => {
    const errors = await importErrors(
      'src/doors/scene/lint-fixture.ts',
      "import { type RestRoute, mountOf as x } from '../../transport/surface.js';\nexport type R = RestRoute;",
    );
    expect(errors.length).toBeGreaterThan(0);
  });
});

describe('kernel boundaries', () => {
  it('refuses a kernel module that imports outside the kernel', async () => {
    const errors = await importErrors(
      'src/kernel/lint-fixture.ts',
      "import { sendJson as x } from '../transport/http/http-util.js';",
    );
    expect(errors).toEqual([expect.stringContaining('knows nothing of HTTP')]);
  });

  it('refuses a module in a kernel folder that imports outside the kernel', async () => {
    const errors = await importErrors(
      'src/kernel/audit/lint-fixture.ts',
      "import { createSqliteStore as x } from '../../store/sqlite/index.js';",
    );
    expect(errors).toEqual([expect.stringContaining('knows nothing of HTTP')]);
  });

  it('lets a module in a kernel folder import the top of the kernel and another folder', async () => {
    const errors = await importErrors(
      'src/kernel/audit/lint-fixture.ts',
      [
        "import { failure as x } from '../errors.js';",
        "import { digestOf } from '../digest.js';",
        "import { createPolicy } from '../authority/policy.js';",
        'export const y = [digestOf, createPolicy];',
      ].join('\n'),
    );
    expect(errors).toEqual([]);
  });

  it('refuses a kernel module that imports a package other than zod', async () => {
    const errors = await importErrors('src/kernel/lint-fixture.ts', "import x from 'pg';");
    expect(errors).toEqual([expect.stringContaining('only its own modules')]);
  });

  it('lets the kernel import itself, node: modules and zod', async () => {
    const errors = await importErrors(
      'src/kernel/lint-fixture.ts',
      [
        "import { randomUUID as x } from 'node:crypto';",
        "import { z } from 'zod';",
        "import { failure } from './errors.js';",
        'export const y = [z, failure];',
      ].join('\n'),
    );
    expect(errors).toEqual([]);
  });
});
