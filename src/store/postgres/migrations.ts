import type { Pool } from 'pg';
import { lockAndEnsureSchema, quoteIdent } from './schema.js';

/**
 * Schema versions, in order; never edit one that has shipped, add the next.
 * Times are double precision: the records allow fractional milliseconds and
 * pg returns float8 as a number (bigint would come back as a string). Record
 * keys use the "C" collation so key order is byte order, as in SQLite.
 */
const MIGRATIONS: readonly string[] = [
  `
  CREATE TABLE records (
    collection text COLLATE "C" NOT NULL,
    key text COLLATE "C" NOT NULL,
    value text NOT NULL,
    updated_at double precision NOT NULL,
    PRIMARY KEY (collection, key)
  );

  CREATE TABLE journal (
    seq bigint GENERATED ALWAYS AS IDENTITY,
    scope text NOT NULL,
    operation_id text NOT NULL,
    digest text NOT NULL,
    state text NOT NULL,
    tool text NOT NULL,
    connection text NOT NULL,
    target text,
    receipt text,
    provenance text,
    created_at double precision NOT NULL,
    updated_at double precision NOT NULL,
    expires_at double precision NOT NULL,
    PRIMARY KEY (scope, operation_id)
  );
  CREATE INDEX journal_by_state ON journal (state, created_at, seq);
  CREATE INDEX journal_by_expiry ON journal (expires_at);

  CREATE TABLE grants (
    seq bigint GENERATED ALWAYS AS IDENTITY,
    id text PRIMARY KEY,
    connection text NOT NULL,
    door text NOT NULL,
    capability text NOT NULL,
    resource text,
    created_at double precision NOT NULL,
    expires_at double precision NOT NULL,
    revoked_at double precision
  );
  CREATE INDEX grants_by_created ON grants (created_at, seq);

  CREATE TABLE approvals (
    seq bigint GENERATED ALWAYS AS IDENTITY,
    id text PRIMARY KEY,
    connection text NOT NULL,
    door text NOT NULL,
    capability text NOT NULL,
    summary text NOT NULL,
    status text NOT NULL,
    lifetime_ms double precision NOT NULL,
    created_at double precision NOT NULL,
    decided_at double precision,
    resource text,
    grant_id text
  );
  CREATE INDEX approvals_by_subject ON approvals (connection, door, capability, created_at, seq);
  CREATE INDEX approvals_by_status ON approvals (status, created_at, seq);

  CREATE TABLE audit (
    id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    at double precision NOT NULL,
    connection text NOT NULL,
    door text NOT NULL,
    tool text NOT NULL,
    args_digest text NOT NULL,
    provenance text,
    result text NOT NULL,
    duration_ms double precision NOT NULL
  );
  CREATE INDEX audit_by_door ON audit (door, id);

  CREATE TABLE jobs (
    seq bigint GENERATED ALWAYS AS IDENTITY,
    id text PRIMARY KEY,
    door text NOT NULL,
    kind text NOT NULL,
    status text NOT NULL,
    progress text NOT NULL,
    warnings text NOT NULL,
    error text,
    input text NOT NULL,
    created_at double precision NOT NULL,
    updated_at double precision NOT NULL
  );
  CREATE INDEX jobs_by_created ON jobs (created_at, seq);
  CREATE INDEX jobs_by_status ON jobs (status);
  `,
  // The owner's policy (authority.md §3): approvals of a call (kind 'policy')
  // beside consent requests, and the decision and rule in the audit trail.
  `
  ALTER TABLE approvals ADD COLUMN kind text NOT NULL DEFAULT 'consent';
  ALTER TABLE approvals ADD COLUMN agent text;
  ALTER TABLE approvals ADD COLUMN tool text;
  ALTER TABLE approvals ADD COLUMN digest text;
  ALTER TABLE approvals ADD COLUMN target text;
  ALTER TABLE approvals ADD COLUMN rule text;
  ALTER TABLE approvals ADD COLUMN preview text;
  ALTER TABLE approvals ADD COLUMN scope text;
  ALTER TABLE approvals ADD COLUMN reason text;
  ALTER TABLE approvals ADD COLUMN used_at double precision;
  CREATE INDEX approvals_by_call ON approvals (agent, door, tool, digest, created_at, seq);

  ALTER TABLE audit ADD COLUMN decision text;
  ALTER TABLE audit ADD COLUMN rule text;
  CREATE INDEX audit_by_rule ON audit (rule, id);
  `,
  // The event log (kernel.md §9, issue 15): one id space per deployment, so
  // Last-Event-ID means the same on every instance. Bounded: the bus prunes it.
  `
  CREATE TABLE event_log (
    id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    at double precision NOT NULL,
    data text NOT NULL
  );
  `,
  // One agent's pending approvals (its inbox cap) read by index, under a lock
  // on the agent: agents asking at once do not conflict with each other.
  `
  CREATE INDEX approvals_by_agent ON approvals (agent, status, created_at, seq);
  `,
  // Issue 24: a job belongs to the agent that started it (NULL:
  // the owner's or an internal job); an agent lists only its own, by index.
  `
  ALTER TABLE jobs ADD COLUMN agent text;
  CREATE INDEX jobs_by_agent ON jobs (agent, created_at, seq);
  `,
  // Issue 33: the audit trail's hash chain (kernel/audit/audit-chain.ts),
  // computed here, inside the appenders' turn, so an append costs no extra
  // round trip. The appender puts the entry's content digest in `hash`; the
  // trigger links it to the newest entry (or the retention anchor, or
  // GENESIS). The trigger function is VOLATILE: its query sees what other
  // instances committed before this appender got its turn (READ COMMITTED).
  `
  ALTER TABLE audit ADD COLUMN prev_hash text;
  ALTER TABLE audit ADD COLUMN hash text;
  CREATE FUNCTION audit_link() RETURNS trigger LANGUAGE plpgsql VOLATILE AS $$
  DECLARE
    newest text;
  BEGIN
    SELECT hash INTO newest FROM audit ORDER BY id DESC LIMIT 1;
    IF FOUND THEN
      NEW.prev_hash := coalesce(newest, repeat('0', 64));
    ELSE
      NEW.prev_hash := coalesce(
        (SELECT value::json->>'hash' FROM records WHERE collection = 'auditChain' AND key = 'anchor'),
        repeat('0', 64));
    END IF;
    NEW.hash := encode(sha256(convert_to(NEW.prev_hash || ':' || NEW.id::text || ':' || NEW.hash, 'UTF8')), 'hex');
    RETURN NEW;
  END
  $$;
  CREATE TRIGGER audit_link BEFORE INSERT ON audit FOR EACH ROW EXECUTE FUNCTION audit_link();
  `,
  // Issue 36: a policy ask outlives its connection; when the connection
  // ended, the ask stays pending (orphaned) until approvals.orphanMinutes.
  `
  ALTER TABLE approvals ADD COLUMN orphaned_at bigint;
  `,
];

/**
 * Brings `schema` to the newest version; safe to run at every start, also
 * from several instances at once (they take turns on an advisory lock).
 */
export async function migrate(pool: Pool, schema: string): Promise<void> {
  const client = await pool.connect();
  try {
    await client.query('BEGIN');
    await lockAndEnsureSchema(client, schema);
    await client.query(`SET LOCAL search_path TO ${quoteIdent(schema)}`);
    await client.query(
      'CREATE TABLE IF NOT EXISTS schema_version (version integer PRIMARY KEY, applied_at double precision NOT NULL)',
    );
    const result = await client.query<{ version: number | null }>(
      'SELECT MAX(version) AS version FROM schema_version',
    );
    const current = result.rows[0]?.version ?? 0;
    if (current > MIGRATIONS.length) {
      throw new Error(
        `PostgreSQL schema "${schema}" has version ${current}, newer than this Airlock knows (${MIGRATIONS.length}); upgrade Airlock.`,
      );
    }
    for (const [index, sql] of MIGRATIONS.slice(current).entries()) {
      await client.query(sql);
      await client.query('INSERT INTO schema_version (version, applied_at) VALUES ($1, $2)', [
        current + index + 1,
        Date.now(),
      ]);
    }
    await client.query('COMMIT');
  } catch (error) {
    await client.query('ROLLBACK').catch(() => undefined);
    throw error;
  } finally {
    client.release();
  }
}
