/** Builds a real kernel on a temp SQLite file for tests. */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createKernel, type KernelOptions } from '../../src/kernel/kernel.js';
import { createEventBus, type EventBus } from '../../src/kernel/events/events.js';
import { silentLogger } from '../../src/kernel/logger.js';
import { openStore } from '../../src/store/open.js';
import { connection } from '../../src/kernel/connection.js';
import type { CallOptions, CallOutcome } from '../../src/kernel/calls/pipeline.js';
import { defaultPresenter, presentOutcome } from '../../src/transport/mcp/present.js';
import type { Presented, ServedDoor, ServingKernel } from '../../src/transport/surface.js';

export interface TestKernel {
  kernel: ServingKernel;
  events: EventBus;
  dir: string;
  /** Closes the kernel and store, keeping the folder (for restart tests). */
  close(): Promise<void>;
  /** Closes and deletes the folder. */
  dispose(): Promise<void>;
}

export async function testKernel(
  doors: ServedDoor[],
  options: Partial<Omit<KernelOptions, 'store' | 'blobs' | 'events' | 'logger'>> & {
    dir?: string;
  } = {},
): Promise<TestKernel> {
  const dir = options.dir ?? mkdtempSync(join(tmpdir(), 'airlock-test-'));
  const { store, blobs } = await openStore({ data: dir });
  const events = await createEventBus();
  const kernel = createKernel<ServedDoor>({
    store,
    blobs,
    events,
    logger: silentLogger,
    ...options,
  });
  for (const d of doors) kernel.mount(d);
  await kernel.start();
  let closed = false;
  const close = async () => {
    if (closed) return;
    closed = true;
    await kernel.close();
    await events.close();
    await store.close();
  };
  return {
    kernel,
    events,
    dir,
    close,
    async dispose() {
      await close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

export const conn = (id = 'test:1') => connection(id, 'internal');

/** An outcome as the generic MCP presenter shows it: the parsed JSON of its text. */
export function textOf(outcome: CallOutcome): unknown {
  const shown = outcome.ok
    ? defaultPresenter.success({ output: undefined } as never, outcome.value)
    : defaultPresenter.failure({} as never, outcome);
  return JSON.parse(String(shown.content[0]!.text));
}

/** Runs a call through the kernel and shows it as the door's MCP surface does. */
export async function callPresented(
  kernel: ServingKernel,
  mount: string,
  tool: string,
  args: unknown,
  options: CallOptions,
): Promise<Presented> {
  const outcome = await kernel.call(mount, tool, args, options);
  return presentOutcome(
    kernel.door(mount)?.mcp?.presenter,
    kernel.tool(mount, tool) ?? tool,
    outcome,
  );
}
