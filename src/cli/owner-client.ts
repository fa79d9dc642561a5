/**
 * The owner's CLI talks to the running server over its REST API
 * (`airlock approvals`, `airlock policy`), as the owner: `--owner-token`,
 * `AIRLOCK_OWNER_TOKEN`, or `<--data>/owner.token`.
 */
import { resolve } from 'node:path';
import { ownerTokenIn } from './credentials.js';

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
  'owner-token'?: string | undefined;
}

export function ownerClient(options: OwnerClientOptions) {
  const url = options.url ?? 'http://127.0.0.1:7300';
  const token =
    options['owner-token'] ??
    process.env.AIRLOCK_OWNER_TOKEN ??
    ownerTokenIn(resolve(options.data ?? './.airlock')) ??
    undefined;
  const api: OwnerClient = {
    async call(method, path, body) {
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
        throw new Error(
          `cannot reach the Airlock server at ${url}; start it with 'airlock serve' or pass --url`,
        );
      }
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
  /** Prints the server's message for a refused request; exit code 1. */
  const fail = (r: { status: number; body: Record<string, unknown> }) => {
    process.stderr.write(`airlock: ${String(r.body.message ?? `HTTP ${r.status}`)}\n`);
    return 1;
  };
  return { api, fail };
}
