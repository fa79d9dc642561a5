/**
 * A started kernel with the ledger door on a PostgreSQL store (one instance
 * of a deployment), for the PostgreSQL store tests; what stops it is pushed
 * onto the caller's `cleanup`.
 */
import { createKernel, type Kernel } from '../../src/kernel/kernel.js';
import { createEventBus } from '../../src/kernel/events/events.js';
import { silentLogger } from '../../src/kernel/logger.js';
import type { PostgresStore } from '../../src/store/postgres/index.js';
import { createPostgresBlobStore } from '../../src/store/blobs-postgres.js';
import { createLedgerDoor } from '../../src/doors/testing/ledger.js';

export async function ledgerKernel(
  store: PostgresStore,
  cleanup: Array<() => unknown>,
): Promise<Kernel> {
  const events = await createEventBus();
  const kernel = createKernel({
    store,
    blobs: createPostgresBlobStore(store.pool, store.schema),
    events,
    logger: silentLogger,
  });
  kernel.mount(createLedgerDoor());
  await kernel.start();
  cleanup.push(
    () => events.close(),
    () => kernel.close(),
  );
  return kernel;
}
