import { randomUUID } from 'node:crypto';
import type {
  Approval,
  Grant,
  Job,
  JournalEntry,
  NewAuditEntry,
} from '../../src/kernel/records.js';
import type { Store } from '../../src/kernel/store.js';

/** What every part of the store contract gets: the shared store and a way to open another. */
export interface ContractContext {
  store(): Store;
  open(): Promise<Store>;
}

/** A short unique name, so tests sharing one database never see each other's rows. */
export function uid(prefix: string): string {
  return `${prefix}-${randomUUID().slice(0, 8)}`;
}

const HOUR = 3_600_000;

export function journalEntry(overrides: Partial<JournalEntry> = {}): JournalEntry {
  const at = Date.now();
  return {
    scope: uid('scope'),
    operationId: uid('op'),
    digest: 'a'.repeat(64),
    state: 'prepared',
    tool: 'notes.write',
    connection: 'conn-1',
    target: null,
    receipt: null,
    provenance: { provider: 'test', model: 'm', promptVersion: '1' },
    createdAt: at,
    updatedAt: at,
    expiresAt: at + HOUR,
    ...overrides,
  };
}

export function grant(overrides: Partial<Grant> = {}): Grant {
  const at = Date.now();
  return {
    id: uid('grant'),
    connection: 'conn-1',
    door: 'notes',
    capability: 'write',
    resource: null,
    createdAt: at,
    expiresAt: at + HOUR,
    revokedAt: null,
    ...overrides,
  };
}

export function approval(overrides: Partial<Approval> = {}): Approval {
  return {
    id: uid('approval'),
    kind: 'consent',
    connection: 'conn-1',
    agent: null,
    door: 'notes',
    capability: 'write',
    tool: null,
    digest: null,
    target: null,
    rule: null,
    preview: null,
    scope: null,
    reason: null,
    usedAt: null,
    summary: 'Test client asks to write notes',
    status: 'pending',
    lifetimeMs: HOUR,
    createdAt: Date.now(),
    decidedAt: null,
    resource: null,
    grantId: null,
    ...overrides,
  };
}

export function auditEntry(overrides: Partial<NewAuditEntry> = {}): NewAuditEntry {
  return {
    at: Date.now(),
    connection: 'conn-1',
    door: 'notes',
    tool: 'notes.read',
    argsDigest: 'b'.repeat(64),
    provenance: null,
    result: 'ok',
    durationMs: 12.5,
    decision: null,
    rule: null,
    ...overrides,
  };
}

export function job(overrides: Partial<Job> = {}): Job {
  const at = Date.now();
  return {
    id: uid('job'),
    door: 'notes',
    kind: 'import',
    status: 'queued',
    progress: {
      step: null,
      currentUnit: 0,
      totalUnits: 10,
      currentStepIndex: 0,
      totalSteps: 1,
      overallPercent: 0,
    },
    warnings: [],
    error: null,
    input: { file: 'a.pdf' },
    agent: null,
    createdAt: at,
    updatedAt: at,
    ...overrides,
  };
}
