/**
 * One tool of a mounted door, called in-process through the kernel with
 * structured garbage (garbage.ts). Every answer is checked: the kernel
 * answers instead of throwing; a failure carries a catalogue code and a
 * message; `internal` carries the log id its message names (and, garbage
 * being the caller's mistake, does not happen at all); every failure left an
 * audit entry for this tool with its code; and the door's presenter shows
 * the outcome in the door's wire shape (`shape`).
 *
 * Environment: FUZZ_SEED (the suite's seed; each tool and route derives its
 * own from it, so a failure replays), FUZZ_RUNS and FUZZ_REST_RUNS (inputs
 * per tool and requests per route), FUZZ_REPORT (print what each run's
 * inputs came back as).
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { ERROR_CODES, type Failure } from '../../src/kernel/errors.js';
import type { Connection } from '../../src/kernel/connection.js';
import type { CallOutcome } from '../../src/kernel/calls/pipeline.js';
import { presentOutcome } from '../../src/transport/mcp/present.js';
import type { Presented, ServingKernel, ToolResult } from '../../src/transport/surface.js';
import { argumentsFor } from './garbage.js';

/**
 * Inputs per tool: 5,000 in CI (issue #13), 1,000 in a local run, or
 * FUZZ_RUNS. Most of a run's time is the kernel's own work per call (the
 * audit entry of every refusal is a committed SQLite transaction).
 */
export const RUNS = Number(process.env.FUZZ_RUNS ?? (process.env.CI ? 5_000 : 1_000));

/** The suite's seed: every run draws the same inputs unless FUZZ_SEED says otherwise. */
export const SUITE_SEED = Number(process.env.FUZZ_SEED ?? 13);

/** One seed per tool or route, derived from the suite's, so each draws its own fixed stream. */
export function seedFor(name: string): number {
  let h = SUITE_SEED;
  for (const c of name) h = (Math.imul(h, 31) + c.charCodeAt(0)) | 0;
  return h;
}

/** The first lines of a failure report: how to replay it. */
export const replay = (what: string, seed: number, path: string | null | undefined) =>
  `${what} (seed ${seed}, path ${path}; FUZZ_SEED=${SUITE_SEED} replays the suite)`;

/**
 * A data folder for a fuzz kernel, in memory where the system has one: the
 * suite makes tens of thousands of audited calls, and fsync per audit entry
 * on a disk would make it minutes instead of seconds.
 */
export function fuzzDataDir(): string {
  try {
    return mkdtempSync('/dev/shm/airlock-fuzz-');
  } catch {
    return mkdtempSync(join(tmpdir(), 'airlock-fuzz-'));
  }
}

export interface ToolFuzzTarget {
  kernel: ServingKernel;
  mount: string;
  /** Who calls; each input picks one (an agent's calls pass the owner's policy). */
  connections: readonly Connection[];
  /** Domain words mixed into strings: known ids, engine and resource names. */
  words: readonly string[];
  /** Valid arguments per tool that reach things that exist; garbage is derived from them too. */
  examples?: Readonly<Record<string, readonly unknown[]>>;
  /** Asserts the door's wire shape of one presented outcome. */
  shape(shown: Presented, outcome: CallOutcome): void;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/**
 * A check in the per-input loop. `expect` costs more than the call it checks
 * when it runs tens of thousands of times, so the loop uses plain checks.
 */
export function must(ok: boolean, what: string | (() => string)): asserts ok {
  if (!ok) throw new Error(typeof what === 'string' ? what : what());
}

const codes: ReadonlySet<string> = new Set(ERROR_CODES);

/** What every failure must be, whatever the door: a catalogue code, a sentence, a log id for `internal`. */
export function checkCatalogueFailure(f: Failure): void {
  must(codes.has(f.code), () => `code ${brief(f.code)} is not in the catalogue`);
  must(typeof f.message === 'string' && f.message.length > 0, 'the failure has a message');
  if (f.code === 'internal') {
    const logId = f.data?.logId;
    must(typeof logId === 'string' && UUID.test(logId), 'internal carries a log id');
    must(f.message.includes(logId), 'the internal message names its log id');
  }
}

/** The first item of a tool result: text holding a JSON object. */
export function textJson(shown: Presented): Record<string, unknown> {
  must('content' in shown, () => `a tool result, not ${brief(shown)}`);
  const first = (shown as ToolResult).content[0];
  must(first?.type === 'text', 'the first content item is text');
  const parsed = JSON.parse(String(first.text)) as unknown;
  must(
    parsed !== null && typeof parsed === 'object' && !Array.isArray(parsed),
    'the text is a JSON object',
  );
  return parsed as Record<string, unknown>;
}

/** A value shortened for a failure report (inputs can be megabytes). */
export function brief(value: unknown, max = 600): string {
  let text: string;
  try {
    text = JSON.stringify(value) ?? String(value);
  } catch {
    text = String(value);
  }
  return text.length <= max ? text : `${text.slice(0, max)}… (${text.length} characters)`;
}

const lastAudit = new WeakMap<ServingKernel, number>();

async function auditedSince(kernel: ServingKernel) {
  let after = lastAudit.get(kernel);
  if (after === undefined) after = (await kernel.audit.list()).at(-1)?.id ?? 0;
  const entries = await kernel.audit.list({ afterId: after });
  lastAudit.set(kernel, entries.at(-1)?.id ?? after);
  return entries;
}

/** How often each result code (or HTTP status) came back. */
export type Tally = Record<string, number>;

/** With FUZZ_REPORT set, prints what a run's inputs came back as (to see how deep they got). */
export function report(name: string, tally: Tally): void {
  if (!process.env.FUZZ_REPORT) return;
  const counts = Object.entries(tally)
    .sort((a, b) => b[1] - a[1])
    .map(([code, n]) => `${code} ${n}`);
  process.stdout.write(`${name}: ${counts.join(', ')}\n`);
}

/**
 * Throws garbage at one tool `runs` times and checks every answer; throws a
 * report naming the seed, the input and what was wrong on the first failure.
 */
export async function fuzzTool(
  target: ToolFuzzTarget,
  tool: string,
  runs = RUNS,
  /** Names the run's seed (default: the tool's name). */
  label = tool,
): Promise<Tally> {
  const { kernel, mount } = target;
  const descriptor = kernel.tools(mount).find((d) => d.name === tool);
  const def = kernel.tool(mount, tool);
  if (!descriptor || !def) throw new Error(`no tool ${tool} on ${mount}`);
  const presenter = kernel.door(mount)?.mcp?.presenter;
  const args = argumentsFor(
    descriptor.inputSchema,
    { words: target.words, requestBytes: kernel.limits(mount)!.requestBytes },
    target.examples?.[tool],
  );
  const who = fc.nat({ max: target.connections.length - 1 });
  const tally: Tally = {};
  await auditedSince(kernel);

  const details = await fc.check(
    fc.asyncProperty(args, who, async (input, w) => {
      const connection = target.connections[w]!;
      const outcome = await kernel.call(mount, tool, input, { connection });
      const code = outcome.ok ? 'ok' : outcome.code;
      tally[code] = (tally[code] ?? 0) + 1;
      if (!outcome.ok) {
        checkCatalogueFailure(outcome);
        // Garbage is the caller's mistake: a handler that throws on it is a bug, log id or not.
        must(outcome.code !== 'internal', () => `a handler threw (${outcome.message})`);
        const entries = await auditedSince(kernel);
        must(
          entries.some((e) => e.tool === tool && e.result === outcome.code),
          () => `the ${outcome.code} refusal has an audit entry (entries since: ${brief(entries)})`,
        );
      }
      target.shape(presentOutcome(presenter, def, outcome), outcome);
    }),
    { numRuns: runs, seed: seedFor(label) },
  );
  if (details.failed) {
    const [input, w] = details.counterexample ?? [];
    const error =
      details.errorInstance instanceof Error
        ? details.errorInstance.message
        : String(details.errorInstance);
    throw new Error(
      `${replay(`${label} failed after ${details.numRuns} inputs`, details.seed, details.counterexamplePath)}\n` +
        `input: ${brief(input)}\nconnection: ${target.connections[w ?? 0]?.id}\n${error}`,
    );
  }
  report(label, tally);
  return tally;
}
