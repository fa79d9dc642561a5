import type { StoreTx } from '../../kernel/store.js';
import { createApprovalRepo } from './approval-repo.js';
import { createAuditRepo } from './audit-repo.js';
import { createEventLogRepo } from './event-log-repo.js';
import { createGrantRepo } from './grant-repo.js';
import { createJobRepo } from './job-repo.js';
import { createJournalRepo } from './journal-repo.js';
import { createRecordRepo } from './record-repo.js';
import type { SqlClient } from './sql-client.js';

/**
 * The repositories of one transaction, all on the same connection. Each is
 * built on first use: a call's reads and writes touch one or two of the
 * seven, and every transaction (two reads and a write per journaled call)
 * would otherwise allocate all of them (issue 31).
 */
export function createStoreTx(client: SqlClient): StoreTx {
  let records: StoreTx['records'] | undefined;
  let journal: StoreTx['journal'] | undefined;
  let grants: StoreTx['grants'] | undefined;
  let approvals: StoreTx['approvals'] | undefined;
  let audit: StoreTx['audit'] | undefined;
  let jobs: StoreTx['jobs'] | undefined;
  let events: StoreTx['events'] | undefined;
  return {
    get records() {
      return (records ??= createRecordRepo(client));
    },
    get journal() {
      return (journal ??= createJournalRepo(client));
    },
    get grants() {
      client.touchingGrants?.();
      return (grants ??= createGrantRepo(client));
    },
    get approvals() {
      return (approvals ??= createApprovalRepo(client));
    },
    get audit() {
      return (audit ??= createAuditRepo(client));
    },
    get jobs() {
      return (jobs ??= createJobRepo(client));
    },
    get events() {
      return (events ??= createEventLogRepo(client));
    },
  };
}
