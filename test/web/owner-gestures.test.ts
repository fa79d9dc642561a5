/**
 * Every owner control of the web UI goes through the one helper that demands
 * the owner's own gesture (src/web/app/dom.ts `onOwner`): a screen that writes
 * to the server does so from an `onOwner` (or a `decider`, which uses it), and
 * no form is submitted any other way. The Chromium sweep that clicks each
 * control is test/web/owner-controls.test.ts; this keeps new screens honest.
 */
import { describe, expect, it } from 'vitest';
import { readdirSync, readFileSync } from 'node:fs';
import { sep } from 'node:path';

const dir = new URL('../../src/web/app/', import.meta.url);
const sources = [
  ...readdirSync(dir)
    .filter((f) => f.endsWith('.ts'))
    .map((f) => [f, readFileSync(new URL(f, dir), 'utf8')] as const),
  // Every screen, in its area's folder too (screens/policy/, screens/scenes/ …).
  ...readdirSync(new URL('screens/', dir), { recursive: true, encoding: 'utf8' })
    .filter((f) => f.endsWith('.ts'))
    .map((f) => f.split(sep).join('/'))
    .map((f) => [`screens/${f}`, readFileSync(new URL(`screens/${f}`, dir), 'utf8')] as const),
];
/**
 * Files that write to the server but are not controls: the API client, the
 * session, sign-in, and the end of an OAuth upstream's connect — the
 * authorization server's redirect back to this tab, whose one-time `state`
 * the server issued to the owner's own Connect (itself an owner gesture with
 * presence) and checks, so a page that sends the browser there with any
 * other answer is refused (test/doors/mcp/oauth-upstream.test.ts).
 */
const NOT_CONTROLS = new Set([
  'api.ts',
  'session.ts',
  'screens/sign-in.ts',
  'dom.ts',
  'upstream-callback.ts',
]);

describe("the owner's controls", () => {
  it('every screen that writes to the server does it from onOwner', () => {
    const writes =
      /\b(post|put|del)(<[^>]*>)?\(|request\('(PUT|POST|DELETE)'|signOut\(\)|localStorage\.setItem/;
    const bare = sources
      .filter(([f, s]) => !NOT_CONTROLS.has(f) && writes.test(s))
      // ruleForm (policy-forms.ts) and form() (form.ts, imported by some as withSubmit) submit through onOwner.
      .filter(([, s]) => !/\bonOwner\(|\bdecider\(|\bruleForm\(|\bform\(|\bwithSubmit\(/.test(s))
      .map(([f]) => f);
    expect(bare).toEqual([]);
  });

  it('no form is submitted except through onOwner', () => {
    const bare = sources
      // form.ts submits through onOwner, save for `anyone` (below).
      .filter(([f]) => !NOT_CONTROLS.has(f) && f !== 'form.ts')
      .filter(([, s]) => /addEventListener\('submit'/.test(s))
      .map(([f]) => f);
    expect(bare).toEqual([]);
  });

  it('only the sign-in form submits without the owner’s own gesture (form() with anyone)', () => {
    const anyone = sources.filter(([, s]) => /\banyone:\s*true\b/.test(s)).map(([f]) => f);
    expect(anyone).toEqual(['screens/sign-in.ts']);
  });
});
