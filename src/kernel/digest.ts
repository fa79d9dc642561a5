/**
 * Canonical JSON (sorted keys, no whitespace) and SHA-256 digests of it, used
 * for journal request digests, audit argument digests and receipts.
 */
import * as crypto from 'node:crypto';

export function canonicalJson(value: unknown): string {
  // Written in one walk, without the sorted copy `JSON.stringify(sortKeys(value))`
  // builds (issue 31: every journaled call digests its input and its audit
  // entry); the same text for every value (test/kernel/digest.test.ts).
  if (value === null || typeof value !== 'object') return JSON.stringify(value);
  const out: string[] = [];
  writeCanonical(value, out);
  return out.join('');
}

/** Appends the canonical JSON of a value JSON can hold inside an object or array. */
function writeCanonical(value: unknown, out: string[]): void {
  if (value === null || typeof value !== 'object') {
    // In an array, what JSON.stringify leaves out of an object (undefined, a function) is null.
    out.push(JSON.stringify(value) ?? 'null');
    return;
  }
  if (Array.isArray(value)) {
    out.push('[');
    for (let i = 0; i < value.length; i++) {
      if (i > 0) out.push(',');
      writeCanonical(value[i], out);
    }
    out.push(']');
    return;
  }
  out.push('{');
  let first = true;
  const record = value as Record<string, unknown>;
  for (const key of keysInOrder(record)) {
    const v = record[key];
    if (v === undefined || typeof v === 'function' || typeof v === 'symbol') continue;
    // An own `__proto__` key (JSON.parse makes one) was never in the text: the
    // sorted copy's assignment set a prototype (or ignored a primitive).
    if (key === '__proto__') continue;
    out.push(first ? '' : ',', JSON.stringify(key), ':');
    first = false;
    writeCanonical(v, out);
  }
  out.push('}');
}

const INDEX = /^(?:0|[1-9]\d*)$/;
const isIndex = (key: string) => INDEX.test(key) && Number(key) < 4294967295;

/**
 * The keys in the order the sorted copy's JSON.stringify writes them: an
 * object lists integer-like keys first, ascending, whatever order they were
 * added in, then the others as added (sorted).
 */
function keysInOrder(record: Record<string, unknown>): string[] {
  const keys = Object.keys(record).sort();
  if (!keys.some(isIndex)) return keys;
  const indexes = keys.filter(isIndex).sort((a, b) => Number(a) - Number(b));
  return [...indexes, ...keys.filter((k) => !isIndex(k))];
}

/**
 * `crypto.hash` (Node 20.12+, 21.7+): one-shot, without the Hash object
 * `createHash` builds — a quarter of its cost on this path's short inputs
 * (issue 31: four digests per journaled call). Older Node: createHash.
 */
const oneShot = (
  crypto as { hash?: (algorithm: string, data: string | Uint8Array, encoding: 'hex') => string }
).hash;

export function sha256Hex(data: string | Uint8Array): string {
  return oneShot
    ? oneShot('sha256', data, 'hex')
    : crypto.createHash('sha256').update(data).digest('hex');
}

export function digestOf(value: unknown): string {
  return sha256Hex(canonicalJson(value));
}

/**
 * The digest a call is known by: its journal entry's request digest and the
 * digest a policy ask is bound to (the tool and its validated input).
 */
export const callDigest = (tool: string, input: unknown): string => digestOf({ tool, input });

/** UTF-8 byte length of a string. */
export function utf8Bytes(text: string): number {
  return Buffer.byteLength(text, 'utf8');
}
