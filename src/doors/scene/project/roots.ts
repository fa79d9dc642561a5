/**
 * Project roots (spec/scene.md "MCP tools", `open_project`): every project
 * path must lie inside one of the configured roots (default
 * `<data>/projects`). Relative paths resolve against the first root;
 * symlinks are resolved before the check so a link cannot lead outside.
 */
import { existsSync, mkdirSync, readdirSync, realpathSync, statSync } from 'node:fs';
import { basename, dirname, isAbsolute, join, relative, resolve, sep } from 'node:path';
import { AirlockError, utf8Bytes } from '../../../kernel/index.js';

export const PROJECT_SUFFIX = '.khrproj';

/** Linux and macOS file systems refuse a name over 255 bytes and a path over 4,095 (ENAMETOOLONG). */
const NAME_MAX_BYTES = 255;
const PATH_MAX_BYTES = 4095;

export interface ProjectRoots {
  readonly roots: readonly string[];
  /**
   * Absolute, symlink-free path inside a root; throws malformedRequest
   * otherwise. With `allowRoot`, a root itself is accepted too (a folder
   * to create a project beneath).
   */
  confine(path: string, options?: { allowRoot?: boolean }): string;
  /** True when `path` (absolute, confined) is one of the roots. */
  isRoot(path: string): boolean;
  /** A fresh `<parent>/<slug>.khrproj` folder path for a new project name (parent: the first root). */
  freshFolder(name: string, parent?: string): string;
  /** Project folders found directly under the roots: id (folder name without suffix) → path. */
  list(): { id: string; path: string }[];
}

export function slugify(name: string): string {
  const slug = name
    .normalize('NFKD')
    .replace(/[\u0300-\u036f]/g, '')
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '')
    .slice(0, 60);
  return slug || 'project';
}

/**
 * realpath of the nearest existing ancestor, with the missing tail appended;
 * also that ancestor and how many missing names follow it.
 */
function realish(path: string): { path: string; existing: string; missing: number } {
  let head = path;
  const tail: string[] = [];
  while (!existsSync(head)) {
    const parent = dirname(head);
    if (parent === head) break;
    tail.unshift(basename(head));
    head = parent;
  }
  const existing = realpathSync(head);
  return { path: join(existing, ...tail), existing, missing: tail.length };
}

/**
 * Why the file system would refuse to make the folders of `path`, said so
 * the caller can fix it: a name or the whole path too long, or a parent
 * that is a file. These would otherwise fail as syscalls (ENAMETOOLONG,
 * ENOTDIR) deep inside project creation.
 */
function unusable({ path, existing, missing }: ReturnType<typeof realish>): string | null {
  const long = path.split(sep).find((name) => utf8Bytes(name) > NAME_MAX_BYTES);
  if (long !== undefined)
    return `has a folder name of ${utf8Bytes(long)} bytes ('${[...long].slice(0, 24).join('')}…'); file systems allow at most ${NAME_MAX_BYTES} bytes per name, so use a shorter one`;
  if (utf8Bytes(path) > PATH_MAX_BYTES)
    return `resolves to a path of ${utf8Bytes(path)} bytes; file systems allow at most ${PATH_MAX_BYTES}, so use a shorter path`;
  if (missing > 0 && !statSync(existing).isDirectory())
    return `goes through the file ${existing}, which cannot hold folders; choose a path whose parents are folders`;
  return null;
}

export function createProjectRoots(configured: readonly string[]): ProjectRoots {
  const roots = configured.map((r) => {
    mkdirSync(r, { recursive: true });
    return realpathSync(resolve(r));
  });
  const inside = (p: string, allowRoot: boolean) =>
    roots.some((r) => {
      const rel = relative(r, p);
      if (rel === '') return allowRoot;
      return !rel.startsWith('..') && !isAbsolute(rel) && !rel.includes(`..${sep}`);
    });
  return {
    roots,
    isRoot: (path) => roots.includes(path),
    confine(path, options = {}) {
      // The file system cannot name a NUL byte: refuse it here, not as a failing syscall later.
      if (path.includes('\0'))
        throw new AirlockError(
          'malformedRequest',
          "Field 'path' contains a NUL byte (\\u0000), which no file path can hold; send the folder's path without it.",
          { field: 'path' },
        );
      const resolved = realish(isAbsolute(path) ? path : resolve(roots[0]!, path));
      if (!inside(resolved.path, options.allowRoot === true)) {
        const isARoot = roots.includes(resolved.path);
        throw new AirlockError(
          'malformedRequest',
          isARoot
            ? `Path '${path}' is a project root (${resolved.path}), which holds projects but is not one; open a project folder inside it, or pass createName to create one beneath it.`
            : `Path '${path}' is outside the project roots (${roots.join(', ')}); use a folder inside one of them.`,
          { field: 'path' },
        );
      }
      const problem = unusable(resolved);
      if (problem)
        throw new AirlockError('malformedRequest', `Field 'path' ${problem}.`, { field: 'path' });
      return resolved.path;
    },
    freshFolder(name, parent = roots[0]!) {
      const slug = slugify(name);
      for (let n = 1; ; n++) {
        const candidate = join(parent, `${n === 1 ? slug : `${slug}-${n}`}${PROJECT_SUFFIX}`);
        if (!existsSync(candidate)) return candidate;
      }
    },
    list() {
      const found: { id: string; path: string }[] = [];
      for (const root of roots) {
        for (const entry of readdirSync(root)) {
          const path = join(root, entry);
          if (!existsSync(join(path, 'project.json'))) continue;
          if (!statSync(path).isDirectory()) continue;
          const id = entry.endsWith(PROJECT_SUFFIX)
            ? entry.slice(0, -PROJECT_SUFFIX.length)
            : entry;
          if (!found.some((f) => f.id === id)) found.push({ id, path });
        }
      }
      return found.sort((a, b) => a.id.localeCompare(b.id));
    },
  };
}
