import type { SqliteDatabase } from './connection.js';

/**
 * Schema versions, in order; never edit one that has shipped, add the next.
 * Tables with a `seq` column use it to order rows created in the same
 * millisecond.
 */
const MIGRATIONS: readonly string[] = [
  `
  CREATE TABLE records (
    collection TEXT NOT NULL,
    key TEXT NOT NULL,
    value TEXT NOT NULL,
    updated_at INTEGER NOT NULL,
    PRIMARY KEY (collection, key)
  ) WITHOUT ROWID;

  CREATE TABLE journal (
    seq INTEGER PRIMARY KEY,
    scope TEXT NOT NULL,
    operation_id TEXT NOT NULL,
    digest TEXT NOT NULL,
    state TEXT NOT NULL,
    tool TEXT NOT NULL,
    connection TEXT NOT NULL,
    target TEXT,
    receipt TEXT,
    provenance TEXT,
    created_at INTEGER NOT NULL,
    updated_at INTEGER NOT NULL,
    expires_at INTEGER NOT NULL,
    UNIQUE (scope, operation_id)
  );
  CREATE INDEX journal_by_state ON journal (state, created_at, seq);
  CREATE INDEX journal_by_expiry ON journal (expires_at);

  CREATE TABLE grants (
    seq INTEGER PRIMARY KEY,
    id TEXT NOT NULL UNIQUE,
    connection TEXT NOT NULL,
    door TEXT NOT NULL,
    capability TEXT NOT NULL,
    resource TEXT,
    created_at INTEGER NOT NULL,
    expires_at INTEGER NOT NULL,
    revoked_at INTEGER
  );
  CREATE INDEX grants_by_created ON grants (created_at, seq);

  CREATE TABLE approvals (
    seq INTEGER PRIMARY KEY,
    id TEXT NOT NULL UNIQUE,
    connection TEXT NOT NULL,
    door TEXT NOT NULL,
    capability TEXT NOT NULL,
    summary TEXT NOT NULL,
    status TEXT NOT NULL,
    lifetime_ms REAL NOT NULL,
    created_at INTEGER NOT NULL,
    decided_at INTEGER,
    resource TEXT,
    grant_id TEXT
  );
  CREATE INDEX approvals_by_subject ON approvals (connection, door, capability, created_at, seq);
  CREATE INDEX approvals_by_status ON approvals (status, created_at, seq);

  -- AUTOINCREMENT: audit ids are never reused, even after a rollback.
  CREATE TABLE audit (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    at INTEGER NOT NULL,
    connection TEXT NOT NULL,
    door TEXT NOT NULL,
    tool TEXT NOT NULL,
    args_digest TEXT NOT NULL,
    provenance TEXT,
    result TEXT NOT NULL,
    duration_ms REAL NOT NULL
  );
  CREATE INDEX audit_by_door ON audit (door, id);

  CREATE TABLE jobs (
    seq INTEGER PRIMARY KEY,
    id TEXT NOT NULL UNIQUE,
    door TEXT NOT NULL,
    kind TEXT NOT NULL,
    status TEXT NOT NULL,
    progress TEXT NOT NULL,
    warnings TEXT NOT NULL,
    error TEXT,
    input TEXT NOT NULL,
    created_at INTEGER NOT NULL,
    updated_at INTEGER NOT NULL
  );
  CREATE INDEX jobs_by_created ON jobs (created_at, seq);
  CREATE INDEX jobs_by_status ON jobs (status);
  `,
  // The owner's policy (authority.md §3): approvals of a call (kind 'policy')
  // beside consent requests, and the decision and rule in the audit trail.
  `
  ALTER TABLE approvals ADD COLUMN kind TEXT NOT NULL DEFAULT 'consent';
  ALTER TABLE approvals ADD COLUMN agent TEXT;
  ALTER TABLE approvals ADD COLUMN tool TEXT;
  ALTER TABLE approvals ADD COLUMN digest TEXT;
  ALTER TABLE approvals ADD COLUMN target TEXT;
  ALTER TABLE approvals ADD COLUMN rule TEXT;
  ALTER TABLE approvals ADD COLUMN preview TEXT;
  ALTER TABLE approvals ADD COLUMN scope TEXT;
  ALTER TABLE approvals ADD COLUMN reason TEXT;
  ALTER TABLE approvals ADD COLUMN used_at INTEGER;
  CREATE INDEX approvals_by_call ON approvals (agent, door, tool, digest, created_at, seq);

  ALTER TABLE audit ADD COLUMN decision TEXT;
  ALTER TABLE audit ADD COLUMN rule TEXT;
  CREATE INDEX audit_by_rule ON audit (rule, id);
  `,
  // The event log (kernel.md §9, issue 15): one id space per deployment, so
  // Last-Event-ID means the same on every instance. Bounded: the bus prunes it.
  // AUTOINCREMENT: ids are never reused after pruning.
  `
  CREATE TABLE event_log (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    at REAL NOT NULL,
    data TEXT NOT NULL
  );
  `,
  // Records in a rowid table with the value last (issue #16). In the WITHOUT
  // ROWID table a key lookup compared whole rows, so a seek that met a large
  // value read all of its overflow pages, and reading `updated_at` walked
  // past the value: listing a project slowed with other projects' text. Now
  // the (collection, key) index holds only keys, and the value is read only
  // for the rows a query returns.
  `
  CREATE TABLE records_by_rowid (
    id INTEGER PRIMARY KEY,
    collection TEXT NOT NULL,
    key TEXT NOT NULL,
    updated_at INTEGER NOT NULL,
    value TEXT NOT NULL
  );
  INSERT INTO records_by_rowid (collection, key, updated_at, value)
    SELECT collection, key, updated_at, value FROM records ORDER BY collection, key;
  DROP TABLE records;
  ALTER TABLE records_by_rowid RENAME TO records;
  CREATE UNIQUE INDEX records_by_key ON records (collection, key);
  `,
  // One agent's pending approvals (its inbox cap) read by index, not by a scan of all.
  `
  CREATE INDEX approvals_by_agent ON approvals (agent, status, created_at, seq);
  `,
  // Issue 24: a job belongs to the agent that started it (NULL:
  // the owner's or an internal job); an agent lists only its own, by index.
  `
  ALTER TABLE jobs ADD COLUMN agent TEXT;
  CREATE INDEX jobs_by_agent ON jobs (agent, created_at, seq);
  `,
  // Issue 33: the audit trail's hash chain (kernel/audit/audit-chain.ts).
  // The appender links each entry to the one before inside its write
  // transaction; entries written before this version stay unlinked (NULL).
  `
  ALTER TABLE audit ADD COLUMN prev_hash TEXT;
  ALTER TABLE audit ADD COLUMN hash TEXT;
  `,
  // Issue 36: a policy ask outlives its connection; when the connection
  // ended, the ask stays pending (orphaned) until approvals.orphanMinutes.
  `
  ALTER TABLE approvals ADD COLUMN orphaned_at INTEGER;
  `,
];

/**
 * Brings the schema to the newest version (or to `through`, which tests use
 * to build a database as an older Airlock left it); safe to run at every open.
 */
export function migrate(db: SqliteDatabase, through = MIGRATIONS.length): void {
  db.exec('BEGIN IMMEDIATE');
  try {
    db.exec(
      'CREATE TABLE IF NOT EXISTS schema_version (version INTEGER PRIMARY KEY, applied_at INTEGER NOT NULL)',
    );
    const row = db.prepare('SELECT MAX(version) AS version FROM schema_version').get() as {
      version: number | null;
    };
    const current = row.version ?? 0;
    if (current > MIGRATIONS.length) {
      throw new Error(
        `The SQLite database has schema version ${current}, newer than this Airlock knows (${MIGRATIONS.length}); upgrade Airlock.`,
      );
    }
    const record = db.prepare('INSERT INTO schema_version (version, applied_at) VALUES (?, ?)');
    MIGRATIONS.slice(current, through).forEach((sql, index) => {
      db.exec(sql);
      record.run(current + index + 1, Date.now());
    });
    db.exec('COMMIT');
  } catch (error) {
    if (db.inTransaction) db.exec('ROLLBACK');
    throw error;
  }
}
