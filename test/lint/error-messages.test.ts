/**
 * Errors that teach (issue 17): every error message a door, the kernel or
 * the transport writes names the next step — an action to take, a tool or
 * route to call, or a field to fix. Read from the source: every
 * `new AirlockError(code, '…')`, `failure(code, '…')`, `doorFailure` and
 * `doorError` with a literal message, in every file under src/ (the test
 * doors aside). A message added without a next step fails here, naming it.
 */
import { describe, expect, it } from 'vitest';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

const SRC = fileURLToPath(new URL('../../src/', import.meta.url));
const SKIP = [join('doors', 'testing')];

function sources(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (SKIP.some((s) => relative(SRC, path).startsWith(s))) return [];
    if (statSync(path).isDirectory()) return sources(path);
    return path.endsWith('.ts') ? [path] : [];
  });
}

const CALL =
  /(?:new AirlockError|failure|doorFailure|doorError)\(\s*'(\w+)',\s*(['`"])((?:\\.|(?!\2)[\s\S])*)\2/g;

/** What counts as a next step: an action, a tool or route to call, or what to change. */
const NEXT_STEP = new RegExp(
  [
    String.raw`\b(call|use|pass|send|retry|ask|give|check|open|wait|choose|fix|set|start|narrow|list|read|add|remove|take|request|approve|run|try|create|close|follow|import|export|leave|keep|select|pick|reload|upload|lower|split|shorten|rename|sign in|install|configure|restart|see|enable|report|name|repeat|write|move|make|copy|delete|generate|append|paste|refresh|reconnect|free|stop)\b`,
    String.raw`\b(GET|POST|PUT|DELETE) \/`,
    String.raw`\blists? them\b`,
    String.raw`\$\{(names|rt\.tool|tool)\b`,
    String.raw`\bnothing (changed|was written)\b`,
    String.raw`\bdo not retry\b`,
    // What to change, said as the rule: "'x' must be …", "needs a header row …".
    String.raw`\bmust be\b`,
    String.raw`\bneeds an? \b`,
    // A sentence built elsewhere that carries the step (the token help, a path problem, a hint).
    String.raw`\$\{(NEEDS_TOKEN|problem|hint|near)\b`,
  ].join('|'),
  'i',
);

describe('error messages', () => {
  const found = sources(SRC).flatMap((file) =>
    [...readFileSync(file, 'utf8').matchAll(CALL)].map((m) => ({
      file: relative(SRC, file),
      code: m[1]!,
      message: m[3]!,
    })),
  );

  it('are found in the source (the scan works)', () => {
    expect(found.length).toBeGreaterThan(150);
    expect(found.some((f) => f.code === 'notFound')).toBe(true);
  });

  it('every one names the next step: an action, a tool or route, or the field to fix', () => {
    // A literal cut short by a nested template (`${x ? `…` : ''}`) cannot be judged here.
    const cut = (m: string) => (m.match(/\$\{/g) ?? []).length > (m.match(/\}/g) ?? []).length;
    const silent = found
      .filter((f) => !cut(f.message) && !NEXT_STEP.test(f.message))
      .map((f) => `${f.file} [${f.code}] ${f.message.slice(0, 120)}`);
    expect(silent).toEqual([]);
  });
});
