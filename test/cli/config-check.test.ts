import { describe, expect, it } from 'vitest';
import { checkConfigFile, configLimits } from '../../src/cli/config/config-check.js';
import { UsageError } from '../../src/cli/args.js';

/** The one line `--config FILE` is refused with (exit 2), or null when the file is accepted. */
function refusal(config: Record<string, unknown>): string | null {
  try {
    checkConfigFile(config, 'airlock.json');
    return null;
  } catch (error) {
    expect(error).toBeInstanceOf(UsageError);
    return (error as Error).message;
  }
}

describe('the config file is strict: every unknown key is refused with the key meant', () => {
  it.each([
    [
      { polcy: { readOnly: ['scene'] } },
      'unknown key `polcy` at the top level; did you mean `policy`?',
    ],
    [
      { policy: { readonly: ['scene'] } },
      'unknown key `readonly` in `policy`; did you mean `readOnly`?',
    ],
    [
      { http: { headersTimeoutM: 5000 } },
      'unknown key `headersTimeoutM` in `http`; did you mean `headersTimeoutMs`?',
    ],
    [
      { policy: { rules: [{ decision: 'deny', targt: 'x' }] } },
      'unknown key `targt` in `policy.rules.0`; did you mean `target`?',
    ],
    [
      { upstreams: { fs: { command: 'x', arg: [] } } },
      'unknown key `arg` in `upstreams.fs`; did you mean `args`?',
    ],
    [
      { upstreams: { gh: { url: 'https://x/mcp', header: {} } } },
      'unknown key `header` in `upstreams.gh`; did you mean `headers`?',
    ],
    [
      { upstreams: { gh: { url: 'https://x/mcp', oauth: { scope: ['a'] } } } },
      'unknown key `scope` in `upstreams.gh.oauth`; did you mean `scopes`?',
    ],
    [
      { oauth: { dynamicRegistraton: true } },
      'unknown key `dynamicRegistraton` in `oauth`; did you mean `dynamicRegistration`?',
    ],
    [
      { upstreams: { fs: { cmd: 'x' } } },
      'unknown key `cmd` in `upstreams.fs`; did you mean `command`?',
    ],
    [
      { upstreams: { fs: { command: 'x', tools: { t: { efect: 'read' } } } } },
      'unknown key `efect` in `upstreams.fs.tools.t`; did you mean `effect`?',
    ],
    [
      { openapi: [{ spec: 'a.yaml', baseURL: 'https://x' }] },
      'unknown key `baseURL` in `openapi.0`; did you mean `baseUrl`?',
    ],
    [
      { openapiOptions: { plane: { prob: {} } } },
      'unknown key `prob` in `openapiOptions.plane`; did you mean `probe`?',
    ],
    [
      { scene: { projectRoot: ['a'] } },
      'unknown key `projectRoot` in `scene`; did you mean `projectRoots`?',
    ],
    [
      { scene: { llm: { modle: 'm' } } },
      'unknown key `modle` in `scene.llm`; did you mean `model`?',
    ],
    [{ notes: { prefx: 'r' } }, 'unknown key `prefx` in `notes`; did you mean `prefix`?'],
    [
      { tools: { listBudget: 100 } },
      'unknown key `listBudget` in `tools`; the keys there are `listBudgetTokens`',
    ],
    [
      { retention: { auditDay: 3 } },
      'unknown key `auditDay` in `retention`; did you mean `auditDays`?',
    ],
  ])('%j is refused naming the key, its path and the closest known key', (config, message) => {
    expect(refusal(config)).toBe(`--config airlock.json: ${message}`);
  });

  it('a key like none known lists the keys that place has', () => {
    expect(refusal({ http: { zzzz: 1 } })).toBe(
      '--config airlock.json: unknown key `zzzz` in `http`; the keys there are `headersTimeoutMs`, `requestTimeoutMs`, `maxConnectionsPerAddress`, `sessionIdleMs`',
    );
  });

  it('a section key given where a door name belongs says the section is keyed by door', () => {
    expect(refusal({ limits: { resultToken: 5 } })).toBe(
      '--config airlock.json: `limits.resultToken` must be an object (`limits` is keyed by name, e.g. {"limits": {"<name>": {"resultTokens": …}}}); got the number 5; did you mean `limits.<name>.resultTokens`?',
    );
  });

  it('a value of the wrong type names its path and what to write', () => {
    expect(refusal({ http: { headersTimeoutMs: '10' } })).toBe(
      `--config airlock.json: 'http.headersTimeoutMs' must be an integer between 100 and 600000; got the string "10"`,
    );
  });

  it('an upstream with neither command nor url says to give one', () => {
    expect(refusal({ upstreams: { fs: {} } })).toBe(
      '--config airlock.json: `upstreams.fs` needs `command` or `url`',
    );
  });

  it('a limits key that names no door is refused with the door meant', () => {
    expect(() =>
      configLimits({ limits: { notse: { timeoutMs: 5000 } } }, ['scene', 'notes', 'page']),
    ).toThrow('unknown door `notse` in `limits`; did you mean `notes`?');
  });

  it('a file with every section written correctly is accepted', () => {
    expect(
      refusal({
        port: 7300,
        toolNames: 'portable',
        tools: { listBudgetTokens: 8000 },
        host: '127.0.0.1',
        doors: ['scene', 'notes'],
        limits: { notes: { timeoutMs: 8000, resultTokens: 5000 } },
        http: { headersTimeoutMs: 10_000 },
        jobs: { leaseMs: 30_000 },
        retention: { journalHours: 24, auditDays: 0 },
        policy: {
          readOnly: ['scene'],
          rules: [{ door: 'notes', decision: 'ask', origin: 'copied from the inbox' }],
        },
        openapi: [{ spec: 'a.yaml', baseUrl: 'https://api.example', prefix: 'a' }],
        openapiOptions: { a: { allowExternalRefs: true } },
        upstreams: {
          fs: { command: 'npx', args: ['x'], limits: { upstreamMessageBytes: 1_048_576 } },
          gh: { url: 'https://x/mcp' },
          linear: {
            url: 'https://mcp.example/mcp',
            oauth: { scopes: ['read'], clientMetadataUrl: 'https://me.example/airlock.json' },
          },
        },
        scene: { projectRoots: ['p'], llm: { model: 'm' } },
        notes: { prefix: 'rooqi' },
        oauth: { enabled: true, dynamicRegistration: true, accessTokenMinutes: 30 },
      }),
    ).toBeNull();
  });
});

describe('notify.quietHours, notify.batchSeconds and urgent rules (issue 30)', () => {
  it('accepts quiet hours with a time zone, a batch length and an urgent ask rule', () => {
    expect(
      refusal({
        notify: {
          quietHours: { from: '22:00', to: '07:00', timeZone: 'Europe/Berlin' },
          batchSeconds: 0,
        },
        policy: { rules: [{ tool: 'delete_*', decision: 'ask', urgent: true }] },
      }),
    ).toBeNull();
  });

  it.each([
    [{ notify: { quietHours: { from: '22:00', to: '07:00', timezone: 'UTC' } } }, 'timezone'],
    [{ notify: { quiethours: { from: '22:00', to: '07:00' } } }, 'quietHours'],
    [{ notify: { quietHours: { from: '10pm', to: '07:00' } } }, 'HH:MM'],
    [{ notify: { quietHours: { from: '22:00', to: '07:00', timeZone: 'Mars/Base' } } }, 'IANA'],
    [{ notify: { quietHours: { from: '07:00', to: '07:00' } } }, 'must differ'],
    [{ notify: { batchSeconds: 7200 } }, 'batchSeconds'],
    [{ policy: { rules: [{ decision: 'deny', urgent: true }] } }, '`urgent` is for'],
  ])('refuses %j', (config, words) => {
    expect(refusal(config as Record<string, unknown>)).toContain(words);
  });
});
