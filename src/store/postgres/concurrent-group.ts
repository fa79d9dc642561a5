/**
 * The writes of one group run at once on the group's connection (issue 31):
 * while one write's statement is on the wire, the others' functions run and
 * queue theirs, so the connection is not left idle while this process works
 * out a write's next statement (the `ClientRead` waits the cluster bench saw).
 *
 * One transaction holds them all, so PostgreSQL's row locks cannot keep two
 * of them apart; this does. Every statement names the row it touches
 * (statement-keys.ts). A statement may touch a row another write of the
 * group touched only once that write has finished — then it sees that
 * write's effects, as if the two had run one after the other in the order
 * they finished. When a statement would touch a row a still-running write
 * touched, or is one whose rows are unknown while another write has touched
 * anything (or the other way round), the group is `conflicted`: every later
 * statement is refused, the transaction rolls back and the group runs again
 * one write after another (group-writer.ts). Together: every concurrent
 * group that commits is equivalent to its writes run serially in the order
 * they finished.
 *
 * A statement that fails aborts PostgreSQL's transaction and so every
 * statement after it; `failure` keeps the first one and the write it
 * belonged to, which is the write answered with it.
 *
 * Statements whose answer nobody needs (a door's record put, the journal
 * entry's insert: `SqlClient.runLater`) are not sent when issued but queued
 * (issue 31): the group writer sends them with the audit insert and the
 * COMMIT, in one socket write (`takeQueued`). A queued row is admitted like
 * any statement's, and stays the group's until it is sent: a later
 * statement of any write that names it, or whose rows are unknown, first
 * sends the queue (pipelined, in order, ahead of it), so nothing ever reads
 * around a write it should see. Only statements with known rows are queued.
 */
import type { SqlClient, SqlParam } from '../sql/sql-client.js';
import { statementKey } from './statement-keys.js';

/** Thrown for statements of a conflicted group: the group runs again serially. */
export class GroupConflict extends Error {
  constructor() {
    super('two writes of the group touch the same rows; the group runs again one by one');
    this.name = 'GroupConflict';
  }
}

/** Everything: a write that issued a statement whose rows are not known. */
const ANY = Symbol('any');

interface Lane {
  keys: Set<string>;
  any: boolean;
  running: boolean;
}

/** A statement queued by write `index` (`SqlClient.runLater`), sent later. */
export interface QueuedStatement {
  index: number;
  sql: string;
  params: readonly SqlParam[];
}

export interface ConcurrentGroup {
  /** The connection as write `index` sees it. */
  client(index: number): SqlClient;
  /** Write `index` has finished (its function settled): its rows are free. */
  finish(index: number): void;
  readonly conflicted: boolean;
  /** The first statement that failed on the server, and its write. */
  readonly failure: { index: number; error: unknown } | null;
  /** The statements still queued, in the order issued; the queue is emptied. */
  takeQueued(): QueuedStatement[];
}

export function createConcurrentGroup(shared: SqlClient, size: number): ConcurrentGroup {
  const lanes: Lane[] = Array.from({ length: size }, () => ({
    keys: new Set<string>(),
    any: false,
    running: true,
  }));
  let conflicted = false;
  let failure: { index: number; error: unknown } | null = null;
  let queued: QueuedStatement[] = [];
  /** The rows the queued statements write. */
  const queuedKeys = new Set<string>();

  const failed = (index: number) => (error: unknown) => {
    failure ??= { index, error };
    throw error;
  };

  /** Sends the queue now, in order, ahead of whatever is sent next (pipelined). */
  const sendQueued = (): void => {
    const sending = queued;
    queued = [];
    queuedKeys.clear();
    for (const q of sending) {
      // Nobody waits for it; its failure is the group's first (it went first).
      shared
        .run(q.sql, q.params)
        .catch(failed(q.index))
        .catch(() => undefined);
    }
  };

  /** Records what write `index` touches; false when that meets a running write's rows. */
  const admit = (index: number, key: string | typeof ANY): boolean => {
    for (let other = 0; other < lanes.length; other++) {
      const lane = lanes[other]!;
      if (other === index || !lane.running) continue;
      if (lane.any) return false;
      if (key === ANY ? lane.keys.size > 0 : lane.keys.has(key)) return false;
    }
    const own = lanes[index]!;
    if (key === ANY) own.any = true;
    else own.keys.add(key);
    return true;
  };

  const statement = <T>(
    index: number,
    sql: string,
    params: readonly SqlParam[],
    send: () => Promise<T>,
  ): Promise<T> => {
    const key = statementKey(sql, params) ?? ANY;
    if (!conflicted && !admit(index, key)) conflicted = true;
    if (conflicted) return Promise.reject(new GroupConflict());
    // It could see a queued row: the queue goes first.
    if (queued.length > 0 && (key === ANY || queuedKeys.has(key))) sendQueued();
    return send().catch(failed(index));
  };

  const runLater = (index: number, sql: string, params: readonly SqlParam[]): boolean => {
    const key = statementKey(sql, params);
    if (conflicted || key === null) return false;
    // Meeting a running write's rows: `run` finds the conflict and refuses.
    if (!admit(index, key)) return false;
    queued.push({ index, sql, params });
    queuedKeys.add(key);
    return true;
  };

  return {
    client(index) {
      return {
        dialect: shared.dialect,
        lockingReads: shared.lockingReads === true,
        all: <R extends object>(sql: string, params: readonly SqlParam[] = []) =>
          statement(index, sql, params, () => shared.all<R>(sql, params)),
        run: (sql: string, params: readonly SqlParam[] = []) =>
          statement(index, sql, params, () => shared.run(sql, params)),
        runLater: (sql: string, params: readonly SqlParam[]) => runLater(index, sql, params),
      };
    },
    takeQueued() {
      const taken = queued;
      queued = [];
      queuedKeys.clear();
      return taken;
    },
    finish(index) {
      lanes[index]!.running = false;
    },
    get conflicted() {
      return conflicted;
    },
    get failure() {
      return failure;
    },
  };
}
