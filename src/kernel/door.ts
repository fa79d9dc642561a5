/**
 * What a door gives the kernel: its tools, limits, the resources a person may
 * pick when approving a grant, how to resolve operations left uncertain, and
 * its lifecycle. How a door shows itself on a wire (MCP results, REST routes,
 * static files) is a surface the transport owns (`transport/surface.ts`);
 * the kernel never sees it. A door never imports another door, and never
 * re-implements a kernel stage.
 */
import type { Job, JournalEntry, ResourceRef } from './records.js';
import type { ResumedJob } from './jobs.js';
import type { Resolution } from './writes/journal.js';
import type { AnyToolDef, Limits } from './tool.js';
import type { Kernel } from './kernel.js';

/**
 * Something outside Airlock a door depends on (an MCP server, an API), as
 * the door sees it now: what metrics and status pages show, in words no
 * door owns.
 */
export interface UpstreamHealth {
  /** Its name, unique among the door's upstreams. */
  name: string;
  /** Reachable and answering now. */
  up: boolean;
  /** The door's word for its state (`running`, `restarting`, `failed`…). */
  state: string;
  /** Times it was restarted or reconnected since this process started. */
  restarts: number;
  /** Calls sent to it and not yet answered, when the door counts them. */
  inFlight?: number;
}

/** What a door reports of its health when asked (`Door.status`). */
export interface DoorStatus {
  upstreams: UpstreamHealth[];
}

export interface Door {
  /** Door kind (`notes`), the scope of its grants and journal. */
  readonly name: string;
  /** Mount name when a door is mounted several times (openapi prefixes); defaults to `name`. */
  readonly mount?: string;
  readonly tools: readonly AnyToolDef[];
  /**
   * The forms of the target strings its calls carry (authority.md §3), text
   * with `<placeholders>`: `fs:<tool>`, `<prefix>:<resource>.<method>`,
   * `remove_page`, `pipeline:<step>`. A policy rule naming this door whose
   * target can match none of them is refused (rule-targets.ts). Absent: its
   * calls carry no targets.
   */
  readonly targetForms?: readonly string[];
  readonly limits?: Partial<Limits>;
  /** Decide an operation left prepared or uncertain (default: a store write that never committed). */
  resolveOperation?(entry: JournalEntry): Promise<Resolution>;
  /**
   * Resumes a job of this door whose instance died (spec/kernel.md §8: "or
   * resumed, where the door can"), from what the store kept of it: input,
   * progress, warnings. Null, or absent: the job ends `failed` with
   * `interrupted`.
   */
  resumeJob?(job: Job): ResumedJob | null;
  /** Called once the kernel is ready (recover state, start timers). */
  start?(kernel: Kernel): Promise<void>;
  stop?(): Promise<void>;
  /**
   * Resources a person may pick when approving a grant of this door (e.g.
   * notes projects). Approvals must then name one of them, by id or name.
   */
  resources?(capability: string): Promise<ResourceRef[]>;
  /**
   * Its health now (optional, cheap, no I/O): read when metrics are
   * collected (`airlock_upstream_*`, docs/operations.md). Absent: the door
   * reports nothing.
   */
  status?(): DoorStatus;
}
