/**
 * Trust on review (spec/gateway.md §2 "Pinning"): each upstream tool's
 * definition (name, title, description, input and output schemas,
 * annotations) has a digest; the owner's review is stored with the digest
 * it saw. A tool whose definition changed since, or that appeared after the
 * first review, is `unreviewed`: served as destructive, its ask showing what
 * changed (words added to the description), until the owner reviews it again
 * (`PUT …/effect`). With `trust: "annotations"` nothing is pinned.
 * Descriptions with invisible characters (zero-width, bidi controls, tag
 * characters) or hidden-instruction markers are flagged.
 */
import { createHash } from 'node:crypto';
import type { Tool } from './upstream/upstream.js';

export const REVIEWS = 'mcp.reviews';

/** What the owner reviewed of one tool. */
export interface Review {
  digest: string;
  /** The definition as reviewed, to show what changed. */
  definition: Definition;
  reviewedAt: number;
}

export interface Definition {
  name: string;
  title?: unknown;
  description?: unknown;
  inputSchema?: unknown;
  outputSchema?: unknown;
  annotations?: unknown;
}

export const definitionOf = (tool: Tool): Definition => ({
  name: tool.name,
  ...(tool.title !== undefined ? { title: tool.title } : {}),
  ...(tool.description !== undefined ? { description: tool.description } : {}),
  ...(tool.inputSchema !== undefined ? { inputSchema: tool.inputSchema } : {}),
  ...(tool.outputSchema !== undefined ? { outputSchema: tool.outputSchema } : {}),
  ...(tool.annotations !== undefined ? { annotations: tool.annotations } : {}),
});

/** JSON with keys sorted, so equal definitions digest equally. */
function canonical(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonical).join(',')}]`;
  if (value && typeof value === 'object')
    return `{${Object.keys(value)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${canonical((value as Record<string, unknown>)[k])}`)
      .join(',')}}`;
  return JSON.stringify(value ?? null);
}

export const digestOf = (tool: Tool): string =>
  createHash('sha256')
    .update(canonical(definitionOf(tool)))
    .digest('hex');

/** The digest as a card shows it ("definition 3fa2c81b09d4"). */
export const shortDigest = (digest: string): string => digest.slice(0, 12);

// Zero-width and joiners, bidi controls, word joiner…, BOM, tag characters.
const INVISIBLE =
  /[\u200B-\u200F\u202A-\u202E\u2060-\u2064\u2066-\u2069\uFEFF\u{E0000}-\u{E007F}]/u;
const HIDDEN_MARKERS =
  /<\s*\/?\s*(important|system|instructions?|secret|hidden)\b|ignore (all |any )?(previous|prior|above) instructions|do not (tell|mention|reveal)|\[\s*(system|inst)\s*\]/i;

/** What is suspicious in a tool's text (description, title, schema descriptions). */
export function flagsOf(tool: Tool): string[] {
  const all = JSON.stringify(definitionOf(tool));
  const flags: string[] = [];
  if (INVISIBLE.test(all)) flags.push('invisible characters');
  if (HIDDEN_MARKERS.test(all)) flags.push('hidden-instruction markers');
  return flags;
}

const wordsOf = (text: unknown) =>
  typeof text === 'string' ? text.split(/\s+/).filter(Boolean) : [];

/** What changed since the review: the fields that differ, and the description's added words. */
export function diffOf(before: Definition | null, after: Definition) {
  if (!before) return { new: true as const, definition: after };
  const fields = (Object.keys({ ...before, ...after }) as Array<keyof Definition>).filter(
    (k) => canonical(before[k]) !== canonical(after[k]),
  );
  const had = new Set(wordsOf(before.description));
  return {
    new: false as const,
    changed: fields,
    addedWords: wordsOf(after.description).filter((w) => !had.has(w)),
    before,
    after,
  };
}

export type ReviewState =
  { reviewed: true } | { reviewed: false; diff: ReturnType<typeof diffOf>; flags: string[] };

/** Whether `tool` is as its review saw it. */
export function reviewStateOf(tool: Tool, review: Review | undefined): ReviewState {
  if (review && review.digest === digestOf(tool)) return { reviewed: true };
  return {
    reviewed: false,
    diff: diffOf(review?.definition ?? null, definitionOf(tool)),
    flags: flagsOf(tool),
  };
}
