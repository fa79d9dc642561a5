/**
 * A small multipart/form-data parser (RFC 7578) for page uploads: the HTTP
 * app hands non-JSON bodies over as bytes, already capped in size.
 */
import { AirlockError } from '../../../kernel/index.js';

export interface Part {
  name: string;
  filename?: string;
  contentType?: string;
  data: Buffer;
}

export function boundaryOf(contentType: string | undefined): string | null {
  const m = /boundary=(?:"([^"]+)"|([^;\s]+))/i.exec(contentType ?? '');
  return m ? (m[1] ?? m[2] ?? null) : null;
}

export function parseMultipart(body: Buffer, contentType: string | undefined): Part[] {
  const boundary = boundaryOf(contentType);
  if (!/^multipart\/form-data/i.test(contentType ?? '') || !boundary)
    throw new AirlockError(
      'malformedRequest',
      'Send the pages as multipart/form-data (one file part per image).',
    );
  const delimiter = Buffer.from(`--${boundary}`);
  const parts: Part[] = [];
  let pos = body.indexOf(delimiter);
  while (pos >= 0) {
    let start = pos + delimiter.length;
    if (body.subarray(start, start + 2).toString() === '--') break;
    if (body.subarray(start, start + 2).toString() === '\r\n') start += 2;
    const next = body.indexOf(delimiter, start);
    if (next < 0) break;
    const chunk = body.subarray(start, next - 2); // drop the CRLF before the delimiter
    const split = chunk.indexOf('\r\n\r\n');
    if (split >= 0) {
      const headers = chunk.subarray(0, split).toString('utf8');
      const data = chunk.subarray(split + 4);
      const disposition = /content-disposition:([^\r\n]*)/i.exec(headers)?.[1] ?? '';
      const name = /\bname="([^"]*)"/i.exec(disposition)?.[1] ?? '';
      const filename = /\bfilename="([^"]*)"/i.exec(disposition)?.[1];
      const type = /content-type:\s*([^\r\n]*)/i.exec(headers)?.[1]?.trim();
      parts.push({
        name,
        ...(filename !== undefined ? { filename } : {}),
        ...(type ? { contentType: type } : {}),
        data,
      });
    }
    pos = next;
  }
  return parts;
}
