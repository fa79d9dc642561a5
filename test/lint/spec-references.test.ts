/**
 * The contract lives in the repository (docs/spec/README.md): nothing points
 * at a spec outside it, and every section citation (`authority.md §3`,
 * `kernel.md §2–§3`, `authority.md §1, §4`) names a file of docs/spec/ that
 * has that section (a heading `## N. Title`).
 */
import { describe, expect, it } from 'vitest';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { run } from '../helpers/cli.js';
import { ERROR_CODES } from '../../src/kernel/errors.js';
import { HTTP_STATUS } from '../../src/transport/http/http-status.js';

const root = fileURLToPath(new URL('../..', import.meta.url));
const specDir = join(root, 'docs/spec');

const SKIP_DIRS = new Set(['node_modules', 'dist', '.git', '.tmp', '.airlock', '.cache']);
const TEXT_FILE = /\.(ts|tsx|js|mjs|cjs|md|json|html|css|txt|ya?ml|sh)$/;

function filesUnder(dir: string): string[] {
  if (!existsSync(dir)) return [];
  const out: string[] = [];
  for (const name of readdirSync(dir)) {
    if (SKIP_DIRS.has(name)) continue;
    const path = join(dir, name);
    if (statSync(path).isDirectory()) out.push(...filesUnder(path));
    else if (TEXT_FILE.test(name)) out.push(path);
  }
  return out;
}

/** Every README.md of the repository outside node_modules, dist and tests' fixtures. */
function readmes(dir: string = root): string[] {
  const out: string[] = [];
  for (const name of readdirSync(dir)) {
    if (SKIP_DIRS.has(name) || name === 'test') continue;
    const path = join(dir, name);
    if (statSync(path).isDirectory()) out.push(...readmes(path));
    else if (name === 'README.md') out.push(path);
  }
  return out;
}

/** What a newcomer reads: the sources, the docs, every README, the examples, scripts and bench. */
const scanned = (): string[] => [
  ...new Set([
    ...filesUnder(join(root, 'src')),
    ...filesUnder(join(root, 'docs')),
    ...filesUnder(join(root, 'examples')),
    ...filesUnder(join(root, 'scripts')),
    ...filesUnder(join(root, 'bench')),
    ...filesUnder(join(root, 'bin')),
    ...readmes(),
  ]),
];

/** A spec outside the repository, at any relative depth. */
const OUTSIDE = /shared\/spec|\.\.\/shared/;

function outsideReferences(text: string, where: string): string[] {
  return text
    .split('\n')
    .flatMap((line, i) => (OUTSIDE.test(line) ? [`${where}:${i + 1}: ${line.trim()}`] : []));
}

/** The numbered sections (`## N. Title`) of each file in docs/spec/. */
function specSections(): Map<string, Set<number>> {
  const sections = new Map<string, Set<number>>();
  for (const name of readdirSync(specDir).filter((n) => n.endsWith('.md'))) {
    const text = readFileSync(join(specDir, name), 'utf8');
    const numbers = [...text.matchAll(/^## (\d+)\. \S/gm)].map((m) => Number(m[1]));
    sections.set(name, new Set(numbers));
  }
  return sections;
}

/**
 * `name.md §N`, with an optional closing backtick after the name, and lists
 * or ranges after it (`§1, §4`, `§2–3`, `§2–§3`): each number is checked.
 */
const CITATION = /\b([a-z][a-z0-9-]*\.md)`? §(\d+)((?:\s*(?:,|–|-|and)\s*§?\d+)*)/g;

function citationProblems(
  text: string,
  where: string,
  sections: Map<string, Set<number>>,
): string[] {
  const problems: string[] = [];
  for (const m of text.matchAll(CITATION)) {
    const file = m[1]!;
    const numbers = [Number(m[2]), ...[...(m[3] ?? '').matchAll(/\d+/g)].map((n) => Number(n[0]))];
    const line = text.slice(0, m.index).split('\n').length;
    const have = sections.get(file);
    if (!have) {
      problems.push(`${where}:${line}: ${m[0]} names no file of docs/spec/`);
      continue;
    }
    for (const n of numbers)
      if (!have.has(n))
        problems.push(`${where}:${line}: ${m[0]}: docs/spec/${file} has no section ${n}`);
  }
  return problems;
}

/** `spec/name.md` (code comments, READMEs) must name a file that exists in docs/spec/. */
function missingSpecFiles(text: string, where: string, sections: Map<string, Set<number>>) {
  return [...text.matchAll(/\bspec\/([a-zA-Z0-9-]+\.md)/g)]
    .filter((m) => !sections.has(m[1]!))
    .map((m) => `${where}: ${m[0]} is not a file of docs/spec/`);
}

/**
 * `name.md "Heading"` (code comments name a door file's section by its
 * title): the quoted words must still be in that file of docs/spec/.
 */
function quotedProblems(text: string, where: string): string[] {
  const problems: string[] = [];
  for (const m of text.matchAll(/\b([a-z][a-z0-9-]*\.md)`? "([^"\n]{2,80})"/g)) {
    const path = join(specDir, m[1]!);
    if (!existsSync(path)) continue; // not a spec file: the citation check above reports spec/ paths
    if (!readFileSync(path, 'utf8').includes(m[2]!))
      problems.push(`${where}: ${m[0]}: docs/spec/${m[1]} no longer says "${m[2]}"`);
  }
  return problems;
}

describe('the contract is in the repository', () => {
  it('docs/spec/ holds the contract, every file with numbered sections', () => {
    const sections = specSections();
    for (const name of ['README.md', 'authority.md', 'kernel.md', 'gateway.md'])
      expect(sections.has(name), name).toBe(true);
    for (const [name, numbers] of sections)
      if (name !== 'README.md')
        expect(numbers.size, `${name} has no "## N. Title" section`).toBeGreaterThan(0);
  });

  it('no source, doc, README or example points at a spec outside the repository', () => {
    const found = scanned().flatMap((path) =>
      outsideReferences(readFileSync(path, 'utf8'), relative(root, path)),
    );
    expect(found).toEqual([]);
  });

  // The built CLI (npm test builds first; `npm run test:fast` does not, and
  // then the help texts are still checked as sources under src/cli).
  it.skipIf(!existsSync(join(root, 'dist/cli/main.js')))(
    "no command's --help points at a spec outside the repository",
    async () => {
      const top = await run(['--help']);
      expect(top.code).toBe(0);
      const commands = [
        ...(top.stdout.split(/^Commands:$/m)[1] ?? '').matchAll(/^ {2}([a-z][a-z-]*)\s/gm),
      ].map((m) => m[1]!);
      expect(commands).toContain('serve');
      expect(commands).toContain('policy');
      const helps = await Promise.all(commands.map((c) => run([c, '--help'])));
      const found = [top, ...helps].flatMap((h, i) =>
        outsideReferences(
          h.stdout + h.stderr,
          i === 0 ? 'airlock --help' : `airlock ${commands[i - 1]} --help`,
        ),
      );
      expect(found).toEqual([]);
      // The help's own citations hold too (airlock policy --help cites authority.md §3).
      const sections = specSections();
      expect(
        helps.flatMap((h, i) =>
          citationProblems(h.stdout, `airlock ${commands[i]} --help`, sections),
        ),
      ).toEqual([]);
    },
  );

  it('every "X.md §N" citation names a file of docs/spec/ that has section N', () => {
    const sections = specSections();
    const problems = scanned().flatMap((path) => {
      const where = relative(root, path);
      const text = readFileSync(path, 'utf8');
      return [
        ...citationProblems(text, where, sections),
        ...missingSpecFiles(text, where, sections),
        ...quotedProblems(text, where),
      ];
    });
    expect(problems).toEqual([]);
  });

  it('a citation of a missing section or file is caught (the check can fail)', () => {
    const sections = new Map([['kernel.md', new Set([1, 2, 3])]]);
    expect(citationProblems('see kernel.md §2', 'x', sections)).toEqual([]);
    expect(citationProblems('see `kernel.md` §2–§3 and kernel.md §1, §3', 'x', sections)).toEqual(
      [],
    );
    expect(citationProblems('see kernel.md §9', 'x', sections)).toHaveLength(1);
    expect(citationProblems('see kernel.md §2–4', 'x', sections)).toHaveLength(1);
    expect(citationProblems('see notes.md §1', 'x', sections)).toHaveLength(1);
    expect(outsideReferences('the contract is in `../shared/spec/`', 'x')).toHaveLength(1);
    expect(quotedProblems('spec/kernel.md "Jobs"', 'x')).toEqual([]);
    expect(quotedProblems('spec/kernel.md "No such heading"', 'x')).toHaveLength(1);
  });
});

describe('the error catalogue (kernel.md §2)', () => {
  it('lists every code of src/kernel/errors.ts once, with the HTTP status REST answers', () => {
    const text = readFileSync(join(specDir, 'kernel.md'), 'utf8');
    const section = text.split(/^## 2\. /m)[1]!.split(/^## 3\. /m)[0]!;
    const rows = new Map(
      [...section.matchAll(/^\| `([a-zA-Z]+)` +\|.*\| (\d{3}) +\|$/gm)].map((m) => [
        m[1]!,
        Number(m[2]),
      ]),
    );
    expect([...rows.keys()].sort()).toEqual([...ERROR_CODES].sort());
    for (const code of ERROR_CODES) expect(rows.get(code), code).toBe(HTTP_STATUS[code]);
  });
});
