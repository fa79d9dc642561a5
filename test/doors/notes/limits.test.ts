import { afterEach, describe, expect, it } from 'vitest';
import { notesHarness, provenance, uuid, type Harness } from './harness.js';

let h: Harness | undefined;
afterEach(async () => {
  await h?.dispose();
  h = undefined;
});

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

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
    while (entered < 8) await sleep(5);
    const started = Date.now();
    expect((await h.env('rooqi_status', {})).code).toBe('busy');
    expect(Date.now() - started).toBeLessThan(500);
    // another connection is not affected
    expect((await h.env('rooqi_request_read_access', {}, 'other')).code).toBe('approvalRequired');
    release();
    expect((await Promise.all(held)).map((e) => e.code)).toEqual(Array(8).fill('ready'));
  });

  it('a call held past the timeout answers timeout and writes nothing', async () => {
    h = await notesHarness({
      limits: { timeoutMs: 300 },
      hooks: {
        beforeHandler: async (tool) => {
          if (tool === 'rooqi_append_text') await sleep(800);
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
    await sleep(700);
    expect((await h.rest('GET', `notes/documents/${d}`)).body.blocks).toHaveLength(0);
    expect(await h.ok('rooqi_query_pdf_operation', { documentID: d, operationID })).toEqual({
      state: 'not-found',
    });
  });

  it('a write whose commit outlasts the timeout is never reported failed, and query_pdf_operation resolves it', async () => {
    h = await notesHarness({
      limits: { timeoutMs: 300 },
      hooks: {
        insideWrite: async (tool) => {
          if (tool === 'rooqi_append_text') await sleep(800);
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
    await sleep(700);
    const state = await h.ok<{ state: string; receipt: unknown }>('rooqi_query_pdf_operation', {
      documentID: d,
      operationID,
    });
    expect(state.state).toBe('committed');
    expect(state.receipt).toMatchObject({ operationID, documentID: d, committedRevision: 1 });
    expect((await h.rest('GET', `notes/documents/${d}`)).body.blocks).toHaveLength(1);
  });

  it('the door’s 8-second timeout holds: a call held 8.5 s answers timeout', async () => {
    h = await notesHarness({
      hooks: {
        beforeHandler: async (tool) => {
          if (tool === 'rooqi_status') await sleep(8_500);
        },
      },
    });
    const started = Date.now();
    expect((await h.env('rooqi_status', {})).code).toBe('timeout');
    const took = Date.now() - started;
    expect(took).toBeGreaterThanOrEqual(7_900);
    expect(took).toBeLessThan(8_400);
  }, 20_000);
});
