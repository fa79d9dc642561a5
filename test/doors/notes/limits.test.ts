import { afterEach, describe, expect, it, vi } from 'vitest';
import { notesHarness, provenance, uuid, type Harness } from './harness.js';
import { holdsFor, waitFor } from '../../helpers/wait.js';

let h: Harness | undefined;
afterEach(async () => {
  await h?.dispose();
  h = undefined;
});

/** Resolves when the call's deadline aborts its signal: a hook holds a call exactly until then. */
const aborted = (signal: AbortSignal) =>
  new Promise<void>((resolve) =>
    signal.aborted ? resolve() : signal.addEventListener('abort', () => resolve(), { once: true }),
  );

describe('limits', () => {
  it('the 9th concurrent call on a connection answers busy at once', async () => {
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    let entered = 0;
    h = await notesHarness({
      hooks: {
        beforeHandler: async (tool) => {
          if (tool !== 'rooqi_status') return;
          entered++;
          await gate;
        },
      },
    });
    const held = Array.from({ length: 8 }, () => h!.env('rooqi_status', {}));
    await waitFor(() => entered >= 8, { intervalMs: 5, message: '8 calls held in the handler' });
    const started = Date.now();
    expect((await h.env('rooqi_status', {})).code).toBe('busy');
    expect(Date.now() - started).toBeLessThan(500);
    // another connection is not affected
    expect((await h.env('rooqi_request_read_access', {}, 'other')).code).toBe('approvalRequired');
    release();
    expect((await Promise.all(held)).map((e) => e.code)).toEqual(Array(8).fill('ready'));
  });

  it('a call held past the timeout answers timeout and writes nothing', async () => {
    let heldDone!: () => void;
    const held = new Promise<void>((r) => (heldDone = r));
    h = await notesHarness({
      limits: { timeoutMs: 300 },
      hooks: {
        beforeHandler: async (tool, signal) => {
          if (tool !== 'rooqi_append_text') return;
          // Held past the 300 ms deadline: it goes on once the deadline has stopped the call.
          await aborted(signal);
          heldDone();
        },
      },
    });
    const p = await h.project('P');
    const d = await h.document(p);
    await h.grant('write', p);
    await h.grant('pdfAnnotate', p);
    const operationID = uuid();
    const env = await h.env('rooqi_append_text', {
      operationID,
      documentID: d,
      text: 'late',
      expectedVersion: 0,
      ...provenance,
    });
    expect(env.code).toBe('timeout');
    // The held handler goes on after its caller got `timeout`: still nothing is written.
    await held;
    await holdsFor(
      async () => (await h!.rest('GET', `notes/documents/${d}`)).body.blocks.length === 0,
      200,
      { message: 'no block written' },
    );
    expect(await h.ok('rooqi_query_pdf_operation', { documentID: d, operationID })).toEqual({
      state: 'not-found',
    });
  });

  it('a write whose commit outlasts the timeout is never reported failed, and query_pdf_operation resolves it', async () => {
    h = await notesHarness({
      limits: { timeoutMs: 300 },
      hooks: {
        // The commit waits inside its write until the deadline has passed, then completes.
        insideWrite: async (tool, signal) => {
          if (tool === 'rooqi_append_text') await aborted(signal);
        },
      },
    });
    const p = await h.project('P');
    const d = await h.document(p);
    await h.grant('write', p);
    await h.grant('pdfAnnotate', p);
    const operationID = uuid();
    const env = await h.env('rooqi_append_text', {
      operationID,
      documentID: d,
      text: 'slow commit',
      expectedVersion: 0,
      ...provenance,
    });
    expect(['ready', 'mutationUncertain']).toContain(env.code);
    await waitFor(
      async () =>
        (
          await h!.ok<{ state: string }>('rooqi_query_pdf_operation', {
            documentID: d,
            operationID,
          })
        ).state === 'committed',
      { message: 'the slow commit' },
    );
    const state = await h.ok<{ state: string; receipt: unknown }>('rooqi_query_pdf_operation', {
      documentID: d,
      operationID,
    });
    expect(state.state).toBe('committed');
    expect(state.receipt).toMatchObject({ operationID, documentID: d, committedRevision: 1 });
    expect((await h.rest('GET', `notes/documents/${d}`)).body.blocks).toHaveLength(1);
  });

  it('the door’s 8-second timeout holds: a held call answers timeout at 8 s, not before', async () => {
    let entered!: () => void;
    const inHandler = new Promise<void>((resolve) => (entered = resolve));
    h = await notesHarness({
      hooks: {
        beforeHandler: async (tool, signal) => {
          if (tool !== 'rooqi_status') return;
          entered();
          await aborted(signal);
        },
      },
    });
    // The deadline's timer runs on a fake clock: 8 s pass without waiting them.
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    try {
      let answered = false;
      const call = h.env('rooqi_status', {}).finally(() => (answered = true));
      await inHandler;
      await vi.advanceTimersByTimeAsync(7_999);
      expect(answered).toBe(false);
      await vi.advanceTimersByTimeAsync(1);
      expect((await call).code).toBe('timeout');
    } finally {
      vi.useRealTimers();
    }
  });
});
