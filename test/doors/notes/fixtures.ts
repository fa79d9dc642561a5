/**
 * PDFs generated for the notes tests with pdf-lib: known words at known
 * positions. Page sizes are 600 × 800 points unless said otherwise.
 *
 * - page 0: "Alpha" and "Beta" on one line at y=700, "Gamma delta" at y=650,
 *   "Epsilon" at y=200 (far below)
 * - page 1: rotated 90°, "Rotated words" drawn so it reads upright on screen
 * - page 2: crop box (50, 50, 300 × 400), "Cropped" inside it, "Outside" beyond it
 * - page 3: no text (a filled rectangle only, like a scanned image)
 */
import { PDFDocument, StandardFonts, degrees, rgb } from 'pdf-lib';

export interface FixtureOptions {
  /** Cross-reference streams and object streams (pdf-lib's default), or a classic table. */
  objectStreams?: boolean;
  /** Extra text on page 0, to make a different file. */
  marker?: string;
}

export async function samplePdf(options: FixtureOptions = {}): Promise<Uint8Array> {
  const doc = await PDFDocument.create();
  const font = await doc.embedFont(StandardFonts.Helvetica);
  const p0 = doc.addPage([600, 800]);
  p0.drawText('Alpha', { x: 100, y: 700, size: 20, font });
  p0.drawText('Beta', { x: 300, y: 700, size: 20, font });
  p0.drawText('Gamma delta', { x: 100, y: 650, size: 20, font });
  p0.drawText('Epsilon', { x: 100, y: 200, size: 20, font });
  if (options.marker) p0.drawText(options.marker, { x: 100, y: 100, size: 10, font });
  const p1 = doc.addPage([600, 800]);
  p1.setRotation(degrees(90));
  // With /Rotate 90 the page turns clockwise on screen; text drawn at 90° reads upright.
  p1.drawText('Rotated words', { x: 100, y: 100, size: 20, font, rotate: degrees(90) });
  const p2 = doc.addPage([600, 800]);
  p2.setCropBox(50, 50, 300, 400);
  p2.drawText('Cropped', { x: 100, y: 300, size: 20, font });
  p2.drawText('Outside', { x: 450, y: 700, size: 20, font });
  const p3 = doc.addPage([600, 800]);
  p3.drawRectangle({ x: 50, y: 50, width: 500, height: 700, color: rgb(0.8, 0.8, 0.8) });
  return doc.save({ useObjectStreams: options.objectStreams ?? true });
}

/** A PDF with many lines of text on one page (for the 8,000-byte selection limit). */
export async function densePdf(): Promise<Uint8Array> {
  const doc = await PDFDocument.create();
  const font = await doc.embedFont(StandardFonts.Courier);
  const page = doc.addPage([600, 800]);
  const line = 'abcdefghij'.repeat(24);
  for (let i = 0; i < 90; i++) page.drawText(line, { x: 5, y: 790 - i * 8.5, size: 4, font });
  return doc.save();
}
