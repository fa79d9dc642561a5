/**
 * A mount's catalog: a compiled catalog file is read as is (after a schema
 * check); anything else is compiled on the fly from the OpenAPI document.
 */
import { DocumentError } from './document/errors.js';
import { loadDocuments, type LoadOptions } from './document/load.js';
import { isCatalog, parseCatalog, type Catalog } from './catalog.js';
import { compileDocuments } from './compile/compile.js';

/**
 * Catalogs already loaded in this process, by source and options: the CLI
 * checks a document before the workspace opens, and the door then reuses it.
 */
const loaded = new Map<string, Promise<Catalog>>();

export function loadCatalog(source: string, options: LoadOptions = {}): Promise<Catalog> {
  const key = JSON.stringify([source, options.allowExternalRefs === true]);
  let pending = loaded.get(key);
  if (!pending) {
    pending = readCatalog(source, options);
    loaded.set(key, pending);
    pending.catch(() => loaded.delete(key));
  }
  return pending;
}

async function readCatalog(source: string, options: LoadOptions): Promise<Catalog> {
  const set = await loadDocuments(source, options);
  if (isCatalog(set.main.root)) {
    const parsed = parseCatalog(set.main.root);
    if (!parsed.ok)
      throw new DocumentError(
        set.main.label,
        '',
        `not a valid catalog (${parsed.reason}); rebuild it with airlock catalog build`,
      );
    return parsed.catalog;
  }
  return compileDocuments(set);
}
