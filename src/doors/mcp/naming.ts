/**
 * Published names of upstream tools and prompts (spec/gateway.md
 * "Behaviour"): `NAME<sep><tool>`, kept to MCP's name rules (at most 64 of
 * `A-Z a-z 0-9 _ . -`). A character outside them becomes `_`; a name too
 * long is cut and ends in 8 hex digits of its full name's SHA-256, so two
 * long names stay apart. A name still taken gets `_2`, `_3`, … in the order
 * the upstreams and their tools are listed, so the outcome is deterministic.
 */
import { createHash } from 'node:crypto';

export const MAX_NAME = 64;

/** The published form of `prefix + sep + name`, before collisions are resolved. */
export function publishedName(prefix: string, separator: string, name: string): string {
  const full = `${prefix}${separator}${name}`;
  const clean = full.replace(/[^A-Za-z0-9_.-]/g, '_');
  if (clean.length <= MAX_NAME && clean === full) return clean;
  if (clean.length <= MAX_NAME) return clean;
  const hash = createHash('sha256').update(full).digest('hex').slice(0, 8);
  return `${clean.slice(0, MAX_NAME - 9)}_${hash}`;
}

/** Makes `wanted` unique among `taken` (adds it), suffixing `_2`, `_3`, … within 64 characters. */
export function claimName(wanted: string, taken: Set<string>): string {
  let name = wanted;
  for (let n = 2; taken.has(name); n++) {
    const suffix = `_${n}`;
    name = `${wanted.slice(0, MAX_NAME - suffix.length)}${suffix}`;
  }
  taken.add(name);
  return name;
}
