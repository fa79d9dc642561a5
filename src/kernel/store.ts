/**
 * The one storage interface the kernel and the doors use (spec/README.md
 * "Storage"). Implementations live in src/store/ (SQLite embedded default,
 * PostgreSQL for scale-out) and pass one shared contract suite
 * (test/store/contract.ts). Nothing here knows a SQL dialect.
 *
 * Every read and write happens inside `transaction` (read-write, serialised
 * against other writers) or `read` (a consistent snapshot where the backend
 * gives one). A transaction commits when its function resolves and rolls back
 * when it rejects; a journal entry and the write it records therefore commit
 * together or not at all (spec/kernel.md §6).
 */
import type { HistoryLog } from './writes/history.js';
import type {
  Approval,
  AuditEntry,
  Grant,
  Job,
  JobStatus,
  JournalEntry,
  JournalState,
  NewAuditEntry,
  StoredRecord,
} from './records.js';

export interface RecordRepo {
  get<T = unknown>(collection: string, key: string): Promise<StoredRecord<T> | null>;
  /** Insert or replace. */
  put(collection: string, key: string, value: unknown): Promise<void>;
  /** True when a record was deleted. */
  delete(collection: string, key: string): Promise<boolean>;
  /** Records of a collection in key order, optionally only keys starting with `prefix`. */
  list<T = unknown>(
    collection: string,
    options?: { prefix?: string; limit?: number },
  ): Promise<StoredRecord<T>[]>;
}

export interface JournalRepo {
  get(scope: string, operationId: string): Promise<JournalEntry | null>;
  /**
   * Insert a new entry. Returns `null` when inserted, or the existing entry
   * when `(scope, operationId)` is taken (nothing is changed then).
   */
  insert(entry: JournalEntry): Promise<JournalEntry | null>;
  /** Set state (and receipt, when given) of an existing entry; false when there is none. */
  update(
    scope: string,
    operationId: string,
    patch: { state: JournalState; receipt?: unknown; updatedAt: number },
  ): Promise<boolean>;
  delete(scope: string, operationId: string): Promise<boolean>;
  /** Entries in a state, oldest first (used to resolve uncertain entries on start). */
  listByState(state: JournalState, limit?: number): Promise<JournalEntry[]>;
  /** Delete entries whose `expiresAt` is before `now`; returns how many. */
  purgeExpired(now: number): Promise<number>;
}

export interface GrantRepo {
  insert(grant: Grant): Promise<void>;
  get(id: string): Promise<Grant | null>;
  /** Grants not revoked and not expired at `now`, newest first; filter by connection when given. */
  listActive(now: number, connection?: string): Promise<Grant[]>;
  /** Sets `revokedAt`; false when no such grant or already revoked. */
  revoke(id: string, at: number): Promise<boolean>;
}

export interface ApprovalRepo {
  insert(approval: Approval): Promise<void>;
  get(id: string): Promise<Approval | null>;
  listPending(): Promise<Approval[]>;
  /**
   * One agent's pending approvals, oldest first (null: those of no agent),
   * read through an index. In a keyed transaction the agent's list stays
   * locked until commit, so a decision from its count holds (one agent's
   * requests take turns; different agents' do not meet).
   */
  listPendingOf(agent: string | null): Promise<Approval[]>;
  /** The newest approval for this connection, door and capability, in any status. */
  latest(connection: string, door: string, capability: string): Promise<Approval | null>;
  /** The newest policy ask for this agent, door, tool and argument digest, in any status. */
  latestCall(agent: string, door: string, tool: string, digest: string): Promise<Approval | null>;
  /**
   * Marks a pending policy ask orphaned (its connection ended): it stays
   * pending for the owner. Null when it is no longer pending or already was.
   */
  orphan(id: string, at: number): Promise<Approval | null>;
  /**
   * Decide a pending approval. Returns the updated approval, or null when it
   * does not exist or is no longer pending (a decision is made once).
   */
  decide(
    id: string,
    decision: {
      status: Exclude<Approval['status'], 'pending'>;
      decidedAt: number;
      resource: Approval['resource'];
      grantId: string | null;
      scope?: Approval['scope'];
      reason?: string | null;
    },
  ): Promise<Approval | null>;
  /**
   * Marks an approved-once ask as used: true for the one caller that got it
   * (a compare-and-set, so the call runs once across instances).
   */
  markUsed(id: string, at: number): Promise<boolean>;
}

export interface AuditQuery {
  /** Entries with id greater than this. */
  afterId?: number;
  /** Entries recorded before this time (ms since the epoch). */
  before?: number;
  door?: string;
  decision?: 'allow' | 'ask' | 'deny';
  rule?: string;
  limit?: number;
  /** `desc`: newest first (the last `limit` entries). Default oldest first. */
  order?: 'asc' | 'desc';
}

export interface AuditRepo {
  append(entry: NewAuditEntry): Promise<AuditEntry>;
  /** Appends in order (ids increase along the list), in few statements: the audit tail's batch. */
  appendMany(entries: readonly NewAuditEntry[]): Promise<AuditEntry[]>;
  /** Oldest first. */
  list(query?: AuditQuery): Promise<AuditEntry[]>;
  /** Deletes entries with id up to and including `id`; returns how many. */
  deleteThrough(id: number): Promise<number>;
}

export interface JobQuery {
  door?: string;
  status?: JobStatus[];
  /** Only the jobs this agent started. */
  agent?: string;
  limit?: number;
}

export interface JobRepo {
  /** Insert or replace by id. */
  put(job: Job): Promise<void>;
  /**
   * Replace a job that is still `queued` or `running` in the store; false
   * (nothing changed) once it has finished there — e.g. another instance
   * failed it `interrupted` — so a job is finished exactly once. With
   * `savedAt`, only while the stored job's `updatedAt` is still that (the
   * run's own last save: not taken over since).
   */
  updateUnfinished(job: Job, savedAt?: number): Promise<boolean>;
  /**
   * Takes over a job whose instance stopped heartbeating: replaces it only
   * while it is still `queued` or `running` and last updated before
   * `staleBefore`; false when another instance took it (or finished it)
   * first, so one instance resumes it.
   */
  takeOver(job: Job, staleBefore: number): Promise<boolean>;
  get(id: string): Promise<Job | null>;
  /** Newest first; with `agent`, only the jobs that agent started. */
  list(query?: JobQuery): Promise<Job[]>;
  /**
   * Mark every `queued` or `running` job `failed` with error `interrupted`
   * — only those last updated before `staleBefore` when given (their
   * instance stopped heartbeating) — and return the jobs changed.
   */
  interruptUnfinished(now: number, staleBefore?: number): Promise<Job[]>;
}

/** One entry of the event log: the id is the deployment-wide event id. */
export interface LoggedEventRow {
  id: number;
  at: number;
  data: Record<string, unknown> & { event: string };
}

/**
 * The deployment's event log (spec/kernel.md §9): ids increase and are
 * committed in id order, so a reader that has seen id N and later reads
 * `after(N)` misses nothing committed since.
 */
export interface EventLogRepo {
  /** Appends in order; returns the entries with their ids. */
  append(
    entries: readonly { at: number; data: LoggedEventRow['data'] }[],
  ): Promise<LoggedEventRow[]>;
  /** Entries with id greater than `afterId`, oldest first. */
  after(afterId: number, limit: number): Promise<LoggedEventRow[]>;
  /** The lowest and highest id kept (null/0 when the log is empty). */
  bounds(): Promise<{ first: number | null; last: number }>;
  /** Deletes entries with id up to `throughId`; returns how many. */
  prune(throughId: number): Promise<number>;
}

export interface StoreTx {
  readonly records: RecordRepo;
  readonly journal: JournalRepo;
  readonly grants: GrantRepo;
  readonly approvals: ApprovalRepo;
  readonly audit: AuditRepo;
  readonly jobs: JobRepo;
  readonly events: EventLogRepo;
}

export interface TransactionOptions {
  /**
   * `serializable` (the default): the transaction behaves as if it ran alone,
   * whatever it reads (lists included). `keyed`: its invariants rest only on
   * rows it reads by key (`records.get`, `journal.get`, `approvals.get`) and
   * on unique constraints, so the store may run it with less isolation and
   * lock exactly those rows instead (PostgreSQL: READ COMMITTED, `SELECT …
   * FOR UPDATE`, and a lock on an absent record's key until commit). A keyed
   * transaction must not decide anything from a `list`.
   */
  isolation?: 'serializable' | 'keyed';
}

export interface ReadOptions {
  /**
   * `fn` issues one statement (one repository call that is one query, such
   * as `journal.get` or `grants.listActive`): it is its own snapshot, so the
   * store runs it without a transaction around it (PostgreSQL: no BEGIN and
   * COMMIT round trips). A second statement is refused with an error.
   */
  single?: boolean;
}

/** `store.read(fn, ONE_STATEMENT)`: `fn` is one query. */
export const ONE_STATEMENT: ReadOptions = Object.freeze({ single: true });

export interface Store {
  /** `sqlite` or `postgres`: for logs and start-up output only. */
  readonly kind: string;
  /** A short description of where data lives (a path, or a URL without password). */
  readonly location: string;
  /**
   * Read-write transaction; serialised against other writers. It may run
   * more than once (a PostgreSQL serialization failure or deadlock is retried
   * inside the store), so `fn` must have no effect outside `tx`. It resolves
   * only once its commit is durable.
   */
  transaction<T>(fn: (tx: StoreTx) => Promise<T>, options?: TransactionOptions): Promise<T>;
  /** Read-only access. */
  read<T>(fn: (tx: StoreTx) => Promise<T>, options?: ReadOptions): Promise<T>;
  /**
   * A number that stays the same only while no other process (or other
   * store object on the same file) committed since it was last the same;
   * this store's own commits do not move it. Synchronous and cheap, for a
   * cache that must notice every change without a read per use (the
   * principals epoch on every request): the cache's owner invalidates it
   * for the changes it commits itself. Absent or null: the store cannot
   * tell (PostgreSQL) — read.
   */
  changeMark?(): number | null;
  /**
   * A number that stays the same only while no grant changed: null while a
   * write transaction of this store that used `tx.grants` is under way, moved
   * once it ended, and moved when `changeMark` moves. Null or absent when the
   * store cannot tell (PostgreSQL) — read. For the kernel's grant cache
   * (authority/grant-cache.ts).
   */
  grantsMark?(): number | null;
  close(): Promise<void>;
}

/**
 * Content-addressed bytes (PDFs, images). The key is the SHA-256 hex of the
 * bytes; putting the same bytes twice stores them once.
 */
export interface BlobStore {
  /** Stores the bytes and returns their SHA-256 lowercase hex. */
  put(bytes: Uint8Array): Promise<string>;
  /** The bytes, or null when unknown. */
  get(hash: string): Promise<Uint8Array | null>;
  has(hash: string): Promise<boolean>;
}

/**
 * Storage a door keeps in a folder of its own (a scene project): a history
 * log and a blob store there. The composition root decides the
 * implementation; the door only names the folder.
 *
 * `shared` (scale-out, spec/README.md "Storage"): the logs and blobs live in
 * the store, every instance on it sees the same ones, and a folder name is
 * only a key — nothing is kept on this machine's disk. Absent: false.
 */
export interface FolderStorage {
  readonly shared?: boolean;
  historyLog<S, Op>(
    dir: string,
  ): HistoryLog<S, Op> & { close(): void; changedAt?(): number | null };
  blobs(dir: string): BlobStore;
  /**
   * Forgets the folder's history log (entries and snapshot). Its blobs stay:
   * they are content-addressed and may be shared with other folders.
   */
  removeLog(dir: string): Promise<void>;
}
