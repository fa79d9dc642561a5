/**
 * What a project's files must hold before the door serves them (spec/scene.md
 * "Project on disk"; kernel §7 for the history's shapes): `snapshot.json` is
 * `{epoch, state: Scene, undo, redo, operations?}`, each line of `oplog.jsonl`
 * a log entry of scene ops (with the operation tag of a journaled change). A
 * project opened from disk or imported from a `.khr` is checked here, so a
 * broken file is refused naming the file and the field, instead of becoming
 * the live scene that every later read trips over.
 */
import { z } from 'zod';
import {
  AirlockError,
  type HistoryLog,
  type HistorySnapshot,
  type LogEntry,
} from '../../../kernel/index.js';
import { emptyScene, Scene } from '../model/model.js';
import { OpSchema, type Op } from '../model/ops.js';
import { applyOp, SceneOpError } from '../model/reducer.js';

/**
 * Nesting that stored JSON may reach: far past what scenes and op batches
 * need, low enough that zod and the reducer's recursion stay off the stack limit.
 */
export const MAX_STORED_DEPTH = 256;

const Epoch = z.number().int().min(0);
const Step = z.object({ label: z.string(), ops: z.array(OpSchema), inverses: z.array(OpSchema) });
/** The tag of a journaled change (operations.ts), kept so a retry or a restart can find it. */
const Operation = z.string().min(1).max(200);

export const StoredSnapshot = z.object({
  epoch: Epoch,
  state: Scene,
  undo: z.array(Step),
  redo: z.array(Step),
  operations: z.array(z.object({ operation: Operation, epoch: Epoch })).optional(),
}) satisfies z.ZodType<HistorySnapshot<Scene, Op>>;

export const StoredLogEntry = z.discriminatedUnion('type', [
  z.object({
    epoch: Epoch,
    type: z.literal('apply'),
    ops: z.array(OpSchema),
    label: z.string(),
    operation: Operation.optional(),
  }),
  z.object({ epoch: Epoch, type: z.literal('undo'), operation: Operation.optional() }),
  z.object({ epoch: Epoch, type: z.literal('redo'), operation: Operation.optional() }),
]) satisfies z.ZodType<LogEntry<Op>>;

/** A project file that does not hold what it must; `detail` names the file and the field. */
export class StoredFileError extends AirlockError {
  constructor(
    readonly dir: string,
    readonly file: string,
    readonly field: string,
    readonly detail: string,
  ) {
    super(
      'malformedRequest',
      `The project at ${dir} cannot be opened: ${detail}. Repair or remove ${file}, or open another project.`,
      { file, field },
    );
    this.name = 'StoredFileError';
  }
}

const EXPECTED: Record<string, string> = {
  array: 'an array',
  object: 'an object',
  int: 'an integer',
  number: 'a number',
  string: 'a string',
  boolean: 'true or false',
};

/** "nothing (the field is missing)", "an object", "the string \"x\"", "the number 3"… */
export function describeValue(value: unknown): string {
  if (value === undefined) return 'nothing (the field is missing)';
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  if (typeof value === 'object') return 'an object';
  if (typeof value === 'string')
    return `the string ${JSON.stringify(value.length > 40 ? `${value.slice(0, 40)}…` : value)}`;
  return `the ${typeof value} ${String(value)}`;
}

const valueAt = (root: unknown, path: readonly PropertyKey[]): unknown =>
  path.reduce<unknown>(
    (v, key) =>
      v !== null && typeof v === 'object' ? (v as Record<PropertyKey, unknown>)[key] : undefined,
    root,
  );

/** `file: \`a.b\` must be an array; got an object` for the first problem zod found. */
export function describeProblem(
  file: string,
  issue: z.core.$ZodIssue,
  input: unknown,
): { field: string; detail: string } {
  const field = issue.path.map(String).join('.');
  const subject = field ? `${file}: \`${field}\`` : file;
  if (issue.code === 'invalid_type') {
    const expected = EXPECTED[issue.expected] ?? `a ${issue.expected}`;
    return {
      field,
      detail: `${subject} must be ${expected}; got ${describeValue(valueAt(input, issue.path))}`,
    };
  }
  if (issue.code === 'unrecognized_keys')
    return { field, detail: `${subject} has unknown fields ${issue.keys.join(', ')}` };
  return { field, detail: `${subject}: ${issue.message}` };
}

/** True when `value` nests objects and arrays deeper than `limit` (iterative: no recursion). */
export function nestsDeeperThan(value: unknown, limit: number): boolean {
  const stack: [unknown, number][] = [[value, 1]];
  while (stack.length) {
    const [v, depth] = stack.pop()!;
    if (v === null || typeof v !== 'object') continue;
    if (depth > limit) return true;
    for (const child of Object.values(v)) stack.push([child, depth + 1]);
  }
  return false;
}

/**
 * Parses `value` read from `file` with `schema`, or throws a StoredFileError
 * naming the field; `where` is how the detail names the place (default: the file).
 */
export function parseStored<S extends z.ZodType>(
  dir: string,
  file: string,
  schema: S,
  value: unknown,
  where = file,
): z.output<S> {
  if (nestsDeeperThan(value, MAX_STORED_DEPTH))
    throw new StoredFileError(
      dir,
      file,
      '',
      `${where} nests deeper than ${MAX_STORED_DEPTH} levels`,
    );
  const parsed = schema.safeParse(value);
  if (parsed.success) return parsed.data;
  const { field, detail } = describeProblem(where, parsed.error.issues[0]!, value);
  throw new StoredFileError(dir, file, field, detail);
}

/** Ids are unique and each page keeps the scene invariants, as if its pages were added one by one. */
function checkScene(dir: string, scene: Scene): void {
  let built = emptyScene(scene.project.name, scene.project.createdAt);
  scene.pages.forEach((page, i) => {
    try {
      built = applyOp(built, { addPage: { page } }).state;
    } catch (error) {
      if (!(error instanceof SceneOpError)) throw error;
      const field = `state.pages.${i}`;
      throw new StoredFileError(
        dir,
        'snapshot.json',
        field,
        `snapshot.json: \`${field}\` breaks the scene model (${error.kind}): ${reasonOf(error)}`,
      );
    }
  });
}

/** The reducer's reason without its op prefix and "nothing was applied" tail. */
export const reasonOf = (error: SceneOpError) =>
  error.message.replace(/^.*?refused \(\w+\): /, '').replace(/; nothing was applied\.$/, '');

/**
 * The project's history log, with what it loads checked: a snapshot that is
 * not JSON or not a scene snapshot, or a log entry that is not one of scene
 * ops, refuses the open (StoredFileError) before any of it is served.
 */
export function checkedHistoryLog(dir: string, log: HistoryLog<Scene, Op>): HistoryLog<Scene, Op> {
  return {
    async load() {
      let loaded: Awaited<ReturnType<HistoryLog<Scene, Op>['load']>>;
      try {
        loaded = await log.load();
      } catch (error) {
        // The op log skips a torn line itself, so unparsable JSON is the snapshot's.
        if (!(error instanceof SyntaxError)) throw error;
        throw new StoredFileError(
          dir,
          'snapshot.json',
          '',
          `snapshot.json is not JSON (${error.message})`,
        );
      }
      const snapshot =
        loaded.snapshot === null
          ? null
          : parseStored(dir, 'snapshot.json', StoredSnapshot, loaded.snapshot);
      if (snapshot) checkScene(dir, snapshot.state);
      const entries = loaded.entries.map((entry, i) =>
        parseStored(dir, 'oplog.jsonl', StoredLogEntry, entry, `oplog.jsonl entry ${i + 1}`),
      );
      return { snapshot, entries };
    },
    append: (entry) => log.append(entry),
    compact: (snapshot) => log.compact(snapshot),
    // A shared log's later entries were appended by instances of this door, through the reducer.
    ...(log.since ? { since: log.since.bind(log) } : {}),
  };
}
