/**
 * Adds one annotation to a PDF by an incremental update (ISO 32000-1 §7.5.6):
 * the original bytes stay untouched and a new section is appended holding the
 * annotation object, the page (or its /Annots array) with the annotation added,
 * a cross-reference section for those objects, and a trailer whose /Prev
 * points at the previous one. Files whose last section is a cross-reference
 * stream get a cross-reference stream (§7.5.8), others a classic table.
 *
 * pdf-lib parses the file and serialises the objects; it cannot save
 * incrementally, so the section is written here.
 */
// pdf-lib is loaded with the first annotation, not at start-up.
import type { PDFDict, PDFRef } from 'pdf-lib';

export type AnnotationKind = 'highlight' | 'underline' | 'comment';

export interface NewAnnotation {
  pageIndex: number;
  kind: AnnotationKind;
  /** QuadPoints quads in user space, 8 numbers each (highlight, underline). */
  quads: number[][];
  /** Annotation rectangle in user space [x0, y0, x1, y1]. */
  rect: [number, number, number, number];
  contents: string;
  /** Unique name (/NM): the operationID, so the effect can be found again. */
  name: string;
  author: string;
  date: Date;
}

const COLOURS: Record<AnnotationKind, number[]> = {
  highlight: [1, 0.9, 0.2],
  underline: [0.1, 0.3, 0.9],
  comment: [1, 0.8, 0.1],
};

const latin1 = (text: string) => Buffer.from(text, 'latin1');
const round = (n: number) => Math.round(n * 1000) / 1000;

/** Offset and /Size of the last cross-reference section, and whether it is a stream. */
function lastSection(bytes: Uint8Array): { offset: number; size: number | null; stream: boolean } {
  const tail = Buffer.from(bytes.subarray(Math.max(0, bytes.length - 4096))).toString('latin1');
  const matches = [...tail.matchAll(/startxref\s+(\d+)/g)];
  const last = matches[matches.length - 1];
  if (!last) throw new Error('no startxref in the PDF');
  const offset = Number(last[1]);
  const head = Buffer.from(bytes.subarray(offset, offset + 4096)).toString('latin1');
  const stream = !head.startsWith('xref');
  const dict = stream ? head.slice(0, head.indexOf('stream')) : head.slice(head.indexOf('trailer'));
  const size = /\/Size\s+(\d+)/.exec(dict);
  return { offset, size: size ? Number(size[1]) : null, stream };
}

export async function appendAnnotation(
  original: Uint8Array,
  annotation: NewAnnotation,
): Promise<Uint8Array> {
  const lib = await import('pdf-lib');
  const doc = await lib.PDFDocument.load(original, { updateMetadata: false });
  const { context } = doc;
  const page = doc.getPage(annotation.pageIndex);
  const prev = lastSection(original);
  let next = Math.max(prev.size ?? 0, context.largestObjectNumber + 1);
  const annotRef = lib.PDFRef.of(next++);

  const fields: Record<string, unknown> = {
    Type: 'Annot',
    Subtype:
      annotation.kind === 'comment'
        ? 'Text'
        : annotation.kind === 'highlight'
          ? 'Highlight'
          : 'Underline',
    Rect: annotation.rect.map(round),
    C: COLOURS[annotation.kind],
    F: 4,
    P: page.ref,
    NM: lib.PDFString.of(annotation.name),
    T: lib.PDFHexString.fromText(annotation.author),
    M: lib.PDFString.fromDate(annotation.date),
    Contents: lib.PDFHexString.fromText(annotation.contents),
  };
  if (annotation.kind === 'comment') {
    fields.Name = 'Comment';
    fields.Open = false;
  } else {
    fields.QuadPoints = annotation.quads.flat().map(round);
  }
  // An appearance stream, so viewers that do not synthesise one still show the markup.
  const appearance = annotation.kind === 'comment' ? null : appearanceOf(annotation);
  const apRef = appearance ? lib.PDFRef.of(next++) : null;
  if (apRef) fields.AP = context.obj({ N: apRef });
  const annot = context.obj(fields as never) as unknown as PDFDict;

  // The page's /Annots: an array object of its own is rewritten in place; otherwise the page is.
  const objects: Array<{ ref: PDFRef; body: string }> = [{ ref: annotRef, body: annot.toString() }];
  if (apRef && appearance) objects.push({ ref: apRef, body: appearance });
  const annotsEntry = page.node.get(lib.PDFName.of('Annots'));
  if (annotsEntry instanceof lib.PDFRef) {
    const existing = context.lookup(annotsEntry, lib.PDFArray);
    const array = lib.PDFArray.withContext(context);
    for (let i = 0; i < existing.size(); i++) array.push(existing.get(i));
    array.push(annotRef);
    objects.push({ ref: annotsEntry, body: array.toString() });
  } else {
    const array = lib.PDFArray.withContext(context);
    if (annotsEntry instanceof lib.PDFArray)
      for (let i = 0; i < annotsEntry.size(); i++) array.push(annotsEntry.get(i));
    array.push(annotRef);
    const pageDict = page.node.clone(context);
    pageDict.set(lib.PDFName.of('Annots'), array);
    objects.push({ ref: page.ref, body: pageDict.toString() });
  }

  // Body of the update.
  const parts: Buffer[] = [];
  let position = original.length;
  const emit = (chunk: Buffer) => {
    parts.push(chunk);
    position += chunk.length;
  };
  const needsNewline =
    original[original.length - 1] !== 0x0a && original[original.length - 1] !== 0x0d;
  if (needsNewline) emit(latin1('\n'));
  const offsets = new Map<number, { offset: number; gen: number }>();
  for (const { ref, body } of objects) {
    offsets.set(ref.objectNumber, { offset: position, gen: ref.generationNumber });
    emit(latin1(`${ref.objectNumber} ${ref.generationNumber} obj\n${body}\nendobj\n`));
  }

  const trailer = context.trailerInfo;
  const common = [
    trailer.Root ? `/Root ${trailer.Root.toString()}` : '',
    trailer.Info ? `/Info ${trailer.Info.toString()}` : '',
    trailer.ID ? `/ID ${trailer.ID.toString()}` : '',
    `/Prev ${prev.offset}`,
  ]
    .filter(Boolean)
    .join(' ');

  const xrefOffset = position;
  if (prev.stream) {
    const xrefRef = next++;
    offsets.set(xrefRef, { offset: xrefOffset, gen: 0 });
    const numbers = [...offsets.keys()].sort((p, q) => p - q);
    const data = Buffer.alloc(numbers.length * 7);
    numbers.forEach((n, i) => {
      const { offset, gen } = offsets.get(n)!;
      data.writeUInt8(1, i * 7);
      data.writeUInt32BE(offset, i * 7 + 1);
      data.writeUInt16BE(gen, i * 7 + 5);
    });
    const index = numbers.map((n) => `${n} 1`).join(' ');
    emit(
      latin1(
        `${xrefRef} 0 obj\n<< /Type /XRef /Size ${next} /W [1 4 2] /Index [${index}] ${common} /Length ${data.length} >>\nstream\n`,
      ),
    );
    emit(data);
    emit(latin1(`\nendstream\nendobj\nstartxref\n${xrefOffset}\n%%EOF\n`));
  } else {
    const numbers = [...offsets.keys()].sort((p, q) => p - q);
    let table = 'xref\n';
    for (const n of numbers) {
      const { offset, gen } = offsets.get(n)!;
      table += `${n} 1\n${String(offset).padStart(10, '0')} ${String(gen).padStart(5, '0')} n\r\n`;
    }
    table += `trailer\n<< /Size ${next} ${common} >>\nstartxref\n${xrefOffset}\n%%EOF\n`;
    emit(latin1(table));
  }

  const out = new Uint8Array(position);
  out.set(original, 0);
  let at = original.length;
  for (const part of parts) {
    out.set(part, at);
    at += part.length;
  }
  return out;
}

/**
 * A Form XObject drawing the markup in user space (BBox = the annotation's
 * Rect, identity Matrix): filled quads blended with Multiply for a highlight,
 * a line along each quad's lower edge for an underline.
 */
/** QuadPoints as eight numbers per selected line (x1 y1 x2 y2 x3 y3 x4 y4). */
type Quad = [number, number, number, number, number, number, number, number];
const quadsOf = (a: NewAnnotation) => a.quads as number[][] as Quad[];

function appearanceOf(a: NewAnnotation): string {
  const [r, g, b] = COLOURS[a.kind].map(round);
  const n = (v: number) => String(round(v));
  const ops: string[] = [];
  if (a.kind === 'highlight') {
    ops.push('/G0 gs', `${r} ${g} ${b} rg`);
    for (const [x1, y1, x2, y2, x3, y3, x4, y4] of quadsOf(a)) {
      ops.push(
        `${n(x1)} ${n(y1)} m ${n(x2)} ${n(y2)} l ${n(x4)} ${n(y4)} l ${n(x3)} ${n(y3)} l h f`,
      );
    }
  } else {
    ops.push(`${r} ${g} ${b} RG`);
    for (const [x1, y1, x2, y2, x3, y3, x4, y4] of quadsOf(a)) {
      const height = Math.hypot(x1 - x3, y1 - y3);
      // a little above the lower edge, which sits at the font's descent
      const t = 0.12;
      const lx = x3 + (x1 - x3) * t;
      const ly = y3 + (y1 - y3) * t;
      const rx = x4 + (x2 - x4) * t;
      const ry = y4 + (y2 - y4) * t;
      ops.push(`${n(Math.max(0.5, height / 16))} w ${n(lx)} ${n(ly)} m ${n(rx)} ${n(ry)} l S`);
    }
  }
  const content = ops.join('\n');
  const bbox = a.rect.map(round).join(' ');
  return `<< /Type /XObject /Subtype /Form /FormType 1 /BBox [ ${bbox} ] /Matrix [ 1 0 0 1 0 0 ] /Resources << /ExtGState << /G0 << /Type /ExtGState /BM /Multiply /CA 1 /ca 1 >> >> >> /Length ${Buffer.byteLength(content, 'latin1')} >>\nstream\n${content}\nendstream`;
}

/** Annotation names (/NM) already on a page, to find an operation's effect after a crash. */
export async function annotationNames(bytes: Uint8Array, pageIndex: number): Promise<string[]> {
  const lib = await import('pdf-lib');
  const doc = await lib.PDFDocument.load(bytes, { updateMetadata: false });
  const annots = doc.getPage(pageIndex).node.Annots();
  if (!annots) return [];
  const names: string[] = [];
  for (let i = 0; i < annots.size(); i++) {
    const a = annots.lookup(i);
    if (a instanceof lib.PDFDict) {
      const nm = a.get(lib.PDFName.of('NM'));
      if (nm instanceof lib.PDFString || nm instanceof lib.PDFHexString) names.push(nm.decodeText());
    }
  }
  return names;
}
