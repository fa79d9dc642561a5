/**
 * The owner's session in this browser tab (spec/authority.md §1): signing in
 * with the single-use code of the printed link or with the pasted owner
 * token, and signing out. The session secret the server answers with is kept
 * by `api.ts` (memory and this origin's sessionStorage) and sent as a header;
 * no cookie is involved, so nothing reaches a page on another port.
 */
import {
  ApiError,
  json,
  ownerSession,
  request,
  sessionEnded,
  sessionHeaders,
  setOwnerSession,
} from './api.js';

/** What `POST /api/v1/session` answers. */
interface SignInAnswer {
  owner: boolean;
  session?: string;
  sessionHeader?: string;
}

export type SignInProof = { code: string } | { token: string } | { passkey: unknown };

/** Whether this tab holds a live owner session (asks the server when it holds one). */
export async function currentSession(): Promise<boolean> {
  if (!ownerSession()) return false;
  try {
    const answer = await json<{ owner: boolean }>('GET', 'session', { signingIn: true });
    if (answer.owner) return true;
  } catch (e) {
    if (!(e instanceof ApiError) || e.status !== 401) throw e;
  }
  setOwnerSession(null);
  return false;
}

/** Signs in; throws the server's `ApiError` (its message says what to do) when refused. */
export async function signIn(proof: SignInProof): Promise<void> {
  // An old, ended session in this tab would make the server refuse the request itself.
  setOwnerSession(null);
  const answer =
    'passkey' in proof
      ? await json<SignInAnswer>('POST', 'session/passkey', {
          body: { response: proof.passkey },
          signingIn: true,
        })
      : await json<SignInAnswer>('POST', 'session', { body: proof, signingIn: true });
  if (!answer.owner || !answer.session || !answer.sessionHeader)
    throw new Error('The server did not start a session; try again.');
  setOwnerSession({ header: answer.sessionHeader, secret: answer.session });
}

/** Ends the session on the server and returns the page to the sign-in screen. */
export async function signOut(): Promise<void> {
  // The page leaves first (its event stream closes), so nothing races the session's end.
  const headers = sessionHeaders();
  setOwnerSession(null);
  sessionEnded();
  await request('DELETE', 'session', { signingIn: true, headers });
}
