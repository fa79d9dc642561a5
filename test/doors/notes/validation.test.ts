/** Wrong types in notes tool arguments are reported as wrong types (authority.md §4). */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { notesHarness, provenance, uuid, type Harness } from './harness.js';

let h: Harness;
beforeAll(async () => {
  h = await notesHarness();
});
afterAll(async () => {
  await h.dispose();
});

const append = (expectedVersion: unknown) =>
  h.env('rooqi_append_text', {
    operationID: uuid(),
    documentID: uuid(),
    text: 'hello',
    expectedVersion,
    ...provenance,
  });

describe('notes tool arguments of the wrong type', () => {
  it('append_text with expectedVersion "0" says it must be an integer ≥ 0, got the string "0"', async () => {
    const e = await append('0');
    expect(e.code).toBe('malformedRequest');
    expect(e.message).toContain('\'expectedVersion\' must be an integer ≥ 0; got the string "0"');
  });

  it('append_text with expectedVersion 1.5 or null says what was sent, never that it is missing', async () => {
    const fraction = await append(1.5);
    expect(fraction.message).toContain(
      "'expectedVersion' must be an integer ≥ 0; got the number 1.5",
    );
    const none = await append(null);
    expect(none.message).toContain("'expectedVersion' must be an integer ≥ 0; got null");
    expect(`${fraction.message} ${none.message}`).not.toContain('missing');
  });

  it('append_text without expectedVersion still says the field is missing', async () => {
    const e = await append(undefined);
    expect(e.message).toContain("missing required field 'expectedVersion'");
  });

  it('read_pdf_page with rect.x 0.5 names the field path, the integer range and the fraction', async () => {
    const e = await h.env('rooqi_read_pdf_page', {
      documentID: uuid(),
      surfaceID: uuid(),
      pageIndex: 0,
      rect: { x: 0.5, y: 0, width: 10, height: 10 },
    });
    expect(e.code).toBe('malformedRequest');
    expect(e.message).toContain(
      "'rect.x' must be an integer between 0 and 999999; got the number 0.5",
    );
  });
});
