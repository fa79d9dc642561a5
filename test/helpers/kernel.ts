/** Builds a real kernel on a temp SQLite file for tests. */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createKernel, type Kernel, type KernelOptions } from '../../src/kernel/kernel.js';
import { createEventBus, type EventBus } from '../../src/kernel/events.js';
import { silentLogger } from '../../src/kernel/logger.js';
import { openStore } from '../../src/store/open.js';
import type { Door } from '../../src/kernel/door.js';
import { connection } from '../../src/kernel/connection.js';

export interface TestKernel {
  kernel: Kernel;
  events: EventBus;
  dir: string;
  /** Closes the kernel and store, keeping the folder (for restart tests). */
  close(): Promise<void>;
  /** Closes and deletes the folder. */
  dispose(): Promise<void>;
}

export async function testKernel(
  doors: Door[],
  options: Partial<Omit<KernelOptions, 'store' | 'blobs' | 'events' | 'logger'>> & {
    dir?: string;
  } = {},
): Promise<TestKernel> {
  const dir = options.dir ?? mkdtempSync(join(tmpdir(), 'airlock-test-'));
  const { store, blobs } = await openStore({ data: dir });
  const events = await createEventBus();
  const kernel = createKernel({ store, blobs, events, logger: silentLogger, ...options });
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

/** The parsed JSON text of a default-presenter result. */
export function textOf(result: unknown): unknown {
  const r = result as { content: { type: string; text: string }[] };
  return JSON.parse(r.content[0]!.text);
}
