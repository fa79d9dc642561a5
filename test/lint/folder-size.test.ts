/**
 * Rooms with a purpose (issue 26 item 3): no folder in src/ holds more than
 * MAX_FILES files side by side. A folder that outgrows it gets subfolders by
 * concern (docs/architecture.md names the rooms), not a twenty-first file.
 */
import { describe, expect, it } from 'vitest';
import { readdirSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

const MAX_FILES = 20;
const root = fileURLToPath(new URL('../..', import.meta.url));

/** A folder and the names of the files directly in it. */
interface Folder {
  path: string;
  files: string[];
}

/** Every folder under `dir` (itself included), with the files directly in it. */
function foldersUnder(dir: string): Folder[] {
  const entries = readdirSync(dir, { withFileTypes: true });
  const files = entries.filter((e) => e.isFile()).map((e) => e.name);
  const below = entries
    .filter((e) => e.isDirectory())
    .flatMap((e) => foldersUnder(join(dir, e.name)));
  return [{ path: relative(root, dir).split('\\').join('/'), files }, ...below];
}

/** One sentence per folder holding more than `max` files, naming it and its count. */
function overFullFolders(folders: readonly Folder[], max = MAX_FILES): string[] {
  return folders
    .filter((f) => f.files.length > max)
    .map(
      (f) =>
        `${f.path} holds ${f.files.length} files (at most ${max}): move them into subfolders by concern`,
    );
}

describe('folder size', () => {
  it(`no folder in src/ holds more than ${MAX_FILES} files`, () => {
    expect(overFullFolders(foldersUnder(join(root, 'src')))).toEqual([]);
  });

  it('names an over-full folder and its count, and lets a full one pass', () => {
    const names = (n: number) => Array.from({ length: n }, (_, i) => `f${i}.ts`);
    const listing: Folder[] = [
      { path: 'src/full', files: names(20) },
      { path: 'src/over-full', files: names(21) },
      { path: 'src/over-full/room', files: names(3) },
    ];
    expect(overFullFolders(listing)).toEqual([
      'src/over-full holds 21 files (at most 20): move them into subfolders by concern',
    ]);
  });

  it('walks every level of src/, so a deep folder is counted too', () => {
    const paths = foldersUnder(join(root, 'src')).map((f) => f.path);
    expect(paths).toContain('src');
    expect(paths).toContain('src/doors/scene/engines');
  });
});
