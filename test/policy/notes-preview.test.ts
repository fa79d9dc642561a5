/**
 * The notes door's asks (issue 27): the card shows the text to be appended
 * with the note's title and revision, names the note as the subject, and
 * keeps the revision it showed — an approved append whose note moved since
 * (the owner typed a block) does not run but is asked again, saying what
 * changed.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { notesHarness, provenance, uuid, type Harness } from '../doors/notes/harness.js';
import type { Approval } from '../../src/kernel/records.js';
import { samplePdf } from '../doors/notes/fixtures.js';
import { readablePreview } from '../../src/web/app/preview.js';

let h: Harness;
const AGENT = 'agent:alice';
let projectID: string;

const append = (documentID: string, text: string, expectedVersion: number) => ({
  operationID: uuid(),
  documentID,
  text,
  expectedVersion,
  ...provenance,
});

/** The pending ask the agent's last call filed. */
async function askOf(): Promise<Approval> {
  const pending = await h.tk.kernel.consent.pending();
  const asks = pending.filter((a) => a.kind === 'policy' && a.agent === 'alice');
  return asks.at(-1)!;
}

beforeAll(async () => {
  h = await notesHarness();
  await h.tk.kernel.policy.add({ door: 'notes', tool: '*append_text', decision: 'ask' });
  projectID = await h.project('Essays');
  await h.grant('write', projectID, AGENT);
});
afterAll(async () => {
  await h.dispose();
});

describe('notes asks', () => {
  it('the card shows the appended text, the note’s title and revision, and names the note', async () => {
    const documentID = await h.document(projectID, 'Chapter notes');
    const text = 'The harbour scene moves to chapter 2.';
    const asked = await h.env('rooqi_append_text', append(documentID, text, 0), AGENT);
    expect(asked.code).toBe('approvalRequired');
    const card = await askOf();
    expect(card.preview).toMatchObject({
      title: 'Chapter notes',
      revision: 0,
      text,
      subject: `note ${documentID}`,
      observed: 'revision 0',
    });
    expect(String((card.preview as { summary: string }).summary)).toContain(
      'to "Chapter notes" (revision 0)',
    );
    // The CLI's first lines (summary) carry the text.
    expect(readablePreview(card.preview, card.summary).summary).toContain('harbour scene');
  });

  it('a long text is cut with a "… N more" line', async () => {
    const documentID = await h.document(projectID, 'Long');
    const text = 'x'.repeat(1000);
    await h.env('rooqi_append_text', append(documentID, text, 0), AGENT);
    const shown = String(((await askOf()).preview as { text: string }).text);
    expect(shown.length).toBeLessThan(700);
    expect(shown).toMatch(/… 400 more characters$/);
  });

  it('approved once, then the owner edits the note: the retry is asked again, says what changed, nothing ran', async () => {
    const documentID = await h.document(projectID, 'Moving');
    const args = append(documentID, 'agent text', 0);
    await h.env('rooqi_append_text', args, AGENT);
    const first = await askOf();
    await h.tk.kernel.asks.approve(first.id, 'once');

    const typed = await h.rest('POST', `notes/documents/${documentID}/blocks`, {
      text: 'the owner typed this',
    });
    expect(typed.status).toBe(201);

    const retried = await h.env('rooqi_append_text', args, AGENT);
    expect(retried.code).toBe('approvalRequired');
    expect(retried.message).toContain(`changed after you approved request ${first.id}`);
    expect(retried.message).toContain('it was revision 0, it is now revision 1');
    const again = await askOf();
    expect(again.id).not.toBe(first.id);
    expect((again.preview as { changed?: string }).changed).toMatch(/nothing ran/);
    expect(again.preview).toMatchObject({ revision: 1, observed: 'revision 1' });
    const doc = (await h.rest('GET', `notes/documents/${documentID}`)).body;
    expect(doc.blocks.map((b: { text: string }) => b.text)).toEqual(['the owner typed this']);
  });

  it('an approval whose note did not move runs', async () => {
    const documentID = await h.document(projectID, 'Still');
    const args = append(documentID, 'runs', 0);
    await h.env('rooqi_append_text', args, AGENT);
    await h.tk.kernel.asks.approve((await askOf()).id, 'once');
    expect((await h.env('rooqi_append_text', args, AGENT)).code).toBe('ready');
  });

  it('a note outside the granted project shows no title or revision', async () => {
    const other = await h.project('Private');
    const secret = await h.document(other, 'Secret title');
    const answer = await h.env('rooqi_append_text', append(secret, 'hi', 0), AGENT);
    if (answer.code === 'approvalRequired') {
      const card = await askOf();
      expect(JSON.stringify(card.preview)).not.toContain('Secret title');
      expect(card.preview).not.toHaveProperty('observed');
    } else expect(answer.code).toBe('notAuthorized');
  });

  it('an annotation’s card shows its kind, comment, PDF page, the note’s title and revision', async () => {
    await h.tk.kernel.policy.add({ door: 'notes', tool: '*annotate_pdf', decision: 'ask' });
    const documentID = await h.document(projectID, 'Reading');
    const up = await h.rest(
      'POST',
      `notes/documents/${documentID}/pdfs`,
      Buffer.from(await samplePdf()),
    );
    expect(up.status).toBe(201);
    await h.grant('pdfAnnotate', projectID, AGENT);
    const q = {
      documentID,
      surfaceID: String(up.body.surfaceID),
      pageIndex: 0,
      rect: { x: 0, y: 0, width: 1_000_000, height: 150_000 },
    };
    const read = await h.ok<Record<string, unknown>>('rooqi_read_pdf_page', q, AGENT);
    const answer = await h.env(
      'rooqi_annotate_pdf',
      {
        operationID: uuid(),
        query: q,
        expectedVersion: read.revision,
        sourceAssetID: read.sourceAssetID,
        sourceDigest: read.sourceDigest,
        geometryDigest: read.geometryDigest,
        selectionTextDigest: read.selectionTextDigest,
        kind: 'comment',
        comment: 'Check the date',
        ...provenance,
      },
      AGENT,
    );
    expect(answer.code).toBe('approvalRequired');
    const card = await askOf();
    expect(card.preview).toMatchObject({
      title: 'Reading',
      annotation: 'comment',
      comment: 'Check the date',
      pdfPage: 1,
      subject: `note ${documentID}`,
      observed: `revision ${String(read.revision)}`,
    });
    expect((card.preview as { summary: string }).summary).toBe(
      `comment "Check the date" on PDF page 1 of "Reading" (revision ${String(read.revision)})`,
    );
  });
});
