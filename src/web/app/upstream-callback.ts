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
import { showError } from './errors.js';

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

/**
 * Takes this page's callback (if it is one) now, and answers what the
 * signed-in page calls to show its screen: it shows it, hands the answer to
 * the server once, and shows the screen again (the upstream connected).
 */
export function pendingUpstreamConnect(): (show: () => void) => void {
  let params = takeUpstreamCallback();
  return (show) => {
    show();
    const answer = params;
    params = null;
    if (answer)
      void post('upstreams/oauth/callback', answer)
        .then(() => show())
        .catch((e: unknown) => showError(e, 'Could not connect the upstream'));
  };
}
