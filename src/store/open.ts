import { chmod, mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';
import type { BlobStore, Store } from '../kernel/store.js';
import { createFileBlobStore } from './blobs-file.js';
import { createSqliteStore } from './sqlite/index.js';

export interface OpenStoreOptions {
  /** The data folder (SQLite file and blobs live here by default). */
  data: string;
  /**
   * Where records live: absent, `sqlite:` (`<data>/airlock.db`),
   * `sqlite:<file>`, or a `postgres://` / `postgresql://` URL; a `schema`
   * query parameter in the URL picks the PostgreSQL schema. Absent: the
   * store recorded in the data folder (`STORE_FILE`), else SQLite there.
   */
  store?: string;
}

/**
 * The data folder's own note of the store it belongs to: written when a
 * store other than the folder's SQLite is opened on it (`serve --store
 * postgres://…`), read when a command gives no `--store`, so `airlock agents
 * add --data DIR` on a cluster's folder acts on the cluster's store rather
 * than making a SQLite store the servers never read. 0600 like the owner
 * token beside it: the URL may carry a password.
 */
export const STORE_FILE = 'store.url';

const ACCEPTED =
  'sqlite: (the default, <data>/airlock.db), sqlite:<file>, postgres://… or postgresql://…';

/**
 * Opens the configured store and its blob store: SQLite with blobs in
 * `<data>/blobs`, or PostgreSQL with blobs in the same database.
 *
 * @example
 * const { store, blobs } = await openStore({ data: '.airlock' });
 */
export async function openStore(
  options: OpenStoreOptions,
): Promise<{ store: Store; blobs: BlobStore }> {
  const given = options.store ?? '';
  const spec = given === '' ? await recordedStore(options.data) : given;
  const opened = await openSpec(options.data, spec);
  if (given !== '') await recordStore(options.data, spec);
  return opened;
}

/** The store the data folder belongs to, or '' (its own SQLite store). */
export async function recordedStore(data: string): Promise<string> {
  try {
    return (await readFile(join(data, STORE_FILE), 'utf8')).trim();
  } catch {
    return '';
  }
}

/** Notes the store in the data folder; its own SQLite store needs no note. */
async function recordStore(data: string, spec: string): Promise<void> {
  const file = join(data, STORE_FILE);
  const own =
    spec === 'sqlite' || spec === 'sqlite:' || spec === `sqlite:${join(data, 'airlock.db')}`;
  const absolute = spec.startsWith('sqlite:') && !own ? `sqlite:${resolve(spec.slice(7))}` : spec;
  if (own) {
    await rm(file, { force: true });
    return;
  }
  await privateFolder(data);
  await writeFile(file, `${absolute}\n`, { mode: 0o600 });
  await chmod(file, 0o600);
}

async function openSpec(data: string, spec: string): Promise<{ store: Store; blobs: BlobStore }> {
  const options = { data };
  if (spec === '' || spec === 'sqlite' || spec.startsWith('sqlite:')) {
    const file =
      spec.length > 'sqlite:'.length ? resolve(spec.slice(7)) : join(options.data, 'airlock.db');
    await privateFolder(options.data);
    await mkdir(dirname(file), { recursive: true, mode: 0o700 });
    const store = await createSqliteStore({ path: file });
    await privateFiles(file, `${file}-wal`, `${file}-shm`);
    return { store, blobs: createFileBlobStore(join(options.data, 'blobs')) };
  }
  if (/^postgres(ql)?:\/\//i.test(spec)) {
    const { url, schema } = takeSchemaParam(spec);
    // pg is loaded only for a PostgreSQL store (start-up time on SQLite).
    const [{ createPostgresStore }, { createPostgresBlobStore }] = await Promise.all([
      import('./postgres/index.js'),
      import('./blobs-postgres.js'),
    ]);
    let store;
    try {
      store = await createPostgresStore({ url, ...(schema ? { schema } : {}) });
    } catch (error) {
      // One line for the start-up error (exit 1): where, why, what to do.
      const why = error instanceof Error ? error.message : String(error);
      const unreachable =
        typeof (error as { code?: unknown }).code === 'string' ||
        /connect|terminated|timeout/i.test(why);
      if (!unreachable) throw error;
      throw new Error(
        `cannot reach the store at ${redact(spec)}: ${why}; start PostgreSQL there or fix --store`,
        { cause: error },
      );
    }
    return { store, blobs: createPostgresBlobStore(store.pool, store.schema) };
  }
  throw new Error(`Unsupported store "${redact(spec)}"; use ${ACCEPTED}.`);
}

function takeSchemaParam(spec: string): { url: string; schema: string | null } {
  const url = new URL(spec);
  const schema = url.searchParams.get('schema');
  url.searchParams.delete('schema');
  return { url: url.toString(), schema };
}

/** The bad value is echoed, but never a password in it. */
function redact(spec: string): string {
  try {
    const url = new URL(spec);
    if (url.password === '') return spec;
    url.password = '***';
    return url.toString();
  } catch {
    return spec;
  }
}

/**
 * The data folder is the owner's alone (authority.md §4): 0700 whatever the
 * umask, and its database files 0600. (The CLI also sets the umask to 077,
 * so files made later are private too.)
 */
export async function privateFolder(dir: string): Promise<void> {
  await mkdir(dir, { recursive: true, mode: 0o700 });
  await chmod(dir, 0o700);
}

async function privateFiles(...files: string[]): Promise<void> {
  for (const f of files) await chmod(f, 0o600).catch(() => undefined);
}
