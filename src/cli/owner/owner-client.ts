/**
 * The owner's CLI talks to the running server over its REST API
 * (`airlock approvals`, `airlock policy`), as the owner: `--owner-token`,
 * `AIRLOCK_OWNER_TOKEN`, or `<--data>/owner.token`.
 */
import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import { readServerRecord } from '../server/server-record.js';
import { ownerTokenIn } from '../workspace/credentials.js';
import { configPolicy, readConfig } from '../config/config-file.js';

/** The options every owner command takes (`airlock approvals`, `airlock policy`). */
export const OWNER_OPTIONS = {
  url: { type: 'string' },
  data: { type: 'string' },
  store: { type: 'string' },
  config: { type: 'string' },
  'owner-token': { type: 'string' },
  help: { type: 'boolean', short: 'h' },
} as const;

/** Their help paragraph. */
export const OWNER_OPTIONS_HELP = `Options: --url URL (default AIRLOCK_URL, else http://127.0.0.1:7300); as the owner: --data DIR (reads
DIR/owner.token; default ./.airlock) or --owner-token T (or AIRLOCK_OWNER_TOKEN);
-h/--help. When no server answers and --url is not given, the command works in
the store of --data (or --store URL) directly (--config FILE: the server's
config, for its policy section): a stdio or standalone door
(airlock stdio, openapi --stdio, relay) keeps its approvals and policy there.`;

export interface OwnerClient {
  call(
    method: string,
    path: string,
    body?: unknown,
  ): Promise<{ status: number; body: Record<string, unknown> }>;
}

export interface OwnerClientOptions {
  url?: string | undefined;
  data?: string | undefined;
  store?: string | undefined;
  /** The server's config file: its `policy` section, when answering in the store directly. */
  config?: string | undefined;
  'owner-token'?: string | undefined;
}

/**
 * Talks to the server at `--url`, else `AIRLOCK_URL`, else the server
 * running on the data folder (`<data>/server.json`, which `serve` writes),
 * else http://127.0.0.1:7300. When no server answers and no `--url` was
 * given, answers in the data folder's store directly (authority.md §3: a
 * stdio or standalone door keeps its approvals there) — unless the folder
 * belongs to a running server, whose answer is the one that counts.
 */
export function ownerClient(options: OwnerClientOptions) {
  const data = resolve(options.data ?? './.airlock');
  const running = readServerRecord(data);
  const url = options.url ?? process.env.AIRLOCK_URL ?? running?.url ?? 'http://127.0.0.1:7300';
  const chosenBy =
    options.url !== undefined
      ? '--url'
      : process.env.AIRLOCK_URL
        ? 'AIRLOCK_URL'
        : running
          ? `the server running on ${data}`
          : 'the default address';
  const token =
    options['owner-token'] ?? process.env.AIRLOCK_OWNER_TOKEN ?? ownerTokenIn(data) ?? undefined;
  let direct: Promise<OwnerClient & { close(): Promise<void> }> | undefined;
  let answered = '';
  const api: OwnerClient & { close(): Promise<void> } = {
    async close() {
      if (direct) await (await direct).close();
    },
    async call(method, path, body) {
      if (direct) return (await direct).call(method, path, body);
      let res: Response;
      try {
        res = await fetch(new URL(`/api/v1/${path}`, url), {
          method,
          headers: {
            ...(body !== undefined ? { 'content-type': 'application/json' } : {}),
            ...(token ? { authorization: `Bearer ${token}` } : {}),
          },
          ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
        });
      } catch {
        if (options.url !== undefined || (!existsSync(data) && !options.store))
          throw new Error(
            `cannot reach the Airlock server at ${url}; start it with 'airlock serve' or pass --url`,
          );
        // The folder's own server is running but did not answer: its store is its own to
        // answer from, so say so rather than answer from under it.
        if (running)
          throw new Error(
            `the Airlock server running on ${data} (pid ${running.pid}, ${running.url}) did not answer; try again, or pass --url`,
          );
        process.stderr.write(
          `airlock: no server at ${url}; answering in the store ${options.store ? 'at --store' : `in ${data}`} directly\n`,
        );
        answered = `the store ${options.store ? 'at --store' : `in ${data}`} (no server answered at ${url})`;
        const policy = configPolicy(readConfig(options.config));
        direct = import('./owner-direct.js').then((m) =>
          m.directOwnerClient(data, token, options.store, policy),
        );
        return (await direct).call(method, path, body);
      }
      answered = `Airlock at ${url} (${chosenBy})`;
      const text = await res.text();
      let parsed: Record<string, unknown>;
      try {
        parsed = text ? (JSON.parse(text) as Record<string, unknown>) : {};
      } catch {
        parsed = { message: text };
      }
      return { status: res.status, body: parsed };
    },
  };
  /**
   * Prints the server's message for a refused request; exit code 1. A
   * decision that needs the owner's passkey (issue 25) is not taken here:
   * the CLI prints the link that opens it in the browser.
   */
  const fail = (r: { status: number; body: Record<string, unknown> }, path = '') => {
    if (r.body.presence === 'passkey') {
      process.stderr.write(
        `airlock: this decision needs your passkey; open ${decisionLink(url, path)} and decide there (the CLI does not decide in passkey mode).\n`,
      );
      return 1;
    }
    process.stderr.write(`airlock: ${String(r.body.message ?? `HTTP ${r.status}`)}\n`);
    return 1;
  };
  /** Which server or folder answered the last call, in words. */
  const answeredBy = () => answered;
  return { api, fail, answeredBy };
}

/** The web UI screen that takes a decision the CLI was asked for (served as localhost on loopback). */
export function decisionLink(url: string, path: string): string {
  const base = new URL(url);
  if (base.hostname === '127.0.0.1' || base.hostname === '[::1]') base.hostname = 'localhost';
  const screen = path.startsWith('policy')
    ? 'policy'
    : path.startsWith('upstreams')
      ? 'upstreams'
      : path.startsWith('agents') || path.startsWith('passkeys')
        ? 'settings'
        : 'approvals';
  return `${base.origin}/#/${screen}`;
}
