/**
 * The door's scrubber with room for secrets learnt while it runs: an OAuth
 * upstream's tokens join its configured secrets as they are read or
 * refreshed, so a token an upstream echoes back is `[REDACTED]` too (the
 * second line of defence; tokens are never put in a result, log or audit
 * entry to begin with). The most recent `LEARNT_MAX` learnt values are kept.
 */
import { createScrubber, type Scrubber } from '../../../kernel/index.js';

export const LEARNT_MAX = 32;

export interface GrowingScrubber extends Scrubber {
  /** Adds values to scrub from now on. */
  add(values: readonly string[]): void;
}

export function growingScrubber(configured: readonly string[]): GrowingScrubber {
  const learnt: string[] = [];
  let inner = createScrubber([...configured]);
  const scrub = ((text: string) => inner(text)) as GrowingScrubber;
  scrub.spans = (text) => inner.spans(text);
  scrub.add = (values) => {
    const fresh = values.filter((v) => !learnt.includes(v) && !configured.includes(v));
    if (!fresh.length) return;
    learnt.push(...fresh);
    learnt.splice(0, Math.max(0, learnt.length - LEARNT_MAX));
    inner = createScrubber([...configured, ...learnt]);
  };
  return scrub;
}
