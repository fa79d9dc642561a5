/**
 * The scrubber finds a configured secret in every form an honest service
 * produces: as it is in any letter case, percent-encoded (partly or every
 * byte, either case), hex (either case), `\uXXXX` escapes, HTML entities,
 * base64 at each byte offset inside a longer text, JSON-escaped, and split
 * across adjacent text blocks.
 */
import { describe, expect, it } from 'vitest';
import { createScrubber, scrubTextBlocks } from '../../src/kernel/audit/scrub.js';

const SECRET = 'Sk-live/9f3a+Qz_77&<x>';
const scrub = createScrubber([SECRET]);
const bytes = Buffer.from(SECRET);

const hidden = (text: string) => {
  const out = scrub(text);
  expect(out).toContain('[REDACTED]');
  return out;
};

describe('createScrubber', () => {
  it('finds the value as it is and in any letter case', () => {
    expect(hidden(`key ${SECRET}.`)).toBe('key [REDACTED].');
    expect(hidden(`key ${SECRET.toUpperCase()}.`)).toBe('key [REDACTED].');
    expect(hidden(`key ${SECRET.toLowerCase()}.`)).toBe('key [REDACTED].');
  });

  it('finds hex of its bytes in either case', () => {
    const hex = bytes.toString('hex');
    expect(hidden(`h=${hex};`)).toBe('h=[REDACTED];');
    expect(hidden(`h=${hex.toUpperCase()};`)).toBe('h=[REDACTED];');
  });

  it('finds every byte percent-encoded, in either case', () => {
    const full = [...bytes].map((b) => `%${b.toString(16).padStart(2, '0')}`).join('');
    expect(hidden(`u=${full}&`)).toBe('u=[REDACTED]&');
    expect(hidden(`u=${full.toUpperCase()}&`)).toBe('u=[REDACTED]&');
    expect(hidden(`u=${encodeURIComponent(SECRET)}&`)).toBe('u=[REDACTED]&');
  });

  it('finds \\uXXXX escapes of every character, in either case', () => {
    const escaped = [...SECRET]
      .map((c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`)
      .join('');
    expect(hidden(`"${escaped}"`)).toBe('"[REDACTED]"');
    expect(hidden(`"${escaped.replace(/[a-f]/g, (c) => c.toUpperCase())}"`)).toBe('"[REDACTED]"');
  });

  it('finds HTML entities: named, decimal and hex', () => {
    const named = SECRET.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
    const decimal = [...SECRET].map((c) => `&#${c.codePointAt(0)};`).join('');
    const hexadecimal = [...SECRET].map((c) => `&#X${c.codePointAt(0)!.toString(16)};`).join('');
    for (const form of [named, decimal, hexadecimal])
      expect(hidden(`<p>${form}</p>`)).toBe('<p>[REDACTED]</p>');
  });

  it('finds base64 of the value at each byte offset inside a longer encoded text', () => {
    for (const prefix of ['', 'a', 'ab', 'abc', 'token:']) {
      for (const suffix of ['', 'z', 'zz']) {
        const encoded = Buffer.from(`${prefix}${SECRET}${suffix}`).toString('base64');
        const out = hidden(`t=${encoded}`);
        // Only the characters that carry the neighbours' bits (and padding) stay.
        const n = bytes.length;
        const before = Math.ceil(((prefix.length % 3) * 8) / 6) + Math.floor(prefix.length / 3) * 4;
        const after = encoded.length - Math.floor(((prefix.length + n) * 8) / 6);
        expect(out.length).toBeLessThanOrEqual('t=[REDACTED]'.length + before + after);
      }
    }
    const url = Buffer.from(`x${SECRET}`).toString('base64url');
    hidden(`t=${url}`);
  });

  it('finds the value JSON-escaped', () => {
    expect(hidden(JSON.stringify({ k: SECRET }))).toBe('{"k":"[REDACTED]"}');
  });

  it('leaves ordinary text alone', () => {
    expect(scrub('nothing secret here: Sk-live 9f3a')).toBe('nothing secret here: Sk-live 9f3a');
  });
});

describe('scrubTextBlocks', () => {
  it('finds a value split across adjacent text blocks and redacts its part in each', () => {
    const blocks = [
      { type: 'text', text: `before ${SECRET.slice(0, 8)}` },
      { type: 'text', text: `${SECRET.slice(8)} after` },
      { type: 'image', data: 'x', mimeType: 'image/png' },
      { type: 'text', text: 'alone' },
    ];
    const out = scrubTextBlocks(blocks, scrub);
    expect(out).toEqual([
      { type: 'text', text: 'before [REDACTED]' },
      { type: 'text', text: '[REDACTED] after' },
      { type: 'image', data: 'x', mimeType: 'image/png' },
      { type: 'text', text: 'alone' },
    ]);
    expect(JSON.stringify(out)).not.toContain(SECRET.slice(0, 8));
  });

  it('splits over three blocks too, in a hex form', () => {
    const hex = bytes.toString('hex');
    const out = scrubTextBlocks(
      [
        { type: 'text', text: hex.slice(0, 10) },
        { type: 'text', text: hex.slice(10, 20) },
        { type: 'text', text: hex.slice(20) },
      ],
      scrub,
    );
    expect(out.map((b) => b.text)).toEqual(['[REDACTED]', '[REDACTED]', '[REDACTED]']);
  });
});
