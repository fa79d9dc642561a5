/**
 * Client ID metadata documents (CIMD) of local clients: a client whose ID is
 * `http://localhost:PORT/…` (or `127.x.x.x`, `[::1]`) on a deployment the
 * owner reaches on loopback. The document is fetched with a short timeout,
 * no redirects and a size cap, and must name itself as the client ID and be
 * a public client (no secret, `token_endpoint_auth_method` `none`). Held for
 * 30 s. Everything else (`https://` IDs, on any deployment) is the
 * library's own CIMD support, which refuses private addresses.
 */
import { isLoopbackHost } from '../http/guards.js';

const MAX_BYTES = 16 * 1024;
const TIMEOUT_MS = 2500;
const CACHE_MS = 30_000;

/** True for an `http://` URL on a loopback host, with a path and no credentials or fragment. */
export function isLoopbackClientId(id: string): boolean {
  if (!/^http:\/\//i.test(id) || id.includes('#')) return false;
  let url: URL;
  try {
    url = new URL(id);
  } catch {
    return false;
  }
  if (url.username || url.password || url.pathname === '/') return false;
  return isLoopbackHost(url.hostname);
}

export class ClientDocumentError extends Error {}

async function fetchDocument(id: string): Promise<Record<string, unknown>> {
  const response = await fetch(id, {
    redirect: 'manual',
    headers: { accept: 'application/json' },
    signal: AbortSignal.timeout(TIMEOUT_MS),
  });
  if (response.status !== 200)
    throw new ClientDocumentError(`its metadata document answered HTTP ${response.status}`);
  const text = await response.text();
  if (Buffer.byteLength(text) > MAX_BYTES)
    throw new ClientDocumentError(`its metadata document is over ${MAX_BYTES} bytes`);
  let doc: unknown;
  try {
    doc = JSON.parse(text);
  } catch {
    throw new ClientDocumentError('its metadata document is not JSON');
  }
  if (typeof doc !== 'object' || doc === null || Array.isArray(doc))
    throw new ClientDocumentError('its metadata document is not a JSON object');
  const d = doc as Record<string, unknown>;
  if (d.client_id !== id)
    throw new ClientDocumentError('its metadata document names another client_id');
  if ('client_secret' in d || (d.token_endpoint_auth_method ?? 'none') !== 'none')
    throw new ClientDocumentError('a metadata-document client must be public (no secret)');
  return { ...d, token_endpoint_auth_method: 'none' };
}

/**
 * The metadata of a loopback client, or undefined when `id` is not one or
 * `allowed()` says no. A failed fetch reads as no client (the library then
 * answers `invalid_client`); `onError` hears why.
 */
export function loopbackClients(
  allowed: () => boolean,
  onError: (id: string, why: string) => void,
): (id: string) => Promise<Record<string, unknown> | undefined> {
  const cache = new Map<string, { at: number; doc: Record<string, unknown> }>();
  return async (id) => {
    if (!isLoopbackClientId(id) || !allowed()) return undefined;
    const hit = cache.get(id);
    if (hit && Date.now() - hit.at < CACHE_MS) return hit.doc;
    try {
      const doc = await fetchDocument(id);
      if (cache.size > 100) cache.clear();
      cache.set(id, { at: Date.now(), doc });
      return doc;
    } catch (error) {
      onError(id, error instanceof ClientDocumentError ? error.message : String(error));
      return undefined;
    }
  };
}
