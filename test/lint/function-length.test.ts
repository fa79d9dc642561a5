/**
 * No function over 120 lines in src/ (issue 26), as eslint.config.js says:
 * a new long function fails the lint, and the list of files still to split
 * only shrinks — a listed file that no longer holds one must leave the list.
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

  it('lists only files that still hold a function over 120 lines', async () => {
    const config = new URL('../../eslint.config.js', import.meta.url).href;
    const { LONG_FUNCTIONS_TO_SPLIT } = (await import(config)) as {
      LONG_FUNCTIONS_TO_SPLIT: string[];
    };
    const strict = new ESLint({
      cwd: root,
      overrideConfigFile: true,
      overrideConfig: [
        {
          files: ['**/*.ts'],
          languageOptions: { parser: (await import('typescript-eslint')).parser },
          rules: {
            'max-lines-per-function': [
              'error',
              { max: 120, skipBlankLines: true, skipComments: true, IIFEs: true },
            ],
          },
        },
      ],
    });
    const results = await strict.lintFiles(LONG_FUNCTIONS_TO_SPLIT);
    const split = results
      .filter((r) => !r.messages.some((m) => m.ruleId === 'max-lines-per-function'))
      .map((r) => r.filePath.slice(root.length));
    expect(split, 'these files hold no long function any more: take them off the list').toEqual([]);
  });
});
