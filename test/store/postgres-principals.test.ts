/**
 * Several instances on one PostgreSQL store, each with a bus of its own (no
 * Redis), as a deployment whose bus is down or whose changes come from the
 * CLI, which publishes on no bus: a policy rate is one count for the whole
 * deployment (authority.md §3), and a revoke, a new agent or an owner
 * rotation holds on every instance from its next call (authority.md §1).
 */
import { afterAll, expect, it } from 'vitest';
import { createKernel, type Kernel } from '../../src/kernel/kernel.js';
import { createEventBus } from '../../src/kernel/events/events.js';
import { silentLogger } from '../../src/kernel/logger.js';
import { connection } from '../../src/kernel/connection.js';
import {
  createPrincipals,
  newToken,
  type Principals,
} from '../../src/kernel/authority/principals.js';
import { createPostgresStore, type PostgresStore } from '../../src/store/postgres/index.js';
import { createPostgresBlobStore } from '../../src/store/blobs-postgres.js';
import { createLedgerDoor } from '../../src/doors/testing/ledger.js';
import type { PolicyConfig } from '../../src/kernel/authority/policy.js';
import { describeWithPostgres, dropSchema, PG_URL, uniqueSchema } from '../services/postgres.js';

const cleanup: Array<() => Promise<unknown>> = [];
afterAll(async () => {
  for (const step of cleanup.reverse()) await step().catch(() => undefined);
});

/** A deployment's store: a fresh schema, dropped after the file. */
async function sharedStore(): Promise<PostgresStore> {
  const schema = uniqueSchema('principals');
  const store = await createPostgresStore({ url: PG_URL, schema });
  cleanup.push(
    () => dropSchema(schema),
    () => store.close(),
  );
  return store;
}

/** One instance: its own store connection and its own in-memory bus. */
async function instance(schema: string, policy?: PolicyConfig): Promise<Kernel> {
  const store = await createPostgresStore({ url: PG_URL, schema });
  const events = await createEventBus();
  const kernel = createKernel({
    store,
    blobs: createPostgresBlobStore(store.pool, store.schema),
    events,
    logger: silentLogger,
    ...(policy ? { policy } : {}),
  });
  kernel.mount(createLedgerDoor());
  await kernel.start();
  cleanup.push(
    () => store.close(),
    () => events.close(),
    () => kernel.close(),
  );
  return kernel;
}

/** What `airlock agents …` / `airlock owner rotate` use: the store, and a bus nobody hears. */
async function cliPrincipals(schema: string): Promise<Principals> {
  const store = await createPostgresStore({ url: PG_URL, schema });
  const events = await createEventBus();
  cleanup.push(
    () => store.close(),
    () => events.close(),
  );
  return createPrincipals({ store, events });
}

const alice = connection('agent:alice', 'http-principal', undefined, 'alice');

await describeWithPostgres('principals and rates across instances on PostgreSQL', () => {
  it('a 3/minute rule on three instances lets 3 calls through in all, then busy with retryAfterMs', async () => {
    const { schema } = await sharedStore();
    const policy: PolicyConfig = {
      rules: [{ tool: 'ledger_echo', decision: 'allow', rate: '3/minute' }],
    };
    const kernels = [
      await instance(schema, policy),
      await instance(schema, policy),
      await instance(schema, policy),
    ];
    const echo = (k: Kernel) =>
      k.call('ledger', 'ledger_echo', { text: 'hi' }, { connection: alice });
    // Sequentially, round robin: three pass, the fourth (on any instance) is refused.
    const sequential = [];
    for (let i = 0; i < 6; i++) sequential.push(await echo(kernels[i % 3]!));
    expect(sequential.map((o) => (o.ok ? 'ok' : o.code))).toEqual([
      'ok',
      'ok',
      'ok',
      'busy',
      'busy',
      'busy',
    ]);
    const refused = sequential[3]!;
    expect(refused.ok ? null : refused.data).toMatchObject({ rule: 'config-1' });
    const wait = refused.ok ? 0 : Number(refused.data?.retryAfterMs);
    expect(wait).toBeGreaterThan(50_000);
    expect(wait).toBeLessThanOrEqual(60_000);
  });

  it('a burst of 12 calls over three instances lets exactly 3 through', async () => {
    const { schema } = await sharedStore();
    const policy: PolicyConfig = {
      rules: [{ tool: 'ledger_echo', decision: 'allow', rate: '3/minute' }],
    };
    const kernels = [
      await instance(schema, policy),
      await instance(schema, policy),
      await instance(schema, policy),
    ];
    const outcomes = await Promise.all(
      Array.from({ length: 12 }, (_, i) =>
        kernels[i % 3]!.call('ledger', 'ledger_echo', { text: 'hi' }, { connection: alice }),
      ),
    );
    expect(outcomes.filter((o) => o.ok)).toHaveLength(3);
    expect(outcomes.filter((o) => !o.ok).map((o) => (o.ok ? '' : o.code))).toEqual(
      Array(9).fill('busy'),
    );
  });

  it('an agent the CLI revokes is refused on every instance at its next call, without a bus', async () => {
    const { schema } = await sharedStore();
    const kernels = [await instance(schema), await instance(schema), await instance(schema)];
    const cli = await cliPrincipals(schema);
    const made = await cli.addAgent('carol');
    if ('ok' in made) throw new Error(made.message);
    // Every instance knows carol (and has her in its cache).
    for (const k of kernels)
      expect(await k.principals.authenticate(made.token)).toMatchObject({ agent: 'carol' });
    expect(await cli.revokeAgent('carol')).toMatchObject({ name: 'carol' });
    for (const k of kernels) expect(await k.principals.authenticate(made.token)).toBeNull();
  });

  it('an agent the CLI adds is accepted on every instance at its next call', async () => {
    const { schema } = await sharedStore();
    const kernels = [await instance(schema), await instance(schema), await instance(schema)];
    const cli = await cliPrincipals(schema);
    // The instances have read the agents (none yet) just before.
    for (const k of kernels) expect(await k.principals.authenticate(newToken())).toBeNull();
    const made = await cli.addAgent('dave');
    if ('ok' in made) throw new Error(made.message);
    for (const k of kernels)
      expect(await k.principals.authenticate(made.token)).toMatchObject({ agent: 'dave' });
  });

  it('after owner rotate by the CLI the old owner token fails on every instance at its next call', async () => {
    const { schema } = await sharedStore();
    const kernels = [await instance(schema), await instance(schema), await instance(schema)];
    const cli = await cliPrincipals(schema);
    const old = newToken('ok_');
    await cli.setOwnerToken(old);
    for (const k of kernels)
      expect(await k.principals.authenticate(old)).toEqual({ kind: 'owner' });
    const rotated = newToken('ok_');
    await cli.setOwnerToken(rotated);
    for (const k of kernels) {
      expect(await k.principals.authenticate(old)).toBeNull();
      expect(await k.principals.authenticate(rotated)).toEqual({ kind: 'owner' });
    }
  });
});
