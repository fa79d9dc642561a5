/**
 * Single-statement reads gathered onto one connection (issue 31). A call
 * makes two or three key lookups before its write (the journal's replay
 * read, the connection's grants), and calls answered by one group commit
 * start their next ones together: each lookup on its own pooled connection
 * was one socket write and one wake-up per statement on both sides.
 *
 * Reads asked for while a connection is being taken from the pool form one
 * gathering: once it is there, every read of the gathering issues its
 * statement on it at once, corked, so they leave in one socket write and
 * their answers come back together (pg's pipeline mode: each statement is
 * still its own implicit transaction with its own Sync, so each read is its
 * own snapshot and one failing does not touch the others). The connection
 * goes back to the pool when the last answer is in. A lone read costs what
 * it did: it waits for the connection it waited for before.
 */
import type { Pool, PoolClient } from 'pg';
import type { StoreTx } from '../../kernel/store.js';
import { createTxScope } from '../sql/tx-scope.js';
import { corked, createPgClient } from './pg-client.js';
import { isServerError } from './run-transaction.js';

/** Most reads sent on one connection at once; more start another gathering. */
export const MAX_GATHERED = 64;

interface PendingRead {
  fn: (tx: StoreTx) => Promise<unknown>;
  resolve: (value: unknown) => void;
  reject: (error: unknown) => void;
}

export interface ReadGatherer {
  /** Runs a single-statement read (ReadOptions.single) with the others of its gathering. */
  read<T>(fn: (tx: StoreTx) => Promise<T>): Promise<T>;
  /** Gatherings sent so far and the reads in them (tests, benches). */
  readonly stats: { gatherings: number; reads: number };
}

export function createReadGatherer(pool: Pool): ReadGatherer {
  const stats = { gatherings: 0, reads: 0 };
  let open: PendingRead[] | null = null;

  const send = async (reads: PendingRead[]): Promise<void> => {
    let client: PoolClient;
    try {
      client = await pool.connect();
    } catch (error) {
      if (open === reads) open = null;
      for (const read of reads) read.reject(error);
      return;
    }
    // Reads asked for from now on form the next gathering.
    if (open === reads) open = null;
    stats.gatherings += 1;
    stats.reads += reads.length;
    const sql = createPgClient(client, { pipelined: true, prepared: true });
    let broken = false;
    // Each read issues its statement as it starts (a store read's first step).
    const settled = corked(client, () =>
      reads.map(async (read) => {
        const scope = createTxScope(sql, true);
        try {
          read.resolve(await read.fn(scope.tx));
        } catch (error) {
          // A server's error leaves the connection usable (each statement has its own Sync); any other may not.
          if (scope.failed && !isServerError(scope.failure)) broken = true;
          read.reject(error);
        } finally {
          scope.end();
        }
      }),
    );
    await Promise.all(settled);
    client.release(broken);
  };

  return {
    stats,
    read<T>(fn: (tx: StoreTx) => Promise<T>): Promise<T> {
      return new Promise<T>((resolve, reject) => {
        const read = { fn, resolve, reject } as PendingRead;
        if (open && open.length < MAX_GATHERED) {
          open.push(read);
          return;
        }
        const reads = [read];
        open = reads;
        void send(reads);
      });
    },
  };
}
