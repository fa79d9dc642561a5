/**
 * Scene writes idempotent on retry (spec/kernel.md §6): `apply`, `undo` and
 * `redo` take an optional `operationID`. With one, the kernel journals the
 * call, and the change is made inside `ctx.write` with an operation tag (a
 * digest of the journal key and the request digest) that the project's
 * history logs, fsynced, with the change and remembers across compaction.
 *
 * The write is the history, not the store, so the journal's receipt and the
 * change commit in two steps: the history append, then the store
 * transaction. Each way that can break is resolved by the history's tag:
 * - a crash between them leaves the entry `prepared`; on the next start
 *   `resolveSceneOperation` looks the tag up in the project's log and answers
 *   the receipt `{epoch}` when the change is there, `{exists: false}` (the
 *   retry runs afresh) when it is not;
 * - a store failure after the append drops the entry; a retry then finds the
 *   tag in the history, which answers the first epoch instead of applying again;
 * - a timeout while writing leaves the entry uncertain until the write that
 *   goes on in the background commits it.
 * The append runs inside the store transaction so the kernel knows a write
 * has started (a timeout then answers mutationUncertain, never "nothing was
 * written"); a PostgreSQL serialization retry that re-runs it gets the
 * tagged epoch back instead of a second change.
 * Without an operationID the tools are unjournaled, exactly as before.
 */
import {
  callDigest,
  digestOf,
  journalKey,
  uuidString,
  type Connection,
  type JournalEntry,
  type JournalSpec,
  type Logger,
  type Resolution,
} from '../../../kernel/index.js';
import type { SceneSession } from '../session.js';

/** Same rules as the notes door's operationID: a UUID the client generates and reuses on retry. */
export const OperationID = uuidString().optional();

export const OPERATION_ID_HELP =
  'Optional operationID (a UUID you make): a retry with it answers the first result.';

/** The tag the history logs for a journaled change: one journal key with one request. */
export const operationTag = (operation: { id: string; digest: string }): string =>
  digestOf({ operation: operation.id, request: operation.digest });

/**
 * The tag a call with an operationID will be logged under, computed from
 * the call as the kernel journals it (null without an operationID); the
 * policy's dry run uses it to leave a retry of an applied op to the journal.
 */
export function callTag(
  tool: string,
  input: { operationID?: string | undefined },
  connection: Connection,
): string | null {
  if (input.operationID === undefined) return null;
  return operationTag({
    id: journalKey(connection, input.operationID),
    digest: callDigest(tool, input),
  });
}

/** Journaled when an operationID is given; the target is the project the change goes to. */
export const sceneJournal = (
  session: SceneSession,
): JournalSpec<{ operationID?: string | undefined }> => ({
  operationId: ({ operationID }) => operationID ?? null,
  target: () => session.current()?.dir ?? null,
});

/**
 * Decides an operation a crash or timeout left open (kernel `resolveOperation`):
 * committed with `{epoch}` when its tag is in the target project's history,
 * not written when it is not, unknown when that history cannot be read.
 */
export async function resolveSceneOperation(
  session: SceneSession,
  entry: JournalEntry,
  logger: Logger,
): Promise<Resolution> {
  // No project was open when the call began: it was refused before any change.
  if (entry.target === null) return { exists: false };
  try {
    const epoch = await session.operationEpoch(
      entry.target,
      operationTag({ id: entry.operationId, digest: entry.digest }),
    );
    return epoch === null ? { exists: false } : { exists: true, receipt: { epoch } };
  } catch (error) {
    logger.warn(
      { err: error, project: entry.target, tool: entry.tool },
      'scene operation left open cannot be resolved: the project history is unreadable',
    );
    return { exists: 'unknown' };
  }
}
