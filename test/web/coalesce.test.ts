import { describe, expect, it } from 'vitest';
import { coalesced } from '../../src/web/app/coalesce.js';

/** A reload whose response arrives late must not be the one a screen shows last. */
describe('coalesced reloads', () => {
  it('run one at a time, and a request made during a run gets a fresh run after it', async () => {
    let state = 0;
    let shown = -1;
    let running = 0;
    let maxRunning = 0;
    const gates: (() => void)[] = [];
    const load = coalesced(async () => {
      running++;
      maxRunning = Math.max(maxRunning, running);
      const seen = state; // the request reads the state as it is when it starts
      await new Promise<void>((r) => gates.push(r));
      shown = seen;
      running--;
    });
    const first = load();
    state = 1; // a change lands while the first reload is in flight
    const second = load();
    const third = load(); // collapses into the same follow-up run
    gates.shift()!();
    await new Promise((r) => setTimeout(r, 0));
    expect(shown).toBe(0);
    gates.shift()!();
    await Promise.all([first, second, third]);
    expect(shown).toBe(1);
    expect(maxRunning).toBe(1);
    expect(gates).toHaveLength(0);
  });

  it('keeps working after a run throws', async () => {
    let calls = 0;
    const load = coalesced(async () => {
      calls++;
      if (calls === 1) throw new Error('boom');
    });
    await expect(load()).rejects.toThrow('boom');
    await load();
    expect(calls).toBe(2);
  });
});
