/**
 * The JSON nesting cap (authority.md §4: decoded sizes are capped, JSON
 * nesting ≤ 64 levels). Serialising, digesting or validating a value walks it
 * recursively, so a value nested thousands of levels deep would overflow the
 * stack; both checks here walk with an explicit stack and stop at the cap.
 *
 * A level is one object or array: `{}` and `[]` are 1 level, `{"a": [1]}` is 2,
 * a string or number is 0.
 */
import { failure, type Failure } from '../errors.js';

export const MAX_JSON_DEPTH = 64;

/** True when `value` nests objects and arrays deeper than `max` levels (a cycle counts as too deep). */
export function nestsDeeperThan(value: unknown, max: number = MAX_JSON_DEPTH): boolean {
  const stack: [unknown, number][] = [[value, 0]];
  for (let top = stack.pop(); top; top = stack.pop()) {
    const [node, depth] = top;
    if (node === null || typeof node !== 'object' || ArrayBuffer.isView(node)) continue;
    if (depth + 1 > max) return true;
    const children = Array.isArray(node) ? node : Object.values(node);
    for (const child of children) {
      if (child !== null && typeof child === 'object') stack.push([child, depth + 1]);
    }
  }
  return false;
}

const OPEN_BRACE = 0x7b;
const OPEN_BRACKET = 0x5b;
const CLOSE_BRACE = 0x7d;
const CLOSE_BRACKET = 0x5d;
const QUOTE = 0x22;
const BACKSLASH = 0x5c;

/**
 * True when JSON text nests deeper than `max` levels, found by one scan of the
 * text before it is parsed. Brackets inside strings do not count; the text
 * need not be valid JSON (the parser judges that afterwards).
 */
export function textNestsDeeperThan(text: string, max: number = MAX_JSON_DEPTH): boolean {
  let depth = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === BACKSLASH) i++;
      else if (c === QUOTE) inString = false;
    } else if (c === QUOTE) inString = true;
    else if (c === OPEN_BRACE || c === OPEN_BRACKET) {
      if (++depth > max) return true;
    } else if (c === CLOSE_BRACE || c === CLOSE_BRACKET) depth--;
  }
  return false;
}

/** The one answer to tool arguments nested past the cap: which limit, and what to do. */
export function tooDeeplyNested(): Failure {
  return failure(
    'malformedRequest',
    `Invalid arguments: the arguments nest deeper than ${MAX_JSON_DEPTH} levels of objects and arrays; flatten the data (at most ${MAX_JSON_DEPTH} levels) and call again.`,
    { maxDepth: MAX_JSON_DEPTH },
  );
}

/** `tooDeeplyNested()` when `value` nests past the cap, otherwise null. */
export function checkNesting(value: unknown): Failure | null {
  return nestsDeeperThan(value) ? tooDeeplyNested() : null;
}
