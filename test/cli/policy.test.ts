/**
 * `airlock policy …` and policy asks through `airlock approvals …`, against
 * a real `airlock serve` whose config file has a `policy` section.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { run } from '../helpers/cli.js';
import { startServe, type Served } from '../helpers/servers.js';
import { connectClient } from '../helpers/mcp-client.js';
import { toolJson } from '../helpers/results.js';

const dir = mkdtempSync(join(tmpdir(), 'airlock-policy-cli-'));
const TOKEN = 'policy-cli-test-token-123';
let served: Served;
let args: string[];

beforeAll(async () => {
  const config = join(dir, 'config.json');
  writeFileSync(
    config,
    JSON.stringify({
      policy: {
        readOnly: ['scene'],
        rules: [
          { door: 'page', target: '*:submit_order', decision: 'deny', reason: 'orders are mine' },
          {
            door: 'openapi',
            tool: 'plane_call',
            rate: '10/minute',
            decision: 'allow',
            effect: 'read',
          },
        ],
      },
    }),
  );
  served = await startServe([
    '--doors',
    'ledger',
    '--data',
    join(dir, 'data'),
    '--token',
    TOKEN,
    '--config',
    config,
  ]);
  args = ['--url', served.url, '--data', join(dir, 'data')];
});
afterAll(async () => {
  served.child.kill('SIGTERM');
  await served.exited;
  rmSync(dir, { recursive: true, force: true });
});

describe('airlock policy test', () => {
  const test = async (...extra: string[]) => {
    const r = await run(['policy', 'test', ...extra, ...args]);
    expect(r.code, r.stderr).toBe(0);
    return r.stdout.trim();
  };

  it('prints the decision and the rule for each kind of case', async () => {
    expect(
      await test(
        '--agent',
        'a',
        '--door',
        'openapi',
        '--tool',
        'plane_call',
        '--target',
        'plane:pets.delete',
        '--effect',
        'destructive',
      ),
    ).toMatch(/^ask\s+by default:destructive/);
    expect(
      await test(
        '--agent',
        'a',
        '--door',
        'page',
        '--tool',
        'wu_execute_action',
        '--target',
        'http://127.0.0.1:5173:submit_order',
        '--effect',
        'write',
      ),
    ).toMatch(/^deny\s+by\s+1\. deny .*target=\*:submit_order.*\(orders are mine\)/);
    expect(await test('--door', 'scene', '--tool', 'koharu.apply', '--effect', 'write')).toMatch(
      /^deny\s+by readOnly/,
    );
    expect(await test('--door', 'openapi', '--tool', 'plane_call', '--effect', 'read')).toMatch(
      /^allow\s+by\s+2\. allow .*rate 10\/minute/,
    );
    // A mounted tool's effect comes from the tool itself.
    expect(await test('--door', 'ledger', '--tool', 'ledger_append')).toMatch(
      /^allow\s+by default:write/,
    );
  });

  it('without an effect for an unknown tool it says what to add, exit 1', async () => {
    const r = await run(['policy', 'test', '--door', 'nowhere', '--tool', 'x', ...args]);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/effect/);
  });
});

describe('airlock policy add, list, remove and approvals of policy asks', () => {
  it('an added ask rule makes the agent wait; the owner approves once from the terminal', async () => {
    const added = await run([
      'policy',
      'add',
      'ask',
      'ledger',
      '--tool',
      'ledger_echo',
      '--reason',
      'I read every entry',
      ...args,
    ]);
    expect(added.code, added.stderr).toBe(0);
    expect(added.stdout).toMatch(/Added\s+3\. ask\s+door=ledger tool=ledger_echo/);
    const list = await run(['policy', 'list', ...args]);
    expect(list.stdout).toMatch(/Read-only: scene/);
    expect(list.stdout).toMatch(/1\. deny .*\[config file\]/);
    expect(list.stdout).toMatch(/3\. ask .*tool=ledger_echo/);

    const client = await connectClient(new URL('/mcp', served.url), {
      name: 'cli-agent',
      token: TOKEN,
    });
    const append = async () =>
      toolJson(await client.callTool({ name: 'ledger_echo', arguments: { text: 'hello' } }));
    const asked = await append();
    expect(asked).toMatchObject({ code: 'approvalRequired', rule: expect.stringMatching(/^r-/) });

    const pending = await run(['approvals', 'list', ...args]);
    expect(pending.stdout).toContain(String(asked.approvalID));
    expect(pending.stdout).toMatch(/ledger\/ledger_echo\s+policy ask/);
    const ok = await run([
      'approvals',
      'approve',
      String(asked.approvalID),
      '--scope',
      'once',
      ...args,
    ]);
    expect(ok.code, ok.stderr).toBe(0);
    expect(ok.stdout).toMatch(/Approved .* once/);
    const ran = await append();
    expect(ran).toEqual({ text: 'hello' });

    const removed = await run(['policy', 'remove', '3', ...args]);
    expect(removed.code, removed.stderr).toBe(0);
    expect(removed.stdout).toMatch(/Removed\s+3\. ask/);
    const cannot = await run(['policy', 'remove', '1', ...args]);
    expect(cannot.code).toBe(1);
    expect(cannot.stderr).toMatch(/config file/);
    await client.close();
  });

  it('the shorthand DOOR:TARGET and bad values are checked', async () => {
    const bad = await run(['policy', 'add', 'perhaps', 'page:*:x', ...args]);
    expect(bad.code).toBe(1);
    expect(bad.stderr).toMatch(/decision/);
    const rate = await run(['policy', 'add', 'allow', 'page', '--rate', 'lots', ...args]);
    expect(rate.code).toBe(1);
    expect(rate.stderr).toMatch(/N\/minute/);
    const ok = await run(['policy', 'add', 'deny', 'page:*:delete_all', ...args]);
    expect(ok.stdout).toMatch(/door=page target=\*:delete_all/);
  });

  it('an agent token cannot change the policy', async () => {
    const r = await run(['policy', 'add', 'allow', '--owner-token', TOKEN, '--url', served.url]);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/owner/i);
  });
});
