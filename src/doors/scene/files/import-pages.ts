/**
 * `koharu.import_pages` (issue 17, "scene over MCP alone"): page images
 * from files inside the project roots, from loopback or `file:` URLs, or
 * inline as base64 — so an agent on stdio, which cannot reach the REST
 * upload, runs the whole flow. The images then take the upload's own path
 * (`addPages`): the same decoding, pixel caps and one history batch.
 *
 * What an agent may name is confined: files only inside the project roots
 * (a symlink cannot lead out; `roots.confine` resolves it), URLs only on
 * this machine's loopback with no redirect followed, and at most
 * UPLOAD_MAX_BYTES in all — the REST upload's cap.
 */
import { readFile, stat } from 'node:fs/promises';
import { basename } from 'node:path';
import { fileURLToPath } from 'node:url';
import { z } from 'zod';
import { AirlockError, utf8String } from '../../../kernel/index.js';
import { UPLOAD_MAX_BYTES } from '../rest/rest.js';
import type { SceneSession } from '../session.js';
import { addPages, type UploadedImage } from './uploads.js';

const MAX_ITEMS = 200;

export const ImportPagesInput = z
  .object({
    paths: z.array(utf8String(1, 4096)).min(1).max(MAX_ITEMS).optional(),
    urls: z.array(z.string().min(1).max(4096)).min(1).max(MAX_ITEMS).optional(),
    base64: z
      .array(z.object({ name: utf8String(1, 255), data: z.string().min(1) }).strict())
      .min(1)
      .max(MAX_ITEMS)
      .optional(),
  })
  .strict();
export type ImportPagesInput = z.infer<typeof ImportPagesInput>;

const LOOPBACK = new Set(['127.0.0.1', 'localhost', '[::1]', '::1']);

function tooLarge(total: number): AirlockError {
  return new AirlockError(
    'requestTooLarge',
    `The images add up to more than ${UPLOAD_MAX_BYTES / 1024 ** 2} MiB (${Math.ceil(total / 1024 ** 2)} MiB so far); import them in smaller groups.`,
  );
}

/** Reads a file the agent named, only inside the project roots. */
async function fromPath(session: SceneSession, path: string, field: string) {
  const confined = session.roots.confine(path);
  let info;
  try {
    info = await stat(confined);
  } catch {
    throw new AirlockError(
      'notFound',
      `${field}: no file at ${path}; name an image inside the project roots (${session.roots.roots.join(', ')}).`,
      { field },
    );
  }
  if (!info.isFile())
    throw new AirlockError(
      'malformedRequest',
      `${field}: ${path} is not a file; name an image file.`,
      { field },
    );
  if (info.size > UPLOAD_MAX_BYTES) throw tooLarge(info.size);
  return { filename: basename(confined), bytes: new Uint8Array(await readFile(confined)) };
}

/** Fetches a loopback http(s) URL (no redirects) or reads a `file:` URL like a path. */
async function fromUrl(session: SceneSession, raw: string, field: string) {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new AirlockError(
      'malformedRequest',
      `${field}: '${raw.slice(0, 80)}' is not a URL; give a file: or loopback http(s) URL.`,
      {
        field,
      },
    );
  }
  if (url.protocol === 'file:') return fromPath(session, fileURLToPath(url), field);
  if ((url.protocol !== 'http:' && url.protocol !== 'https:') || !LOOPBACK.has(url.hostname))
    throw new AirlockError(
      'malformedRequest',
      `${field}: only file: URLs and http(s) URLs on this machine's loopback (127.0.0.1, localhost, [::1]) are imported; send other images as base64.`,
      { field },
    );
  let response: Response;
  try {
    response = await fetch(url, { redirect: 'manual', signal: AbortSignal.timeout(60_000) });
  } catch (error) {
    throw new AirlockError(
      'unavailable',
      `${field}: could not fetch ${url.href} (${(error as { cause?: { code?: string } }).cause?.code ?? 'network error'}); check that the server is running.`,
      { field },
    );
  }
  if (response.status >= 300 && response.status < 400)
    throw new AirlockError(
      'malformedRequest',
      `${field}: ${url.href} redirects (HTTP ${response.status}); redirects are not followed, give the final URL.`,
      { field },
    );
  if (!response.ok)
    throw new AirlockError(
      'notFound',
      `${field}: ${url.href} answered HTTP ${response.status}; give the URL of an image.`,
      { field },
    );
  const declared = Number(response.headers.get('content-length') ?? 0);
  if (declared > UPLOAD_MAX_BYTES) throw tooLarge(declared);
  const bytes = new Uint8Array(await response.arrayBuffer());
  const name = basename(url.pathname) || `page-${Date.now()}`;
  return { filename: name, bytes };
}

function fromBase64(item: { name: string; data: string }, field: string): UploadedImage {
  const data = item.data.replace(/^data:[^,]*;base64,/, '');
  if (!/^[A-Za-z0-9+/\s]*={0,2}\s*$/.test(data))
    throw new AirlockError(
      'malformedRequest',
      `${field}.data is not base64; send the image's bytes base64-encoded (a data: URL prefix is accepted).`,
      { field: `${field}.data` },
    );
  return { filename: item.name, bytes: new Uint8Array(Buffer.from(data, 'base64')) };
}

export async function importPages(session: SceneSession, input: ImportPagesInput) {
  session.require();
  const { paths = [], urls = [], base64 = [] } = input;
  if (paths.length + urls.length + base64.length === 0)
    throw new AirlockError(
      'malformedRequest',
      'Name at least one image: paths (files inside the project roots), urls (loopback or file:) or base64 [{name, data}].',
    );
  if (paths.length + urls.length + base64.length > MAX_ITEMS)
    throw new AirlockError(
      'malformedRequest',
      `At most ${MAX_ITEMS} images per import; import the rest in another call.`,
    );
  const files: UploadedImage[] = [];
  let total = 0;
  const add = (file: UploadedImage) => {
    total += file.bytes.byteLength;
    if (total > UPLOAD_MAX_BYTES) throw tooLarge(total);
    files.push(file);
  };
  for (const [i, path] of paths.entries()) add(await fromPath(session, path, `paths[${i}]`));
  for (const [i, url] of urls.entries()) add(await fromUrl(session, url, `urls[${i}]`));
  for (const [i, item] of base64.entries()) add(fromBase64(item, `base64[${i}]`));
  return addPages(session, files);
}
