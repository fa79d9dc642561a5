/**
 * Access guards (spec/kernel.md §11): Host and Origin validation against DNS
 * rebinding (a foreign Origin gets 403). Who is calling is `auth.ts`'s business.
 */
import type { IncomingMessage } from 'node:http';
import { isIPv4 } from 'node:net';

export const LOOPBACK_HOSTS = ['localhost', '127.0.0.1', '[::1]', '::1'];

/** Only IP literals in 127/8, `::1` and `localhost` are loopback (`127.invalid` is a name). */
export function isLoopbackHost(host: string): boolean {
  return LOOPBACK_HOSTS.includes(host) || (isIPv4(host) && host.startsWith('127.'));
}

/**
 * The host name of a Host header, parsed strictly: `name[:port]` or
 * `[v6][:port]`, nothing after. Anything else (`[::1].evil.com`) is '' and refused.
 */
export function hostnameOf(hostHeader: string): string {
  const m = /^(\[[0-9a-fA-F:.]+\]|[^:[\]/\s]+)(?::\d{1,5})?$/.exec(hostHeader);
  return m ? m[1]!.toLowerCase() : '';
}

export interface GuardOptions {
  /** Hostnames accepted in Host (and in Origin); loopback names are always accepted. */
  allowedHosts: string[];
  /** Extra exact origins allowed (e.g. `https://app.example`). */
  allowedOrigins: string[];
}

/** A refusal is `notAuthorized` (403): the request is not from a page or host this server trusts. */
export type GuardResult = { ok: true } | { ok: false; status: 403; message: string };

export function checkHostAndOrigin(
  req: IncomingMessage,
  options: GuardOptions,
  /** OAuth's public endpoints: browser-based clients call them from their own origin. */
  { ignoreOrigin = false }: { ignoreOrigin?: boolean } = {},
): GuardResult {
  const allowed = new Set([...LOOPBACK_HOSTS, ...options.allowedHosts]);
  const host = req.headers.host;
  if (!host || !allowed.has(hostnameOf(host))) {
    return {
      ok: false,
      status: 403,
      message: `Host '${host ?? ''}' is not allowed; connect through an allowed host name.`,
    };
  }
  const origin = req.headers.origin;
  if (origin === undefined || ignoreOrigin) return { ok: true };
  if (options.allowedOrigins.includes(origin)) return { ok: true };
  let parsed: URL;
  try {
    parsed = new URL(origin);
  } catch {
    return {
      ok: false,
      status: 403,
      message: `Origin '${origin}' is not allowed.`,
    };
  }
  const originHost = parsed.hostname.includes(':') ? `[${parsed.hostname}]` : parsed.hostname;
  // Same host as the request (any port of this server's host) or loopback pages.
  if (
    (parsed.protocol === 'http:' || parsed.protocol === 'https:') &&
    (allowed.has(originHost) || allowed.has(parsed.hostname))
  ) {
    return { ok: true };
  }
  return {
    ok: false,
    status: 403,
    message: `Origin '${origin}' is not allowed to call this server.`,
  };
}
