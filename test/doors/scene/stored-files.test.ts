/**
 * A project's snapshot and op log are checked when it opens: a broken one is
 * refused naming the file and the field, and leaves no lock behind.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { existsSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import {
  initProject,
  openProject,
  type Project,
} from '../../../src/doors/scene/project/project.js';
import { AirlockError } from '../../../src/kernel/errors.js';
import { fileFolderStorage } from '../../../src/store/folder-file.js';
import { pageOf, tempDir } from './helpers.js';
import { snapshotJson } from './hostile-files.js';

const dirs: string[] = [];
const open: Project[] = [];
afterEach(async () => {
  for (const p of open.splice(0)) await p.close();
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

function project(files: Record<string, string>): string {
  const root = tempDir();
  dirs.push(root);
  const dir = join(root, 'p.khrproj');
  initProject(dir, 'P');
  for (const [name, text] of Object.entries(files)) writeFileSync(join(dir, name), text);
  return dir;
}

async function refusal(dir: string) {
  try {
    open.push(await openProject(dir, { storage: fileFolderStorage }));
  } catch (error) {
    if (!(error instanceof AirlockError)) throw error;
    return { code: error.code, message: error.message, data: error.data };
  }
  return null;
}

const entry = (value: unknown) => JSON.stringify(value) + '\n';

describe('stored project files', () => {
  it('a snapshot.json that is not JSON refuses the open naming snapshot.json, and leaves no lock', async () => {
    const dir = project({ 'snapshot.json': '{"epoch": 1,' });
    expect(await refusal(dir)).toMatchObject({
      code: 'malformedRequest',
      message: expect.stringMatching(
        /^The project at .* cannot be opened: snapshot\.json is not JSON/,
      ),
      data: { file: 'snapshot.json' },
    });
    expect(existsSync(join(dir, 'lock'))).toBe(false);
  });

  it('a snapshot whose page has a width of the wrong type names the field and the value it got', async () => {
    const page = { ...pageOf(), width: '100' };
    const dir = project({ 'snapshot.json': new TextDecoder().decode(snapshotJson('P', [page])) });
    expect(await refusal(dir)).toMatchObject({
      code: 'malformedRequest',
      message: expect.stringContaining(
        'snapshot.json: `state.pages.0.width` must be a number; got the string "100"',
      ),
      data: { file: 'snapshot.json', field: 'state.pages.0.width' },
    });
  });

  it('an op log entry that is not a scene op refuses the open naming oplog.jsonl and the entry', async () => {
    const dir = project({
      'oplog.jsonl':
        entry({ epoch: 1, type: 'apply', ops: [{ addPage: { page: pageOf() } }], label: 'ok' }) +
        entry({ epoch: 2, type: 'apply', ops: [{ explode: {} }], label: 'bad' }),
    });
    expect(await refusal(dir)).toMatchObject({
      code: 'malformedRequest',
      message: expect.stringContaining('oplog.jsonl entry 2: `ops.0`'),
      data: { file: 'oplog.jsonl', field: 'ops.0' },
    });
  });

  it('a logged op the reducer refuses on replay refuses the open naming oplog.jsonl', async () => {
    const page = pageOf();
    const dir = project({
      'oplog.jsonl':
        entry({ epoch: 1, type: 'apply', ops: [{ addPage: { page } }], label: 'a' }) +
        entry({ epoch: 2, type: 'apply', ops: [{ addPage: { page } }], label: 'again' }),
    });
    expect(await refusal(dir)).toMatchObject({
      code: 'malformedRequest',
      message: expect.stringContaining(
        'oplog.jsonl holds an op that cannot be replayed (pageExists)',
      ),
    });
    expect(existsSync(join(dir, 'lock'))).toBe(false);
  });

  it('a snapshot nested a thousand batches deep is refused by name, not by a stack overflow', async () => {
    let op: unknown = { removePage: { id: pageOf().id } };
    for (let i = 0; i < 1000; i++) op = { batch: { ops: [op], label: 'deep' } };
    const snapshot = JSON.parse(new TextDecoder().decode(snapshotJson('P'))) as {
      undo: unknown[];
    };
    snapshot.undo = [{ label: 'deep', ops: [op], inverses: [op] }];
    const dir = project({ 'snapshot.json': JSON.stringify(snapshot) });
    expect(await refusal(dir)).toMatchObject({
      code: 'malformedRequest',
      message: expect.stringContaining('snapshot.json nests deeper than 256 levels'),
    });
  });

  it('a project whose files are whole opens as before', async () => {
    const page = pageOf();
    const dir = project({
      'snapshot.json': new TextDecoder().decode(snapshotJson('P', [page])),
      'oplog.jsonl': entry({
        epoch: 2,
        type: 'apply',
        ops: [{ removePage: { id: page.id } }],
        label: 'rm',
      }),
    });
    expect(await refusal(dir)).toBeNull();
    expect(open[0]!.history.epoch).toBe(2);
    expect(open[0]!.history.state.pages).toEqual([]);
  });
});
