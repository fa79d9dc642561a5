/**
 * Every door's README maps every file of the door (issue 26 item 3): a
 * newcomer opening a door folder finds each module named, with its job, in
 * the README beside it. A file is mapped when the README names its path
 * relative to the door (`upstream/bounded.ts`) or, inside a row that names
 * its folder, its bare name.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const doorsDir = fileURLToPath(new URL('../../src/doors', import.meta.url));

function sourceFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return sourceFiles(path);
    return /\.(ts|mts)$/.test(name) ? [path] : [];
  });
}

/**
 * The files of a door its README does not name. A file in a folder is named
 * by its path, by its bare name on a line naming the folder, or by its bare
 * name in the rows under a table row that heads the folder (`**`model/`**`).
 */
export function unmapped(readme: string, files: string[]): string[] {
  const named = new Set<string>();
  let heading = '';
  for (const line of readme.split('\n')) {
    const head = /^\|\s*\**`([\w./-]+)\/`\**\s*\|/.exec(line);
    if (head) heading = head[1]!;
    else if (!line.startsWith('|')) heading = '';
    for (const [, name] of line.matchAll(/`([\w./-]+\.m?ts)`/g)) {
      named.add(name!);
      if (heading && !name!.includes('/')) named.add(`${heading}/${name}`);
      for (const [, folder] of line.matchAll(/`([\w./-]+)\/[\w.-]+\.m?ts`/g))
        named.add(`${folder}/${name}`);
    }
  }
  return files.filter((file) => !named.has(file) && !readme.includes(file));
}

const doors = readdirSync(doorsDir).filter((d) => statSync(join(doorsDir, d)).isDirectory());

describe('door READMEs', () => {
  it.each(doors)('the %s README names every file of the door', (door) => {
    const dir = join(doorsDir, door);
    const readme = readFileSync(join(dir, 'README.md'), 'utf8');
    const files = sourceFiles(dir).map((f) => relative(dir, f));
    expect(unmapped(readme, files), `add these files to src/doors/${door}/README.md`).toEqual([]);
  });

  it('reports a file the README does not name', () => {
    const readme =
      '| `index.ts` | the door |\n| `upstream/bounded.ts`, `http-bounded.ts` | reads |';
    expect(
      unmapped(readme, ['index.ts', 'upstream/bounded.ts', 'upstream/http-bounded.ts', 'new.ts']),
    ).toEqual(['new.ts']);
  });
});
