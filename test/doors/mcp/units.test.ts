/** The mcp door's pure parts: names, effects, flags and `${ENV}` expansion. */
import { describe, expect, it } from 'vitest';
import type { McpRequestScope } from '../../../src/transport/surface.js';
import { takeRequest, withMcpRequest } from '../../../src/doors/mcp/upstream/client-requests.js';
import { claimName, publishedName, MAX_NAME } from '../../../src/doors/mcp/naming.js';
import { annotatedEffect, effectFor } from '../../../src/doors/mcp/effects.js';
import {
  expandEnv,
  parseHeaderFlag,
  parseUpstreamFlag,
  parseUpstreams,
  splitCommand,
} from '../../../src/doors/mcp/config.js';

describe('published names', () => {
  it('are NAME_<tool>, with characters outside MCP’s name rules replaced by _', () => {
    expect(publishedName('fs', '_', 'read_text_file')).toBe('fs_read_text_file');
    expect(publishedName('gh', '_', 'repos/list issues')).toBe('gh_repos_list_issues');
    expect(publishedName('ev', '.', 'get-sum')).toBe('ev.get-sum');
  });

  it('stay within 64 characters, two long names kept apart by a hash of the full name', () => {
    const a = publishedName('svc', '_', `${'x'.repeat(80)}_one`);
    const b = publishedName('svc', '_', `${'x'.repeat(80)}_two`);
    expect(a).toHaveLength(MAX_NAME);
    expect(b).toHaveLength(MAX_NAME);
    expect(a).not.toBe(b);
    expect(a).toMatch(/^[A-Za-z0-9_.-]+$/);
  });

  it('collisions are resolved deterministically in listing order with _2, _3', () => {
    const taken = new Set<string>();
    expect(claimName('a_b_c', taken)).toBe('a_b_c');
    expect(claimName('a_b_c', taken)).toBe('a_b_c_2');
    expect(claimName('a_b_c', taken)).toBe('a_b_c_3');
    const long = 'y'.repeat(64);
    expect(claimName(long, taken)).toBe(long);
    expect(claimName(long, taken)).toHaveLength(64);
  });
});

describe('effects', () => {
  it('follow MCP’s defaults: readOnlyHint → read, destructiveHint false → write, otherwise destructive', () => {
    expect(annotatedEffect({ readOnlyHint: true })).toBe('read');
    expect(annotatedEffect({ readOnlyHint: false, destructiveHint: false })).toBe('write');
    expect(annotatedEffect({ destructiveHint: false })).toBe('write');
    expect(annotatedEffect({})).toBe('destructive');
    expect(annotatedEffect(undefined)).toBe('destructive');
  });

  it('an owner override wins over the annotations', () => {
    expect(effectFor({ readOnlyHint: true }, 'destructive')).toEqual({
      effect: 'destructive',
      source: 'override',
    });
    expect(effectFor({ readOnlyHint: true }, undefined).source).toBe('annotations');
  });
});

describe('upstream flags and config', () => {
  it('NAME=COMMAND splits like a shell, NAME=URL is HTTP', () => {
    expect(parseUpstreamFlag(`fs=npx -y "@scope/server files" '/tmp/a b'`)).toEqual([
      'fs',
      { command: 'npx', args: ['-y', '@scope/server files', '/tmp/a b'] },
    ]);
    expect(parseUpstreamFlag('gh=https://example.com/mcp')).toEqual([
      'gh',
      { url: 'https://example.com/mcp' },
    ]);
    expect(splitCommand('a\\ b c')).toEqual(['a b', 'c']);
    expect(() => parseUpstreamFlag('my_fs=npx x')).toThrow(/no _/);
    expect(() => parseUpstreamFlag('fs=')).toThrow(/NAME=COMMAND/);
  });

  it('--upstream-header is NAME:Header: value', () => {
    expect(parseHeaderFlag('gh:Authorization: Bearer ${T}')).toEqual([
      'gh',
      'Authorization',
      'Bearer ${T}',
    ]);
    expect(() => parseHeaderFlag('gh-Authorization')).toThrow(/NAME:'Header-Name: value'/);
  });

  it('${ENV} is expanded and the values used are returned as secrets; an unset variable is named', () => {
    expect(expandEnv('Bearer ${TOK}', { TOK: 'abcd1234' }, 'h')).toEqual({
      value: 'Bearer abcd1234',
      used: ['abcd1234'],
    });
    expect(() => expandEnv('${NOPE}', {}, 'upstreams.gh.headers.A')).toThrow(
      /upstreams.gh.headers.A: environment variable NOPE is not set/,
    );
  });

  it('a config entry needs command or url, and names the bad field', () => {
    expect(() => parseUpstreams({ fs: { args: ['x'] } })).toThrow(
      /config upstreams.fs: give either command .* or url/,
    );
    expect(() =>
      parseUpstreams({ fs: { command: 'x', tools: { w: { effect: 'maybe' } } } }),
    ).toThrow(/upstreams/);
    expect(parseUpstreams({ fs: { command: 'x' } }).fs).toMatchObject({
      args: [],
      start: 'eager',
      separator: '_',
    });
  });
});

describe('the call’s MCP request in reach of forwardCall', () => {
  const scope = (n: number) => ({ n }) as unknown as McpRequestScope;
  it('takeRequest hands a call its request; once taken and no other call needs it, the async context is off', async () => {
    const a = scope(1);
    // Alone: taken, then off (what follows in the call runs without promise hooks).
    const alone = await withMcpRequest(a, async () => {
      await Promise.resolve();
      const got = takeRequest();
      await Promise.resolve();
      return [got, takeRequest()];
    });
    expect(alone).toEqual([a, null]);
  });

  it('a call that has not yet taken its request keeps it while another call takes and finishes', async () => {
    const [a, b] = [scope(1), scope(2)];
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    const waiting = withMcpRequest(b, async () => {
      await gate;
      await Promise.resolve();
      return takeRequest();
    });
    expect(await withMcpRequest(a, async () => takeRequest())).toBe(a);
    release();
    expect(await waiting).toBe(b);
    expect(takeRequest()).toBeNull();
  });

  it('a call refused before it is forwarded lets go of its request too', async () => {
    await expect(
      withMcpRequest(scope(3), async () => {
        throw new Error('refused');
      }),
    ).rejects.toThrow('refused');
    expect(takeRequest()).toBeNull();
  });
});
