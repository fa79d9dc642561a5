import { afterEach, describe, expect, it } from 'vitest';
import { notesHarness, provenance, uuid, type Harness } from './harness.js';

let h: Harness;
afterEach(async () => h?.dispose());

interface Receipt {
  operationID: string;
  documentID: string;
  committedRevision: number;
  ownerProofSHA256: string;
}

async function writable() {
  h = await notesHarness();
  const project = await h.project('Work');
  await h.grant('write', project);
  await h.grant('read', project);
  const documentID = uuid();
  const receipt = await h.ok<Receipt>('rooqi_create_note', {
    operationID: uuid(),
    documentID,
    title: 'Plan',
    ...provenance,
  });
  return { project, documentID, receipt };
}

const appendArgs = (documentID: string, text: string, expectedVersion: number) => ({
  operationID: uuid(),
  documentID,
  text,
  expectedVersion,
  ...provenance,
});

describe('create and append', () => {
  it('create_note answers a receipt at revision 0 and the document appears in the project', async () => {
    const { documentID, receipt } = await writable();
    expect(Object.keys(receipt).sort()).toEqual([
      'committedRevision',
      'documentID',
      'operationID',
      'ownerProofSHA256',
    ]);
    expect(receipt).toMatchObject({ documentID, committedRevision: 0 });
    expect(receipt.ownerProofSHA256).toMatch(/^[0-9a-f]{64}$/);
    expect(await h.ok('rooqi_list_approved_documents', {})).toEqual({ [documentID]: 'Plan' });
    expect(await h.ok('rooqi_read_note', { documentID })).toEqual({
      documentID,
      revision: 0,
      scope: 'savedTextBlocks',
      text: '',
    });
  });

  it('create_note with a documentID that exists answers versionConflict', async () => {
    const { documentID } = await writable();
    const env = await h.env('rooqi_create_note', {
      operationID: uuid(),
      documentID,
      title: 'Again',
      ...provenance,
    });
    expect(env.code).toBe('versionConflict');
  });

  it('append_text adds one block per call and bumps the revision', async () => {
    const { documentID } = await writable();
    const r1 = await h.ok<Receipt>('rooqi_append_text', appendArgs(documentID, 'first', 0));
    const r2 = await h.ok<Receipt>('rooqi_append_text', appendArgs(documentID, 'second', 1));
    expect([r1.committedRevision, r2.committedRevision]).toEqual([1, 2]);
    expect(await h.ok('rooqi_read_note', { documentID })).toMatchObject({
      revision: 2,
      text: 'first\n\nsecond',
    });
  });

  it('a retry with the same operationID returns the identical receipt and writes nothing', async () => {
    const { documentID } = await writable();
    const args = appendArgs(documentID, 'once', 0);
    const first = await h.env('rooqi_append_text', args);
    const again = await h.env('rooqi_append_text', args);
    expect(again).toEqual(first);
    const doc = (await h.rest('GET', `notes/documents/${documentID}`)).body;
    expect(doc.blocks).toHaveLength(1);
    expect(doc.revision).toBe(1);
  });

  it('the same operationID with different arguments answers malformedRequest', async () => {
    const { documentID } = await writable();
    const args = appendArgs(documentID, 'once', 0);
    await h.ok('rooqi_append_text', args);
    const env = await h.env('rooqi_append_text', { ...args, text: 'twice' });
    expect(env.code).toBe('malformedRequest');
    expect(env.message).toMatch(/operationID .* already used/);
  });

  it('a committed operationID retried with other arguments after a replay answers malformedRequest, not busy', async () => {
    // Issue 24 finding 14: the replay left the operation marked in flight.
    const { documentID } = await writable();
    const opA = appendArgs(documentID, 'first', 0);
    const first = await h.env('rooqi_append_text', opA);
    expect(first.code).toBe('ready');
    expect(await h.env('rooqi_append_text', opA)).toEqual(first);
    expect((await h.env('rooqi_append_text', appendArgs(documentID, 'stale', 0))).code).toBe(
      'versionConflict',
    );
    const reused = await h.env('rooqi_append_text', {
      ...opA,
      text: 'other text',
      expectedVersion: 1,
    });
    expect(reused.code).toBe('malformedRequest');
    expect(reused.message).toMatch(/operationID .* already used/);
  });

  it('a stale expectedVersion answers versionConflict with the current revision and writes nothing', async () => {
    const { documentID } = await writable();
    await h.ok('rooqi_append_text', appendArgs(documentID, 'a', 0));
    const r = await h.call('rooqi_append_text', appendArgs(documentID, 'b', 0));
    const env = JSON.parse(String(r.content[0]?.text));
    expect(env).toEqual({
      code: 'versionConflict',
      message: expect.stringContaining('revision 1'),
      resultJSON: JSON.stringify({ currentRevision: 1 }),
    });
    expect(r.isError).toBe(true);
    expect((await h.rest('GET', `notes/documents/${documentID}`)).body.blocks).toHaveLength(1);
  });

  it('an owner edit bumps the revision, so the agent’s old expectedVersion conflicts', async () => {
    const { documentID } = await writable();
    await h.rest('POST', `notes/documents/${documentID}/blocks`, { text: 'owner typed' });
    expect((await h.env('rooqi_append_text', appendArgs(documentID, 'x', 0))).code).toBe(
      'versionConflict',
    );
  });

  it('appending to another project’s document answers notAuthorized', async () => {
    const { project } = await writable();
    expect(project).toBeTruthy();
    const other = await h.project('Other');
    const d = await h.document(other);
    expect((await h.env('rooqi_append_text', appendArgs(d, 'x', 0))).code).toBe('notAuthorized');
  });
});

describe('receipts and provenance', () => {
  it('a receipt verifies and a tampered one does not', async () => {
    const { documentID } = await writable();
    const receipt = await h.ok<Receipt>('rooqi_append_text', appendArgs(documentID, 'a', 0));
    expect((await h.rest('POST', 'notes/receipts/verify', receipt)).body).toEqual({ valid: true });
    const tampered = { ...receipt, committedRevision: receipt.committedRevision + 1 };
    expect((await h.rest('POST', 'notes/receipts/verify', tampered)).body).toEqual({
      valid: false,
    });
    const forged = { ...receipt, ownerProofSHA256: '0'.repeat(64) };
    expect((await h.rest('POST', 'notes/receipts/verify', forged)).body).toEqual({ valid: false });
    expect((await h.rest('POST', 'notes/receipts/verify', 'nonsense')).body).toEqual({
      valid: false,
    });
  });

  it('receipts still verify after a restart (the secret persists)', async () => {
    const { documentID } = await writable();
    const receipt = await h.ok<Receipt>('rooqi_append_text', appendArgs(documentID, 'a', 0));
    const dir = h.tk.dir;
    await h.tk.close();
    const again = await notesHarness({ dir });
    try {
      expect((await again.rest('POST', 'notes/receipts/verify', receipt)).body).toEqual({
        valid: true,
      });
    } finally {
      await again.dispose();
    }
  });

  it('the owner lists agent writes with provenance', async () => {
    const { documentID } = await writable();
    await h.ok('rooqi_append_text', {
      ...appendArgs(documentID, 'a', 0),
      provider: 'anthropic',
      model: 'claude',
      promptVersion: '7',
    });
    const writes = (await h.rest('GET', `notes/writes?documentID=${documentID}`)).body.writes;
    expect(writes.map((w: { tool: string }) => w.tool)).toEqual([
      'rooqi_create_note',
      'rooqi_append_text',
    ]);
    expect(writes[1]).toMatchObject({
      documentID,
      committedRevision: 1,
      provenance: { provider: 'anthropic', model: 'claude', promptVersion: '7' },
    });
  });

  it('every write is audited with its provenance, and refusals are audited too', async () => {
    const { documentID } = await writable();
    await h.ok('rooqi_append_text', appendArgs(documentID, 'a', 0));
    await h.env('rooqi_append_text', appendArgs(documentID, 'b', 0));
    const entries = await h.tk.kernel.audit.list({ door: 'notes' });
    const appends = entries.filter((e) => e.tool === 'rooqi_append_text');
    expect(appends.map((e) => e.result)).toEqual(['ok', 'versionConflict']);
    expect(appends[0]!.provenance).toEqual(provenance);
  });

  it('the receipt secret never appears in results or the REST API', async () => {
    const { documentID } = await writable();
    const secret = await h.tk.kernel.store.read((tx) =>
      tx.records.get<{ hex: string }>('notes.owner', 'receiptSecret'),
    );
    const hex = secret!.value.hex;
    const seen = JSON.stringify([
      await h.call('rooqi_status', {}),
      await h.call('rooqi_read_note', { documentID }),
      (await h.rest('GET', `notes/documents/${documentID}`)).body,
      (await h.rest('GET', `notes/writes`)).body,
    ]);
    expect(seen).not.toContain(hex);
  });
});
