/**
 * The end of an OAuth upstream's connect (spec/gateway.md §1 "OAuth
 * upstreams"): the upstream's authorization server sends the owner's
 * browser back to `/upstream-oauth/callback?code=…&state=…`, a page of this
 * UI in the same tab, where the owner's session still is. The answer is
 * taken out of the address bar at once (a code works once) and handed to
 * `POST /api/v1/upstreams/oauth/callback` with the session; the Upstreams
 * screen then shows the result.
 * Browser-only.
 */
import { post } from './api.js';

export const CALLBACK_PATH = '/upstream-oauth/callback';

/** The callback's parameters when this page is the callback (and the address bar cleaned), else null. */
export function takeUpstreamCallback(): Record<string, string> | null {
  if (location.pathname !== CALLBACK_PATH) return null;
  const params: Record<string, string> = {};
  for (const key of ['state', 'code', 'iss', 'error', 'error_description']) {
    const value = new URLSearchParams(location.search).get(key);
    if (value !== null) params[key] = value;
  }
  history.replaceState(null, '', '/#/upstreams');
  return params;
}

/** Hands the answer to the server; the upstream's name once connected. */
export async function finishUpstreamConnect(params: Record<string, string>): Promise<string> {
  const done = await post<{ upstream: string }>('upstreams/oauth/callback', params);
  return done.upstream;
}
