/**
 * Undo/redo history driven by a door's reducer (spec/kernel.md §7).
 *
 * The door supplies `apply(state, op) -> {state, inverse}` (pure: it never
 * mutates its input, and throws an AirlockError or a door error to refuse an
 * op). The kernel owns the epoch, the undo and redo stacks, atomic batches
 * and persistence through a `HistoryLog` (append-only, fsynced op log with
 * periodic snapshot compaction; replay on open). Inverses are computed from
 * the live state only.
 *
 * A change may carry an operation tag (an opaque string naming one request,
 * e.g. a digest of a journaled call's key and arguments). The tag is logged
 * with the change and kept, with the epoch it produced, across replay and
 * compaction for the last `maxOperations` tagged changes; a change whose tag
 * the history remembers is not made again and answers that epoch. So a
 * door whose write is the history (not the store) can make a retried request
 * idempotent, and can tell after a crash whether the request's change was
 * logged (spec/kernel.md §6).
 *
 * A shared log (scale-out: several instances append to one log in the store)
 * gives `since`, and its `append` refuses an epoch another instance took
 * first with a `HistoryConflict`. The history then catches up from the log
 * and makes the change again on the newer state (the reducer decides again;
 * a remembered tag answers its epoch), so every instance builds one history
 * with one epoch counter. `sync` catches up before a read.
 */
import { AirlockError } from '../errors.js';

/** A shared log's answer when the epoch an append names was taken by another instance first. */
export class HistoryConflict extends AirlockError {
  constructor(epoch: number) {
    super(
      'unavailable',
      `Epoch ${epoch} was taken by a change made on another instance; retry the change.`,
    );
    this.name = 'HistoryConflict';
  }
}

/** How many times a change is made again after conflicts before the caller is told to retry. */
const CONFLICT_ATTEMPTS = 50;

export interface Reducer<S, Op> {
  apply(state: S, op: Op): { state: S; inverse: Op };
}

/** One undoable step: the ops applied (a batch is several) and their inverses in undo order. */
export interface HistoryStep<Op> {
  label: string;
  ops: Op[];
  inverses: Op[];
}

export type LogEntry<Op> =
  | { epoch: number; type: 'apply'; ops: Op[]; label: string; operation?: string }
  | { epoch: number; type: 'undo'; operation?: string }
  | { epoch: number; type: 'redo'; operation?: string };

/** A tagged change the history remembers: its operation tag and the epoch it produced. */
export interface OperationMark {
  operation: string;
  epoch: number;
}

export interface HistorySnapshot<S, Op> {
  epoch: number;
  state: S;
  undo: HistoryStep<Op>[];
  redo: HistoryStep<Op>[];
  /** The remembered tagged changes, oldest first (absent when there are none). */
  operations?: OperationMark[];
}

/** The ops an undo or redo would apply now, and the label of its step. */
export interface PendingMove<Op> {
  label: string;
  ops: readonly Op[];
}

/** Persistence for one history; implementations in src/store/. */
export interface HistoryLog<S, Op> {
  load(): Promise<{ snapshot: HistorySnapshot<S, Op> | null; entries: LogEntry<Op>[] }>;
  /** Durably appends (fsync) before returning. */
  append(entry: LogEntry<Op>): Promise<void>;
  /** Replaces the log by this snapshot (entries up to its epoch may be dropped). */
  compact(snapshot: HistorySnapshot<S, Op>): Promise<void>;
  /**
   * Shared logs only: the entries after `epoch`, with the newest snapshot
   * when the log was compacted past `epoch` (else null). A log that has it
   * refuses, with a `HistoryConflict`, an append whose epoch is not the next.
   */
  since?(epoch: number): Promise<{
    snapshot: HistorySnapshot<S, Op> | null;
    entries: LogEntry<Op>[];
  }>;
}

export interface History<S, Op> {
  readonly epoch: number;
  readonly state: S;
  /**
   * Applies the ops atomically as one undoable step; returns the new epoch.
   * With an `operation` tag the history remembers, applies nothing and
   * returns the epoch that tag produced.
   */
  apply(ops: Op[], label: string, operation?: string): Promise<number>;
  /**
   * Returns the new epoch, or null at the stack boundary (nothing changes);
   * tags as `apply`. With `at`, only while the history is still at that
   * epoch: a caller that judged the step it would revert (the owner's policy
   * on an undo) never reverts another; a change made since throws
   * `versionConflict`.
   */
  undo(operation?: string, at?: number): Promise<number | null>;
  redo(operation?: string, at?: number): Promise<number | null>;
  /** What the next undo would apply (the last step's inverses) and the step's label; null when none. */
  peekUndo(): PendingMove<Op> | null;
  /** What the next redo would apply (the undone step's ops again); null when none. */
  peekRedo(): PendingMove<Op> | null;
  /** The epoch the change tagged `operation` produced, or null when none is remembered. */
  epochOf(operation: string): number | null;
  canUndo(): boolean;
  canRedo(): boolean;
  /** Writes a snapshot now and truncates the log. */
  compact(): Promise<void>;
  /** Catches up with changes other instances logged (a shared log); nothing for a private one. */
  sync(): Promise<void>;
}

export interface HistoryOptions<S, Op> {
  reducer: Reducer<S, Op>;
  initial: S;
  log?: HistoryLog<S, Op>;
  /** Compact after this many log entries (default 500). */
  compactEvery?: number;
  /** Bound on kept undo steps (default 1000). */
  maxUndo?: number;
  /** Bound on remembered operation tags (default 1000). */
  maxOperations?: number;
  onChange?: (change: { epoch: number; label: string }) => void;
  /** Each change another instance or process logged, as `sync` (or a write) catches up with it. */
  onCatchUp?: (change: { epoch: number; label: string }) => void;
}

/** One open history: its options, and the state, epoch, stacks and tags it keeps in memory. */
interface LiveHistory<S, Op> {
  reducer: Reducer<S, Op>;
  log: HistoryLog<S, Op> | undefined;
  compactEvery: number;
  maxUndo: number;
  maxOperations: number;
  options: HistoryOptions<S, Op>;
  state: S;
  epoch: number;
  undo: HistoryStep<Op>[];
  redo: HistoryStep<Op>[];
  /** Tag → epoch, in the order the changes were made (a Map keeps insertion order). */
  operations: Map<string, number>;
  sinceCompact: number;
  /** The mutation in progress; the next waits for it. */
  queue: Promise<unknown>;
}

/** A change made in memory, with the entry that logs it. */
type Made<Op> = { epoch: number; label: string; entry: LogEntry<Op> };

function remember<S, Op>(h: LiveHistory<S, Op>, operation: string | undefined, at: number): void {
  if (operation === undefined) return;
  h.operations.set(operation, at);
  if (h.operations.size > h.maxOperations) h.operations.delete(h.operations.keys().next().value!);
}

function runOps<S, Op>(reducer: Reducer<S, Op>, from: S, ops: Op[]) {
  let s = from;
  const inverses: Op[] = [];
  for (const op of ops) {
    const r = reducer.apply(s, op);
    s = r.state;
    inverses.unshift(r.inverse);
  }
  return { state: s, inverses };
}

function applyStep<S, Op>(h: LiveHistory<S, Op>, ops: Op[], label: string): number {
  const r = runOps(h.reducer, h.state, ops);
  h.state = r.state;
  h.undo.push({ label, ops, inverses: r.inverses });
  if (h.undo.length > h.maxUndo) h.undo.shift();
  h.redo = [];
  return ++h.epoch;
}

function undoStep<S, Op>(h: LiveHistory<S, Op>) {
  const step = h.undo.pop();
  if (!step) return null;
  const r = runOps(h.reducer, h.state, step.inverses);
  h.state = r.state;
  h.redo.push(step);
  return { epoch: ++h.epoch, label: `undo ${step.label}` };
}

function redoStep<S, Op>(h: LiveHistory<S, Op>) {
  const step = h.redo.pop();
  if (!step) return null;
  const r = runOps(h.reducer, h.state, step.ops);
  h.state = r.state;
  h.undo.push({ ...step, inverses: r.inverses });
  return { epoch: ++h.epoch, label: `redo ${step.label}` };
}

/** Takes a snapshot newer than the live state, then replays the entries past the epoch. */
function replay<S, Op>(
  h: LiveHistory<S, Op>,
  snapshot: HistorySnapshot<S, Op> | null,
  entries: readonly LogEntry<Op>[],
  heard?: (change: { epoch: number; label: string }) => void,
): void {
  if (snapshot && snapshot.epoch > h.epoch) {
    const copy = structuredClone(snapshot);
    h.epoch = copy.epoch;
    h.state = copy.state;
    h.undo = copy.undo;
    h.redo = copy.redo;
    h.operations = new Map();
    for (const mark of snapshot.operations ?? []) remember(h, mark.operation, mark.epoch);
    if (entries.length === 0) heard?.({ epoch: h.epoch, label: 'catch up' });
  }
  for (const entry of entries) {
    if (entry.epoch <= h.epoch) continue;
    let label = entry.type === 'apply' ? entry.label : null;
    if (entry.type === 'apply') applyStep(h, entry.ops, entry.label);
    else label = (entry.type === 'undo' ? undoStep(h) : redoStep(h))?.label ?? null;
    remember(h, entry.operation, entry.epoch);
    h.sinceCompact++;
    heard?.({ epoch: entry.epoch, label: label ?? entry.type });
  }
}

async function catchUp<S, Op>(h: LiveHistory<S, Op>): Promise<void> {
  if (!h.log?.since) return;
  const { snapshot, entries } = await h.log.since(h.epoch);
  replay(h, snapshot, entries, h.options.onCatchUp);
}

function snapshotOf<S, Op>(h: LiveHistory<S, Op>): HistorySnapshot<S, Op> {
  return {
    epoch: h.epoch,
    state: h.state,
    undo: h.undo,
    redo: h.redo,
    ...(h.operations.size > 0
      ? { operations: [...h.operations].map(([operation, at]) => ({ operation, epoch: at })) }
      : {}),
  };
}

async function persist<S, Op>(h: LiveHistory<S, Op>, entry: LogEntry<Op>): Promise<void> {
  if (!h.log) return;
  await h.log.append(entry);
  if (++h.sinceCompact >= h.compactEvery) {
    await h.log.compact(structuredClone(snapshotOf(h)));
    h.sinceCompact = 0;
  }
}

/** Serialises mutations so the log order equals the apply order. */
function serial<S, Op, T>(h: LiveHistory<S, Op>, fn: () => Promise<T>): Promise<T> {
  const next = h.queue.then(fn, fn);
  h.queue = next.catch(() => undefined);
  return next;
}

/**
 * Runs one change in memory (a refused op throws before anything changes),
 * logs it durably, and rolls the memory back if logging fails.
 */
function commit<S, Op>(
  h: LiveHistory<S, Op>,
  operation: string | undefined,
  change: () => Made<Op> | null,
): Promise<number | null> {
  return serial(h, async () => {
    for (let attempt = 1; ; attempt++) {
      await catchUp(h);
      // A remembered request is answered, not made again.
      const done = operation === undefined ? undefined : h.operations.get(operation);
      if (done !== undefined) return done;
      const before = {
        state: h.state,
        undo: [...h.undo],
        redo: [...h.redo],
        epoch: h.epoch,
        operations: h.operations,
      };
      const r = change();
      if (!r) return null;
      let entry = r.entry;
      if (operation !== undefined) {
        // Remembered before the append, so a compaction that follows it keeps the tag.
        h.operations = new Map(h.operations);
        remember(h, operation, r.epoch);
        entry = { ...entry, operation };
      }
      try {
        await persist(h, entry);
      } catch (error) {
        Object.assign(h, before);
        // Another instance logged a change first: catch up and make this one again.
        if (error instanceof HistoryConflict && attempt < CONFLICT_ATTEMPTS) continue;
        throw error;
      }
      h.options.onChange?.({ epoch: r.epoch, label: r.label });
      return r.epoch;
    }
  });
}

function stillAt<S, Op>(h: LiveHistory<S, Op>, at: number | undefined): void {
  if (at !== undefined && at !== h.epoch)
    throw new AirlockError(
      'versionConflict',
      `The history moved from epoch ${at} to ${h.epoch} since this call was decided; call it again to act on the latest step.`,
    );
}

export async function openHistory<S, Op>(options: HistoryOptions<S, Op>): Promise<History<S, Op>> {
  const { reducer, log, compactEvery = 500, maxUndo = 1000, maxOperations = 1000 } = options;
  const h: LiveHistory<S, Op> = {
    reducer,
    log,
    compactEvery,
    maxUndo,
    maxOperations,
    options,
    state: options.initial,
    epoch: 0,
    undo: [],
    redo: [],
    operations: new Map(),
    sinceCompact: 0,
    queue: Promise.resolve(),
  };
  if (log) {
    const { snapshot, entries } = await log.load();
    replay(h, snapshot, entries);
  }

  return {
    get epoch() {
      return h.epoch;
    },
    get state() {
      return h.state;
    },
    apply: (ops, label, operation) =>
      commit(h, operation, () => {
        const e = applyStep(h, ops, label);
        return { epoch: e, label, entry: { epoch: e, type: 'apply', ops, label } };
      }) as Promise<number>,
    undo: (operation, at) =>
      commit(h, operation, () => {
        stillAt(h, at);
        const r = undoStep(h);
        return r && { ...r, entry: { epoch: r.epoch, type: 'undo' } };
      }),
    redo: (operation, at) =>
      commit(h, operation, () => {
        stillAt(h, at);
        const r = redoStep(h);
        return r && { ...r, entry: { epoch: r.epoch, type: 'redo' } };
      }),
    peekUndo: () => {
      const step = h.undo.at(-1);
      return step ? { label: step.label, ops: step.inverses } : null;
    },
    peekRedo: () => {
      const step = h.redo.at(-1);
      return step ? { label: step.label, ops: step.ops } : null;
    },
    canUndo: () => h.undo.length > 0,
    canRedo: () => h.redo.length > 0,
    epochOf: (operation) => h.operations.get(operation) ?? null,
    compact: () =>
      serial(h, async () => {
        if (log) await log.compact(structuredClone(snapshotOf(h)));
        h.sinceCompact = 0;
      }),
    sync: () => serial(h, () => catchUp(h)),
  };
}
