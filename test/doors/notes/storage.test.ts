/**
 * How the notes door stores documents (issue #16: work proportional to the
 * request): metadata without text, one record per text block, and a
 * per-project index that listing reads instead of every document.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { openStore } from '../../../src/store/open.js';
import { BLOCKS, BY_PROJECT, DOCUMENTS } from '../../../src/doors/notes/documents.js';
import { notesHarness, provenance, uuid, type Harness } from './harness.js';

let h: Harness;
afterEach(async () => h?.dispose());

async function writable(): Promise<{ project: string; documentID: string }> {
  h = await notesHarness();
  const project = await h.project('Work');
  await h.grant('write', project);
  await h.grant('read', project);
  const documentID = uuid();
  await h.ok('rooqi_create_note', {
    operationID: uuid(),
    documentID,
    title: 'Plan',
    ...provenance,
  });
  return { project, documentID };
}

const append = (documentID: string, text: string, expectedVersion: number) =>
  h.ok<{ committedRevision: number }>('rooqi_append_text', {
    operationID: uuid(),
    documentID,
    text,
    expectedVersion,
    ...provenance,
  });

const records = (collection: string, prefix?: string) =>
  h.tk.kernel.store.read((tx) => tx.records.list(collection, prefix ? { prefix } : {}));

describe('notes storage', () => {
  it('an append writes one block record and keeps the document record free of text', async () => {
    const { documentID } = await writable();
    // A large owner block first: the agent's append must not rewrite it.
    await h.rest('POST', `notes/documents/${documentID}/blocks`, { text: 'x'.repeat(500_000) });
    expect((await h.rest('GET', `notes/documents/${documentID}`)).body.blocks[0].text.length).toBe(
      500_000,
    );
    await append(documentID, 'first', 1);
    await append(documentID, 'second', 2);
    const blocks = await records(BLOCKS, `${documentID}/`);
    expect(blocks.map((b) => (b.value as { text: string }).text.slice(0, 6))).toEqual([
      'xxxxxx',
      'first',
      'second',
    ]);
    const meta = await h.tk.kernel.store.read((tx) => tx.records.get(DOCUMENTS, documentID));
    expect(JSON.stringify(meta!.value).length).toBeLessThan(1_000);
    expect(meta!.value).toMatchObject({ revision: 3, blockCount: 3 });
    const read = await h.rest('GET', `notes/documents/${documentID}`);
    expect(read.body.revision).toBe(3);
    expect(read.body.blocks.map((b: { text: string }) => b.text.length)).toEqual([500_000, 5, 6]);
  });

  it('listing a project answers from its own index, whatever other projects hold', async () => {
    const { project, documentID } = await writable();
    const other = await h.project('Elsewhere');
    const big = await h.document(other, 'Big');
    await h.rest('POST', `notes/documents/${big}/blocks`, { text: 'y'.repeat(200_000) });
    expect(await h.ok('rooqi_list_approved_documents', {})).toEqual({ [documentID]: 'Plan' });
    const index = await records(BY_PROJECT);
    expect(index.map((r) => r.key).sort()).toEqual(
      [`${project}/${documentID}`, `${other}/${big}`].sort(),
    );
    const listed = await h.rest('GET', `notes/documents?projectID=${other}`);
    expect(listed.body.documents).toEqual([
      { documentID: big, projectID: other, title: 'Big', revision: 1 },
    ]);
  });

  it('documents stored with their blocks inline by an older Airlock are moved at start and read the same', async () => {
    const { project, documentID } = await writable();
    await append(documentID, 'kept', 0);
    const dir = h.tk.dir;
    await h.tk.close();
    // Rewrite the store the way an older Airlock left it.
    const { store } = await openStore({ data: dir });
    const legacyID = uuid();
    await store.transaction(async (tx) => {
      await tx.records.put(DOCUMENTS, legacyID, {
        documentID: legacyID,
        projectID: project,
        title: 'Old',
        revision: 2,
        blocks: [
          { text: 'old one', at: 1, author: 'owner', operationID: null },
          { text: 'old two', at: 2, author: 'owner', operationID: null },
        ],
        surfaces: [],
        createdAt: 1,
        updatedAt: 2,
      });
      await tx.records.delete('notes.layout', 'version');
    });
    await store.close();

    h = await notesHarness({ dir });
    await h.grant('write', project);
    await h.grant('read', project);
    expect(await h.ok('rooqi_list_approved_documents', {})).toEqual({
      [documentID]: 'Plan',
      [legacyID]: 'Old',
    });
    expect(await h.ok('rooqi_read_note', { documentID: legacyID })).toMatchObject({
      revision: 2,
      text: 'old one\n\nold two',
    });
    expect((await append(legacyID, 'new', 2)).committedRevision).toBe(3);
    expect(await h.ok('rooqi_read_note', { documentID: legacyID })).toMatchObject({
      text: 'old one\n\nold two\n\nnew',
    });
    expect(await h.ok('rooqi_read_note', { documentID })).toMatchObject({ text: 'kept' });
  });
});
