/**
 * The optional API version probe (spec/openapi.md): when the configured
 * path answers 404, `_resources` and `_call` refuse with a message naming
 * the typed tools to use instead; `_describe` keeps working (it reads only
 * the catalog). The answer is remembered for a minute; a probe that cannot
 * reach the API refuses nothing (the call itself will say what is wrong).
 */
import { failure, type Failure } from '../../kernel/index.js';
import type { Runtime } from './runtime.js';
import { send } from './http/send.js';

export interface Probe {
  check(): Promise<Failure | null>;
}

const REMEMBER_MS = 60_000;

export function createProbe(rt: Runtime, now: () => number = Date.now): Probe {
  let state: { missing: boolean; at: number } | undefined;
  return {
    async check() {
      const probe = rt.probe;
      if (!probe || !rt.base) return null;
      if (!state || now() - state.at > REMEMBER_MS) {
        const url = new URL(rt.base.origin);
        url.pathname = `${rt.base.pathname.replace(/\/+$/, '')}/${probe.path.replace(/^\/+/, '')}`;
        const creds = rt.credentials({ security: undefined } as never);
        const response = await send(
          {
            method: 'GET',
            url,
            base: rt.base,
            headers: { accept: 'application/json', ...rt.extraHeaders, ...creds.headers },
            label: `GET ${probe.path}`,
          },
          {
            signal: AbortSignal.timeout(rt.limits.timeoutMs),
            limits: { ...rt.limits, maxRetries: 0 },
            fetch: rt.fetch,
          },
        ).catch(() => null);
        if (!response || 'ok' in response) return null;
        state = { missing: response.status === 404, at: now() };
      }
      if (!state.missing) return null;
      const typed =
        probe.typedTools.length > 0
          ? `use the typed tools instead (${probe.typedTools.join(', ')})`
          : 'use the typed tools instead';
      return failure(
        'unavailable',
        `This instance does not serve the API version this catalog describes (${probe.path} answered 404); ${typed}. ${rt.tool('describe')} still works.`,
      );
    },
  };
}
