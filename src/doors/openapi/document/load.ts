/**
 * Reads an OpenAPI / Swagger document (a path or an http(s) URL, YAML or
 * JSON) and, when allowed, the other documents its `$ref`s point to. Every
 * problem is a `DocumentError` naming the file and the JSON pointer.
 */
import { readFile } from 'node:fs/promises';
import { dirname, resolve as resolvePath } from 'node:path';
import { parse as parseYaml } from 'yaml';
import { DocumentError, pointerOf } from './errors.js';

export interface LoadedDocument {
  /** Absolute path or URL: the key other documents' `$ref`s resolve against. */
  readonly uri: string;
  /** How error messages name it (the path as given for the main document). */
  readonly label: string;
  readonly root: unknown;
  /** The document's bytes, for the catalog's source digest. */
  readonly text: string;
}

export interface DocumentSet {
  readonly main: LoadedDocument;
  /** Every loaded document by `uri` (the main one included). */
  readonly all: ReadonlyMap<string, LoadedDocument>;
}

export interface LoadOptions {
  /** Follow `$ref`s into other files or URLs (off by default). */
  allowExternalRefs?: boolean;
  /** Cap on each document's size (default 64 MiB). */
  maxBytes?: number;
}

const isUrl = (s: string) => /^https?:\/\//i.test(s);

export function absoluteUri(location: string, base?: string): string {
  if (isUrl(location)) return new URL(location).href;
  if (base && isUrl(base)) return new URL(location, base).href;
  return resolvePath(base ? dirname(base) : process.cwd(), location);
}

async function readText(uri: string, label: string, maxBytes: number): Promise<string> {
  if (isUrl(uri)) {
    let response: Response;
    try {
      response = await fetch(uri, { redirect: 'follow', signal: AbortSignal.timeout(30_000) });
    } catch (error) {
      throw new DocumentError(label, '', `cannot fetch it (${(error as Error).message})`);
    }
    if (!response.ok)
      throw new DocumentError(label, '', `fetching it answered HTTP ${response.status}`);
    const text = await response.text();
    if (text.length > maxBytes) throw new DocumentError(label, '', `larger than ${maxBytes} bytes`);
    return text;
  }
  try {
    const buffer = await readFile(uri);
    if (buffer.length > maxBytes)
      throw new DocumentError(label, '', `larger than ${maxBytes} bytes`);
    return buffer.toString('utf8');
  } catch (error) {
    if (error instanceof DocumentError) throw error;
    const code = (error as NodeJS.ErrnoException).code;
    throw new DocumentError(
      label,
      '',
      code === 'ENOENT' ? 'no such file' : `cannot read it (${code ?? (error as Error).message})`,
    );
  }
}

/** Parses JSON (when it looks like JSON) or YAML; errors name the line. */
export function parseText(text: string, label: string): unknown {
  const trimmed = text.trimStart();
  if (trimmed.startsWith('{') || trimmed.startsWith('[')) {
    try {
      return JSON.parse(text) as unknown;
    } catch (error) {
      throw new DocumentError(label, '', `not valid JSON (${(error as Error).message})`);
    }
  }
  try {
    return parseYaml(text, { maxAliasCount: -1, uniqueKeys: false }) as unknown;
  } catch (error) {
    const first = (error as Error).message.split('\n')[0];
    throw new DocumentError(label, '', `not valid YAML (${first})`);
  }
}

async function loadOne(uri: string, label: string, maxBytes: number): Promise<LoadedDocument> {
  const text = await readText(uri, label, maxBytes);
  return { uri, label, root: parseText(text, label), text };
}

/** Every `$ref` value in a document with its JSON pointer; skips `example(s)` values. */
export function* refsIn(node: unknown, pointer = ''): Generator<[string, string]> {
  if (Array.isArray(node)) {
    for (let i = 0; i < node.length; i++) yield* refsIn(node[i], pointerOf(pointer, i));
  } else if (node !== null && typeof node === 'object') {
    for (const [key, value] of Object.entries(node)) {
      if (key === '$ref' && typeof value === 'string') yield [value, pointer];
      else if (key !== 'example' && key !== 'examples')
        yield* refsIn(value, pointerOf(pointer, key));
    }
  }
}

/**
 * Loads the main document and, with `allowExternalRefs`, every document
 * reachable through non-local `$ref`s. Without it, an external `$ref` is an
 * error naming where it is.
 */
export async function loadDocuments(
  source: string,
  options: LoadOptions = {},
): Promise<DocumentSet> {
  const maxBytes = options.maxBytes ?? 64 * 1024 * 1024;
  const mainUri = absoluteUri(source);
  const main = await loadOne(mainUri, source, maxBytes);
  if (main.root === null || typeof main.root !== 'object' || Array.isArray(main.root))
    throw new DocumentError(source, '', 'not an OpenAPI document (expected an object at the top)');
  const all = new Map<string, LoadedDocument>([[mainUri, main]]);
  const queue = [main];
  while (queue.length > 0) {
    const doc = queue.shift()!;
    for (const [ref, at] of refsIn(doc.root)) {
      if (ref.startsWith('#')) continue;
      if (!options.allowExternalRefs)
        throw new DocumentError(
          doc.label,
          at,
          `$ref '${ref}' points to another document; pass --allow-external-refs to follow it`,
        );
      const target = absoluteUri(ref.split('#')[0]!, doc.uri);
      if (all.has(target)) continue;
      const loaded = await loadOne(target, target, maxBytes);
      all.set(target, loaded);
      queue.push(loaded);
    }
  }
  return { main, all };
}
