/**
 * The owner's session in this browser (spec/authority.md §1): signing in with
 * the single-use code of the printed link or with the pasted owner token, and
 * signing out. The session is an HttpOnly cookie the page never sees; the
 * CSRF token the server answers with is kept in memory for `api.ts` to send.
 */
import { json, request, sessionEnded, setCsrf } from './api.js';

/** What `/api/v1/session` answers. */
interface SessionAnswer {
  owner: boolean;
  csrf?: string;
  csrfHeader?: string;
}

export type SignInProof = { code: string } | { token: string };

/** Keeps the CSRF token of a cookie session; true when this browser is signed in as the owner. */
function remember(answer: SessionAnswer): boolean {
  const signedIn = answer.owner && !!answer.csrf && !!answer.csrfHeader;
  setCsrf(signedIn ? { header: answer.csrfHeader!, token: answer.csrf! } : null);
  return signedIn;
}

/** Whether this browser's cookie is a live owner session (and picks up its CSRF token). */
export async function currentSession(): Promise<boolean> {
  return remember(await json<SessionAnswer>('GET', 'session', { signingIn: true }));
}

/** Signs in; throws the server's `ApiError` (its message says what to do) when refused. */
export async function signIn(proof: SignInProof): Promise<void> {
  const answer = await json<SessionAnswer>('POST', 'session', { body: proof, signingIn: true });
  if (!remember(answer)) throw new Error('The server did not start a session; try again.');
}

/** Ends the session on the server and returns the page to the sign-in screen. */
export async function signOut(): Promise<void> {
  try {
    await request('DELETE', 'session', { signingIn: true });
  } finally {
    setCsrf(null);
    sessionEnded();
  }
}
