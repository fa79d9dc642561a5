/**
 * `airlock audit verify|export|public-key` through the real CLI (issue 33):
 * the chain verifies on a fresh store and names the first broken entry after
 * a row is edited in SQLite; a signed export verifies with the public key
 * alone, and fails after one byte changed.
 */
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { run } from '../helpers/cli.js';

describe('airlock audit', () => {
  let dir: string;
  let data: string;
  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'airlock-audit-cli-'));
    data = join(dir, 'data');
    // Owner actions are audited: three entries.
    for (const name of ['ann', 'bob', 'cy'])
      expect((await run(['agents', 'add', name, '--data', data])).code).toBe(0);
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('verify passes on a fresh store', async () => {
    const verified = await run(['audit', 'verify', '--data', data]);
    expect(verified.stdout).toMatch(/the audit chain is intact: 3 entries, 1 to 3/);
    expect(verified.code).toBe(0);
  });

  it('a signed export verifies with the public key alone and fails after one byte changed', async () => {
    const file = join(dir, 'audit.jsonl');
    const exported = await run(['audit', 'export', '--signed', '--data', data, '-o', file]);
    expect(exported.code).toBe(0);
    expect(statSync(join(data, 'audit-signing.key')).mode & 0o777).toBe(0o600);
    const key = await run(['audit', 'public-key', '--data', data]);
    expect(key.stdout).toMatch(/^-----BEGIN PUBLIC KEY-----/);
    const keyFile = join(dir, 'auditor.pem');
    writeFileSync(keyFile, key.stdout);

    // The auditor has the file and the key, nothing else.
    const verified = await run(['audit', 'verify', '--file', file, '--public-key', keyFile]);
    expect(verified.stdout).toBe(
      'audit export verified: 3 entries through entry 3, signed by the key given\n',
    );
    expect(verified.code).toBe(0);

    const text = readFileSync(file, 'utf8');
    const at = text.indexOf('agents.add') + 3;
    writeFileSync(file, text.slice(0, at) + 'X' + text.slice(at + 1));
    const changed = await run(['audit', 'verify', '--file', file, '--public-key', keyFile]);
    expect(changed.stdout).toMatch(/^audit export NOT verified \(line 1\): entry 1 was changed/);
    expect(changed.code).toBe(1);
  });

  it('verify names the first broken entry after a row is edited in SQLite', async () => {
    const db = new Database(join(data, 'airlock.db'));
    db.prepare(`UPDATE audit SET tool = 'agents.revoke' WHERE id = 2`).run();
    db.close();
    const verified = await run(['audit', 'verify', '--data', data]);
    expect(verified.stdout).toBe(
      'audit chain BROKEN at entry 2: entry 2 was changed after it was written (its content no longer matches its hash)\n',
    );
    expect(verified.code).toBe(1);
  });
});
