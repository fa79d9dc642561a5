/**
 * No function over 120 lines in src/ (issue 26), as eslint.config.js says:
 * a long function fails the lint, in every file (the list of files still to
 * split is gone).
 */
import { describe, expect, it } from 'vitest';
import { ESLint } from 'eslint';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('../..', import.meta.url));

const longFunction = (lines: number) =>
  `export function long(): number {\n  let n = 0;\n${'  n += 1;\n'.repeat(lines)}  return n;\n}\n`;

async function lengthErrors(eslint: ESLint, filePath: string, code: string) {
  const [result] = await eslint.lintText(code, { filePath });
  return (result?.messages ?? []).filter((m) => m.ruleId === 'max-lines-per-function');
}

describe('function length', () => {
  const eslint = new ESLint({ cwd: root });

  it('refuses a function over 120 lines in a file of src/', async () => {
    const errors = await lengthErrors(eslint, 'src/kernel/lint-fixture.ts', longFunction(125));
    expect(errors).toHaveLength(1);
    expect(errors[0]!.message).toMatch(/Maximum allowed is 120/);
  });

  it('accepts one of 120 lines or fewer', async () => {
    expect(await lengthErrors(eslint, 'src/kernel/lint-fixture.ts', longFunction(110))).toEqual([]);
  });

  it('exempts no file of src/: every function there is 120 lines or fewer', async () => {
    // Only the rule under test runs over src/ (its messages are all this
    // looks at; `npm run lint` runs the rest): a quarter less CPU.
    const lengthOnly = new ESLint({
      cwd: root,
      ruleFilter: ({ ruleId }) => ruleId === 'max-lines-per-function',
    });
    const results = await lengthOnly.lintFiles(['src/**/*.ts']);
    const long = results.flatMap((r) =>
      r.messages
        .filter((m) => m.ruleId === 'max-lines-per-function')
        .map((m) => `${r.filePath.slice(root.length)}:${m.line}`),
    );
    expect(long, 'split these functions').toEqual([]);
    const config = await eslint.calculateConfigForFile('src/doors/scene/tools/tools.ts');
    expect(config.rules?.['max-lines-per-function']?.[0]).toBe(2);
    // Parsing all of src/ is ~10 s of CPU; with other files running beside
    // it (maxWorkers in vitest.config.ts) it needs more than 30 s of wall.
  }, 90_000);
});
