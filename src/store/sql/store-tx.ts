import type { StoreTx } from '../../kernel/store.js';
import { createApprovalRepo } from './approval-repo.js';
import { createAuditRepo } from './audit-repo.js';
import { createEventLogRepo } from './event-log-repo.js';
import { createGrantRepo } from './grant-repo.js';
import { createJobRepo } from './job-repo.js';
import { createJournalRepo } from './journal-repo.js';
import { createRecordRepo } from './record-repo.js';
import type { SqlClient } from './sql-client.js';

/** The repositories of one transaction, all on the same connection. */
export function createStoreTx(client: SqlClient): StoreTx {
  return {
    records: createRecordRepo(client),
    journal: createJournalRepo(client),
    grants: createGrantRepo(client),
    approvals: createApprovalRepo(client),
    audit: createAuditRepo(client),
    jobs: createJobRepo(client),
    events: createEventLogRepo(client),
  };
}
