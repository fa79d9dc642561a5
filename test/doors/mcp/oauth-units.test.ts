/**
 * The pieces of the mcp door's OAuth client that need no server: the seal
 * (AES-256-GCM, key file 0600, bound to the upstream's name), the growing
 * scrubber, and the `oauth` config form.
 */
import { describe, expect, it } from 'vitest';
import { chmodSync, mkdtempSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileSealer, KEY_FILE } from '../../../src/doors/mcp/oauth/seal.js';
import { growingScrubber } from '../../../src/doors/mcp/oauth/token-scrub.js';
import { parseUpstreams, resolveUpstream } from '../../../src/doors/mcp/index.js';

const folder = () => mkdtempSync(join(tmpdir(), 'airlock-seal-'));

describe('the upstream OAuth seal', () => {
  it('creates its key file on first use, mode 0600, and opens what it sealed', async () => {
    const dir = folder();
    const sealer = fileSealer(dir);
    expect(await sealer.open('v1.AAAA', 'gh')).toBeNull(); // no key yet: nothing opens, nothing made
    expect(() => statSync(join(dir, KEY_FILE))).toThrow();
    const sealed = await sealer.seal('{"refresh_token":"r-123456789"}', 'gh');
    expect(sealed).not.toContain('r-123456789');
    expect(statSync(join(dir, KEY_FILE)).mode & 0o777).toBe(0o600);
    expect(await fileSealer(dir).open(sealed, 'gh')).toBe('{"refresh_token":"r-123456789"}');
  });

  it('a sealed grant moved to another upstream, or altered, does not open', async () => {
    const sealer = fileSealer(folder());
    const sealed = await sealer.seal('secret', 'gh');
    expect(await sealer.open(sealed, 'other')).toBeNull();
    const raw = Buffer.from(sealed.slice(3), 'base64url');
    raw[raw.length - 1]! ^= 1;
    expect(await sealer.open(`v1.${raw.toString('base64url')}`, 'gh')).toBeNull();
    expect(await fileSealer(folder()).open(sealed, 'gh')).toBeNull(); // another key
  });

  it('refuses a key file others can read', async () => {
    const dir = folder();
    writeFileSync(join(dir, KEY_FILE), `${Buffer.alloc(32, 7).toString('base64')}\n`);
    chmodSync(join(dir, KEY_FILE), 0o644);
    await expect(fileSealer(dir).seal('x', 'gh')).rejects.toThrow(/chmod 600/);
  });
});

describe('the growing scrubber', () => {
  it('scrubs tokens learnt while running, beside the configured secrets', () => {
    const scrub = growingScrubber(['configured-1']);
    expect(scrub('a token-abcdef12 b configured-1')).toBe('a token-abcdef12 b [REDACTED]');
    scrub.add(['token-abcdef12']);
    expect(scrub('a token-abcdef12 b')).toBe('a [REDACTED] b');
    expect(scrub(Buffer.from('token-abcdef12').toString('base64'))).not.toContain(
      Buffer.from('token-abcdef12').toString('base64').slice(0, 16),
    );
  });
});

describe('the oauth config form', () => {
  it('is refused beside an Authorization header', () => {
    const [config] = Object.values(
      parseUpstreams({
        gh: { url: 'https://x/mcp', oauth: {}, headers: { authorization: 'Bearer x' } },
      }),
    );
    expect(() => resolveUpstream('gh', config!, {})).toThrow(
      /either an Authorization header or oauth/,
    );
  });

  it('takes scopes and an https CIMD URL with a path, nothing else', () => {
    expect(() =>
      parseUpstreams({
        gh: { url: 'https://x/mcp', oauth: { clientMetadataUrl: 'http://me/c.json' } },
      }),
    ).toThrow(/https/);
    expect(() =>
      parseUpstreams({ gh: { url: 'https://x/mcp', oauth: { scopes: ['two words'] } } }),
    ).toThrow(/scope/);
    expect(
      parseUpstreams({
        gh: {
          url: 'https://x/mcp',
          oauth: { scopes: ['repo'], clientMetadataUrl: 'https://me/c.json' },
        },
      }).gh,
    ).toMatchObject({ oauth: { scopes: ['repo'], clientMetadataUrl: 'https://me/c.json' } });
  });
});
