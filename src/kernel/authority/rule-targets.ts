/**
 * Rules that say what they match (issue 24): each door declares the forms of
 * the target strings its calls carry (`Door.targetForms`, authority.md §3),
 * e.g. `fs:<tool>` for an mcp upstream, `<prefix>:<resource>.<method>` for
 * openapi, op kinds and `pipeline:<step>` for the scene. A rule whose target
 * glob cannot match any form of any mounted door it names is refused with
 * those forms (or kept, when the owner insists, with a warning): it would
 * never decide anything, and the owner believes it does.
 *
 * A form is literal text with `<placeholders>`, each standing for any text.
 */
import { failure, type Failure } from '../errors.js';
import { closestWord } from '../calls/closest.js';
import { globMatches } from './policy.js';
import type { PolicyRule } from './policy.js';

/** A mounted door as the check sees it. */
export interface DoorTargets {
  name: string;
  mount: string;
  /** The forms of its targets; empty when its calls carry none. */
  targetForms: readonly string[];
  tools: readonly string[];
}

/** `fs:<tool>` → `fs:*`: a form as a glob. */
export const formGlob = (form: string): string => form.replace(/<[^<>]*>/g, '*');

/**
 * Whether two globs (`*` any run, `?` one character) match a common string:
 * reachability in the product of their automata, memoised over positions.
 *
 * @example globsOverlap('fs:*', 'fs:write_*') // true
 * @example globsOverlap('fs:*', 'write_file') // false
 */
export function globsOverlap(a: string, b: string): boolean {
  const seen = new Set<number>();
  const width = b.length + 1;
  const step = (i: number, j: number): boolean => {
    if (i === a.length && j === b.length) return true;
    const key = i * width + j;
    if (seen.has(key)) return false;
    seen.add(key);
    const x = a[i];
    const y = b[j];
    // A star may stand for nothing, or for the next character the other side makes.
    if (x === '*' && (step(i + 1, j) || (y !== undefined && step(i, j + 1)))) return true;
    if (y === '*' && (step(i, j + 1) || (x !== undefined && step(i + 1, j)))) return true;
    if (x === undefined || y === undefined || x === '*' || y === '*') return false;
    return (x === y || x === '?' || y === '?') && step(i + 1, j + 1);
  };
  return step(0, 0);
}

/** The mounted doors a rule's `door` field names (by name or mount). */
const doorsOf = (door: string, doors: readonly DoorTargets[]) =>
  doors.filter((d) => globMatches(door, d.name) || globMatches(door, d.mount));

/** A call without targets is matched as the empty target, so a target of only `*` fits any door. */
const fits = (target: string, door: DoorTargets) =>
  globsOverlap(target, '') || door.targetForms.some((f) => globsOverlap(target, formGlob(f)));

const list = (items: readonly string[]) => items.map((i) => `\`${i}\``).join(', ');

const doorWords = (d: DoorTargets) => (d.mount === d.name ? d.name : `${d.mount} (${d.name})`);

/**
 * Why a rule can never match on these doors, with what would; null when it
 * can — or when it names no door mounted here (no `door`, or one another
 * instance or a later start mounts): such a rule may be meant for those.
 */
export function unmatchableRule(rule: PolicyRule, doors: readonly DoorTargets[]): string | null {
  if (!rule.door) return null;
  const named = doorsOf(rule.door, doors);
  if (named.length === 0) return null;
  if (rule.tool) {
    const withTools = named.filter((d) => d.tools.length > 0);
    if (
      withTools.length > 0 &&
      !withTools.some((d) => d.tools.some((t) => globMatches(rule.tool!, t)))
    ) {
      const tools = withTools.flatMap((d) => d.tools);
      const guess = closestWord(rule.tool, tools);
      return `No tool of ${withTools.map(doorWords).join(', ')} is named like \`${rule.tool}\`${guess ? `; did you mean \`${guess}\`?` : `; its tools are ${list(tools.slice(0, 20))}${tools.length > 20 ? ', …' : ''}`}`;
    }
  }
  if (rule.target === undefined || named.some((d) => fits(rule.target!, d))) return null;
  const forms = named.map((d) =>
    d.targetForms.length
      ? `${doorWords(d)}: ${list(d.targetForms)}`
      : `${doorWords(d)}: no targets (leave \`target\` out)`,
  );
  const prefixed = named
    .filter((d) => fits(`${d.mount}:${rule.target}`, d))
    .map((d) => `${d.mount}:${rule.target}`);
  return `Target \`${rule.target}\` cannot match any call of ${named.map(doorWords).join(', ')}; the targets there look like ${forms.join('; ')}${prefixed[0] ? `. Did you mean target \`${prefixed[0]}\`?` : ''}`;
}

/**
 * The one check every way of adding or changing a rule passes (CLI, REST, web
 * UI): a refusal naming the door's target forms, or, with `force`, a warning
 * to show beside the rule that was kept.
 */
export function checkRule(
  rule: PolicyRule,
  doors: readonly DoorTargets[],
  force = false,
): { warning: string | null } | Failure {
  const why = unmatchableRule(rule, doors);
  if (why === null) return { warning: null };
  if (force) return { warning: `${why}. Kept as asked (force); it never matches as written.` };
  return failure(
    'malformedRequest',
    `${why}. Fix the rule, or add it with force (--force) to keep it anyway.`,
    { field: 'target' },
  );
}

/**
 * The CLI's `DOOR[:TARGET]` shorthand, read as a person means it: `page:*:submit`
 * is door `page`, target `*:submit`; but where the door's own targets begin
 * with its mount (an mcp upstream `fs:<tool>`, an openapi prefix
 * `plane:<resource>.<method>`), `fs:write_file` is door `mcp`, target
 * `fs:write_file` — the reading that can match.
 */
export function readShorthand(
  where: string,
  doors: readonly DoorTargets[],
): { door: string; target?: string } {
  const colon = where.indexOf(':');
  if (colon < 0) return { door: where };
  const door = where.slice(0, colon);
  const rest = where.slice(colon + 1);
  const mounts = doors.filter((d) => d.mount === door || d.name === door);
  const plain = { door, target: rest };
  if (mounts.some((d) => fits(rest, d))) return plain;
  const whole = mounts.find((d) => d.mount === door && fits(where, d));
  return whole ? { door: whole.name, target: where } : plain;
}
