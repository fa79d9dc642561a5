/**
 * Audit order across instances without a lock held across the transaction
 * (issue 31): three stores on one schema (three instances) append audit
 * entries in concurrent keyed writes while a reader polls the listing with
 * `afterId`, as the web UI and `audit export` do. The reader sees every
 * committed entry exactly once and in id order, and the chain verifies.
 */
import { afterAll, expect, it } from 'vitest';
import { GENESIS, walkChain } from '../../src/kernel/audit/audit-chain.js';
import type { AuditEntry } from '../../src/kernel/records.js';
import { createPostgresStore, type PostgresStore } from '../../src/store/postgres/index.js';
import { describeWithPostgres, dropSchema, PG_URL, uniqueSchema } from '../services/postgres.js';

const schema = uniqueSchema('auditorder');
const stores: PostgresStore[] = [];
afterAll(async () => {
  for (const s of stores) await s.close().catch(() => undefined);
  await dropSchema(schema).catch(() => undefined);
});

const entry = (door: string, tool: string) => ({
  at: Date.now(),
  connection: 'c',
  door,
  tool,
  argsDigest: 'd',
  provenance: null,
  result: 'ok',
  durationMs: 1,
  decision: null,
  rule: null,
});

await describeWithPostgres('PostgreSQL audit order across instances (issue 31)', () => {
  it('three instances writing at once: a reader polling afterId misses none, sees none twice, and the chain verifies', async () => {
    for (let i = 0; i < 3; i++) stores.push(await createPostgresStore({ url: PG_URL, schema }));
    const perInstance = 120;
    let writing = true;
    const seen: AuditEntry[] = [];
    const poller = (async () => {
      let after = 0;
      for (;;) {
        const done = !writing;
        const page = await stores[0]!.read((tx) => tx.audit.list({ afterId: after, limit: 500 }));
        for (const e of page) seen.push(e);
        if (page.length > 0) after = page[page.length - 1]!.id;
        if (done && page.length === 0) return;
      }
    })();
    const acknowledged: AuditEntry[] = [];
    const failures: unknown[] = [];
    await Promise.all(
      stores.map((store, s) =>
        Promise.all(
          Array.from({ length: perInstance }, async (_, i) => {
            try {
              const appended = await store.transaction(
                async (tx) => {
                  await tx.records.put('order', `s${s}-${i}`, { i });
                  // Some writes fail after appending: their entries must not appear.
                  const placed = await tx.audit.append(entry(`s${s}`, `t${i}`));
                  if (i % 17 === 3) throw new Error('changed its mind');
                  return placed;
                },
                { isolation: 'keyed' },
              );
              acknowledged.push(appended);
            } catch (error) {
              failures.push(error);
            }
          }),
        ),
      ),
    );
    writing = false;
    await poller;
    const failed =
      3 * Array.from({ length: perInstance }, (_, i) => i).filter((i) => i % 17 === 3).length;
    expect(failures).toHaveLength(failed);
    expect(acknowledged).toHaveLength(3 * perInstance - failed);
    // Every acknowledged entry was given its final id and hash before it was answered.
    expect(acknowledged.every((e) => e.id > 0 && e.hash !== null)).toBe(true);
    // The poller saw each committed entry once, in increasing id order.
    const ids = seen.map((e) => e.id);
    expect(new Set(ids).size).toBe(ids.length);
    expect([...ids].sort((a, b) => a - b)).toEqual(ids);
    expect(new Set(ids)).toEqual(new Set(acknowledged.map((e) => e.id)));
    expect(seen.some((e) => e.tool === 't3')).toBe(false);
    const byId = new Map(seen.map((e) => [e.id, e]));
    for (const a of acknowledged) expect(byId.get(a.id)).toEqual(a);
    const walk = walkChain(GENESIS);
    walk.next(seen);
    expect(walk.result()).toMatchObject({ ok: true, count: acknowledged.length });
  }, 60_000);
});
