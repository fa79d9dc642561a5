/**
 * An openapi door pointed at the workspace's own API (authority.md §3
 * item 7): its calls would reach Airlock's REST routes through the door, so
 * the start refuses it unless `--allow-self` is given, and even then the
 * door may not carry the owner's token — it acts as the calling agent
 * reaching an API, never as the owner.
 */
import { UsageError } from '../args.js';

const LOOPBACK = new Set(['127.0.0.1', 'localhost', '[::1]', '::1', '0.0.0.0', '[::]']);

export interface SelfTargetCheck {
  /** The configured base URLs of the openapi mounts, with their configured headers. */
  mounts: {
    prefix?: string | undefined;
    baseUrl?: string | undefined;
    headers?: Record<string, string> | undefined;
  }[];
  /** Where the server listens. */
  host: string;
  port: number;
  allowSelf: boolean;
  ownerToken: string | null;
}

/** True when `url` names this server: same port on its host or a loopback name for it. */
export function isSelf(url: string, host: string, port: number): boolean {
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    return false;
  }
  const uPort = Number(u.port || (u.protocol === 'https:' ? 443 : 80));
  if (uPort !== port) return false;
  const name = u.hostname.toLowerCase();
  return name === host.toLowerCase() || (LOOPBACK.has(name) && (LOOPBACK.has(host) || host === ''));
}

/** Throws a usage error (exit 2) naming the mount when a self-targeting door is not allowed. */
export function checkSelfTargets(check: SelfTargetCheck): void {
  for (const m of check.mounts) {
    if (!m.baseUrl || !isSelf(m.baseUrl, check.host, check.port)) continue;
    const name = `--openapi ${m.prefix ?? 'plane'} (--base-url ${m.baseUrl})`;
    if (!check.allowSelf)
      throw new UsageError(
        `${name} is this workspace's own API: an agent would reach Airlock's REST routes through the door. Give --allow-self if that is what you want (the door then acts as the calling agent, never as the owner)`,
      );
    const token = check.ownerToken;
    if (token && Object.values(m.headers ?? {}).some((v) => v.includes(token)))
      throw new UsageError(
        `${name} carries the owner token in a header: a door acts with the agent's authority, never the owner's; remove that header`,
      );
  }
}
