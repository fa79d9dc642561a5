import { createHash } from 'node:crypto';
import type { PoolClient, QueryResult } from 'pg';
import { createMutex } from '../sql/mutex.js';
import type { SqlClient, SqlParam } from '../sql/sql-client.js';

interface Statement {
  /** With `$1, $2, …` placeholders. */
  text: string;
  /** Its prepared statement's name on a connection (null: too many shapes seen, sent unnamed). */
  name: string | null;
  /** The `?`-separated pieces, for inlining literals (`BEGIN` sent with it). */
  pieces: string[];
}

/** Statement shapes given a prepared-statement name; later ones go unnamed (bounded per connection). */
const MAX_NAMED = 500;
const statements = new Map<string, Statement>();

/** `?` placeholders become `$1, $2, …` (the shared SQL has no other `?`). */
function statementOf(sql: string): Statement {
  let statement = statements.get(sql);
  if (statement === undefined) {
    const pieces = sql.split('?');
    const text = pieces.reduce((out, piece, i) => (i === 0 ? piece : `${out}$${i}${piece}`));
    const name =
      statements.size < MAX_NAMED
        ? `airlock_${createHash('sha256').update(text).digest('base64url').slice(0, 20)}`
        : null;
    statement = { text, name, pieces };
    statements.set(sql, statement);
  }
  return statement;
}

/**
 * A transaction's BEGIN, sent with its first statement in one message (one
 * round trip, issue 31) when that statement's parameters can be written as
 * literals, else on its own just before it.
 */
export interface DeferredBegin {
  readonly sql: string;
  sent: boolean;
}

/** The statement with its parameters as SQL literals; null when one cannot be written safely. */
function inlined(client: PoolClient, statement: Statement, params: readonly SqlParam[]) {
  const literals: string[] = [];
  for (const p of params) {
    // Strings only: a number's literal is typed (integer, numeric) where a parameter takes its
    // column's type. NUL would end the simple-query message early (the server refuses it as a parameter).
    if (p === null) literals.push('NULL');
    else if (typeof p === 'string' && !p.includes('\u0000')) literals.push(client.escapeLiteral(p));
    else return null;
  }
  if (literals.length !== statement.pieces.length - 1) return null;
  return statement.pieces.reduce((out, piece, i) =>
    i === 0 ? piece : out + literals[i - 1]! + piece,
  );
}

/**
 * Runs `issue` with the connection's socket corked: the messages of the
 * statements it issues (synchronously) leave in one socket write — one
 * system call and one wake-up of the server for all of them (issue 31).
 */
export function corked<T>(client: PoolClient, issue: () => T): T {
  const socket = (
    client as unknown as { connection?: { stream?: { cork?(): void; uncork?(): void } } }
  ).connection?.stream;
  socket?.cork?.();
  try {
    return issue();
  } finally {
    socket?.uncork?.();
  }
}

export interface PgClientOptions {
  /** Reads by key lock their rows (SqlClient.lockingReads). */
  lockingReads?: boolean;
  /** Statements are prepared once per connection (named), then only bound and executed. */
  prepared?: boolean;
  /** Sent with the first statement. */
  begin?: DeferredBegin;
  /**
   * Statements issued at once are sent at once, each answered in turn
   * (issue 31: a write group's concurrent writes, concurrent-group.ts),
   * instead of one after the other's answer. Needs a client in pg's
   * pipeline mode; without it pg would queue them anyway.
   */
  pipelined?: boolean;
}

/**
 * A SqlClient over one pooled connection. Queries are queued here unless
 * `pipelined`: a transaction may issue several at once (`Promise.all`), and
 * pg deprecates overlapping queries on a client not in pipeline mode.
 * Pipelined, the server still runs them in the order they were issued, and
 * in a transaction the first that fails aborts the ones after it, as when
 * queued.
 */
export function createPgClient(client: PoolClient, options: PgClientOptions = {}): SqlClient {
  const queue = createMutex();
  const { begin, prepared = false } = options;
  const pipelined =
    options.pipelined === true && (client as { pipeline?: boolean }).pipeline === true;
  const sendOne = (statement: Statement, params: readonly SqlParam[]) =>
    client.query({
      text: statement.text,
      values: [...params],
      ...(prepared && statement.name !== null ? { name: statement.name } : {}),
    });
  const send = async (sql: string, params: readonly SqlParam[]): Promise<QueryResult> => {
    const statement = statementOf(sql);
    if (begin && !begin.sent) {
      begin.sent = true;
      const text = inlined(client, statement, params);
      if (text !== null) {
        // A simple-query message of two statements: one result each.
        const results = (await client.query(`${begin.sql}; ${text}`)) as unknown as QueryResult[];
        return results[1]!;
      }
      if (pipelined) {
        // The statement goes right behind its BEGIN: one issued meanwhile must not pass it.
        const [, result] = await Promise.all([client.query(begin.sql), sendOne(statement, params)]);
        return result;
      }
      await client.query(begin.sql);
    }
    return sendOne(statement, params);
  };
  const query = pipelined
    ? send
    : (sql: string, params: readonly SqlParam[]) => queue.run(() => send(sql, params));
  return {
    dialect: 'postgres',
    lockingReads: options.lockingReads === true,
    async all<R extends object>(sql: string, params: readonly unknown[] = []) {
      return (await query(sql, params as SqlParam[])).rows as R[];
    },
    async run(sql: string, params: readonly unknown[] = []) {
      return (await query(sql, params as SqlParam[])).rowCount ?? 0;
    },
  };
}
