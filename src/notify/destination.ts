/**
 * Where a webhook may be sent (authority.md §6): a public address only. A URL
 * whose host is, or resolves to, a loopback, private, link-local or other
 * non-public address is refused unless it starts with a prefix listed in
 * `notify.allowPrivate` — so a config cannot turn Airlock into a probe of the
 * network it runs in. Checked at start and again before every delivery (the
 * name may resolve elsewhere later); redirects are never followed.
 */
import { lookup } from 'node:dns/promises';
import { BlockList, isIP } from 'node:net';

const NON_PUBLIC = new BlockList();
for (const [net, bits] of [
  ['0.0.0.0', 8],
  ['10.0.0.0', 8],
  ['100.64.0.0', 10],
  ['127.0.0.0', 8],
  ['169.254.0.0', 16],
  ['172.16.0.0', 12],
  ['192.0.0.0', 24],
  ['192.168.0.0', 16],
  ['198.18.0.0', 15],
  ['224.0.0.0', 3],
] as const)
  NON_PUBLIC.addSubnet(net, bits, 'ipv4');
for (const [net, bits] of [
  ['::', 128],
  ['::1', 128],
  ['fc00::', 7],
  ['fe80::', 10],
  ['ff00::', 8],
] as const)
  NON_PUBLIC.addSubnet(net, bits, 'ipv6');

/** True for an address outside the public internet. */
export function isNonPublicAddress(address: string): boolean {
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
  if (mapped) return NON_PUBLIC.check(mapped[1]!, 'ipv4');
  const family = isIP(address);
  if (family === 0) return true;
  return NON_PUBLIC.check(address, family === 4 ? 'ipv4' : 'ipv6');
}

/** Why `url` may not receive webhooks, or null when it may. */
export async function refusedDestination(
  url: string,
  allowPrivate: readonly string[],
): Promise<string | null> {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return `${url} is not a URL`;
  }
  if (parsed.protocol !== 'https:' && parsed.protocol !== 'http:')
    return `${url} is not an http(s) URL`;
  if (parsed.username || parsed.password) return `${parsed.origin} carries user information`;
  if (allowPrivate.some((prefix) => url.startsWith(prefix))) return null;
  const host = parsed.hostname.replace(/^\[|\]$/g, '');
  let addresses: string[];
  try {
    addresses = isIP(host) ? [host] : (await lookup(host, { all: true })).map((a) => a.address);
  } catch (error) {
    return `${parsed.origin} does not resolve (${(error as Error).message})`;
  }
  const inside = addresses.find(isNonPublicAddress);
  return inside === undefined
    ? null
    : `${parsed.origin} is a private or loopback address (${inside}); list its URL prefix in notify.allowPrivate to allow it`;
}
