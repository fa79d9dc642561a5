import { afterEach, describe, expect, it } from 'vitest';
import { notesHarness, provenance, uuid, type Harness } from './harness.js';

let h: Harness;
afterEach(async () => h?.dispose());

describe('consent', () => {
  it('first request answers approvalRequired and files a pending approval for the owner', async () => {
    h = await notesHarness();
    const env = await h.env('rooqi_request_read_access', {});
    expect(env.code).toBe('approvalRequired');
    const pending = await h.tk.kernel.consent.pending();
    expect(pending).toHaveLength(1);
    expect(pending[0]).toMatchObject({ door: 'notes', capability: 'read', status: 'pending' });
  });

  it('after approval the request answers the 15-minute grant for the chosen project', async () => {
    h = await notesHarness();
    const p = await h.project('Thesis');
    await h.grant('read', p);
    const grant = await h.ok('rooqi_request_read_access', {});
    expect(grant).toMatchObject({ capability: 'read', projectID: p, projectName: 'Thesis' });
    const minutes = (Date.parse(String(grant.expiresAt)) - Date.now()) / 60_000;
    expect(minutes).toBeGreaterThan(14.9);
    expect(minutes).toBeLessThanOrEqual(15);
  });

  it('a denied request answers approvalDenied', async () => {
    h = await notesHarness();
    await h.env('rooqi_request_write_access', {});
    const [pending] = await h.tk.kernel.consent.pending();
    await h.tk.kernel.consent.deny(pending!.id);
    expect((await h.env('rooqi_request_write_access', {})).code).toBe('approvalDenied');
  });

  it('status lists this connection’s grants and no one else’s', async () => {
    h = await notesHarness();
    const p = await h.project('Mine');
    await h.grant('write', p, 'conn:a');
    const mine = await h.ok<{ grants: unknown[] }>('rooqi_status', {}, 'conn:a');
    expect(mine.grants).toEqual([
      expect.objectContaining({ capability: 'write', projectID: p, projectName: 'Mine' }),
    ]);
    const theirs = await h.ok<{ grants: unknown[] }>('rooqi_status', {}, 'conn:b');
    expect(theirs.grants).toEqual([]);
  });

  it('owner resources for approval are the projects', async () => {
    h = await notesHarness();
    const a = await h.project('A');
    const b = await h.project('B');
    expect(await h.door.resources!('read')).toEqual(
      expect.arrayContaining([
        { id: a, name: 'A' },
        { id: b, name: 'B' },
      ]),
    );
  });
});

describe('grant scoping', () => {
  it('lists only the granted project’s documents', async () => {
    h = await notesHarness();
    const a = await h.project('A');
    const b = await h.project('B');
    const d1 = await h.document(a, 'one');
    const d2 = await h.document(a, 'two');
    await h.document(b, 'secret');
    await h.grant('read', a);
    expect(await h.ok('rooqi_list_approved_documents', {})).toEqual({ [d1]: 'one', [d2]: 'two' });
  });

  it('reading a document of another project answers notAuthorized', async () => {
    h = await notesHarness();
    const a = await h.project('A');
    const b = await h.project('B');
    const other = await h.document(b, 'secret');
    await h.grant('read', a);
    expect((await h.env('rooqi_read_note', { documentID: other })).code).toBe('notAuthorized');
  });

  it('an unknown document and one in an ungranted project get the same answer (no existence oracle)', async () => {
    h = await notesHarness();
    const a = await h.project('A');
    const b = await h.project('B');
    const hidden = await h.document(b);
    await h.grant('read', a);
    const missingId = uuid();
    const missing = await h.env('rooqi_read_note', { documentID: missingId });
    const elsewhere = await h.env('rooqi_read_note', { documentID: hidden });
    expect(missing.code).toBe('notAuthorized');
    expect(elsewhere.code).toBe('notAuthorized');
    expect(elsewhere.message!.replace(hidden, 'ID')).toBe(
      missing.message!.replace(missingId, 'ID'),
    );
  });

  it('a connection granted another project cannot replay a write to get its receipt', async () => {
    h = await notesHarness();
    const alpha = await h.project('Alpha');
    const beta = await h.project('Beta');
    const doc = await h.document(alpha);
    await h.grant('write', alpha, 'conn:alpha');
    await h.grant('write', beta, 'conn:beta');
    const args = {
      operationID: uuid(),
      documentID: doc,
      expectedVersion: 0,
      text: 'secret plan',
      ...provenance,
    };
    expect((await h.env('rooqi_append_text', args, 'conn:alpha')).code).toBe('ready');
    const replay = await h.env('rooqi_append_text', args, 'conn:beta');
    expect(replay.code).toBe('notAuthorized');
    expect(replay.resultJSON).toBeUndefined();
  });

  it('a read grant does not allow writing', async () => {
    h = await notesHarness();
    const a = await h.project('A');
    const d = await h.document(a);
    await h.grant('read', a);
    const env = await h.env('rooqi_append_text', {
      operationID: uuid(),
      documentID: d,
      text: 'x',
      expectedVersion: 0,
      ...provenance,
    });
    expect(env.code).toBe('notAuthorized');
  });

  it('a write grant does not allow reading or PDF access', async () => {
    h = await notesHarness();
    const a = await h.project('A');
    const d = await h.document(a);
    await h.grant('write', a);
    expect((await h.env('rooqi_read_note', { documentID: d })).code).toBe('notAuthorized');
    expect((await h.env('rooqi_list_pdf_targets', { documentID: d })).code).toBe('notAuthorized');
  });

  it('another connection does not share the grant', async () => {
    h = await notesHarness();
    const a = await h.project('A');
    const d = await h.document(a);
    await h.grant('read', a, 'conn:a');
    expect((await h.env('rooqi_read_note', { documentID: d }, 'conn:a')).code).toBe('ready');
    expect((await h.env('rooqi_read_note', { documentID: d }, 'conn:b')).code).toBe(
      'notAuthorized',
    );
  });

  it('an expired grant behaves as never granted', async () => {
    let now = Date.now();
    h = await notesHarness({ now: () => now });
    const a = await h.project('A');
    const d = await h.document(a);
    await h.grant('read', a);
    expect((await h.env('rooqi_read_note', { documentID: d })).code).toBe('ready');
    now += 15 * 60 * 1000 + 1;
    expect((await h.env('rooqi_read_note', { documentID: d })).code).toBe('notAuthorized');
    expect((await h.env('rooqi_request_read_access', {})).code).toBe('approvalRequired');
  });
});
