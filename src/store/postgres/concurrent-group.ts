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

export interface ConcurrentGroup {
  /** The connection as write `index` sees it. */
  client(index: number): SqlClient;
  /** Write `index` has finished (its function settled): its rows are free. */
  finish(index: number): void;
  readonly conflicted: boolean;
  /** The first statement that failed on the server, and its write. */
  readonly failure: { index: number; error: unknown } | null;
}

export function createConcurrentGroup(shared: SqlClient, size: number): ConcurrentGroup {
  const lanes: Lane[] = Array.from({ length: size }, () => ({
    keys: new Set<string>(),
    any: false,
    running: true,
  }));
  let conflicted = false;
  let failure: { index: number; error: unknown } | null = null;

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
    if (!conflicted && !admit(index, statementKey(sql, params) ?? ANY)) conflicted = true;
    if (conflicted) return Promise.reject(new GroupConflict());
    return send().catch((error: unknown) => {
      failure ??= { index, error };
      throw error;
    });
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
      };
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
