import { afterAll, beforeAll, describe } from 'vitest';
import type { Store } from '../../src/kernel/store.js';
import { accessContract } from './contract-access.js';
import { auditContract } from './contract-audit.js';
import { eventLogContract } from './contract-events.js';
import { jobsContract } from './contract-jobs.js';
import { journalContract } from './contract-journal.js';
import { recordsContract } from './contract-records.js';
import { transactionsContract } from './contract-transactions.js';
import type { ContractContext } from './fixtures.js';

/**
 * The one behaviour suite every Store implementation passes. `open` must
 * open the same database each time it is called (tests share it and use
 * unique names; one test closes and reopens); `cleanup` runs at the end.
 */
export function storeContract(
  name: string,
  open: () => Promise<Store>,
  cleanup?: () => Promise<void>,
): void {
  describe(`Store contract: ${name}`, () => {
    let current: Store | undefined;
    beforeAll(async () => {
      current = await open();
    });
    afterAll(async () => {
      await current?.close();
      await cleanup?.();
    });
    const ctx: ContractContext = {
      store() {
        if (!current) throw new Error('the store did not open');
        return current;
      },
      open,
    };
    recordsContract(ctx);
    journalContract(ctx);
    accessContract(ctx);
    auditContract(ctx);
    jobsContract(ctx);
    eventLogContract(ctx);
    transactionsContract(ctx);
  });
}
