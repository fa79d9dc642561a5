import type { RecordRepo } from '../../kernel/store.js';
import type { StoredRecord } from '../../kernel/records.js';
import { fromJson, toJson } from './json-column.js';
import { forUpdate, readByKey } from './key-lock.js';
import { limitClause, type SqlClient, type SqlParam } from './sql-client.js';

interface RecordRow {
  collection: string;
  key: string;
  value: string;
  updated_at: number;
}

const COLUMNS = 'collection, key, value, updated_at';
const PUT = `INSERT INTO records (${COLUMNS}) VALUES (?, ?, ?, ?)
         ON CONFLICT (collection, key)
         DO UPDATE SET value = excluded.value, updated_at = excluded.updated_at`;

function toRecord<T>(row: RecordRow): StoredRecord<T> {
  return {
    collection: row.collection,
    key: row.key,
    value: fromJson<T>(row.value),
    updatedAt: row.updated_at,
  };
}

/**
 * The least string above every string that starts with `prefix`, in byte
 * order of UTF-8 (code point order): the prefix with its last code point
 * raised by one. None when the prefix is all U+10FFFF.
 */
export function prefixBound(prefix: string): string | undefined {
  const points = [...prefix];
  while (points.length > 0) {
    const last = points.pop()!.codePointAt(0)!;
    if (last < 0x10ffff) {
      // Surrogate code points are not characters; the next one is U+E000.
      const next = last + 1 >= 0xd800 && last + 1 <= 0xdfff ? 0xe000 : last + 1;
      return points.join('') + String.fromCodePoint(next);
    }
  }
  return undefined;
}

export function createRecordRepo(db: SqlClient): RecordRepo {
  return {
    async get<T>(collection: string, key: string) {
      const rows = await readByKey(
        db,
        () =>
          db.all<RecordRow>(
            `SELECT ${COLUMNS} FROM records WHERE collection = ? AND key = ?${forUpdate(db)}`,
            [collection, key],
          ),
        'records',
        collection,
        key,
      );
      return rows[0] ? toRecord<T>(rows[0]) : null;
    },

    async put(collection, key, value) {
      const params = [collection, key, toJson(value), Date.now()];
      // Nobody needs its answer: in a PostgreSQL write group it goes with the COMMIT.
      if (db.runLater?.(PUT, params)) return;
      await db.run(PUT, params);
    },

    async delete(collection, key) {
      const changed = await db.run('DELETE FROM records WHERE collection = ? AND key = ?', [
        collection,
        key,
      ]);
      return changed > 0;
    },

    async list<T>(collection: string, options: { prefix?: string; limit?: number } = {}) {
      let where = 'collection = ?';
      const params: SqlParam[] = [collection];
      if (options.prefix) {
        // `key >= prefix` starts the key index at the prefix and `key < bound`
        // ends it after the prefix's keys, so other keys of the collection
        // are not walked; substr() keeps exactly the keys that begin with it.
        where += ' AND key >= ? AND substr(key, 1, length(CAST(? AS TEXT))) = ?';
        params.push(options.prefix, options.prefix, options.prefix);
        const bound = prefixBound(options.prefix);
        if (bound !== undefined) {
          where += ' AND key < ?';
          params.push(bound);
        }
      }
      const limit = limitClause(options.limit);
      const rows = await db.all<RecordRow>(
        `SELECT ${COLUMNS} FROM records WHERE ${where} ORDER BY key${limit.sql}`,
        [...params, ...limit.params],
      );
      return rows.map((row) => toRecord<T>(row));
    },
  };
}
