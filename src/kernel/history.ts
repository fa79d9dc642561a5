/**
 * Undo/redo history driven by a door's reducer (spec/kernel.md §7).
 *
 * The door supplies `apply(state, op) -> {state, inverse}` (pure: it never
 * mutates its input, and throws an AirlockError or a door error to refuse an
 * op). The kernel owns the epoch, the undo and redo stacks, atomic batches
 * and persistence through a `HistoryLog` (append-only, fsynced op log with
 * periodic snapshot compaction; replay on open). Inverses are computed from
 * the live state only.
 */

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
  | { epoch: number; type: 'apply'; ops: Op[]; label: string }
  | { epoch: number; type: 'undo' }
  | { epoch: number; type: 'redo' };

export interface HistorySnapshot<S, Op> {
  epoch: number;
  state: S;
  undo: HistoryStep<Op>[];
  redo: HistoryStep<Op>[];
}

/** Persistence for one history; implementations in src/store/. */
export interface HistoryLog<S, Op> {
  load(): Promise<{ snapshot: HistorySnapshot<S, Op> | null; entries: LogEntry<Op>[] }>;
  /** Durably appends (fsync) before returning. */
  append(entry: LogEntry<Op>): Promise<void>;
  /** Replaces the log by this snapshot (entries up to its epoch may be dropped). */
  compact(snapshot: HistorySnapshot<S, Op>): Promise<void>;
}

export interface History<S, Op> {
  readonly epoch: number;
  readonly state: S;
  /** Applies the ops atomically as one undoable step; returns the new epoch. */
  apply(ops: Op[], label: string): Promise<number>;
  /** Returns the new epoch, or null at the stack boundary (nothing changes). */
  undo(): Promise<number | null>;
  redo(): Promise<number | null>;
  canUndo(): boolean;
  canRedo(): boolean;
  /** Writes a snapshot now and truncates the log. */
  compact(): Promise<void>;
}

export interface HistoryOptions<S, Op> {
  reducer: Reducer<S, Op>;
  initial: S;
  log?: HistoryLog<S, Op>;
  /** Compact after this many log entries (default 500). */
  compactEvery?: number;
  /** Bound on kept undo steps (default 1000). */
  maxUndo?: number;
  onChange?: (change: { epoch: number; label: string }) => void;
}

export async function openHistory<S, Op>(options: HistoryOptions<S, Op>): Promise<History<S, Op>> {
  const { reducer, log, compactEvery = 500, maxUndo = 1000 } = options;
  let state = options.initial;
  let epoch = 0;
  let undo: HistoryStep<Op>[] = [];
  let redo: HistoryStep<Op>[] = [];
  let sinceCompact = 0;
  let queue: Promise<unknown> = Promise.resolve();

  const runOps = (from: S, ops: Op[]) => {
    let s = from;
    const inverses: Op[] = [];
    for (const op of ops) {
      const r = reducer.apply(s, op);
      s = r.state;
      inverses.unshift(r.inverse);
    }
    return { state: s, inverses };
  };

  const doApply = (ops: Op[], label: string) => {
    const r = runOps(state, ops);
    state = r.state;
    undo.push({ label, ops, inverses: r.inverses });
    if (undo.length > maxUndo) undo.shift();
    redo = [];
    return ++epoch;
  };
  const doUndo = () => {
    const step = undo.pop();
    if (!step) return null;
    const r = runOps(state, step.inverses);
    state = r.state;
    redo.push(step);
    return { epoch: ++epoch, label: `undo ${step.label}` };
  };
  const doRedo = () => {
    const step = redo.pop();
    if (!step) return null;
    const r = runOps(state, step.ops);
    state = r.state;
    undo.push({ ...step, inverses: r.inverses });
    return { epoch: ++epoch, label: `redo ${step.label}` };
  };

  if (log) {
    const { snapshot, entries } = await log.load();
    if (snapshot) ({ epoch, state, undo, redo } = structuredClone(snapshot));
    for (const entry of entries) {
      if (entry.epoch <= epoch) continue;
      if (entry.type === 'apply') doApply(entry.ops, entry.label);
      else if (entry.type === 'undo') doUndo();
      else doRedo();
      sinceCompact++;
    }
  }

  const snapshotNow = (): HistorySnapshot<S, Op> => ({ epoch, state, undo, redo });
  const persist = async (entry: LogEntry<Op>) => {
    if (!log) return;
    await log.append(entry);
    if (++sinceCompact >= compactEvery) {
      await log.compact(structuredClone(snapshotNow()));
      sinceCompact = 0;
    }
  };
  // Serialise mutations so the log order equals the apply order.
  const serial = <T>(fn: () => Promise<T>): Promise<T> => {
    const next = queue.then(fn, fn);
    queue = next.catch(() => undefined);
    return next;
  };

  /**
   * Runs one change in memory (a refused op throws before anything changes),
   * logs it durably, and rolls the memory back if logging fails.
   */
  const commit = (change: () => { epoch: number; label: string; entry: LogEntry<Op> } | null) =>
    serial(async () => {
      const before = { state, undo: [...undo], redo: [...redo], epoch };
      const r = change();
      if (!r) return null;
      try {
        await persist(r.entry);
      } catch (error) {
        ({ state, undo, redo, epoch } = before);
        throw error;
      }
      options.onChange?.({ epoch: r.epoch, label: r.label });
      return r.epoch;
    });

  return {
    get epoch() {
      return epoch;
    },
    get state() {
      return state;
    },
    apply: (ops, label) =>
      commit(() => {
        const e = doApply(ops, label);
        return { epoch: e, label, entry: { epoch: e, type: 'apply', ops, label } };
      }) as Promise<number>,
    undo: () =>
      commit(() => {
        const r = doUndo();
        return r && { ...r, entry: { epoch: r.epoch, type: 'undo' } };
      }),
    redo: () =>
      commit(() => {
        const r = doRedo();
        return r && { ...r, entry: { epoch: r.epoch, type: 'redo' } };
      }),
    canUndo: () => undo.length > 0,
    canRedo: () => redo.length > 0,
    compact: () =>
      serial(async () => {
        if (log) await log.compact(structuredClone(snapshotNow()));
        sinceCompact = 0;
      }),
  };
}
