/**
 * Test-only door `ledger`: the smallest door that exercises every kernel
 * stage — a trivial read (`ledger_echo`, used by the benchmark), journaled
 * versioned appends, consent for writes, a job, and the journal state
 * query. Enabled only with AIRLOCK_ENABLE_TEST_DOORS=1; it is how the kernel
 * is tested end to end before any real door exists.
 */
import { z } from 'zod';
import {
  AirlockError,
  defineTool,
  failure,
  journalKey,
  operationOf,
  utf8String,
  uuidString,
  type AnyToolDef,
  type JournalEntry,
  type Kernel,
  type Resolution,
} from '../../kernel/index.js';
import type { ServedDoor } from '../../transport/surface.js';

const COLLECTION = 'ledger';

interface Account {
  version: number;
  entries: { operationID: string; amount: number }[];
}

const echo = defineTool({
  name: 'ledger_echo',
  description: 'Echo the text back (a trivial read-only tool).',
  input: z.object({ text: z.string().max(1000) }).strict(),
  output: z.object({ text: z.string() }),
  effect: 'read',
  // What a narrowed 15-minute approval covers (issue 27), read only when the policy asks.
  policy: { subject: ({ text }) => `text ${text}` },
  handler: async ({ text }) => ({ text }),
});

const requestWrite = defineTool({
  name: 'ledger_request_write_access',
  description: 'Ask the owner for write access to the ledger.',
  input: z.object({}).strict(),
  effect: 'read',
  handler: async (_input, ctx) => {
    const grant = await ctx.requestConsent({
      capability: 'write',
      summary: 'ledger: write access',
    });
    return 'ok' in grant ? grant : { grantID: grant.id, expiresAt: grant.expiresAt };
  },
});

const append = defineTool({
  name: 'ledger_append',
  description:
    'Append an amount to an account, idempotently (operationID) and version-checked (expectedVersion).',
  input: z
    .object({
      operationID: uuidString(),
      account: utf8String(1, 64),
      amount: z.number().int(),
      expectedVersion: z.number().int().min(0).nullable(),
      delayMs: z.number().int().min(0).max(60_000).optional(),
    })
    .strict(),
  effect: 'write',
  // Published without hints, as this door always has (MCP's defaults then read as destructive).
  statedHints: [],
  consent: { capability: 'write' },
  writes: true,
  journal: {
    operationId: (i) => i.operationID,
    target: (i) => i.account,
    provenance: () => ({ provider: 'test', model: 'ledger', promptVersion: '1' }),
    // The account record is all it writes, inside ctx.write.
    atomic: true,
  },
  handler: async (input, ctx) => {
    if (input.delayMs) await new Promise((r) => setTimeout(r, input.delayMs));
    return ctx.write(async (tx) => {
      const current = (await tx.records.get<Account>(COLLECTION, input.account))?.value ?? {
        version: 0,
        entries: [],
      };
      if (input.expectedVersion !== null && input.expectedVersion !== current.version) {
        throw new AirlockError(
          'versionConflict',
          `Account ${input.account} is at version ${current.version}; read it and retry with expectedVersion ${current.version}.`,
          {
            currentVersion: current.version,
          },
        );
      }
      const next: Account = {
        version: current.version + 1,
        entries: [...current.entries, { operationID: input.operationID, amount: input.amount }],
      };
      await tx.records.put(COLLECTION, input.account, next);
      return {
        operationID: input.operationID,
        account: input.account,
        committedVersion: next.version,
      };
    });
  },
});

const read = defineTool({
  name: 'ledger_read',
  description: 'Read an account.',
  input: z.object({ account: utf8String(1, 64) }).strict(),
  effect: 'read',
  handler: async ({ account }, ctx) => {
    const rec = await ctx.store.read((tx) => tx.records.get<Account>(COLLECTION, account));
    return rec
      ? { account, ...rec.value }
      : failure('notFound', `No account ${account}; append to create it.`);
  },
});

const count = defineTool({
  name: 'ledger_count',
  description: 'Start a job that counts to `to`, one unit per 10 ms, reporting progress.',
  input: z.object({ to: z.number().int().min(1).max(10_000) }).strict(),
  // Starting a job writes its record; published without hints, as before.
  effect: 'write',
  statedHints: [],
  handler: async ({ to }, ctx) => {
    const jobId = await ctx.jobs.start({
      door: 'ledger',
      kind: 'count',
      input: { to },
      run: async (job) => {
        for (let i = 1; i <= to; i++) {
          if (job.signal.aborted) throw new Error('cancelled');
          await new Promise((r) => setTimeout(r, 10));
          job.progress({
            step: 'count',
            currentUnit: i,
            totalUnits: to,
            currentStepIndex: 0,
            totalSteps: 1,
          });
        }
        return 'completed';
      },
    });
    return { jobId };
  },
});

/** Test seams of the ledger door. */
export interface LedgerOptions {
  /** Called as an append with `delayMs` starts its delay: a test knows the call is in flight. */
  onDelay?: (operationID: string) => void;
}

/** `ledger_append`, telling `onDelay` when a delayed append starts. */
function watchedAppend(onDelay: NonNullable<LedgerOptions['onDelay']>): typeof append {
  return {
    ...append,
    handler: (input, ctx) => {
      if (input.delayMs) onDelay(input.operationID);
      return append.handler(input, ctx);
    },
  };
}

export function createLedgerDoor(options: LedgerOptions = {}): ServedDoor {
  let kernel: Kernel | undefined;

  const query = defineTool({
    name: 'ledger_query_operation',
    description:
      'The state of an operation: committed (with receipt), prepared-not-submitted, submission-uncertain-do-not-use-new-id or not-found.',
    input: z.object({ operationID: uuidString() }).strict(),
    effect: 'read',
    handler: async ({ operationID }, ctx) =>
      kernel!.journal.state('ledger', journalKey(ctx.connection, operationID)),
  });

  return {
    name: 'ledger',
    tools: [
      echo,
      requestWrite,
      options.onDelay ? watchedAppend(options.onDelay) : append,
      read,
      query,
      count,
    ] as AnyToolDef[],
    // ledger_append's consent: the capability and the grant's resource.
    targetForms: ['write:<resource>'],
    // ledger_count starts a job: as an MCP task it follows that job.
    mcp: {
      tasks: {
        ledger_count: {
          support: 'optional',
          jobOf: (value) => {
            const id = (value as { jobId?: unknown } | null)?.jobId;
            return typeof id === 'string' ? id : null;
          },
        },
      },
    },
    async start(k) {
      kernel = k;
    },
    async resolveOperation(entry: JournalEntry): Promise<Resolution> {
      // The write commits with its journal entry, so this only finds writes whose entry was lost;
      // each entry is one version, so its position gives the committed version.
      const rec = await kernel!.store.read((tx) =>
        tx.records.get<Account>(COLLECTION, entry.target ?? ''),
      );
      const operationID = operationOf(entry.operationId);
      const found = rec?.value.entries.findIndex((e) => e.operationID === operationID) ?? -1;
      if (found < 0) return { exists: false };
      return {
        exists: true,
        receipt: {
          operationID,
          account: entry.target,
          committedVersion: found + 1,
        },
      };
    },
  };
}
