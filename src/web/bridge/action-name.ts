/**
 * One name for one capability (spec/page.md "The owner's policy"): action
 * names are compared after Unicode NFKC, full case folding, and dropping
 * format and control characters (zero-width spaces, bidi marks) and outer
 * whitespace, so `Submit_Order`, `submit_order ` and `submit_order\u200b`
 * are all `submit_order`. A name mixing Latin with a script whose letters
 * look like Latin ones (Cyrillic `ѕ`, Greek `ο`) is refused at registration.
 *
 * This file imports nothing, so the browser can load it as it is. Its home
 * is src/doors/page/action-name.ts; src/web/bridge/action-name.ts is a
 * byte-for-byte copy (the bridge is served as sibling modules only).
 * test/doors/page/action-name.test.ts fails when the two differ.
 */

/** The name as the policy and the bridge compare it. */
export function foldName(name: string): string {
  return (
    name
      .normalize('NFKC')
      .replace(/[\p{Cf}\p{Cc}]/gu, '')
      // Full case folding (`ß` → `ss`), then NFKC again for what folding composed.
      .toUpperCase()
      .toLowerCase()
      .normalize('NFKC')
      .trim()
  );
}

const LOOK_ALIKE_SCRIPTS = [/\p{Script=Cyrillic}/u, /\p{Script=Greek}/u, /\p{Script=Armenian}/u];

/** Whether a name mixes Latin letters with letters of a script that has Latin look-alikes. */
export function mixesScripts(name: string): boolean {
  const folded = foldName(name);
  return /\p{Script=Latin}/u.test(folded) && LOOK_ALIKE_SCRIPTS.some((s) => s.test(folded));
}
